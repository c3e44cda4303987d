/*
 * service.c - a [service] section of the config, by its name, and
 * whether its containers have a directory on the host.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker
 *   jobs and a provision's service children (root, runtime deny filter)
 */
#include <stdbool.h>
#include <string.h>

#include "config.h"
#include "service.h"

const struct service_cfg *
config_service(const struct sbx_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nservices; i++)
		if (!strcmp(c->services[i].name, name))
			return &c->services[i];
	return NULL;
}

bool
service_has_unit(const struct service_cfg *s)
{
	return (s->transport & TRANSPORT_UNIX) || s->data_path[0] != '\0';
}
