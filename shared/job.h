/*
 * job.h - the monitor's jobs for sbx-worker, and what a worker answers.
 * runs in: the monitor (root, monitor allowlist once started) and a worker's
 *   fork before its exec (root, runtime deny filter), sbx-worker jobs and
 *   their children (root, runtime deny filter), a session child's reports
 *   (the sandbox's prober uid, session allowlist)
 *
 * A job is one sealed memfd on the worker's stdin: struct job_head, then
 * struct job_env, then nservices struct service_cfg (only the sections
 * the job is about, in sbx.conf's order), then the job's own body, whose
 * exact size the job's row fixes (or a whole number of elements, for a
 * job of many). Every type here is flat: no pointer, no descriptor, no
 * field the monitor keeps for itself. A result comes back on the pipe at
 * the worker's fd 3, of the exact size the job's row says; the monitor
 * checks every field of it before use, as it checks the broker's
 * messages (privsep/monitor/README.md).
 */
#ifndef SBX_JOB_H
#define SBX_JOB_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "conn.h"
#include "project.h"
#include "record_fmt.h"
#include "subrange.h"

/* argv[0] of a worker; argv[1] is its job's name. */
#define JOB_ARGV0	"sbx-worker"
/* argv[2] of a data worker the spawner makes ahead of its job
 * (privsep/worker/spare.c), and the one byte that brings the job. */
#define JOB_SPARE_ARG	"spare"
#define JOB_SPARE_GO	'j'
/* The uid the parsing jobs drop to (privsep/worker/jobuser.c): a system
 * user of its own, resolved by name before any config is read, so a
 * fixed name and not a setting. */
#define JOB_USER	"sbx-job"
#define JOB_MAGIC	0x73627877u	/* "sbxw" */
#define JOB_MAX		(1u << 20)	/* a job's memfd, at most */
/* The seals of a job's memfd (fcntl.h's F_SEAL_*): the monitor sets them,
 * the worker takes no job without them. */
#define JOB_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
	F_SEAL_WRITE)
/* A container's host uid range: uids 0-65535 inside it. */
#define JOB_RANGE_UIDS	65536u

enum job_type {
	JOB_PROVISION = 1,	/* job_sandbox; answers job_outcome */
	JOB_TEARDOWN,		/* job_sandbox; answers job_outcome */
	JOB_EVICT,		/* job_evict; answers a uint32_t code */
	JOB_WARM_START,		/* job_warm; answers warm_started */
	JOB_WARM_REMOVE,	/* job_warm; answers a uint32_t code */
	JOB_RENAME,		/* job_renames; answers a uint32_t code */
	JOB_RELOAD,		/* nothing; answers reload_result */
	JOB_REMOVE,		/* rt_gone[n]; its exit status says */
	JOB_ADOPT,		/* nothing; writes adopt_head, adopt_found[],
				 * adopt_gone[] to fd 3, a memfd */
	JOB_CONFIG,		/* job_config; writes config_result to fd 3 */
	JOB_METRICS,		/* metrics_snap; answers a uint32_t code */
	JOB_PURGE,		/* nothing; a line per removal to fd 3, the
				 * admin's stdout; its exit status says */
	JOB_LOG,		/* nothing; reads the monitor's lines on fd 3 */
	JOB_DATA,		/* job_data; answers data_result */
	JOB_LOGIN,		/* job_login; answers a uint32_t code */
	JOB_BROKERLOG,		/* nothing; reads the broker's lines on fd 3 */
	JOB_BIND,		/* job_bind; sends bind_result and the agent
				 * socket on fd 3, a socketpair */
	JOB_CLAIM,		/* job_claims: claimed warm containers'
				 * ports, their owners' (privsep/worker/
				 * guard.c); answers claim_results */
	JOB_RESIDENT,		/* job_data: a sandbox's data worker that
				 * stays; takes resident_asks on fd 3, a
				 * seqpacket socket, answers nothing */
	JOB_NTYPES
};

struct job_head {
	uint32_t	magic;
	uint32_t	type;		/* enum job_type */
	uint64_t	len;		/* the body's bytes */
};

/* What every job needs of sbx.conf's [sbx] section. */
struct job_env {
	char		runtime[CFG_STR];
	uint32_t	nruntime_args;
	char		runtime_args[CFG_MAX_RTARGS][CFG_STR];
	char		run_dir[SBX_RUN_DIR_MAX + 1];
	char		state_dir[CFG_STR];
	char		projects[CFG_STR];
	char		subuid_file[CFG_STR];
	uint32_t	runtime_timeout;
	uint32_t	foreground;	/* the monitor's log: stderr, else syslog */
	uint32_t	nservices;	/* service_cfg that follow */
};

/* One service of a provision or a teardown. */
struct job_svc {
	struct sbx_conn	conn;		/* name and password; the rest: reach() */
	int32_t		pid;		/* keep: its running container's */
	uint32_t	keep;		/* a reshape's: running already */
	uint32_t	dropped;	/* prev[]: the new set lacks it */
	uint32_t	warm;		/* a claimed warm container: its slot */
	uint32_t	host_uid;	/* first host uid of its range; 0 none */
};

struct job_sandbox {
	struct sbx_key	key;
	char		project[SBX_SLUG_MAX];
	char		seed[SBX_SLUG_MAX];	/* the project's postgres_seed
						 * file name, or "": none */
	uint64_t	generation;
	uint32_t	ready_timeout;	/* the longest of svc[]'s, seconds */
	uint32_t	nservices;
	uint32_t	reshape;	/* prev[] is the set served */
	uint32_t	nprev;
	struct job_svc	svc[SBX_MAX_SERVICES];
	struct job_svc	prev[SBX_MAX_SERVICES];
};

/*
 * A provision's or teardown's answer: of each service only what the
 * runtime alone knows, its container's pid and the port it published.
 * Names, credentials and paths are the monitor's, never taken from here.
 */
struct job_outcome {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	struct {
		int32_t		pid;
		uint32_t	port;	/* tcp: published on 127.0.0.1 */
	}		svc[SBX_MAX_SERVICES];	/* in job_sandbox.svc[] order */
	uint32_t	dropped_gone;	/* a reshape: bit i, prev[i] removed */
	uint32_t	removed;	/* a failed provision: the runtime
					 * said every container of the key
					 * is gone */
};

/*
 * A reset or a snapshot of a ready sandbox's data (privsep/worker/data.c): the
 * services its owner holds, as a provision's job names them. The
 * snapshot's name is a slug the monitor checked; what the sandbox holds
 * of its snapshots is the sandbox's own (in its services), and the
 * worker reads it as a tenant's bytes.
 */
enum data_op {
	DATA_RESET = 1,		/* snapshot: "" the hand-out state, or a name */
	DATA_SNAPSHOT,		/* snapshot: the name to save under */
};

struct job_data {
	struct sbx_key	key;
	char		project[SBX_SLUG_MAX];
	uint32_t	op;		/* enum data_op */
	char		snapshot[SBX_SLUG_MAX];
	uint32_t	max_snapshots;	/* sbx.conf's, per sandbox */
	uint32_t	nservices;
	struct job_svc	svc[SBX_MAX_SERVICES];
};

/*
 * A reset or a snapshot for a sandbox's resident data worker
 * (privsep/worker/resident.c), which has the sandbox's job_data from its
 * start: with two pipes, the data_result's and one it closes once the
 * job's tidy-up has ended (the job's end, as a worker's exit is).
 */
#define RESIDENT_MAGIC	0x73627872u	/* "sbxr" */
struct data_ask {
	uint32_t	op;		/* enum data_op */
	uint32_t	max;		/* max_snapshots */
	char		snapshot[SBX_SLUG_MAX];	/* "" or a slug */
};
struct resident_ask {
	uint32_t	magic;
	struct data_ask	ask;		/* as the resident's kept sessions
					 * are asked it */
};

/* What a data job answers: SBX_OK, SBX_E_UNKNOWN_SNAPSHOT (nothing
 * changed), SBX_E_BAD_REQUEST (a new snapshot past max_snapshots: nothing
 * changed), SBX_E_RUNTIME_FAILED or SBX_E_TIMEOUT; message: one sentence. */
struct data_result {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
};

/* Does a tcp service of a sandbox still take logins (its prober's
 * readiness check, on its published port)? */
struct job_login {
	uint32_t	host_uid;	/* its range: the prober's uid is its top */
	struct sbx_conn	conn;		/* name, port, user, database, password */
};

/* A claimed warm container of an evicted sandbox, by its names only. */
struct job_evict {
	struct sbx_key	key;
	char		service[SBX_SLUG_MAX];
	uint32_t	slot;
};

struct job_warm {
	uint32_t	slot;
	uint32_t	host_uid;	/* first host uid of its range */
	struct sbx_conn	conn;		/* the start's: name and password */
	char		project[SBX_SLUG_MAX];	/* a project's pool, or "" */
	char		seed[SBX_SLUG_MAX];	/* its seed, applied: "" none */
};

struct warm_started {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};

/*
 * JOB_CLAIM: the claims that came together, their ports handed over in
 * one iptables-restore (a claim's reply waits for its job). Of each
 * claimed tcp container only its names, slot, port and range: no
 * password.
 */
#define CLAIM_BATCH	64

struct job_claim_port {
	char		service[SBX_SLUG_MAX];
	uint32_t	slot;		/* its warm slot */
	uint32_t	port;		/* published on 127.0.0.1 */
	uint32_t	host_uid;	/* first host uid of its range */
};

struct job_claim {
	struct sbx_key	key;
	uint32_t	nports;
	struct job_claim_port port[SBX_MAX_SERVICES];
};

struct job_claims {
	uint32_t	n;
	struct job_claim v[CLAIM_BATCH];
};

/* One code per claim, in v[] order: SBX_OK, exactly, makes its ports its
 * owner's; n is the job's, and every code past it 0. */
struct claim_results {
	uint32_t	n;
	uint32_t	code[CLAIM_BATCH];	/* enum sbx_code */
};

/* A claimed container's name, changed after the reply. */
struct warm_rename {
	char		from[SBX_SLUG_MAX * 3], to[SBX_SLUG_MAX * 3];
	uint32_t	slot;		/* its uid range: from names it */
};

#define WARM_RENAMES	64

struct job_renames {
	uint32_t	n;
	struct warm_rename v[WARM_RENAMES];
};

/* A listing: at most this much, from at most this many runtime calls
 * (ps, and with docker an inspect per RT_MAX_IDS containers). */
#define JOB_LIST_MAX	(16u << 20)
#define JOB_LIST_CALLS	8

/* A container with sbx labels, as the runtime lists it (adoption). */
struct rt_seen {
	char	name[SBX_SLUG_MAX * 3];
	char	agent[SBX_SLUG_MAX];
	uid_t	uid;
	bool	pool;		/* a warm container's labels: no uid, agent */
	int	pid;		/* 0: not running */
	int	port;		/* published on 127.0.0.1, or 0 */
};

/* What adoption discards: a whole key, one service of a kept one, or one
 * container by name. */
struct rt_gone {
	struct sbx_key	key;
	char		service[SBX_SLUG_MAX];	/* "": every container */
	char		name[SBX_SLUG_MAX * 3];	/* set: this container only */
};

/*
 * JOB_ADOPT, at start: every record in state_dir/sandboxes as read, with
 * what the runtime runs of it (adopt_found), and the containers no record
 * accounts for (adopt_gone). Whose sandbox is adopted is the monitor's
 * decision (policy, uid ranges, one per key); what runs is the worker's
 * finding.
 */
enum adopt_why {
	ADOPT_WHOLE = 0,	/* every container runs and listens */
	ADOPT_SERVICE_GONE,	/* a section of sbx.conf is no more */
	ADOPT_SERVICE_CHANGED,	/* or is not as the container was started */
	ADOPT_CONTAINER_MISSING,
	ADOPT_CONTAINER_STOPPED,
	ADOPT_PORT_CHANGED,
	ADOPT_NOT_LISTENING,
	ADOPT_RANGE_CHANGED,	/* its uid_map is not its record's range */
	ADOPT_LEASE_ENDED,	/* the process it was bound to is gone */
	ADOPT_NO_RECORD,	/* gone: the containers of a key no record has */
	ADOPT_NOT_IN_SANDBOX,	/* gone: a service its record lacks */
	ADOPT_POOL_NO_RECORD,	/* gone: a warm container with no record */
	ADOPT_NWHY
};

#define ADOPT_MAGIC	0x73627861u	/* "sbxa" */
#define ADOPT_MAX	65536		/* records, and containers */

struct adopt_head {
	uint32_t	magic;
	uint32_t	nfound;
	uint32_t	ngone;
	uint32_t	guarded;	/* the tcp guard is laid (guard.c) */
};

/* In r, each running container's host_uid is its /proc/PID/uid_map's
 * (a record of version 3 or older has none of its own). */
struct adopt_found {
	char		file[RECORD_NAME_MAX];	/* in state_dir/sandboxes */
	int64_t		used_wall_ms;		/* its mtime: the idle clock */
	struct record	r;
	int32_t		pid[SBX_MAX_SERVICES];	/* whole: each container's */
	uint32_t	why;			/* enum adopt_why */
	uint32_t	pool_named;	/* bit i: service i, claimed warm, still
					 * runs under its pool name */
};

struct adopt_gone {
	struct rt_gone	g;
	uint32_t	why;			/* enum adopt_why */
	uint32_t	host_uid;		/* its uid_map's range, 0 none */
	char		container[SBX_SLUG_MAX * 3];	/* the one seen */
};

/* The reason's name, for the audit line; NULL if none. */
const char	*adopt_why_name(unsigned);

/* sbx-monitor --purge: names per runtime rm call, and the most calls
 * its deadline allows for (each call has runtime_timeout). */
#define PURGE_BATCH	32
#define PURGE_CALLS	(2 + ADOPT_MAX / PURGE_BATCH)

/* The job's name (argv[1] of its worker); NULL for no job. */
const char	*job_name(unsigned type);

/* sbx.conf, read for the monitor's start (no env: none is known yet),
 * or checked for sbx-monitor -t with every project file (check: each
 * problem on stderr as file:line: cause; the exit status says). */
struct job_config {
	char		path[CFG_STR];
	uint32_t	check;
};

#define CONFIG_MAGIC	0x73627863u	/* "sbxc" */

/* JOB_BIND: sbx.conf's socket, made with its mode (state_dir: job_env). */
struct job_bind {
	char		socket[CFG_STR];
	uint32_t	mode;
};

/* JOB_BIND's answer: err "" and the agent socket beside it (SCM_RIGHTS),
 * or why it could not be bound, and no descriptor. */
struct bind_result {
	char	err[512];
};

struct config_result {
	uint32_t	magic;
	uint32_t	ok;
	uint32_t	proc_hidden;	/* /proc hides uids' processes (hidepid) */
	char		err[CFG_STR * 2];	/* !ok: file:line: cause */
	struct sbx_config cfg;
};

/* SIGHUP's (and the start's) projects and subordinate uids. */
#define RELOAD_MAGIC		0x73627872u	/* "sbxr" */
#define RELOAD_MAX_PROJECTS	1024

struct reload_result {
	uint32_t		magic;
	uint32_t		projects_ok;
	uint32_t		nprojects;
	uint32_t		subuid_ok;
	uint32_t		nranges;
	uint64_t		skipped;
	char			err[256];
	struct project		projects[RELOAD_MAX_PROJECTS];
	struct subuid_range	ranges[SUBUID_MAX_RANGES];
};

#endif
