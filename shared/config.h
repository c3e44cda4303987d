/*
 * config.h - /etc/sbx/sbx.conf, parsed with libinih and validated: its
 * types, shared by every file that reads the config (the parser is
 * privsep/worker/config_parse.c; a service's lookup, service.h).
 * runs in: the monitor (root, monitor allowlist once started), its forks of
 *   the broker (root, unfiltered) and of a worker (root, runtime deny filter)
 *   until their exec; sbx-worker jobs and their children (root, runtime deny
 *   filter), the prober and session children (root until their drop, then the
 *   sandbox's prober uid, probe or session allowlist)
 */
#ifndef SBX_CONFIG_H
#define SBX_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/un.h>

#include "msg.h"

#define CFG_STR		256
#define CFG_MAX_ENV	16
#define CFG_MAX_TMPFS	8
#define CFG_MAX_ARGS	32
#define CFG_MAX_RTARGS	16
/* Snapshots one sandbox may hold (max_snapshots): redis's keeper server
 * has a database for each (privsep/worker/redis_data.c). */
#define SBX_MAX_SNAPSHOTS	16
#define POOL_MAX_WARM	64	/* warm containers of one service */
#define WARM_IDLE_MAX	86400	/* warm_idle: a day */
#define WARM_MIB_MAX	65536	/* warm_mib: 64 GiB a container */
#define WARM_MEMORY_MAX	16777216	/* warm_memory: 16 TiB */
#define WARM_MAX_UNSET	(~0U)	/* config_parse.c: warm_max not said: warm */

enum probe_kind { PROBE_TCP, PROBE_POSTGRES, PROBE_REDIS };

/* A uid in another user's /etc/subuid range: its quotas are the owner's,
 * or it is refused. */
enum subuid_mode { SUBUID_COUNT, SUBUID_REFUSE };

/* How a sandbox's service is reached (a bit mask: both = unix | tcp). */
enum transport { TRANSPORT_UNIX = 1, TRANSPORT_TCP = 2, TRANSPORT_BOTH = 3 };

/*
 * Where a service's Unix socket is: the container has its socket
 * directory at SBX_SOCKET_MOUNT, and the service names its socket
 * socket_name there (.s.PGSQL.<port> for postgres, libpq's convention;
 * redis.sock; service.sock for the rest).
 */
#define SBX_SOCKET_MOUNT	"/sbx"
#define SBX_RUN_DIR_MAX		24	/* with the names below, a socket path < 108 */
#define SBX_SOCKDIR_SVC_MAX	20	/* a service name in a socket path */

struct service_cfg {
	char		name[SBX_SLUG_MAX];
	char		image[CFG_STR];
	unsigned	port;
	enum probe_kind	probe;
	char		user[SBX_SLUG_MAX];
	char		database[SBX_SLUG_MAX];
	size_t		nenv;
	char		env[CFG_MAX_ENV][CFG_STR];	/* NAME=template */
	size_t		ntmpfs;
	char		tmpfs[CFG_MAX_TMPFS][CFG_STR];
	size_t		nargs;
	char		args[CFG_MAX_ARGS][CFG_STR];
	char		memory[32];
	char		cpus[16];
	unsigned	pids;
	unsigned	ready_timeout;		/* seconds */
	unsigned	warm;			/* containers kept ready (warm.c) */
	enum transport	transport;
	char		socket_name[16];
	char		log_size[32];		/* runtime's log cap, e.g. 1m */
	/* What its containers are started with, hashed once per load
	 * (config_parse.c): a record holds it, and adoption keeps only what is
	 * still configured as it was. hash_v2 is what records of version
	 * 2 and older hold (the bytes above, as laid out since then). */
	uint64_t	hash;
	uint64_t	hash_v2;
	/* The pool following demand (warm.c, demand.c): after the hashes,
	 * which hash_v2 hashes the bytes before. */
	unsigned	warm_max;		/* its ceiling; warm: fixed */
	unsigned	warm_idle;		/* seconds a peak is kept */
	unsigned	warm_mib;		/* counted per member (budget) */
	/* The data directory laid over a host template (datadir.c): the
	 * container's path, the host directory, the tmpfs size of what
	 * the sandbox changes. data_path "" when none. */
	char		data_path[CFG_STR];
	char		data_template[CFG_STR];
	char		data_size[32];
};

struct sbx_config {
	bool		enabled;
	char		socket[sizeof(((struct sockaddr_un *)0)->sun_path)];
	mode_t		socket_mode;
	char		broker_user[64];
	char		projects[CFG_STR];
	char		runtime[CFG_STR];	/* resolved to a path */
	size_t		nruntime_args;
	char		runtime_args[CFG_MAX_RTARGS][CFG_STR];
	char		state_dir[CFG_STR];
	char		run_dir[SBX_RUN_DIR_MAX + 1];	/* per-uid socket dirs */
	unsigned	idle_ttl;		/* seconds, 0 = never */
	unsigned	max_sandboxes_per_uid;	/* 0 = unlimited */
	unsigned	max_children;		/* broker's live children */
	unsigned	max_connections_per_uid; /* of those, one uid's */
	unsigned	max_workers;		/* concurrent runtime workers */
	unsigned	request_timeout;	/* seconds for an agent to send */
	unsigned	runtime_timeout;	/* seconds for one runtime call */
	char		metrics_file[CFG_STR];	/* "": none */
	unsigned	userns_base;		/* first host uid for containers */
	unsigned	userns_slots;		/* ranges of 65536 from there */
	/* Fairness and the descriptor budget (issue #15; sbx.conf(5)). */
	unsigned	max_open_files;		/* RLIMIT_NOFILE target, 0 = hard */
	unsigned	max_sandboxes;		/* in all, 0 = the budget's */
	unsigned	max_requests;		/* waiting in the monitor, all */
	unsigned	max_requests_per_uid;
	unsigned	max_waiters;		/* queued on one sandbox */
	unsigned	max_provisions;		/* running at once, all */
	unsigned	max_provisions_per_uid;
	unsigned	max_snapshots;		/* per sandbox */
	enum subuid_mode subuid;		/* subordinate uids: count, refuse */
	char		subuid_file[CFG_STR];
	unsigned	warm_memory;		/* MiB for pools above floors, 0 any */
	size_t		nservices;
	struct service_cfg services[SBX_MAX_SERVICES];
};

#endif
