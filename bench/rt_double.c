/*
 * rt_double.c - the bench monitor's runtime (figures 5, 6): the unit
 * tests' double, tests/unit/rtdouble.c, behind what the runtime's files
 * export to the rest of the monitor (privsep/monitor/runtime.c: rt_cli_ops;
 * rt_start.c: runtime_lock_host, runtime_lock_moved, runtime_remove;
 * liveness.c: nothing the rest calls), and no warm containers
 * (privsep/monitor/warm.c is left out: it needs the runtime). Adoption's reading
 * and the runtime's listing are sbx-worker's (JOB_ADOPT) since the split,
 * and rt_listening is shared/listen.c's: neither is doubled here.
 *
 * So $(O)/bench/sbx-monitor-double is the real monitor loop, dispatch,
 * cache, handler and the real broker with only podman replaced: a
 * provision completes at once and every entry reports live. That lets the
 * bench fill the cache with thousands of entries through the real socket
 * and measure memory and lookup cost alone.
 */
#include <unistd.h>

#include "rt_start.h"
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

/* Nothing the adoption at start finds is removed. */
int
runtime_remove(const struct sbx_config *cfg, const struct rt_gone *gone,
    size_t n)
{
	(void)cfg;
	(void)gone;
	(void)n;
	return 0;
}

/* warm.c's interface, for a runtime that keeps none. */
int
warm_init(struct rt_cli *rt, const struct project_table *pt)
{
	(void)rt;
	(void)pt;
	return 0;
}

void
warm_projects(struct rt_cli *rt, const struct project_table *pt)
{
	(void)rt;
	(void)pt;
}

void
warm_work(struct rt_cli *rt, size_t provisions)
{
	(void)rt;
	(void)provisions;
}

int
warm_adopt(struct rt_cli *rt, const char *service, unsigned slot,
    const struct sbx_conn *c, uint32_t host_uid, int pid, int pidfd)
{
	(void)rt;
	(void)service;
	(void)slot;
	(void)c;
	(void)host_uid;
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

void
warm_metrics(const struct rt_cli *rt, size_t svc, struct metrics_svc *m)
{
	(void)rt;
	(void)svc;
	m->warm = 0;
}

/* The double has no containers to purge. */
int
runtime_purge(const struct sbx_config *cfg)
{
	(void)cfg;
	return 1;
}
