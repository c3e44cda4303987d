/*
 * pg_data.h - a reset or a snapshot of a sandbox's postgres (pg_data.c).
 * runs in: a session child of JOB_DATA (svc_session.c; the sandbox's prober
 *   uid, not dumpable, session allowlist), a client of the server as sbx's
 *   keeper role
 */
#ifndef SBX_PG_DATA_H
#define SBX_PG_DATA_H

/* A seeded postgres's hand-out state, and its copy made ahead for the
 * first reset (seed_session.c makes both, pg_data.c uses them). */
#define PG_ORIGIN	"sbx_origin"
#define PG_NEXT_ORIGIN	"sbx_next_origin"

struct session_env;

/* A session_fn (svc_session.h), arg a struct data_req (data.h). */
void	pg_data_session(const struct session_env *, void *arg);
/* A kept session's loop: a job for each ask (job.h's data_ask, as the
 * resident was sent it), until the parent goes. */
void	pg_data_kept(const struct session_env *, void *arg);

/* Slot i of "sbx_snap_<i>" (i below SBX_MAX_SNAPSHOTS, no leading zero),
 * else -1. */
int	pg_snap_slot(const char *datname, const char *prefix);

#endif
