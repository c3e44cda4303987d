/*
 * rtname.h - container names and the runtime's flavour (rtname.c).
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker
 *   jobs and a provision's service children (root, runtime deny filter)
 */
#ifndef SBX_RTNAME_H
#define SBX_RTNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

#define RT_NAME_MAX	(SBX_SLUG_MAX * 3)

bool	rt_is_docker(const struct sbx_config *);
bool	rt_is_podman(const struct sbx_config *);
int	rt_container_name(char *out, size_t cap, uid_t uid, const char *agent,
	    const char *service);
int	rt_pool_name(char *out, size_t cap, const char *service,
	    unsigned slot);
/* The names a service's container may have: 1 or 2, 0 if none fits. */
size_t	rt_svc_names(uid_t uid, const char *agent, const char *service,
	    unsigned warm, char (*names)[RT_NAME_MAX]);

#endif
