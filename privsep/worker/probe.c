/*
 * probe.c - is the service really answering?
 * runs in: sbx-worker's JOB_LOGIN and JOB_WARM_START and a provision's
 *   service children (root, runtime deny filter), and the prober they fork
 *   (root until its drop, then the sandbox's prober uid, probe allowlist)
 *
 * A published port accepts TCP before the service does (the runtime's
 * proxy, or postgres's temporary init server), so readiness is judged at
 * protocol level: postgres must answer a v3 startup message with an
 * authentication request, redis must answer AUTH + PING with +OK +PONG.
 * The bytes read come from a tenant's container, so the prober is a fork
 * that, while root, leaves the host's network for a namespace of its own
 * and takes the socket's directory as its root (drop.c's drop_network:
 * no other address, no other socket path, as the session child), then
 * drops to a uid no other process of the host has (the top of the
 * service's own host uid range, which its image never uses: provision.c),
 * is made non-dumpable (checked), and loads the probe filter first. A
 * tcp service is reached through a relay (relay.c) on the namespace's one
 * abstract address. Its stdio is /dev/null: the verdict is its exit
 * status, and a prober the service's bytes subverted writes nothing a
 * log or a parent reads.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
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
#include "relay.h"
#include "scfilter.h"

#define ATTEMPT_MS	1000
#define PAUSE_MS	10	/* between readiness attempts; a by-hand poll uses 10 too */

/*
 * The service's socket in the prober's root, or its relay's abstract
 * address (see prober()). Non-blocking: a service that accepts and never
 * answers must not hold the prober past its deadline (iox.c's reads wait
 * only on EAGAIN). A Unix connect is made in the call, or fails with
 * EAGAIN when the backlog is full: the next attempt tries again.
 */
static int
connect_unix(const struct probe_target *t)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	socklen_t len = sizeof(sun);
	int fd;

	if (t->dir == NULL)
		len = relay_addr(&sun, t->port);
	else if (strlcpy(sun.sun_path, t->socket_name, sizeof(sun.sun_path)) >=
	    sizeof(sun.sun_path))
		return -1;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, len) == -1) {
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
	if ((fd = connect_unix(t)) == -1)
		return -1;
	if (t->kind == PROBE_POSTGRES)
		rc = probe_postgres(fd, t, until);
	else if (t->kind == PROBE_REDIS)
		rc = probe_redis(fd, t, until);
	close(fd);
	return rc;
}

/*
 * While root: a network namespace of the prober's own, with the socket's
 * directory as its root (an empty one and a relay for tcp, as uid:gid),
 * then stdio onto /dev/null.
 */
static int
isolate(const struct probe_target *t, uid_t uid, gid_t gid)
{
	int null, rc;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return -1;
	rc = relay_confine(t->dir, t->port, uid, gid, NULL);
	if (rc == 0 && (dup2(null, STDIN_FILENO) == -1 ||
	    dup2(null, STDOUT_FILENO) == -1 || dup2(null, STDERR_FILENO) == -1))
		rc = -1;
	close(null);
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
	if (isolate(t, uid, gid) == -1 ||
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
