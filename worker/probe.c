/*
 * probe.c - is the service really answering?
 * runs in: the prober, forked from a worker (a uid of the sandbox's own, not dumpable, probe allowlist)
 *
 * A published port accepts TCP before the service does (the runtime's
 * proxy, or postgres's temporary init server), so readiness is judged at
 * protocol level: postgres must answer a v3 startup message with an
 * authentication request, redis must answer AUTH + PING with +OK +PONG.
 * The bytes read come from a tenant's container, so the prober is a fork
 * that drops to a uid no other process of the host has (the top of the
 * service's own host uid range, which its image never uses: rt_worker.c),
 * is made non-dumpable (checked), and loads the probe filter first. A Unix
 * socket lies in a directory only its owner and root may enter: the
 * prober changes into it while still root, and connects by the socket's
 * name relative to that working directory once it is unprivileged.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/prctl.h>

#include "drop.h"
#include "iox.h"
#include "log.h"
#include "probe.h"
#include "scfilter.h"

#define ATTEMPT_MS	1000
#define PAUSE_MS	10	/* between readiness attempts; a by-hand poll uses 10 too */

static int
connect_loopback(uint16_t port, int64_t deadline)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(int);
	int fd, err = 0;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		struct pollfd pfd = { .fd = fd, .events = POLLOUT };
		int64_t left = deadline - now_ms();

		if (errno != EINPROGRESS || left <= 0 ||
		    poll(&pfd, 1, (int)left) != 1 ||
		    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == -1 ||
		    err != 0) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

/*
 * The socket in the working directory (see prober()). Non-blocking, as
 * the loopback one: a service that accepts and never answers must not
 * hold the prober past its deadline (iox.c's reads wait only on EAGAIN).
 * A Unix connect is made in the call, or fails with EAGAIN when the
 * backlog is full: the next attempt tries again.
 */
static int
connect_cwd_unix(const char *name)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	if (strlcpy(sun.sun_path, name, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path) ||
	    (fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static size_t
put_cstr(char *p, const char *s)
{
	size_t n = strlen(s) + 1;

	memcpy(p, s, n);
	return n;
}

/* StartupMessage v3.0; an 'R' (authentication request) means ready. */
static int
probe_postgres(int fd, const struct probe_target *t, int64_t deadline)
{
	char msg[512], c;
	size_t n = 8;
	uint32_t v;

	if (strlen(t->user) + strlen(t->database) > 400)
		return -1;
	n += put_cstr(msg + n, "user");
	n += put_cstr(msg + n, t->user);
	n += put_cstr(msg + n, "database");
	n += put_cstr(msg + n, t->database);
	msg[n++] = '\0';
	v = htonl((uint32_t)n);
	memcpy(msg, &v, 4);
	v = htonl(196608);
	memcpy(msg + 4, &v, 4);
	if (write_all(fd, msg, n, deadline) == -1 ||
	    read_full(fd, &c, 1, deadline) == -1)
		return -1;
	return c == 'R' ? 0 : -1;
}

static int
resp_bulk(char *p, size_t cap, const char *s)
{
	return snprintf(p, cap, "$%zu\r\n%s\r\n", strlen(s), s);
}

static int
probe_redis(int fd, const struct probe_target *t, int64_t deadline)
{
	static const char want[] = "+OK\r\n+PONG\r\n";
	char msg[512], got[sizeof(want) - 1];
	int n;

	if (strlen(t->user) + strlen(t->password) > 400)
		return -1;
	n = snprintf(msg, sizeof(msg), "*3\r\n$4\r\nAUTH\r\n");
	n += resp_bulk(msg + n, sizeof(msg) - (size_t)n, t->user);
	n += resp_bulk(msg + n, sizeof(msg) - (size_t)n, t->password);
	n += snprintf(msg + n, sizeof(msg) - (size_t)n, "*1\r\n$4\r\nPING\r\n");
	if (write_all(fd, msg, (size_t)n, deadline) == -1 ||
	    read_full(fd, got, sizeof(got), deadline) == -1)
		return -1;
	return memcmp(got, want, sizeof(got)) == 0 ? 0 : -1;
}

static int
probe_once(const struct probe_target *t, int64_t deadline)
{
	int64_t until = now_ms() + ATTEMPT_MS;
	int fd, rc = 0;

	if (until > deadline)
		until = deadline;
	if ((fd = t->dir != NULL ? connect_cwd_unix(t->socket_name) :
	    connect_loopback(t->port, until)) == -1)
		return -1;
	if (t->kind == PROBE_POSTGRES)
		rc = probe_postgres(fd, t, until);
	else if (t->kind == PROBE_REDIS)
		rc = probe_redis(fd, t, until);
	close(fd);
	return rc;
}

static void __attribute__((noreturn))
prober(const struct probe_target *t, uid_t uid, gid_t gid, int64_t deadline,
    pid_t parent)
{
	struct timespec pause = { 0, PAUSE_MS * 1000000L };

	/* Only stdio: the pipes of the process that forked us carry results
	 * the monitor trusts (a service's, a warm start's), and a prober
	 * that the service's bytes subverted must not write them. Not
	 * dumpable: nothing of the same uid may ptrace it or read its
	 * memory (the password it holds), whatever the uid change left.
	 * The parent-death signal comes after the uid change, which clears
	 * it: a prober never outlives the process waiting for it. */
	closefrom(3);
	if ((t->dir != NULL && chdir(t->dir) == -1) ||
	    drop_to_ids(uid, gid, NULL) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent ||
	    sc_load_allow("probe") == -1)
		_exit(PROBE_ERROR);
	while (now_ms() < deadline) {
		if (probe_once(t, deadline) == 0)
			_exit(PROBE_READY);
		nanosleep(&pause, NULL);
	}
	_exit(PROBE_TIMEOUT);
}

enum probe_verdict
probe_ready(const struct probe_target *t, uid_t uid, gid_t gid,
    int64_t deadline)
{
	pid_t pid, parent = getpid();
	int status;

	if ((pid = fork()) == -1)
		return PROBE_ERROR;
	if (pid == 0)
		prober(t, uid, gid, deadline, parent);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return PROBE_ERROR;
	if (!WIFEXITED(status))
		return PROBE_ERROR;
	return (enum probe_verdict)WEXITSTATUS(status);
}
