/*
 * session_client.c - a session child's side of its session with a
 * sandbox's service, after its drop (svc_session.c forks, confines and
 * drops it): libpq and hiredis to the server, its reports to the parent
 * and the parent's bytes.
 * runs in: a session child of JOB_DATA, JOB_RESIDENT, JOB_WARM_START and a
 *   provision's service children, after its drop: the sandbox's prober
 *   uid, not dumpable, session allowlist
 *
 * What the service sends is a tenant's bytes, and libpq and hiredis parse
 * them here, with nothing else in reach: the server is reached by its
 * socket in the child's socket directory, which is the child's "/", or,
 * for a tcp service, by the relay's abstract address (relay.c). The child
 * reports up on SESSION_FD_PARENT with struct data_result (its code and
 * message checked and cleaned by the parent, as a tenant's) and reads
 * single bytes down; the parent's shutdown is the last word. An alarm
 * ends the child at its deadline, whatever libpq or hiredis wait for.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "iox.h"
#include "keeper.h"
#include "log.h"
#include "pq.h"
#include "relay.h"
#include "session_client.h"
#include "svc_session.h"

#define CONNECT_S	"10"	/* libpq's connect_timeout, seconds */
#define KEEP_REDIS	"keep/redis.sock"

int
session_report(uint32_t code, const char *fmt, ...)
{
	struct data_result res;
	va_list ap;

	memset(&res, 0, sizeof(res));
	res.code = code;
	va_start(ap, fmt);
	vsnprintf(res.message, sizeof(res.message), fmt, ap);
	va_end(ap);
	return write_all(SESSION_FD_PARENT, &res, sizeof(res),
	    now_ms() + 10000);
}

int
session_ask(struct data_ask *a)
{
	memset(a, 0, sizeof(*a));
	if (read_full(SESSION_FD_PARENT, a, sizeof(*a), INT64_MAX) == -1 ||
	    data_ask_valid(a) == -1)
		return -1;
	return 0;
}

int
session_wait(void)
{
	uint8_t b;
	ssize_t n;

	while ((n = read(SESSION_FD_PARENT, &b, 1)) == -1 && errno == EINTR)
		;
	return n == 1 ? b : -1;
}

/* A server's notices (a seed's RAISE, a DROP's "skipping") are a
 * tenant's words: not on our stderr, which is the monitor's log. */
static void
notice_drop(void *arg, const char *message)
{
	(void)arg;
	(void)message;
}

/* libpq to dbname as user with password. */
static PGconn *
pg_connect(const struct session_env *e, const char *dbname, const char *user,
    const char *password)
{
	const struct svc_reach *r = e->r;
	char port[8], why[128];
	/* No service file, no password file, no TLS or GSS on loopback:
	 * nothing but the socket is read. */
	const char *k[] = { "host", "port", "user", "password", "dbname",
	    "application_name", "connect_timeout", "sslmode", "gssencmode",
	    "client_encoding", NULL };
	const char *v[] = { e->host, port, user, password, dbname,
	    "sbx-data", CONNECT_S, "disable", "disable", "UTF8", NULL };
	PGconn *c;

	if (pq_load() == -1)
		return NULL;
	snprintf(port, sizeof(port), "%u", r->dir != NULL ? r->s->port :
	    r->port);	/* tcp: the relay's name carries it */
	if ((c = pq.connectdbParams(k, v, 0)) != NULL &&
	    pq.status(c) == CONNECTION_OK) {
		pq.setNoticeProcessor(c, notice_drop, NULL);
		return c;
	}
	session_text(why, sizeof(why), c != NULL ? pq.errorMessage(c) :
	    "out of memory");
	log_warnx("%s: cannot connect to database %s as %s: %s", r->s->name,
	    dbname, user, why);
	pq.finish(c);
	return NULL;
}

PGconn *
session_pg(const struct session_env *e, const char *dbname)
{
	return pg_connect(e, dbname, e->r->user, e->r->password);
}

PGconn *
session_pg_keeper(const struct session_env *e)
{
	if (e->keeper_pw[0] == '\0')
		return pg_connect(e, "postgres", e->r->user, e->r->password);
	return pg_connect(e, "postgres", KEEPER_ROLE, e->keeper_pw);
}

/* hiredis on a tcp service's relay (the child's one abstract address):
 * hiredis names no abstract socket, so the socket comes connected. */
static redisContext *
relay_connect(const struct svc_reach *r)
{
	struct sockaddr_un a;
	socklen_t len = relay_addr(&a, r->port);
	int fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return NULL;
	if (connect(fd, (struct sockaddr *)&a, len) == -1) {
		log_warn("%s: its relay", r->s->name);
		close(fd);
		return NULL;
	}
	return redisConnectFd(fd);
}

redisContext *
session_redis(const struct session_env *e)
{
	const struct svc_reach *r = e->r;
	struct timeval tv = { 10, 0 };
	char path[64], why[128];
	redisContext *c;
	redisReply *rep = NULL;

	if (r->dir != NULL) {
		snprintf(path, sizeof(path), "/%s", r->s->socket_name);
		c = redisConnectUnixWithTimeout(path, tv);
	} else
		c = relay_connect(r);
	/* No timeout for commands (a snapshot of a large server takes its
	 * time): the child's alarm is the deadline. */
	if (c != NULL && c->err == 0 &&
	    redisSetTimeout(c, (struct timeval){ 0, 0 }) == REDIS_OK &&
	    (rep = redisCommand(c, "AUTH %s %s", r->user, r->password)) !=
	    NULL && rep->type == REDIS_REPLY_STATUS) {
		freeReplyObject(rep);
		return c;
	}
	session_text(why, sizeof(why), c == NULL ? "out of memory" :
	    c->err != 0 ? c->errstr : rep != NULL &&
	    rep->type == REDIS_REPLY_ERROR ? rep->str : "AUTH: no answer");
	log_warnx("%s: cannot connect: %s", r->s->name, why);
	if (rep != NULL)
		freeReplyObject(rep);
	if (c != NULL)
		redisFree(c);
	return NULL;
}

redisContext *
session_redis_keeper(const struct session_env *e)
{
	struct timeval tv = { 10, 0 };
	redisContext *c;

	if (e->r->dir == NULL)
		return NULL;
	c = redisConnectUnixWithTimeout("/" KEEP_REDIS, tv);
	if (c != NULL && c->err == 0 &&
	    redisSetTimeout(c, (struct timeval){ 0, 0 }) == REDIS_OK)
		return c;
	log_warnx("%s: cannot reach its keeper: %s", e->r->s->name,
	    c == NULL ? "out of memory" : c->errstr);
	if (c != NULL)
		redisFree(c);
	return NULL;
}
