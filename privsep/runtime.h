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

/* A container with sbx labels, as the runtime lists it (adopt.c). */
struct rt_seen {
	char	name[SBX_SLUG_MAX * 3];
	char	agent[SBX_SLUG_MAX];
	uid_t	uid;
	int	pid;		/* 0: not running */
	int	port;		/* published on 127.0.0.1, or 0 */
};

int	runtime_list(const struct sbx_config *, struct rt_seen **, size_t *);
/* What adoption discards: a whole key, or one service of a kept one. */
struct rt_gone {
	struct sbx_key	key;
	char		service[SBX_SLUG_MAX];	/* "": every container */
};
int	runtime_remove(const struct sbx_config *, const struct rt_gone *,
	    size_t);
/* Does something listen at c's socket or loopback port? Never waits. */
bool	rt_listening(const struct sbx_conn *);

#endif
