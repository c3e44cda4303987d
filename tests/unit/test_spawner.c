/*
 * test_spawner.c - the spawner (privsep/monitor/spawner.c): its check of
 * the monitor's requests and the monitor's check of its answers, with
 * hostile input; and real workers (fake_worker.c) started through it,
 * which are this process's children, carry their job and answer.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "jobpool.h"
#include "spawner.h"

#ifndef FAKE_WORKER
#error "FAKE_WORKER: the stand-in's path, from tests.mk"
#endif

static char why[96];

static int
sealed(int seals)
{
	int fd = memfd_create("t", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	cr_assert_neq(fd, -1);
	cr_assert_eq(write(fd, "x", 1), 1);
	cr_assert_eq(fcntl(fd, F_ADD_SEALS, seals), 0);
	return fd;
}

static int
listening(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	/* An abstract name: nothing left on disk. */
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1, "sbx-t-%d",
	    (int)getpid());
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cr_assert_eq(listen(fd, 1), 0);
	return fd;
}

static int
worker_req(uint32_t type, int nfds, const int *fds)
{
	struct spawn_req r = { .magic = SPAWN_MAGIC, .what = SPAWN_WORKER,
	    .type = type };

	return spawn_req_valid(&r, sizeof(r), nfds, fds, why, sizeof(why));
}

Test(spawner, a_worker_request_is_taken_only_whole)
{
	int job = sealed(JOB_SEALS), p[2];
	int fds[2];
	struct spawn_req r = { .magic = SPAWN_MAGIC, .what = SPAWN_WORKER,
	    .type = JOB_PROVISION };

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = job;
	fds[1] = p[1];
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), 0, "%s", why);
	cr_assert_eq(worker_req(JOB_PROVISION, 1, fds), 0, "%s", why);
	cr_assert_eq(spawn_req_valid(&r, sizeof(r) - 1, 2, fds, why,
	    sizeof(why)), -1, "short");
	cr_assert_eq(spawn_req_valid(&r, sizeof(r) + 1, 2, fds, why,
	    sizeof(why)), -1, "long");
	r.magic ^= 1;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 2, fds, why,
	    sizeof(why)), -1, "magic");
	r.magic = SPAWN_MAGIC;
	r.what = 3;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 2, fds, why,
	    sizeof(why)), -1, "what");
	r.what = SPAWN_WORKER;
	r.foreground = 1;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 2, fds, why,
	    sizeof(why)), -1, "a broker's field in a worker's request");
	cr_assert_eq(worker_req(0, 2, fds), -1, "job type 0");
	cr_assert_eq(worker_req(JOB_NTYPES, 2, fds), -1, "past the last");
	cr_assert_eq(worker_req(UINT32_MAX, 2, fds), -1, "far past");
	cr_assert_eq(worker_req(JOB_PROVISION, 0, fds), -1, "no job");
	cr_assert_eq(worker_req(JOB_PROVISION, 3, fds), -1, "three");
	close(job);
	close(p[1]);
	close(p[0]);
}

Test(spawner, a_job_must_be_a_sealed_memfd_and_fd_3_a_pipe_or_socket)
{
	int loose = sealed(F_SEAL_SHRINK), job = sealed(JOB_SEALS), p[2];
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fds[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = loose;
	fds[1] = p[1];
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), -1, "not all seals");
	fds[0] = p[0];
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), -1, "a pipe as job");
	fds[0] = dir;
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), -1, "a directory");
	fds[0] = job;
	fds[1] = dir;
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), -1, "fd 3 a dir");
	fds[1] = job;
	cr_assert_eq(worker_req(JOB_PROVISION, 2, fds), -1, "fd 3 a file");
	close(loose);
	close(job);
	close(dir);
	close(p[0]);
	close(p[1]);
}

Test(spawner, a_broker_request_needs_its_four_kinds)
{
	struct spawn_req r = { .magic = SPAWN_MAGIC, .what = SPAWN_BROKER };
	int lis = listening(), sp[2], st[2], p[2];
	int ranges = sealed(F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW);
	int loose = sealed(F_SEAL_SHRINK);
	int fds[4];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    sp), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, st),
	    0);
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = lis;
	fds[1] = sp[1];
	fds[2] = ranges;
	fds[3] = p[1];
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    0, "%s", why);
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 3, fds, why, sizeof(why)),
	    -1, "no log pipe, not in the foreground");
	r.foreground = 1;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 3, fds, why, sizeof(why)),
	    0, "%s", why);
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "a log pipe in the foreground");
	r.foreground = 2;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 3, fds, why, sizeof(why)),
	    -1, "foreground 2");
	r.foreground = 0;
	r.type = JOB_PROVISION;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "a job type in a broker's request");
	r.type = 0;
	fds[0] = st[0];
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "an agent socket not listening");
	fds[0] = lis;
	fds[1] = st[1];
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "a stream channel");
	fds[1] = sp[1];
	fds[2] = loose;
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "ranges that can still be written");
	fds[2] = ranges;
	fds[3] = st[0];
	cr_assert_eq(spawn_req_valid(&r, sizeof(r), 4, fds, why, sizeof(why)),
	    -1, "a log that is a socket");
}

Test(spawner, an_answer_names_a_child_of_ours_or_is_refused)
{
	struct spawn_ans a = { .magic = SPAWN_MAGIC };
	pid_t child;

	if ((child = fork()) == 0) {
		pause();
		_exit(0);
	}
	cr_assert_gt(child, 0);
	a.pid = child;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), child);
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a) - 1), -1, "short");
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a) + 1), -1, "long");
	cr_assert_eq(spawn_ans_valid(&a, -1), -1, "an error");
	a.magic = 0;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1, "magic");
	a.magic = SPAWN_MAGIC;
	a.pid = 0;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1, "pid 0");
	a.pid = -EAGAIN;
	errno = 0;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1);
	cr_assert_eq(errno, EAGAIN, "the spawner's errno is passed on");
	a.pid = -100000;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1);
	cr_assert_eq(errno, EPROTO, "no errno of that size");
	a.pid = 1;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1, "init: not ours");
	cr_assert_eq(errno, ESRCH);
	a.pid = getppid();
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1, "our parent");
	kill(child, SIGKILL);
	cr_assert_eq(waitpid(child, NULL, 0), child);
	a.pid = child;
	cr_assert_eq(spawn_ans_valid(&a, sizeof(a)), -1, "reaped: not ours");
}

static struct sbx_config cfg;
static struct worker_pool pool;

struct got {
	int	calls;
	size_t	len;
	char	buf[8];
};

static void
done(void *arg, const void *result, size_t len)
{
	struct got *g = arg;

	g->calls++;
	g->len = result == NULL ? 0 : len;
	if (result != NULL && len <= sizeof(g->buf))
		memcpy(g->buf, result, len);
}

/* The parent pid of pid, from /proc/PID/stat. */
static pid_t
parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL)
		sscanf(p + 2, "%*c %d", &ppid);
	fclose(f);
	return ppid;
}

/* The pool polled until g is answered, or 5 s. */
/* A child of this process whose argv[2] is JOB_SPARE_ARG: the spare,
 * executed. The spawner made it and holds its channel before it reads
 * the next request, so a job sent after this sees it. */
static bool
spare_running(void)
{
	char path[sizeof("/proc//cmdline") + NAME_MAX], argv[256];
	struct dirent *d;
	bool found = false;
	size_t n, a1;
	DIR *dir;
	FILE *f;

	if ((dir = opendir("/proc")) == NULL)
		return false;
	while (!found && (d = readdir(dir)) != NULL) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9' ||
		    parent_of((pid_t)atoi(d->d_name)) != getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", d->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		n = fread(argv, 1, sizeof(argv) - 1, f);
		fclose(f);
		argv[n] = '\0';
		a1 = strlen(argv) + 1;
		found = a1 < n && a1 + strlen(argv + a1) + 1 < n &&
		    strcmp(argv + a1 + strlen(argv + a1) + 1, JOB_SPARE_ARG) == 0;
	}
	closedir(dir);
	return found;
}

static bool
spare_made(void)
{
	int64_t end;

	for (end = now_ms() + 5000; now_ms() < end; usleep(10 * 1000))
		if (spare_running())
			return true;
	return false;
}

static void
answered(struct got *g)
{
	struct pollfd pfd[4];
	int64_t end;
	size_t n;

	for (end = now_ms() + 5000; g->calls == 0 && now_ms() < end; ) {
		n = workers_pollfds(&pool, pfd, 4);
		poll(pfd, n, 50);
		workers_events(&pool, pfd, n);
	}
}

/* Through a real spawner: the job's bytes reach the worker whole, its
 * result comes back, and the worker is this process's child, not the
 * spawner's. */
Test(spawner, a_worker_started_through_it_is_ours_and_gets_its_job)
{
	struct spawn_broker sb = { .cfg = &cfg };
	struct worker *w;
	struct got g = { 0 };
	char err[256];
	pid_t pid;

	cr_assert_eq(workers_open(FAKE_WORKER, err, sizeof(err)), 0, "%s", err);
	workers_init(&pool, 2, &cfg);
	cr_assert_eq(spawner_start(workers_exe(), &sb), 0);
	cr_assert_gt(spawner_pid(), 0);
	cr_assert_eq(parent_of(spawner_pid()), getpid());
	cr_assert_eq(worker_spawn(&pool, JOB_RELOAD, 0, "12345678", 8, 8,
	    now_ms() + 5000, done, &g), 0);
	w = TAILQ_FIRST(&pool.live);
	cr_assert_not_null(w);
	pid = w->pid;
	cr_assert_neq(pid, spawner_pid());
	cr_assert_eq(parent_of(pid), getpid(), "the monitor's child");
	answered(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert_eq(g.len, 8);
	cr_assert_eq(memcmp(g.buf, "12345678", 8), 0, "its job, whole");
	cr_assert_eq(waitpid(pid, NULL, 0), pid, "we reap it");
}

/* A reset's worker is the spare the spawner made ahead: already this
 * process's child before the request, it gets the job's descriptors and
 * answers; the next data job gets a new spare, and without one (asked
 * at once) a worker executed as before. */
Test(spawner, a_data_job_goes_to_the_spare_made_ahead)
{
	struct spawn_broker sb = { .cfg = &cfg };
	struct worker *w;
	struct got g = { 0 };
	char err[256];
	pid_t pid;

	cr_assert_eq(workers_open(FAKE_WORKER, err, sizeof(err)), 0, "%s", err);
	workers_init(&pool, 2, &cfg);
	cr_assert_eq(spawner_start(workers_exe(), &sb), 0);
	cr_assert(spare_made(), "the spare is made, SPARE_DELAY_MS after");
	cr_assert_eq(worker_spawn(&pool, JOB_DATA, 0, "12345678", 8, 8,
	    now_ms() + 5000, done, &g), 0);
	w = TAILQ_FIRST(&pool.live);
	cr_assert_not_null(w);
	pid = w->pid;
	cr_assert_eq(parent_of(pid), getpid(), "the monitor's child");
	answered(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert_eq(g.len, 8);
	cr_assert_eq(memcmp(g.buf, "SPAREDAT", 8), 0, "the spare answered");
	cr_assert_eq(waitpid(pid, NULL, 0), pid, "we reap it");
	/* Asked again at once: no spare yet, a worker executed for it. */
	g.calls = 0;
	cr_assert_eq(worker_spawn(&pool, JOB_DATA, 0, "12345678", 8, 8,
	    now_ms() + 5000, done, &g), 0);
	answered(&g);
	cr_assert_eq(g.calls, 1);
	cr_assert_eq(memcmp(g.buf, "ABCDEFGH", 8), 0, "an executed worker");
}
