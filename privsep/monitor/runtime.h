/*
 * runtime.h - the docker-CLI-compatible runtime behind struct sbx_runtime
 * (runtime.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_RUNTIME_H
#define SBX_RUNTIME_H

#include "cache.h"
#include "claims.h"
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
	struct claims		 claims;	/* their ports' hand-over */
	const struct project_table *projects;	/* for their seeds */
	struct cache		*cache;		/* login.c finds its sandboxes */
	/* Ranges of failed provisions whose containers the runtime did not
	 * say are gone: held until a later removal of their key does. */
	struct cleanup_list	 held;
};

extern const struct sbx_runtime_ops rt_cli_ops;

/* A warm container's job: the worker is given w, or renames. */
struct warm_job {
	struct rt_cli	*rt;
	size_t		 svc;		/* its config index */
	struct job_warm	 w;
	struct job_renames renames;
};

/* How the agent reaches service s of sb. */
void	reach(const struct sbx_config *, const struct sbx_sandbox *,
	    const struct service_cfg *, struct sbx_conn *);
/* The first host uid of service s's range in slot (idmap.c's layout). */
static inline uint32_t
rt_host_uid(const struct rt_cli *rt, unsigned slot,
    const struct service_cfg *s)
{
	return idmap_host_uid(&rt->idmap, slot,
	    (unsigned)(s - rt->cfg->services));
}

#endif
