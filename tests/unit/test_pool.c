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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdpass.h"
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

/* ---- a resident's jobs: sent on its channel, ended by its end's pipe -- */

static int exits;

static void
ended(void *arg)
{
	(void)arg;
	exits++;
}

/*
 * A stand-in resident, a child of ours in a process group of its own:
 * for each message, "RESULT!!" on its result pipe, then the end's pipe
 * closed; hold: the end kept open (a tidy-up that never ends).
 */
static pid_t
fake_resident(int *chan, bool hold)
{
	struct fdpass_rx rx;
	struct pollfd pfd;
	char msg[16];
	int sv[2];
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	if ((pid = fork()) == 0) {
		setpgid(0, 0);
		close(sv[0]);
		pfd = (struct pollfd){ .fd = sv[1], .events = POLLIN };
		while (poll(&pfd, 1, -1) == 1 &&
		    recv_fds(sv[1], msg, sizeof(msg), &rx) > 0 && rx.nfds == 2) {
			if (write(rx.fds[0], "RESULT!!", 8) != 8)
				_exit(1);
			close(rx.fds[0]);
			if (hold)
				pause();
			close(rx.fds[1]);
		}
		_exit(0);
	}
	cr_assert_neq(pid, -1);
	setpgid(pid, pid);
	close(sv[1]);
	*chan = sv[0];
	return pid;
}

/* Its result is taken as a worker's; the job counts until its end's pipe
 * closes, not until the resident exits; a second job goes the same way. */
Test(pool, a_residents_job_counts_until_its_end)
{
	struct got g = { 0 };
	int chan, k;
	pid_t pid = fake_resident(&chan, false);

	workers_init(&pool, 4, &cfg);
	exits = 0;
	for (k = 1; k <= 2; k++) {
		memset(&g, 0, sizeof(g));
		cr_assert_eq(worker_send_held(&pool, pid, chan, "ask", 3, 8,
		    now_ms() + 5000, done, &g, ended, NULL), 0);
		cr_assert_eq(pool.n, 1, "it counts");
		run_until(&g);
		cr_assert_eq(g.calls, 1);
		cr_assert_eq(memcmp(g.buf, "RESULT!!", 8), 0);
		run_until_empty();
		cr_assert_eq(pool.n, 0);
		cr_assert_eq(exits, k, "its end, once per job");
	}
	cr_assert_eq(kill(pid, 0), 0, "the resident lives on");
	close(chan);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

/* A resident gone: nothing sent, -1, and nothing in the pool. */
Test(pool, a_resident_gone_takes_nothing)
{
	struct got g = { 0 };
	int chan;
	pid_t pid = fake_resident(&chan, false);

	workers_init(&pool, 4, &cfg);
	kill(pid, SIGKILL);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_assert_eq(worker_send_held(&pool, pid, chan, "ask", 3, 8,
	    now_ms() + 5000, done, &g, ended, NULL), -1);
	cr_assert_eq(pool.n, 0);
	cr_assert(TAILQ_EMPTY(&pool.live));
	close(chan);
}

/* A job whose end never comes is killed at its deadline, with the
 * resident's process group; the end then comes. */
Test(pool, a_resident_past_its_deadline_is_killed)
{
	struct got g = { 0 };
	int chan, status;
	pid_t pid = fake_resident(&chan, true);

	workers_init(&pool, 4, &cfg);
	exits = 0;
	cr_assert_eq(worker_send_held(&pool, pid, chan, "ask", 3, 8,
	    now_ms() + 300, done, &g, ended, NULL), 0);
	run_until(&g);
	cr_assert_eq(g.calls, 1, "its result came");
	run_until_empty();
	cr_assert_eq(exits, 1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "killed at its deadline");
	close(chan);
}

/* A watched worker is in the pool, its pidfd polled, but not counted
 * toward max; its exit is told. */
Test(pool, a_watched_worker_is_not_counted)
{
	char err[256];
	pid_t pid;
	int64_t end;

	cr_assert_eq(workers_open(FAKE_WORKER, err, sizeof(err)), 0, "%s", err);
	workers_init(&pool, 1, &cfg);
	exits = 0;
	/* The stand-in's teardown answers at once and exits. */
	pid = worker_spawn_watched(&pool, JOB_TEARDOWN, 0, NULL, 0, -1,
	    ended, NULL);
	cr_assert_gt(pid, 0);
	cr_assert_eq(pool.n, 0, "not toward max");
	cr_assert(!TAILQ_EMPTY(&pool.live), "but watched");
	for (end = now_ms() + 5000; exits == 0 && now_ms() < end; )
		run_once();
	cr_assert_eq(exits, 1);
	cr_assert(TAILQ_EMPTY(&pool.live));
	cr_assert_eq(pool.n, 0);
	(void)waitpid(pid, NULL, 0);
}
