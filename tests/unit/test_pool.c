/*
 * test_pool.c - the monitor's worker pool (privsep/monitor/jobpool.c) against a
 * stand-in for sbx-worker (fake_worker.c): real forks and execs. A result
 * is taken only when it is exactly its size; a worker that writes less,
 * dies or overruns its deadline gives NULL, and is killed with its
 * process group; what a worker writes past its result is never read.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "jobpool.h"

#ifndef FAKE_WORKER
#error "FAKE_WORKER: the stand-in's path, from tests.mk"
#endif

static struct sbx_config cfg;
static struct worker_pool pool;

struct got {
	int	calls;
	size_t	len;
	char	buf[32];
	bool	null;
};

static void
done(void *arg, const void *result, size_t len)
{
	struct got *g = arg;

	g->calls++;
	g->null = result == NULL;
	g->len = len;
	if (result != NULL && len <= sizeof(g->buf))
		memcpy(g->buf, result, len);
}

/* The loop's part, once. */
static void
run_once(void)
{
	struct pollfd pfd[8];
	size_t n;

	n = workers_pollfds(&pool, pfd, 8);
	poll(pfd, n, 50);
	workers_events(&pool, pfd, n);
	workers_expire(&pool, now_ms());
}

/* Poll the pool until g is answered or 5 s pass. */
static void
run_until(struct got *g)
{
	int64_t end = now_ms() + 5000;

	while (g->calls == 0 && now_ms() < end)
		run_once();
}

/* Poll the pool until it holds no worker or 5 s pass. */
static void
run_until_empty(void)
{
	int64_t end = now_ms() + 5000;

	while (pool.n > 0 && now_ms() < end)
		run_once();
}

static void
exited(void *arg)
{
	struct got *g = arg;

	cr_assert_eq(g->calls, 1, "its result came first");
	g->calls++;
}

static void
setup(void)
{
	char err[256];

	memset(&cfg, 0, sizeof(cfg));
	cfg.nservices = 1;
	strlcpy(cfg.services[0].name, "redis", SBX_SLUG_MAX);
	cr_assert_eq(workers_open(FAKE_WORKER, err, sizeof(err)), 0, "%s", err);
	workers_init(&pool, 2, &cfg);
}

TestSuite(pool, .init = setup);

Test(pool, an_exact_result_is_taken)
{
	struct got g = { 0 };

	cr_assert_eq(worker_spawn(&pool, JOB_PROVISION, 0, "x", 1, 8,
	    now_ms() + 5000, done, &g), 0);
	run_until(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert_not(g.null);
	cr_assert_eq(g.len, 8);
	cr_assert_eq(memcmp(g.buf, "ABCDEFGH", 8), 0);
	run_until_empty();
	cr_assert_eq(pool.n, 0, "the worker left the pool once it exited");
}

/* A worker that goes on after its result (a reset's tidy-up) holds its
 * place in the pool until its process has exited, and says so then. */
Test(pool, a_worker_counts_until_its_process_exits)
{
	struct got g = { 0 }, other = { 0 };

	workers_init(&pool, 1, &cfg);
	cr_assert_eq(worker_spawn_held(&pool, JOB_DATA, 0, "x", 1, 8,
	    now_ms() + 5000, done, &g, exited, &g), 0);
	run_until(&g);
	cr_assert_eq(g.calls, 1, "answered, not yet exited");
	cr_assert_not(g.null);
	cr_assert_eq(pool.n, 1, "it still runs: still counted");
	errno = 0;
	cr_assert_eq(worker_spawn(&pool, JOB_PROVISION, 0, "x", 1, 8,
	    now_ms() + 5000, done, &other), -1, "no room past max_workers");
	cr_assert_eq(errno, EAGAIN);
	run_until_empty();
	cr_assert_eq(g.calls, 2, "its exit was told");
	cr_assert_eq(pool.n, 0);
	cr_assert_eq(worker_spawn(&pool, JOB_PROVISION, 0, "x", 1, 8,
	    now_ms() + 5000, done, &other), 0, "its place is free again");
	run_until(&other);
	run_until_empty();
}

Test(pool, a_short_result_is_none)
{
	struct got g = { 0 };

	cr_assert_eq(worker_spawn(&pool, JOB_TEARDOWN, 0, "x", 1, 8,
	    now_ms() + 5000, done, &g), 0);
	run_until(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert(g.null, "3 bytes of 8 are no result");
}

Test(pool, past_its_deadline_a_worker_is_killed)
{
	struct got g = { 0 };
	pid_t pid;
	int status;
	int64_t t0 = now_ms();

	cr_assert_eq(worker_spawn(&pool, JOB_EVICT, 0, "x", 1, 8,
	    now_ms() + 300, done, &g), 0);
	pid = TAILQ_FIRST(&pool.live)->pid;
	run_until(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert(g.null);
	cr_assert_lt(now_ms() - t0, 2000, "at its deadline, not later");
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "killed, not left to run");
}

Test(pool, what_a_worker_writes_past_its_result_is_not_read)
{
	struct got g = { 0 };

	cr_assert_eq(worker_spawn(&pool, JOB_RENAME, 0, "x", 1, 8,
	    now_ms() + 5000, done, &g), 0);
	run_until(&g);
	cr_assert_not(g.null);
	cr_assert_eq(g.len, 8);
	cr_assert_eq(memcmp(g.buf, "ABCDEFGH", 8), 0);
}

Test(pool, the_job_arrives_sealed_and_whole)
{
	struct got g = { 0 };

	cr_assert_eq(worker_spawn(&pool, JOB_RELOAD, 1, "12345678", 8, 8,
	    now_ms() + 5000, done, &g), 0);
	run_until(&g);
	cr_assert_not(g.null, "the stand-in found head, env, one section, body");
	cr_assert_eq(memcmp(g.buf, "12345678", 8), 0);
}

Test(pool, a_full_pool_refuses)
{
	struct got g[3] = { { 0 } };

	cr_assert_eq(worker_spawn(&pool, JOB_EVICT, 0, "x", 1, 8,
	    now_ms() + 200, done, &g[0]), 0);
	cr_assert_eq(worker_spawn(&pool, JOB_EVICT, 0, "x", 1, 8,
	    now_ms() + 200, done, &g[1]), 0);
	errno = 0;
	cr_assert_eq(worker_spawn(&pool, JOB_EVICT, 0, "x", 1, 8,
	    now_ms() + 200, done, &g[2]), -1);
	cr_assert_eq(errno, EAGAIN);
	run_until(&g[1]);
	run_until(&g[0]);
	cr_assert_eq(g[2].calls, 0);
}

Test(pool, only_an_executable_of_roots_that_only_root_writes)
{
	char path[] = "/tmp/sbx-fake-worker.XXXXXX", err[256];
	int fd = mkstemp(path);

	cr_assert_neq(fd, -1);
	fchmod(fd, 0757);
	close(fd);
	cr_assert_eq(workers_open(path, err, sizeof(err)), -1);
	cr_assert(strstr(err, "only root may write") != NULL, "%s", err);
	chmod(path, 0644);
	cr_assert_eq(workers_open(path, err, sizeof(err)), -1,
	    "not executable");
	unlink(path);
	cr_assert_eq(workers_open("/nonexistent/sbx-worker", err,
	    sizeof(err)), -1);
}
