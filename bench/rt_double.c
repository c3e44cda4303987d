/*
 * rt_double.c - the bench monitor's runtime (figures 5, 6): the unit
 * tests' double, tests/unit/rtdouble.c, behind what the runtime's files
 * export to the rest of the monitor (privsep/runtime_cli.c: rt_cli_ops;
 * rt_run.c: runtime_lock_host, runtime_lock_moved, runtime_list,
 * runtime_remove;
 * liveness.c: rt_listening; helper.c: helper_exec, helper_main), and no
 * warm containers (privsep/warm.c is left out: it needs the runtime).
 *
 * So $(O)/bench/sbx-monitor-double is the real monitor loop, dispatch,
 * cache, handler and the real broker with only podman replaced: a
 * provision completes at once and every entry reports live. That lets the
 * bench fill the cache with thousands of entries through the real socket
 * and measure memory and lookup cost alone.
 */
#include <unistd.h>

#include "rtdouble.h"
#include "runtime.h"

/* The monitor passes its struct rt_cli as impl; the double has its own. */
static struct rtdouble dbl = { .live = true };

static int
dbl_provision(void *impl, struct sbx_sandbox *sb)
{
	(void)impl;
	return rtd_ops.provision(&dbl, sb);
}

static bool
dbl_is_live(void *impl, struct sbx_sandbox *sb)
{
	(void)impl;
	return rtd_ops.is_live(&dbl, sb);
}

static int
dbl_teardown(void *impl, struct sbx_sandbox *sb)
{
	(void)impl;
	return rtd_ops.teardown(&dbl, sb);
}

const struct sbx_runtime_ops rt_cli_ops = {
	.provision = dbl_provision,
	.is_live = dbl_is_live,
	.teardown = dbl_teardown,
};

/* No container: several double monitors run at once (figure 6). */
int
runtime_lock_host(const struct sbx_config *cfg, char *err, size_t errlen)
{
	(void)cfg;
	(void)err;
	(void)errlen;
	return 0;
}

void
runtime_lock_moved(void)
{
}

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

/* warm.c's interface, for a runtime that keeps none. */
int
warm_init(struct rt_cli *rt)
{
	(void)rt;
	return 0;
}

void
warm_work(struct rt_cli *rt, size_t provisions)
{
	(void)rt;
	(void)provisions;
}

int
warm_adopt(struct rt_cli *rt, const char *service, unsigned slot,
    const struct sbx_conn *c, int pid, int pidfd)
{
	(void)rt;
	(void)service;
	(void)slot;
	(void)c;
	(void)pid;
	(void)pidfd;
	return -1;
}

void
warm_unrecord(struct rt_cli *rt)
{
	(void)rt;
}

void
warm_rename_later(struct rt_cli *rt, const char *from, const char *to,
    unsigned slot)
{
	(void)rt;
	(void)from;
	(void)to;
	(void)slot;
}

bool
warm_owns_dir(const struct rt_cli *rt, const char *path)
{
	(void)rt;
	(void)path;
	return false;
}

unsigned
warm_ready(const struct rt_cli *rt, size_t svc)
{
	(void)rt;
	(void)svc;
	return 0;
}
