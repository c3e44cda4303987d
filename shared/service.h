/*
 * service.h - a [service] section of the config, by its name, and
 * whether its containers have a directory on the host (service.c).
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker
 *   jobs and a provision's service children (root, runtime deny filter)
 */
#ifndef SBX_SERVICE_H
#define SBX_SERVICE_H

#include <stdbool.h>

struct sbx_config;
struct service_cfg;

const struct service_cfg *config_service(const struct sbx_config *,
	    const char *name);
/* A socket directory or data (datadir.c): its containers have a unit,
 * run_dir/.../<service>/, made before they start and claimed with them. */
bool	service_has_unit(const struct service_cfg *);

#endif
