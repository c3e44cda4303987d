/*
 * rt_run.h - the removals and the listing, built on run_logged (run.h), and
 * JOB_REMOVE (rt_run.c).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and a listing's child until its exec (root, runtime deny
 *   filter)
 */
#ifndef SBX_RT_RUN_H
#define SBX_RT_RUN_H

#include <stddef.h>
#include <stdint.h>

struct job_sandbox;
struct job_svc;
struct rt_seen;
struct run_result;
struct sbx_config;
struct sbx_key;

/* Removals; 0 when the runtime said they went. */
int	remove_key(const struct sbx_config *, const struct sbx_key *,
	    int64_t deadline, struct run_result *);
void	remove_storage(const struct sbx_config *, const char *name,
	    int64_t deadline);
int	remove_names(const struct sbx_config *, const char *first,
	    const char *second, int64_t deadline);
/* A claimed warm container's rename or removal, one at a time. */
int	names_lock(const struct sbx_config *);
void	names_unlock(int);
int	remove_svc_names(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_service(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_claimed(const struct sbx_config *, const struct sbx_key *,
	    const struct job_svc *, size_t n, int64_t deadline);
uint32_t remove_dropped(const struct sbx_config *,
	    const struct job_sandbox *, int64_t deadline);

/* Every container of sbx's that the runtime lists, parsed. */
int	rt_list(const struct sbx_config *, struct rt_seen **, size_t *);

/* JOB_REMOVE's body (main.c's table): it writes its one result to fd;
 * its return is its exit. */
int	remove_gone_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
