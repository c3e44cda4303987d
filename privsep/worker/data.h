/*
 * data.h - JOB_DATA, a reset or a snapshot of a sandbox's data (data.c),
 * and what its services' sessions share (pg_data.c, redis_data.c).
 * runs in: sbx-worker's JOB_DATA (root, runtime deny filter), and the session
 *   children of it and of a seed (the sandbox's prober uid, session
 *   allowlist)
 *
 * Each service's session (svc_session.c, session_client.c) goes through
 * the same steps, the parent's bytes between them: it checks (reports
 * whether the job can be done, changing nothing), waits for DATA_GO, acts
 * (reports), then waits for the parent's last word (the reply is written)
 * and tidies up.
 */
#ifndef SBX_DATA_H
#define SBX_DATA_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "job.h"
#include "session.h"

#define DATA_GO		1	/* parent to session: act */
#define DATA_TIDY	2	/* parent to session: the reply is out */

/* A seeded postgres's hand-out state, and its copy made ahead for the
 * first reset (seed_session.c makes both, pg_data.c uses them). */
#define PG_ORIGIN	"sbx_origin"
#define PG_NEXT_ORIGIN	"sbx_next_origin"

/* What every session is asked. */
struct data_req {
	uint32_t	 op;		/* enum data_op */
	const char	*snapshot;	/* "" or a slug */
	uint32_t	 max;		/* max_snapshots */
};

/* data.c: JOB_DATA's body (main.c's table): it writes its one result to
 * fd; its return is its exit. */
int	data_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
/* How service v of j is reached (r, with dir as its socket directory's
 * path): 1, or 0 when it holds nothing sbx can reset (a service probed
 * by tcp alone), or -1. */
int	data_reach(const struct sbx_config *, const struct job_data *,
	    const struct job_svc *v, char *dir, size_t dircap,
	    struct svc_reach *r);
/* The sessions of ss (NULL: none for that service), started and asked:
 * every check, then DATA_GO to all and every act. 0 with out the
 * sentence of a job done, or -1 with out the first refusal or failure;
 * which reports were read is then not known. */
int	data_act(struct session *const *ss, const struct job_data *,
	    const struct data_req *, int64_t deadline, struct data_result *out);

/* The snapshots a service holds, by slot: "" a free one. Names come
 * from the tenant's server: only slugs are taken. */
struct snaps {
	char	name[SBX_MAX_SNAPSHOTS][SBX_SLUG_MAX];
	bool	present[SBX_MAX_SNAPSHOTS];	/* a copy is there, named or not */
};

/* A job from the monitor: counts in range, strings ended, op known, the
 * snapshot "" or a slug (and not "" to save). 0, or -1. */
int	data_job_valid(const struct job_data *);
/* s's slot i as named by name (a tenant's text); ignored unless a slug. */
void	snaps_set(struct snaps *, unsigned i, const char *name);
/* The slot of name, or -1. */
int	snaps_find(const struct snaps *, const char *name);
/* Where name goes: its slot, or a free one (a copy with no valid name is
 * free); -1 if it is new and max are held. */
int	snaps_slot(const struct snaps *, const char *name, uint32_t max);
/* The check every service makes: 0, or -1 with its reply reported. */
int	data_check(const struct snaps *, const struct data_req *,
	    const char *service, int *slot);

void	pg_data_session(const struct session_env *, void *arg);
/* A kept session's loop: a job for each ask (job.h's data_ask, as the
 * resident was sent it), until the parent goes. */
void	pg_data_kept(const struct session_env *, void *arg);
/* svc_session.c: the check session_ask (session_client.c) makes of an
 * ask, apart for its unit test. */
int	data_ask_valid(const struct data_ask *);
void	redis_data_session(const struct session_env *, void *arg);

/* pg_data.c: slot i of "sbx_snap_<i>" (i below SBX_MAX_SNAPSHOTS, no
 * leading zero), else -1. */
int	pg_snap_slot(const char *datname, const char *prefix);

#endif
