/*
 * svc_session.c - a worker's session with a sandbox's service, as its
 * client: the seed at a provision (seed.c), a reset or a snapshot
 * (data.c).
 * runs in: a child of the worker, as the prober does (probe.c): a uid of
 * the sandbox's own range that no other process has, not dumpable
 *
 * What the service sends is a tenant's bytes, and libpq and hiredis parse
 * them: never as root. The child opens the service's socket directory
 * while still root (O_PATH: only its owner and root may enter run_dir's
 * <uid>/), drops to the top uid of the sandbox's range, with the group of
 * that directory (the container's own: it may enter the keeper's
 * directory there, keep/, which the agent's uid may not; it cannot
 * ptrace or signal the container's processes, another uid), makes itself not
 * dumpable (checked: no process of that uid may ptrace it or read the
 * password it holds) and connects through /proc/self/fd/N, which a
 * process may follow to its own descriptors even when not dumpable. A
 * tcp service is reached on 127.0.0.1 at its published port, which the
 * guard opens to that uid (guard.c). An alarm ends the child at its
 * deadline, whatever libpq or hiredis wait for. Before it reads a byte
 * of the server's, the child loads the session's seccomp allowlist
 * (policy/seccomp/session.list): sockets, reads and writes, memory; no
 * open, no exec, no fork, no uid change.
 *
 * The child talks to its parent over one socket pair: struct data_result
 * reports up (their code and message checked and cleaned by the parent,
 * as a tenant's), single bytes down; the parent's shutdown is the last
 * word. The parent writes to the socket with MSG_NOSIGNAL: a child gone
 * is an error, not a SIGPIPE for the worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drop.h"
#include "iox.h"
#include "log.h"
#include "pq.h"
#include "scfilter.h"
#include "session.h"

/* The child's descriptors, where session_child puts them. */
#define FD_PARENT	3
#define FD_SOCKDIR	4
#define CONNECT_S	"10"	/* libpq's connect_timeout, seconds */
#define KEEP_PG		"keep/pg.secret"	/* in the socket directory */
#define KEEP_REDIS	"keep/redis.sock"

void
session_text(char *dst, size_t cap, const char *src)
{
	size_t i = 0;
	unsigned char c;

	if (cap == 0)
		return;
	while (i + 1 < cap && (c = (unsigned char)*src++) != '\0')
		dst[i++] = (char)(c >= 0x20 && c < 0x7f ? c :
		    c == '\n' || c == '\t' ? ' ' : '?');
	/* libpq's messages end in a newline: none at the end */
	while (i > 0 && dst[i - 1] == ' ')
		i--;
	dst[i] = '\0';
}

/* fds[i] onto first + i, whatever their numbers were, and nothing else
 * open above them. */
static int
fds_at(int *fds, int n, int first)
{
	int i, hi[2];

	for (i = 0; i < n; i++)
		if ((hi[i] = fcntl(fds[i], F_DUPFD, first + n + 16)) == -1)
			return -1;
	for (i = 0; i < n; i++)
		if (dup2(hi[i], first + i) == -1)
			return -1;
	closefrom(first + n);
	return 0;
}

/* The session's filter: compiled once by the worker, before its first
 * fork (len 0: not yet), and installed by each child, as the broker does
 * for its own (libseccomp's build would cost each child more than the
 * install). */
static struct sc_prog session_filter;

/* What opens files comes first (libpq and its libraries, OpenSSL's
 * configuration); then the session's filter, before the tenant's server
 * sends a byte. A libpq that cannot be loaded is session_pg's to say. */
static int
confine(const struct svc_reach *r)
{
	if (r->s->probe == PROBE_POSTGRES)
		(void)pq_load();
	return sc_install(&session_filter);
}

int
keeper_pw_parse(const char *text, size_t n, char *out, size_t cap)
{
	size_t i;

	if (cap > 0)
		out[0] = '\0';
	if (cap <= KEEPER_PW_LEN || n < KEEPER_PW_LEN ||
	    n > KEEPER_PW_LEN + 1 ||
	    (n == KEEPER_PW_LEN + 1 && text[KEEPER_PW_LEN] != '\n'))
		return -1;
	for (i = 0; i < KEEPER_PW_LEN; i++)
		if (!((text[i] >= '0' && text[i] <= '9') ||
		    (text[i] >= 'a' && text[i] <= 'f')))
			return -1;
	memcpy(out, text, KEEPER_PW_LEN);
	out[KEEPER_PW_LEN] = '\0';
	return 0;
}

/* The keeper's password, read as the session's uid and group through
 * the socket directory (before the filter: it opens a file). None is no
 * error: a server that has no keeper is reached as the agent. */
static void
keeper_read(struct session_env *e)
{
	char buf[KEEPER_PW_LEN + 2];
	ssize_t n;
	int fd;

	e->keeper_pw[0] = '\0';
	if (e->r->dir == NULL || e->r->s->probe != PROBE_POSTGRES ||
	    (fd = openat(FD_SOCKDIR, KEEP_PG, O_RDONLY | O_NOFOLLOW |
	    O_NONBLOCK | O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && keeper_pw_parse(buf, (size_t)n, e->keeper_pw,
	    sizeof(e->keeper_pw)) == -1)
		log_warnx("%s: " KEEP_PG " is not a password of ours",
		    e->r->s->name);
	explicit_bzero(buf, sizeof(buf));
}

static void __attribute__((noreturn))
session_child(const struct svc_reach *r, int sock, session_fn fn, void *arg,
    int64_t deadline, pid_t parent)
{
	struct session_env e = { .r = r };
	int64_t left = deadline - now_ms();
	int fds[2] = { sock, -1 };
	gid_t gid = r->gid;
	struct stat st;

	/* While root: the socket directory, which r's uid cannot enter by
	 * its path, and its group, the container's. */
	if (r->dir != NULL && ((fds[1] = open(r->dir, O_PATH | O_DIRECTORY |
	    O_NOFOLLOW | O_CLOEXEC)) == -1 || fstat(fds[1], &st) == -1))
		_exit(2);
	if (r->dir != NULL && st.st_gid != 0)
		gid = st.st_gid;
	if (left <= 0 || fds_at(fds, r->dir != NULL ? 2 : 1,
	    FD_PARENT) == -1 ||
	    drop_to_ids(r->uid, gid, NULL) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(2);
	alarm((unsigned)(left / 1000 + 1));
	keeper_read(&e);
	if (confine(r) == -1)
		_exit(2);
	snprintf(e.host, sizeof(e.host), r->dir != NULL ?
	    "/proc/self/fd/%d" : "127.0.0.1", FD_SOCKDIR);
	fn(&e, arg);
	explicit_bzero(e.keeper_pw, sizeof(e.keeper_pw));
	_exit(0);
}

int
session_start(struct session *ss, const struct svc_reach *r, session_fn fn,
    void *arg, int64_t deadline)
{
	pid_t parent = getpid();
	int sv[2];

	ss->pid = -1;
	ss->fd = -1;
	if (r->uid == 0 || r->gid == 0 || (session_filter.fprog.len == 0 &&
	    sc_compile_allow("session", &session_filter) == -1) ||
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1)
		return -1;
	if ((ss->pid = fork()) == -1) {
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (ss->pid == 0) {
		close(sv[0]);
		session_child(r, sv[1], fn, arg, deadline, parent);
	}
	close(sv[1]);
	ss->fd = sv[0];
	return set_nonblock(ss->fd);
}

int
session_recv(struct session *ss, struct data_result *res, int64_t deadline)
{
	char msg[sizeof(res->message)];

	memset(res, 0, sizeof(*res));
	if (ss->fd == -1 || read_full(ss->fd, res, sizeof(*res),
	    deadline) == -1) {
		memset(res, 0, sizeof(*res));
		return -1;
	}
	/* The child read a tenant's bytes: what it says is checked. */
	res->message[sizeof(res->message) - 1] = '\0';
	session_text(msg, sizeof(msg), res->message);
	memcpy(res->message, msg, sizeof(msg));
	if (res->code >= SBX_CODE_MAX)
		res->code = SBX_E_RUNTIME_FAILED;
	return 0;
}

int
session_send(struct session *ss, uint8_t b)
{
	if (ss->fd == -1)
		return -1;
	return send(ss->fd, &b, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

void
session_end(struct session *ss, int64_t deadline)
{
	char buf[256];
	ssize_t n;
	int status;

	if (ss->fd != -1) {
		(void)shutdown(ss->fd, SHUT_WR);
		/* Its end closes its side: EOF, or the deadline. */
		while (wait_readable(ss->fd, deadline) == 1 &&
		    ((n = read(ss->fd, buf, sizeof(buf))) > 0 ||
		    (n == -1 && (errno == EAGAIN || errno == EINTR))))
			;
		close(ss->fd);
		ss->fd = -1;
	}
	if (ss->pid > 0) {
		if (waitpid(ss->pid, &status, WNOHANG) == 0) {
			kill(ss->pid, SIGKILL);
			waitpid(ss->pid, &status, 0);
		}
		ss->pid = -1;
	}
}

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
	return write_all(FD_PARENT, &res, sizeof(res), now_ms() + 10000);
}

int
session_wait(void)
{
	uint8_t b;
	ssize_t n;

	while ((n = read(FD_PARENT, &b, 1)) == -1 && errno == EINTR)
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
	    r->port);
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

redisContext *
session_redis(const struct session_env *e)
{
	const struct svc_reach *r = e->r;
	struct timeval tv = { 10, 0 };
	char path[64], why[128];
	redisContext *c;
	redisReply *rep = NULL;

	if (r->dir != NULL) {
		snprintf(path, sizeof(path), "%s/%s", e->host,
		    r->s->socket_name);
		c = redisConnectUnixWithTimeout(path, tv);
	} else
		c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
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
	char path[64];
	redisContext *c;

	if (e->r->dir == NULL)
		return NULL;
	snprintf(path, sizeof(path), "%s/" KEEP_REDIS, e->host);
	c = redisConnectUnixWithTimeout(path, tv);
	if (c != NULL && c->err == 0 &&
	    redisSetTimeout(c, (struct timeval){ 0, 0 }) == REDIS_OK)
		return c;
	log_warnx("%s: cannot reach its keeper: %s", e->r->s->name,
	    c == NULL ? "out of memory" : c->errstr);
	if (c != NULL)
		redisFree(c);
	return NULL;
}
