/*
 * data.h - JOB_DATA, a reset or a snapshot of a sandbox's data (data.c),
 * and what it asks of its services' sessions (pg_data.c, redis_data.c).
 * runs in: sbx-worker's JOB_DATA (root, runtime deny filter)
 *
 * Each service's session (svc_session.c, session_client.c) goes through
 * the same steps, the parent's bytes between them: it checks (reports
 * whether the job can be done, changing nothing), waits for DATA_GO, acts
 * (reports), then waits for the parent's last word (the reply is written)
 * and tidies up.
 */
#ifndef SBX_DATA_H
#define SBX_DATA_H

#include <stddef.h>
#include <stdint.h>

#define DATA_GO		1	/* parent to session: act */
#define DATA_TIDY	2	/* parent to session: the reply is out */

struct data_result;
struct job_data;
struct job_svc;
struct sbx_config;
struct session;
struct svc_reach;

/* What every session is asked. */
struct data_req {
	uint32_t	 op;		/* enum data_op */
	const char	*snapshot;	/* "" or a slug */
	uint32_t	 max;		/* max_snapshots */
};

/* JOB_DATA's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
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

/* A job from the monitor: counts in range, strings ended, op known, the
 * snapshot "" or a slug (and not "" to save). 0, or -1. */
int	data_job_valid(const struct job_data *);

#endif
