/* runtime.h - the docker-CLI-compatible runtime behind struct sbx_runtime. */
#ifndef SBX_RUNTIME_H
#define SBX_RUNTIME_H

#include "cache.h"
#include "config.h"
#include "idmap.h"
#include "worker.h"

struct rt_cli {
	const struct sbx_config	*cfg;
	struct worker_pool	*pool;
	struct idmap		 idmap;
};

extern const struct sbx_runtime_ops rt_cli_ops;

/* At start, before serving: remove every container with sbx labels. */
int	runtime_reap_orphans(const struct sbx_config *);

#endif
