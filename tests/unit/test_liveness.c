/*
 * test_liveness.c - a hit's liveness check (rt_is_live in
 * privsep/monitor/liveness.c, rt_listening in shared/listen.c) against
 * what a tenant controls: whether its container's process runs, what its
 * login check said, and what its container left at its socket's path or
 * loopback port. Only a listener there (or a port seen lately) keeps a
 * sandbox live; nothing there makes the check wait; a sandbox found not
 * live has no login checked and its record is not touched.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cache.h"
#include "iox.h"
#include "liveness.h"
#include "listen.h"
#include "login.h"
#include "record.h"

static int logins, touches;

/* liveness.c's calls out, counted: a live sandbox's logins are checked
 * now and then (login.c), its record's mtime set (record.c). */
void
login_spawn(struct rt_cli *rt, struct sbx_sandbox *sb, size_t svc)
{
	(void)rt;
	cr_assert_lt(svc, sb->nservices);
	logins++;
}

void
record_touch(struct sbx_sandbox *sb, int64_t now)
{
	(void)sb;
	(void)now;
	touches++;
}

static char dir[] = "/tmp/sbx-test-live.XXXXXX";

static void
mkdir_tmp(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void
rm_tmp(void)
{
	(void)nftw(dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

TestSuite(liveness, .init = mkdir_tmp, .fini = rm_tmp);

static const char *
at(const char *name)
{
	static char path[8][108];
	static int i;

	i = (i + 1) % 8;
	snprintf(path[i], sizeof(path[i]), "%s/%s", dir, name);
	return path[i];
}

static int
unix_at(int type, const char *path, int backlog)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	if (backlog >= 0)
		cr_assert_eq(listen(fd, backlog), 0);
	return fd;
}

/* A loopback port, listening or only bound (so that no one else takes
 * it while the test runs). */
static uint32_t
tcp_port(bool listening, int *fd)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);

	*fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_geq(*fd, 0);
	cr_assert_eq(bind(*fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	if (listening)
		cr_assert_eq(listen(*fd, 8), 0);
	cr_assert_eq(getsockname(*fd, (struct sockaddr *)&sin, &len), 0);
	return ntohs(sin.sin_port);
}

static int
pidfd_of(pid_t pid)
{
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	cr_assert_geq(fd, 0);
	return fd;
}

/* A pidfd of a process that has exited. */
static int
pidfd_exited(void)
{
	pid_t pid = fork();
	int fd;

	cr_assert_geq(pid, 0);
	if (pid == 0)
		_exit(0);
	fd = pidfd_of(pid);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	return fd;
}

/* rt_is_live on one service at path (or port), its process ours (it
 * runs), its port never seen: the verdict, and it must not wait. */
static bool
live_one(const char *path, uint32_t port, int pidfd, bool login_failed,
    int64_t seen)
{
	struct sbx_svc svc;
	struct sbx_sandbox sb;
	int64_t t0;
	bool live;

	memset(&svc, 0, sizeof(svc));
	memset(&sb, 0, sizeof(sb));
	strlcpy(svc.conn.name, "svc", sizeof(svc.conn.name));
	if (path != NULL)
		strlcpy(svc.conn.socket, path, sizeof(svc.conn.socket));
	svc.conn.port = port;
	svc.pidfd = pidfd;
	svc.login_failed = login_failed;
	svc.port_seen_ms = seen;
	sb.nservices = 1;
	sb.svc = &svc;
	logins = touches = 0;
	t0 = now_ms();
	live = rt_is_live(NULL, &sb);
	cr_assert_lt(now_ms() - t0, 1000, "it waited");
	cr_assert_eq(logins, live ? 1 : 0);
	cr_assert_eq(touches, live ? 1 : 0);
	if (live && seen == 0)
		cr_assert_gt(svc.port_seen_ms, 0, "the connect is noted");
	return live;
}

Test(liveness, a_listener_is_live)
{
	int self = pidfd_of(getpid()), fd, port_fd;
	uint32_t port = tcp_port(true, &port_fd);

	fd = unix_at(SOCK_STREAM, at("s"), 8);
	cr_assert(live_one(at("s"), 0, self, false, 0));
	cr_assert(live_one(NULL, port, self, false, 0));
	close(fd);
	close(port_fd);
	close(self);
}

Test(liveness, what_a_container_may_leave_at_its_socket_path_is_not_live)
{
	int self = pidfd_of(getpid()), fd[4], f;

	fd[0] = unix_at(SOCK_STREAM, at("bound"), -1);
	fd[1] = unix_at(SOCK_DGRAM, at("dgram"), -1);
	fd[2] = unix_at(SOCK_SEQPACKET, at("seqpacket"), 8);
	fd[3] = unix_at(SOCK_STREAM, at("gone"), 8);
	close(fd[3]);			/* its file stays, no one listens */
	cr_assert_geq((f = open(at("file"), O_CREAT | O_WRONLY, 0600)), 0);
	close(f);
	cr_assert_eq(mkfifo(at("fifo"), 0600), 0);
	cr_assert_eq(mkdir(at("dir"), 0700), 0);
	cr_assert_eq(symlink(at("loop"), at("loop")), 0);
	cr_assert_eq(symlink("/nonexistent/x", at("dangling")), 0);

	cr_assert_not(live_one(at("nothing"), 0, self, false, 0));
	cr_assert_not(live_one(at("bound"), 0, self, false, 0));
	cr_assert_not(live_one(at("dgram"), 0, self, false, 0));
	cr_assert_not(live_one(at("seqpacket"), 0, self, false, 0));
	cr_assert_not(live_one(at("gone"), 0, self, false, 0));
	cr_assert_not(live_one(at("file"), 0, self, false, 0));
	cr_assert_not(live_one(at("fifo"), 0, self, false, 0),
	    "a fifo is not opened: nothing waits on it");
	cr_assert_not(live_one(at("dir"), 0, self, false, 0));
	cr_assert_not(live_one(at("loop"), 0, self, false, 0));
	cr_assert_not(live_one(at("dangling"), 0, self, false, 0));
	close(fd[0]);
	close(fd[1]);
	close(fd[2]);
	close(self);
}

/* A backlog a tenant filled says that a listener is there, at once. */
Test(liveness, a_full_backlog_is_live_and_never_waits)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int self = pidfd_of(getpid()), fd, c, i;

	fd = unix_at(SOCK_STREAM, at("full"), 0);
	strlcpy(sun.sun_path, at("full"), sizeof(sun.sun_path));
	for (i = 0; i < 8; i++) {
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0);
		if (connect(c, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			break;
	}
	cr_assert_lt(i, 8, "the backlog is full");
	cr_assert(live_one(at("full"), 0, self, false, 0));
	close(fd);
	close(self);
}

/* A loopback connect says EINPROGRESS even to a closed port (Linux 6.x);
 * the refusal is on the socket by then (listen.c, refused()). */
Test(liveness, a_closed_loopback_port_is_not_live)
{
	int self = pidfd_of(getpid()), port_fd;
	uint32_t port = tcp_port(false, &port_fd);

	cr_assert_not(live_one(NULL, port, self, false, 0));
	cr_assert_not(rt_listening(&(struct sbx_conn){ .port = port }));
	close(port_fd);
	close(self);
}

Test(liveness, an_exited_process_or_a_failed_login_is_not_live)
{
	int self = pidfd_of(getpid()), dead = pidfd_exited(), fd;

	fd = unix_at(SOCK_STREAM, at("s"), 8);
	cr_assert_not(live_one(at("s"), 0, dead, false, 0));
	cr_assert_not(live_one(at("s"), 0, -1, false, 0), "no pidfd");
	cr_assert_not(live_one(at("s"), 0, self, true, 0));
	close(fd);
	close(dead);
	close(self);
}

/* The connect is made once its last success is older than a second
 * (liveness.c): until then what is at the path is not looked at. */
Test(liveness, a_port_seen_lately_is_not_connected_again)
{
	int self = pidfd_of(getpid());

	cr_assert(live_one(at("nothing"), 0, self, false, now_ms()));
	close(self);
}

/*
 * connect(2) follows a symbolic link: a container can point its socket's
 * path at a listener of the host's, and the monitor, root, connects there
 * and closes at once, sending nothing. Its sandbox is then seen live when
 * its own service may not be: the tenant fools only its own check.
 */
Test(liveness, a_link_is_followed)
{
	int self = pidfd_of(getpid()), fd;

	fd = unix_at(SOCK_STREAM, at("host"), 8);
	cr_assert_eq(symlink(at("host"), at("link")), 0);
	cr_assert(live_one(at("link"), 0, self, false, 0));
	close(fd);
	close(self);
}
