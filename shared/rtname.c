/*
 * rtname.c - what the runtime calls sbx's containers, and which runtime
 * it is: the monitor names what it decides about, a worker what it runs.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker
 *   jobs and a provision's service children (root, runtime deny filter)
 */
#include <stdio.h>
#include <string.h>

#include "rtname.h"

/*
 * The runtime's flavour is its file name, fixed by the config: a name
 * that begins with "docker" (/usr/bin/docker) is docker's CLI; any other
 * is podman's, whose argv is the reference. docker lacks --replace,
 * --pidfile, rm -t and rm --filter, per-container --uidmap, the volume
 * option U, slirp4netns and a pid in ps (sbx-monitor(8), RUNTIMES).
 */
bool
rt_is_docker(const struct sbx_config *cfg)
{
	const char *base = strrchr(cfg->runtime, '/');

	return strncmp(base != NULL ? base + 1 : cfg->runtime, "docker",
	    6) == 0;
}

bool
rt_is_podman(const struct sbx_config *cfg)
{
	return !rt_is_docker(cfg);
}

int
rt_container_name(char *out, size_t cap, uid_t uid, const char *agent,
    const char *service)
{
	int n = snprintf(out, cap, "sbx-%u-%s-%s", (unsigned)uid, agent,
	    service);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
rt_pool_name(char *out, size_t cap, const char *service, unsigned slot)
{
	int n = snprintf(out, cap, "sbx-pool-%s-%u", service, slot);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/*
 * The names a service's container may have: the sandbox's own, or for
 * a claimed warm one (slot) its pool name and, once renamed after the
 * reply, sbx-<uid>-<agent>-<service>-w<slot>. How many.
 */
size_t
rt_svc_names(uid_t uid, const char *agent, const char *service,
    unsigned warm, char (*names)[SBX_SLUG_MAX * 3])
{
	char base[SBX_SLUG_MAX * 3];

	if (rt_container_name(base, sizeof(base), uid, agent, service) == -1)
		return 0;
	if (warm == 0) {
		strlcpy(names[0], base, sizeof(names[0]));
		return 1;
	}
	if (rt_pool_name(names[0], sizeof(names[0]), service, warm) == -1 ||
	    snprintf(names[1], sizeof(names[1]), "%s-w%u", base, warm) >=
	    (int)sizeof(names[1]))
		return 0;
	return 2;
}
