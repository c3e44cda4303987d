/*
 * warm.h - containers started ahead of any request, so that a miss is a
 * claim: no runtime call before the reply (warm.c).
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 */
#ifndef SBX_WARM_H
#define SBX_WARM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "demand.h"
#include "job.h"
#include "metrics_snap.h"

struct rt_cli;

struct warm_member {
	unsigned	slot;		/* its uid range and name; 0: unused */
	bool		ready;		/* started and probed, else starting */
	uint64_t	seed_sum;	/* the seed it was started with */
	struct sbx_svc	svc;		/* password, port, pid, pidfd */
};

/*
 * One service's warm containers: of any project (project "": the
 * [service] section's warm), or of one project's pool (its file's warm),
 * started with the project's seed applied. Only the first kind is
 * recorded and adopted at a restart; a project's pool starts anew.
 */
struct warm_pool {
	size_t		svc;		/* config index */
	char		project[SBX_SLUG_MAX];
	char		seed[SBX_SLUG_MAX];	/* its seed file, "" none */
	uint64_t	seed_sum;
	unsigned	want;		/* members kept ready: its target */
	struct demand_bounds bounds;	/* warm, warm_max, warm_idle, mib */
	struct demand	demand;		/* its new agents (demand.c) */
	unsigned	cap;		/* m[] */
	struct warm_member *m;
	unsigned	nready, nstarting;
	int64_t		retry_at, retry_ms;	/* after failed starts */
};

/* The services' own pools, then projects'. */
#define WARM_POOLS	(SBX_MAX_SERVICES * 5)

/* A claimed container's pool record, removed after the reply: an
 * unlink costs a claim's reply up to a few hundred us on ext4, and a
 * restart before it finds the sandbox's record first (adopt.c). */
struct warm_unrecord {
	char		service[SBX_SLUG_MAX];
	unsigned	slot;
};

struct warm {
	struct warm_pool pool[WARM_POOLS];	/* [i < nservices]: service i's */
	unsigned	project_cap;	/* members of projects' pools, at most */
	struct warm_rename renames[WARM_RENAMES];
	size_t		nrenames;
	struct warm_unrecord unrecords[WARM_RENAMES];
	size_t		nunrecords;
	/* One rename job at a time; the slots freed meanwhile that it
	 * names wait for its end: a new warm container would take the
	 * old one's pool name, and the job would rename it. */
	const struct job_renames *renaming;
	unsigned	held[WARM_RENAMES];
	size_t		nheld;
	unsigned	starting;	/* all services */
	/* Claims whose ports change hands now: refills and renames wait
	 * for them, which would take the two cores from under them. */
	unsigned	claiming;
};

/* The services' pools, and projects' within project_cap members (each
 * pool's warm_max: its descriptors are budgeted at start). */
int	warm_init(struct rt_cli *, const struct project_table *);
/* At start and after a SIGHUP: the projects' pools as their files say;
 * a pool whose project or seed changed is emptied. */
void	warm_projects(struct rt_cli *, const struct project_table *);
/*
 * A ready, live warm container of service for a sandbox of project
 * (seeded: the project's seed file, or NULL): from the project's pool,
 * else from the service's own if no seed is missing from it. It leaves
 * the pool at warm_taken. Dead ones met on the way are removed and
 * replaced. NULL: none.
 */
struct warm_member *warm_take(struct rt_cli *, const char *service,
	    const char *project, bool seeded);
void	warm_taken(struct rt_cli *, struct warm_member *);
/* A new agent's request for service met its pool: claimed or missed
 * (once per request: runtime.c). */
void	warm_demand(struct rt_cli *, const char *service, const char *project,
	    bool seeded, bool claimed);
/* After the reply: rename a claimed container for the admin's ps. */
void	warm_rename_later(struct rt_cli *, const char *from, const char *to,
	    unsigned slot);
/* A claimed container's removal starts: its rename, not yet started,
 * is not (a rename already running goes first: privsep/worker/rt_run.c,
 * names_lock). */
void	warm_rename_cancel(struct rt_cli *, unsigned slot);
/* A claimed container's slot, its containers gone: no rename of it may
 * follow, and its uid range comes back (at once, or after the rename
 * job in flight). */
void	warm_slot_free(struct rt_cli *, unsigned slot);
/*
 * From the monitor's loop, after the replies are out: start the renames;
 * set each pool's target from its demand (demand.c) within warm_memory;
 * start containers until each pool has its target, within what tenants'
 * provisions (running) leave of max_provisions and the workers, and
 * remove a few of a pool above it, with a worker no tenant needs.
 */
void	warm_work(struct rt_cli *, size_t provisions);
/* The claimed ones' pool records: removed (warm_work; at the end). */
void	warm_unrecord(struct rt_cli *);
/* Adoption: a warm container that outlived the last monitor. */
int	warm_adopt(struct rt_cli *, const char *service, unsigned slot,
	    const struct sbx_conn *, uint32_t host_uid, int pid, int pidfd);
/* Its socket directory (sockdir_prune's keep). */
bool	warm_owns_dir(const struct rt_cli *, const char *path);
unsigned warm_ready(const struct rt_cli *, size_t svc);
/* Service svc's pools for the metrics: its own, and its projects' summed. */
void	warm_metrics(const struct rt_cli *, size_t svc, struct metrics_svc *);

#endif
