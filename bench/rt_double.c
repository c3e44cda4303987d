/*
 * rt_double.c - a runtime double for the bench monitor (figures 5, 6).
 *
 * It implements exactly what privsep/runtime_cli.c exports (rt_cli_ops,
 * runtime_list, runtime_remove, rt_listening), so $(O)/bench/sbx-monitor-double is the real
 * monitor loop, dispatch, cache, handler and the real broker with only
 * podman replaced: a provision completes at once and every entry reports
 * live. That lets the bench fill the cache with thousands of entries
 * through the real socket and measure memory and lookup cost alone.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static uint32_t next_port = 20000;

static int
dbl_provision(void *impl, struct sbx_sandbox *sb)
{
	struct sbx_outcome o;
	size_t i;

	(void)impl;
	memset(&o, 0, sizeof(o));
	o.code = SBX_OK;
	strlcpy(o.message, "ready", sizeof(o.message));
	for (i = 0; i < sb->nservices; i++) {
		strlcpy(o.svc[i].conn.name, sb->svc[i].conn.name, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.host, "127.0.0.1", SBX_HOST_MAX);
		strlcpy(o.svc[i].conn.user, "default", SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.database, "0", SBX_SLUG_MAX);
		o.svc[i].conn.port = next_port++ % 40000 + 20000;
		o.svc[i].pid = getpid();
		o.svc[i].pidfd = -1;
	}
	/* Synchronous completion, as tests/unit/rtdouble.h does. */
	cache_provisioned(sb, &o);
	return 0;
}

static bool
dbl_is_live(void *impl, struct sbx_sandbox *sb)
{
	(void)impl;
	(void)sb;
	return true;
}

static int
dbl_teardown(void *impl, struct sbx_sandbox *sb)
{
	(void)impl;
	cache_torn_down(sb);
	return 0;
}

const struct sbx_runtime_ops rt_cli_ops = {
	.provision = dbl_provision,
	.is_live = dbl_is_live,
	.teardown = dbl_teardown,
};

/* No container outlives a bench run: nothing to adopt. */
int
runtime_list(const struct sbx_config *cfg, struct rt_seen **out, size_t *n)
{
	(void)cfg;
	*out = NULL;
	*n = 0;
	return 0;
}

int
runtime_remove(const struct sbx_config *cfg, const struct rt_gone *gone,
    size_t n)
{
	(void)cfg;
	(void)gone;
	(void)n;
	return 0;
}

bool
rt_listening(const struct sbx_conn *c)
{
	(void)c;
	return true;
}
