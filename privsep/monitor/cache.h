/*
 * cache.h - the per-(uid, agent) sandbox cache and its serialisation
 * (cache.c); its table's types are also cache_status.c's and
 * cache_revoke.c's, whose functions cache_status.h and cache_revoke.h
 * declare.
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 *
 * The cache decides and answers (through struct sbx_reply); the runtime
 * (struct sbx_runtime) acts and reports back through cache_provisioned() and cache_torn_down(). Each
 * entry has a queue of waiting operations; the head of the queue is the
 * operation being served, so operations on one agent run one at a time
 * while different agents never wait for each other.
 */
#ifndef SBX_CACHE_H
#define SBX_CACHE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/queue.h>
#include <sys/tree.h>

#ifndef __unused	/* libbsd's RB_GENERATE_STATIC needs it */
#define __unused __attribute__((__unused__))
#endif

#include "answer.h"

/* One service of a sandbox as provisioned. */
struct sbx_svc {
	struct sbx_conn	conn;		/* what the agent gets */
	pid_t		pid;		/* container main process */
	int		pidfd;		/* -1 when the runtime keeps none */
	int64_t		port_seen_ms;	/* runtime's: last connect that worked */
	int64_t		login_ms;	/* tcp: its last login check (login.c) */
	bool		login_failed;	/* ...said it takes none: not live */
	bool		keep;		/* reshape: running already, not started */
	unsigned	warm;		/* a warm pool's container: its slot */
	uint32_t	host_uid;	/* its container's uid range, 0 none */
};

/* A sandbox bound to a process of its owner's (bind_pid): it goes when
 * that process exits (lease.c). pidfd -1: none. */
struct sbx_lease {
	pid_t		pid;
	int		pidfd;
	uint64_t	start;		/* /proc/PID/stat's: this process */
};

enum sbx_state {
	SB_EMPTY,		/* nothing held; entry lives for its waiters */
	SB_PROVISIONING,
	SB_READY,
	SB_TEARING,
	SB_DATA,		/* ready; a reset or snapshot runs on it */
};

/* Who gets the answer: the monitor writes it to a socket, tests record it. */
struct sbx_reply {
	void	(*fn)(void *ctx, const struct sbx_ans *);
	void	*ctx;
};

struct sbx_waiter {
	TAILQ_ENTRY(sbx_waiter) entry;
	enum sbx_req_type op;		/* SANDBOX, RELEASE, RESET, SNAPSHOT */
	char		project[SBX_SLUG_MAX];
	char		snapshot[SBX_SLUG_MAX];	/* reset's to, snapshot's name */
	size_t		nservices;	/* the project's full opted-in set */
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	struct sbx_lease lease;		/* taken by the sandbox if answered */
	int64_t		queued_ms;	/* when it came */
	struct sbx_reply reply;
};

/*
 * What one owner holds: the uid itself, or for a subordinate uid the
 * user whose /etc/subuid range it is in (subuid.c). Every per-uid limit
 * is counted here.
 */
struct sbx_quota {
	RB_ENTRY(sbx_quota) node;
	uid_t		owner;
	unsigned	sandboxes;	/* entries */
	unsigned	requests;	/* waiters on them */
	unsigned	provisions;	/* entries in SB_PROVISIONING or
					 * SB_DATA, and data jobs answered
					 * whose process runs on */
};

RB_HEAD(sbx_quotas, sbx_quota);

struct sbx_sandbox {
	RB_ENTRY(sbx_sandbox) node;
	struct sbx_key	key;
	struct sbx_quota *quota;
	unsigned	nwaiters;
	unsigned	fds;		/* service descriptors counted held */
	bool		stalled;	/* a release waits for a worker */
	bool		expiring;	/* its expiry is audited */
	enum sbx_state	state;
	char		project[SBX_SLUG_MAX];
	size_t		nservices;
	struct sbx_svc	*svc;		/* nservices, allocated per provision */
	struct sbx_svc	*prev;		/* during a reshape: the set served */
	size_t		nprev;
	int64_t		created_ms;
	int64_t		used_ms;
	int64_t		started_ms;	/* the runtime job in flight began */
	uint64_t	generation;	/* bumps on every provision */
	unsigned	idmap;		/* the runtime's uid range slot, 0 none */
	int64_t		touched_ms;	/* the runtime's: record's mtime set */
	uint64_t	demand_gen;	/* the runtime's: generation + 1 whose
					 * request warm.c counted */
	struct resident	*resident;	/* the runtime's: its data worker that
					 * stays (resident.c), or NULL */
	TAILQ_HEAD(, sbx_waiter) waiters;
	struct sbx_lease lease;
	struct cache	*cache;
};

RB_HEAD(sbx_tree, sbx_sandbox);
RB_PROTOTYPE(sbx_tree, sbx_sandbox, node, key_cmp)

/*
 * The runtime interface. provision() must first remove whatever the
 * runtime still holds for sb->key, then start sb->svc[] (names and
 * passwords are filled in) and later call cache_provisioned(). A reshape
 * (sb->prev set: the project's set grew or shrank) removes nothing but
 * the services of sb->prev that sb->svc lacks, starts only the services
 * not marked keep, and reports the kept ones as they are; if it fails,
 * it removes what it started, and the sandbox goes on as it was. teardown()
 * removes everything held for sb->key and later calls cache_torn_down(),
 * or cache_teardown_failed() if the runtime refused.
 * is_live() answers at once and must be cheap: it is on the hit path.
 * forget() drops what the runtime holds open for sb's last provision;
 * gone() is told that the entry is freed, nothing of it is running.
 * claim() serves a miss from warm containers started ahead (warm.c) with
 * no runtime call: 0 when it filled sb->svc[] (passwords too), recorded
 * the sandbox and took every service; 1 when it did so and a worker
 * (one for the claims that came together) gives their loopback ports to
 * the owner, and it later calls cache_claimed(), refusing the claim if
 * that failed; 2 when it did so and no worker could do that (the
 * sandbox is refused and torn down); -1 leaves sb as it was.
 * data() starts a reset (SBX_REQ_RESET, snapshot "" or the one to go back
 * to) or a snapshot of a ready sandbox's data and later calls
 * cache_data_done(); -1 when it could not start.
 */
struct sbx_runtime_ops {
	int	(*provision)(void *impl, struct sbx_sandbox *sb);
	bool	(*is_live)(void *impl, struct sbx_sandbox *sb);
	int	(*teardown)(void *impl, struct sbx_sandbox *sb);
	void	(*forget)(void *impl, struct sbx_sandbox *sb);	/* optional */
	void	(*gone)(void *impl, struct sbx_sandbox *sb);	/* optional */
	int	(*claim)(void *impl, struct sbx_sandbox *sb);	/* optional */
	int	(*data)(void *impl, struct sbx_sandbox *sb, enum sbx_req_type,
		    const char *snapshot);			/* optional */
};

struct sbx_runtime {
	const struct sbx_runtime_ops *ops;
	void		*impl;
};

/* Every limit but idle_ttl_ms: 0 is unlimited. Per uid means per owner. */
struct cache_limits {
	unsigned	max_per_uid;	/* sandboxes (entries) */
	int64_t		idle_ttl_ms;	/* 0: never expire */
	unsigned	max_sandboxes;	/* entries in all */
	unsigned	max_fds;	/* service descriptors (pidfds) in all */
	unsigned	max_requests;	/* request_sandbox waiting, in all */
	unsigned	max_requests_per_uid;	/* requests and releases */
	unsigned	max_waiters;	/* on one entry */
	unsigned	max_provisions;	/* running, in all */
	unsigned	max_provisions_per_uid;	/* past it, a request waits */
	int64_t		max_wait_ms;	/* ...this long at most; 0: no bound */
};

struct cache {
	struct sbx_tree	tree;
	struct sbx_quotas quotas;
	struct sbx_runtime rt;
	struct cache_limits lim;
	size_t		count;		/* entries */
	size_t		nrequests;	/* waiters, all entries */
	size_t		nprovisions;
	size_t		nfds;
	size_t		nstalled;
	size_t		revoke_busy;	/* busy at the last cache_revoke() */
	int64_t		(*clock)(void);
	/* Whose quotas an adopted sandbox counts toward (NULL: its uid). */
	uid_t		(*owner_of)(void *arg, uid_t);
	void		*owner_arg;
	/* A sandbox took a lease (its pidfd to watch, its record to write). */
	void		(*leased)(void *arg, struct sbx_sandbox *);
};

/* A provision's outcome, as the runtime reports it. */
struct sbx_outcome {
	enum sbx_code	code;
	char		message[SBX_MESSAGE_MAX];
	struct sbx_svc	svc[SBX_MAX_SERVICES];	/* in sb->svc[] order */
	uint32_t	dropped_gone;	/* a reshape: bit i, sb->prev[i] removed */
};

void	cache_init(struct cache *, struct sbx_runtime, struct cache_limits,
	    int64_t (*clock)(void));
/* owner: whose quotas the request counts toward (uid, or its subuid owner). */
void	cache_request(struct cache *, uid_t, uid_t owner, const char *agent,
	    const char *project, const char (*services)[SBX_SLUG_MAX],
	    size_t nservices, struct sbx_lease *, struct sbx_reply);
void	cache_release(struct cache *, uid_t, uid_t owner, const char *agent,
	    struct sbx_reply);
/* A reset or a snapshot (op) of the caller's sandbox: no_sandbox if it
 * holds none for agent; else queued behind what runs on it. */
void	cache_data(struct cache *, uid_t, uid_t owner, const char *agent,
	    enum sbx_req_type op, const char *snapshot, struct sbx_reply);
void	cache_retry(struct cache *);
struct sbx_sandbox *cache_find(struct cache *, uid_t, const char *agent);
size_t	cache_expire(struct cache *);

/*
 * A sandbox that outlived the previous monitor (adopt.c): READY at once,
 * svc[] as recorded (pidfds open). NULL if the key is taken or memory
 * is short; the caller then tears it down.
 */
struct sbx_sandbox *cache_adopt(struct cache *, uid_t, const char *agent,
	    const char *project, const struct sbx_svc *svc, size_t n,
	    int64_t created_ms, int64_t used_ms);

/* cache.c's own, for cache_revoke.c: a waiter of the entry's, added at
 * its head or tail; an entry's next operation run; a teardown started
 * (false: no worker, it stalls). */
struct sbx_waiter *cache_waiter_new(enum sbx_req_type, struct sbx_reply);
void	cache_waiter_add(struct sbx_sandbox *, struct sbx_waiter *, bool head);
void	cache_run(struct sbx_sandbox *);
bool	cache_teardown_start(struct sbx_sandbox *);

/* Completions, called by the runtime. */
void	cache_provisioned(struct sbx_sandbox *, const struct sbx_outcome *);
/* A claim's ports are the owner's (SBX_OK), or could not be made so:
 * the claimed sandbox is refused and torn down. */
void	cache_claimed(struct sbx_sandbox *, enum sbx_code, const char *);
void	cache_torn_down(struct sbx_sandbox *);
/* A reset or snapshot ended (message: the worker's sentence). Its job
 * still counts toward max_provisions (its owner's and the host's) until
 * the runtime says its process exited, sb or no sb by then. */
void	cache_data_done(struct sbx_sandbox *, enum sbx_code,
	    const char *message);
void	cache_data_exited(struct cache *, uid_t owner);
/* The runtime refused: sb stays as it was (why: the runtime's words). */
void	cache_teardown_failed(struct sbx_sandbox *, const char *why);

#endif /* SBX_CACHE_H */
