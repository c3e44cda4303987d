/* service.c - a [service] section of the config, by its name. */
#include <string.h>

#include "config.h"

const struct service_cfg *
config_service(const struct sbx_config *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nservices; i++)
		if (!strcmp(c->services[i].name, name))
			return &c->services[i];
	return NULL;
}
