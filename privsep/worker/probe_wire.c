/*
 * probe_wire.c - the prober's questions to the service, and its answers.
 * runs in: the prober that a provision's service children and JOB_LOGIN /
 *   JOB_WARM_START fork, after its drop (the sandbox's prober uid, not
 *   dumpable, probe allowlist)
 *
 * Readiness is judged at protocol level (probe.c says why): postgres must
 * answer a v3 startup message with an authentication request, redis must
 * answer AUTH + PING with +OK +PONG. The bytes read come from a tenant's
 * container: only the prober reads them, once probe.c has confined it,
 * dropped it and loaded its filter.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "iox.h"
#include "probe.h"
#include "probe_wire.h"
#include "relay.h"

#define ATTEMPT_MS	1000

/*
 * The service's socket in the prober's root, or its relay's abstract
 * address (see probe.c's prober()). Non-blocking: a service that accepts
 * and never answers must not hold the prober past its deadline (iox.c's
 * reads wait only on EAGAIN). A Unix connect is made in the call, or
 * fails with EAGAIN when the backlog is full: the next attempt tries
 * again.
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

int
probe_wire_once(const struct probe_target *t, int64_t deadline)
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
