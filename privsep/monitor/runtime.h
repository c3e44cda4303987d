/*
 * runtime.h - the docker-CLI-compatible runtime behind struct sbx_runtime.
 * runs in: the monitor (root, unfiltered)
 */
#ifndef SBX_RUNTIME_H
#define SBX_RUNTIME_H

#include "cache.h"
#include "config.h"
#include "idmap.h"
#include "warm.h"
#include "job.h"
#include "listen.h"
#include "jobpool.h"

struct cleanup_job;
TAILQ_HEAD(cleanup_list, cleanup_job);

struct rt_cli {
	const struct sbx_config	*cfg;
	struct worker_pool	*pool;
	struct idmap		 idmap;
	struct warm		 warm;		/* warm containers (warm.c) */
	const struct project_table *projects;	/* for their seeds */
	struct cache		*cache;		/* login.c finds its sandboxes */
	/* Ranges of failed provisions whose containers the runtime did not
	 * say are gone: held until a later removal of their key does. */
	struct cleanup_list	 held;
};

extern const struct sbx_runtime_ops rt_cli_ops;

/* At start, before anything else of the runtime's: the host's lock for
 * its sbx containers (one monitor per host and runtime); -1 with err. */
int	runtime_lock_host(const struct sbx_config *, char *err, size_t errlen);
/* After daemon(3): the lock is held still, under the daemon's pid. */
void	runtime_lock_moved(void);
int	runtime_remove(const struct sbx_config *, const struct rt_gone *,
	    size_t);
/* sbx-monitor --purge, with the host's lock: the exit status. */
int	runtime_purge(const struct sbx_config *);
bool	rt_pid_alive(int pidfd);
/* A warm container at a claim: its process and its socket file. */
bool	rt_warm_alive(const struct sbx_svc *);


/* A warm container's job: the worker is given w, or renames. */
struct warm_job {
	struct rt_cli	*rt;
	size_t		 svc;		/* its config index */
	struct job_warm	 w;
	struct job_renames renames;
};

/* How the agent reaches service s of sb (runtime_cli.c). */
void	reach(const struct sbx_config *, const struct sbx_sandbox *,
	    const struct service_cfg *, struct sbx_conn *);
/* A worker's outcome of sb's provision, checked as hostile. */
bool	outcome_valid(const struct job_outcome *, const struct sbx_config *,
	    const struct sbx_sandbox *);
/* A warm start's result, checked as hostile. */
bool	warm_started_valid(const struct warm_started *,
	    const struct service_cfg *);
/* A reset's or snapshot's job (data.c), and its result's check. */
int	rt_data(void *impl, struct sbx_sandbox *, enum sbx_req_type,
	    const char *snapshot);
bool	data_result_valid(const struct data_result *);
bool	login_result_valid(const void *result, size_t len);
bool	claim_result_valid(const void *result, size_t len);
/* A hit's check (liveness.c), and its tcp services' logins (login.c). */
void	login_spawn(struct rt_cli *, struct sbx_sandbox *, size_t svc);
bool	rt_is_live(void *impl, struct sbx_sandbox *);
/* The first host uid of service s's range in slot (idmap.c's layout). */
static inline uint32_t
rt_host_uid(const struct rt_cli *rt, unsigned slot,
    const struct service_cfg *s)
{
	return idmap_host_uid(&rt->idmap, slot,
	    (unsigned)(s - rt->cfg->services));
}

#endif
