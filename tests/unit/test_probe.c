/*
 * test_probe.c - the readiness prober (privsep/worker/probe.c and
 * probe_wire.c) against a Unix listener of the test's own that accepts
 * nothing and answers nothing, as a service that hangs would: the prober
 * gives up at its deadline, holds none of its parent's descriptors, has a
 * network and a root of its own and stdio on /dev/null, and dies with its
 * parent. Against listeners that answer as redis does, on a Unix socket
 * and on 127.0.0.1 (through its relay, privsep/worker/relay.c and
 * relay_loop.c), it says ready.
 *
 * The prober drops to a uid of its own, so these need root: as anyone
 * else they are skipped.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "iox.h"
#include "probe.h"

#define PROBER_UID	65534	/* nobody: the test has no uid range */

static char dir[64];
static int lsock = -1;

static void
setup(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };

	strlcpy(dir, "/tmp/sbx-probe-XXXXXX", sizeof(dir));
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s/redis.sock", dir);
	cr_assert_neq(lsock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0),
	    -1);
	cr_assert_eq(bind(lsock, (struct sockaddr *)&sun, sizeof(sun)), 0);
	cr_assert_eq(chmod(sun.sun_path, 0777), 0);
	/* Never accepted: a connect is made (the backlog), then silence. */
	cr_assert_eq(listen(lsock, 8), 0);
}

static void
teardown(void)
{
	char path[128];

	if (lsock != -1)
		close(lsock);
	snprintf(path, sizeof(path), "%s/redis.sock", dir);
	unlink(path);
	rmdir(dir);
}

TestSuite(probe, .init = setup, .fini = teardown);

static void
need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("the prober drops to a uid of its own: needs root");
}

/* ASan's _exit calls sigaltstack, which the probe filter answers with
 * SIGSYS, so the verdict is lost: the plain build (make check) runs it. */
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() cr_skip_test("the probe filter kills ASan's _exit")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static const struct probe_target silent = { .kind = PROBE_REDIS,
    .socket_name = "redis.sock", .user = "default", .password = "x" };

Test(probe, a_service_that_never_answers_is_not_ready_at_the_deadline,
    .timeout = 20)
{
	struct probe_target t = silent;
	int64_t t0 = now_ms();

	need_root();
	SKIP_UNDER_ASAN();
	t.dir = dir;
	cr_assert_eq(probe_ready(&t, PROBER_UID, PROBER_UID, t0 + 1500),
	    PROBE_TIMEOUT);
	cr_assert_lt(now_ms() - t0, 3000, "%lld ms",
	    (long long)(now_ms() - t0));
}

/* The prober of the process probe_ready() runs in: its one child. */
static pid_t
prober_of(pid_t parent)
{
	char path[64];
	long pid = 0;
	FILE *f;
	int i;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)parent,
	    (int)parent);
	for (i = 0; i < 500 && pid == 0; i++) {
		if ((f = fopen(path, "r")) != NULL) {
			if (fscanf(f, "%ld", &pid) != 1)
				pid = 0;
			fclose(f);
		}
		if (pid == 0)
			usleep(10000);
	}
	return (pid_t)pid;
}

/* Where a process's link in /proc/<pid>/ points, in out. */
static void
proc_link(pid_t pid, const char *name, char *out, size_t cap)
{
	char path[64];
	ssize_t len;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	len = readlink(path, out, cap - 1);
	out[len > 0 ? len : 0] = '\0';
}

/* How many pipes a process holds past stdio, or -1 until it is
 * confined (the last step of its set-up). */
static int
pipes_of(pid_t pid)
{
	char path[64], link[64], status[4096];
	struct dirent *de;
	int n = 0;
	FILE *f;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	status[fread(status, 1, sizeof(status) - 1, f)] = '\0';
	fclose(f);
	if (strstr(status, "\nSeccomp:\t2") == NULL)
		return -1;	/* its set-up is not done */
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char fdp[384];
		ssize_t len;

		if (atoi(de->d_name) < 3)
			continue;	/* stdio, the test runner's */
		snprintf(fdp, sizeof(fdp), "%s/%s", path, de->d_name);
		if ((len = readlink(fdp, link, sizeof(link) - 1)) > 0) {
			link[len] = '\0';
			n += strncmp(link, "pipe:", 5) == 0;
		}
	}
	closedir(d);
	return n;
}

/*
 * A parent with a pipe open (as a service's child has its result pipe
 * to the worker): the prober, once confined, holds no pipe; and when its
 * parent dies, it dies too.
 */
Test(probe, the_prober_holds_none_of_its_parents_pipes_and_dies_with_it,
    .timeout = 30)
{
	struct probe_target t = silent;
	pid_t parent, prober;
	int p[2], pipes = -1, i, status;

	need_root();
	t.dir = dir;
	cr_assert_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	cr_assert_eq(pipe(p), 0);
	if ((parent = fork()) == 0)
		_exit(probe_ready(&t, PROBER_UID, PROBER_UID, now_ms() + 20000));
	cr_assert_neq(parent, -1);
	cr_assert_neq(prober = prober_of(parent), 0, "no prober came");
	for (i = 0; i < 500 && (pipes = pipes_of(prober)) == -1; i++)
		usleep(10000);
	cr_assert_eq(pipes, 0, "the prober holds %d pipes", pipes);
	{
		char mine[64], its[64];
		int fd;

		proc_link(getpid(), "ns/net", mine, sizeof(mine));
		proc_link(prober, "ns/net", its, sizeof(its));
		cr_assert(mine[0] != '\0' && strcmp(mine, its) != 0,
		    "the prober is in the host's network (%s)", its);
		proc_link(prober, "root", its, sizeof(its));
		cr_assert_str_eq(its, dir, "its root is %s", its);
		for (fd = 0; fd < 3; fd++) {
			char name[16];

			snprintf(name, sizeof(name), "fd/%d", fd);
			proc_link(prober, name, its, sizeof(its));
			cr_assert_str_eq(its, "/dev/null", "its fd %d is %s",
			    fd, its);
		}
	}

	cr_assert_eq(kill(parent, SIGKILL), 0);
	cr_assert_eq(waitpid(parent, NULL, 0), parent);
	/* We are the subreaper: the orphaned prober is ours to reap. */
	cr_assert_eq(waitpid(prober, &status, 0), prober);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	    "status %#x", status);
	close(p[0]);
	close(p[1]);
}

/* A process that answers every connection on l as a ready redis does
 * (whatever was asked); killed by the caller. */
static pid_t
serve_redis(int l)
{
	static const char ready[] = "+OK\r\n+PONG\r\n";
	pid_t pid;
	char buf[512];
	int c;

	if ((pid = fork()) != 0)
		return pid;
	for (;;) {
		if ((c = accept(l, NULL, NULL)) == -1)
			_exit(1);
		if (read(c, buf, sizeof(buf)) > 0)
			(void)!write(c, ready, sizeof(ready) - 1);
		close(c);
	}
}

static enum probe_verdict
probe_served(struct probe_target *t, int l)
{
	enum probe_verdict v;
	pid_t server;

	cr_assert_neq(server = serve_redis(l), -1);
	v = probe_ready(t, PROBER_UID, PROBER_UID, now_ms() + 5000);
	kill(server, SIGKILL);
	waitpid(server, NULL, 0);
	return v;
}

Test(probe, a_redis_that_answers_on_its_socket_is_ready, .timeout = 20)
{
	struct probe_target t = silent;

	need_root();
	SKIP_UNDER_ASAN();
	t.dir = dir;
	cr_assert_eq(probe_served(&t, lsock), PROBE_READY);
}

/* From its own network, where 127.0.0.1 is nobody's: through the relay. */
Test(probe, a_redis_that_answers_on_loopback_is_ready_through_the_relay,
    .timeout = 20)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	struct probe_target t = silent;
	int l;

	need_root();
	SKIP_UNDER_ASAN();
	cr_assert_neq(l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), -1);
	cr_assert_eq(bind(l, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(getsockname(l, (struct sockaddr *)&sin, &len), 0);
	cr_assert_eq(listen(l, 8), 0);
	t.port = ntohs(sin.sin_port);
	cr_assert_eq(probe_served(&t, l), PROBE_READY);
	close(l);
}
