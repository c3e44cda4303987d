/*
 * libsbx.c - connect, send one request map, read one reply map (sbx.h).
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sbx.h"

#define RECV_CHUNK	(64 * 1024)
#define CONNECT_RETRY_MS 20

int64_t
sbxc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

const char *
sbxc_status_name(enum sbxc_status st)
{
	switch (st) {
	case SBXC_OK:		return "ok";
	case SBXC_ECONNECT:	return "cannot connect";
	case SBXC_ETIMEOUT:	return "timeout";
	case SBXC_EIO:		return "I/O error";
	case SBXC_EPROTO:	return "bad reply";
	case SBXC_EREQUEST:	return "bad request";
	case SBXC_ENOMEM:	return "out of memory";
	}
	return "unknown";
}

static enum sbxc_status fail(struct sbxc_error *, enum sbxc_status, int,
    const char *, ...) __attribute__((format(printf, 4, 5)));

static enum sbxc_status
fail(struct sbxc_error *err, enum sbxc_status st, int sys_errno,
    const char *fmt, ...)
{
	if (err != NULL) {
		va_list ap;

		err->status = st;
		err->sys_errno = sys_errno;
		va_start(ap, fmt);
		vsnprintf(err->msg, sizeof(err->msg), fmt, ap);
		va_end(ap);
	}
	return st;
}

static void
pack_cstr(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

/* A key and its string value; none when v is NULL. */
static void
pack_kv(msgpack_packer *pk, const char *k, const char *v)
{
	if (v == NULL)
		return;
	pack_cstr(pk, k);
	pack_cstr(pk, v);
}

int
sbxc_pack_request(msgpack_sbuffer *sb, const struct sbxc_req *r)
{
	return sbxc_pack_request_ext(sb, r, NULL);
}

int
sbxc_pack_request_ext(msgpack_sbuffer *sb, const struct sbxc_req *r,
    const struct sbxc_req_ext *x)
{
	static const struct sbxc_req_ext none;
	msgpack_packer pk;
	size_t n;

	if (x == NULL)
		x = &none;
	if (r == NULL || r->op == NULL || x->bind_pid < 0)
		return -1;
	n = 1 + (r->agent != NULL) + (r->project != NULL) +
	    (r->services != NULL) + (x->to != NULL) + (x->name != NULL) +
	    (x->bind_pid > 0);
	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, n);
	pack_kv(&pk, "op", r->op);
	pack_kv(&pk, "agent", r->agent);
	pack_kv(&pk, "project", r->project);
	if (r->services != NULL) {
		size_t i;

		pack_cstr(&pk, "services");
		msgpack_pack_array(&pk, r->nservices);
		for (i = 0; i < r->nservices; i++)
			pack_cstr(&pk, r->services[i]);
	}
	pack_kv(&pk, "to", x->to);
	pack_kv(&pk, "name", x->name);
	if (x->bind_pid > 0) {
		pack_cstr(&pk, "bind_pid");
		msgpack_pack_int64(&pk, x->bind_pid);
	}
	return 0;
}

static const char *
connect_hint(int e)
{
	switch (e) {
	case ENOENT:
	case ECONNREFUSED:
		return " (is sbx-monitor running? is this the right socket?)";
	case EACCES:
	case EPERM:
		return " (check the socket's mode: socket_mode in sbx.conf)";
	default:
		return "";
	}
}

static enum sbxc_status
connect_until(const char *path, int64_t deadline, int *fdp,
    struct sbxc_error *err)
{
	struct sockaddr_un sa;
	size_t n = strlen(path);
	int fd, e;

	*fdp = -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	if (n == 0)
		return fail(err, SBXC_ECONNECT, EINVAL,
		    "cannot connect: the socket path is empty");
	if (n >= sizeof(sa.sun_path))
		return fail(err, SBXC_ECONNECT, ENAMETOOLONG,
		    "cannot connect to %s: the path is longer than %zu bytes",
		    path, sizeof(sa.sun_path) - 1);
	memcpy(sa.sun_path, path, n);
	/*
	 * Non-blocking, so that a full listen queue (EAGAIN on AF_UNIX) is
	 * retried until the deadline instead of blocking past it.  The I/O
	 * that follows uses poll() and MSG_DONTWAIT either way.
	 */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1) {
		e = errno;
		return fail(err, SBXC_ECONNECT, e, "socket: %s", strerror(e));
	}
	for (;;) {
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
		    errno == EISCONN) {
			*fdp = fd;
			return SBXC_OK;
		}
		e = errno;
		if (e == EINTR)
			continue;
		if (e != EAGAIN || sbxc_now_ms() + CONNECT_RETRY_MS > deadline)
			break;
		(void)poll(NULL, 0, CONNECT_RETRY_MS);
	}
	close(fd);
	if (e == EAGAIN)
		return fail(err, SBXC_ETIMEOUT, e, "cannot connect to %s: the "
		    "server's listen queue stayed full until the timeout", path);
	return fail(err, SBXC_ECONNECT, e, "cannot connect to %s: %s%s", path,
	    strerror(e), connect_hint(e));
}

int
sbxc_connect(const char *path, int64_t deadline, struct sbxc_error *err)
{
	int fd;

	(void)connect_until(path, deadline, &fd, err);
	return fd;
}

/* "120 s" or "1500 ms", for messages. */
static const char *
fmt_ms(char *buf, size_t cap, int64_t ms)
{
	if (ms % 1000 == 0)
		snprintf(buf, cap, "%lld s", (long long)(ms / 1000));
	else
		snprintf(buf, cap, "%lld ms", (long long)ms);
	return buf;
}

static void
opts_defaults(const struct sbxc_opts *in, struct sbxc_opts *o)
{
	if (in != NULL)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->timeout_ms <= 0)
		o->timeout_ms = SBXC_DEFAULT_TIMEOUT_MS;
	if (o->tick_ms <= 0)
		o->tick_ms = 250;
}

/* Feeds n more bytes; SBXC_OK with a map, EPROTO/ENOMEM, or -1 for "more". */
static int
feed(msgpack_unpacker *up, size_t n, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	msgpack_unpacker_buffer_consumed(up, n);
	switch (msgpack_unpacker_next(up, reply)) {
	case MSGPACK_UNPACK_SUCCESS:
		if (reply->data.type != MSGPACK_OBJECT_MAP)
			return fail(err, SBXC_EPROTO, 0,
			    "the reply is not a msgpack map");
		return SBXC_OK;
	case MSGPACK_UNPACK_CONTINUE:
		return -1;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		return fail(err, SBXC_EPROTO, 0, "the reply is nested too "
		    "deeply or claims more elements than memory allows");
	default:
		return fail(err, SBXC_EPROTO, 0, "the reply is not valid msgpack");
	}
}

static enum sbxc_status
exchange_until(int fd, const char *req, size_t len, int64_t deadline,
    const struct sbxc_opts *o, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	msgpack_unpacker up;
	struct pollfd pfd;
	int64_t start = sbxc_now_ms(), next_tick;
	size_t sent = 0, got = 0, room;
	int send_dead = 0, send_errno = 0, st = SBXC_EIO;
	char tbuf[32];
	ssize_t n;

	if (!msgpack_unpacker_init(&up, RECV_CHUNK))
		return fail(err, SBXC_ENOMEM, ENOMEM, "out of memory");
	next_tick = start + o->tick_ms;
	for (;;) {
		int64_t now = sbxc_now_ms(), wait;
		int r;

		if (o->tick != NULL && now >= next_tick) {
			o->tick(o->tick_arg, now - start);
			while (next_tick <= now)
				next_tick += o->tick_ms;
		}
		if (now >= deadline) {
			st = fail(err, SBXC_ETIMEOUT, 0, "no %s within %s",
			    sent < len && !send_dead ? "room to send the request" :
			    got > 0 ? "complete reply" : "reply",
			    fmt_ms(tbuf, sizeof(tbuf), o->timeout_ms));
			break;
		}
		wait = deadline - now;
		if (o->tick != NULL && next_tick - now < wait)
			wait = next_tick - now;
		if (wait > 60000)
			wait = 60000;
		pfd.fd = fd;
		pfd.events = POLLIN | (sent < len && !send_dead ? POLLOUT : 0);
		pfd.revents = 0;
		r = poll(&pfd, 1, (int)wait);
		if (r == -1) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			st = fail(err, SBXC_EIO, errno, "poll: %s",
			    strerror(errno));
			break;
		}
		if (r == 0)
			continue;
		if (pfd.revents & POLLNVAL) {
			st = fail(err, SBXC_EIO, EBADF, "invalid socket");
			break;
		}
		if ((pfd.revents & POLLOUT) && sent < len && !send_dead) {
			n = send(fd, req + sent, len - sent,
			    MSG_DONTWAIT | MSG_NOSIGNAL);
			if (n > 0)
				sent += (size_t)n;
			else if (n == -1 && (errno == EPIPE ||
			    errno == ECONNRESET)) {
				/* The server may have answered and closed
				 * already: keep reading to hear why. */
				send_dead = 1;
				send_errno = errno;
			} else if (n == -1 && errno != EAGAIN &&
			    errno != EWOULDBLOCK && errno != EINTR) {
				st = fail(err, SBXC_EIO, errno,
				    "cannot send the request: %s",
				    strerror(errno));
				break;
			}
		}
		if (!(pfd.revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		if (!msgpack_unpacker_reserve_buffer(&up, RECV_CHUNK)) {
			st = fail(err, SBXC_ENOMEM, ENOMEM, "out of memory");
			break;
		}
		room = msgpack_unpacker_buffer_capacity(&up);
		if (room > SBXC_REPLY_MAX - got)
			room = SBXC_REPLY_MAX - got;
		n = recv(fd, msgpack_unpacker_buffer(&up), room, MSG_DONTWAIT);
		if (n == -1) {
			if (errno == EAGAIN || errno == EWOULDBLOCK ||
			    errno == EINTR)
				continue;
			st = fail(err, SBXC_EIO, errno,
			    "cannot read the reply: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (got > 0)
				st = fail(err, SBXC_EPROTO, 0, "the reply is "
				    "truncated: the server closed the "
				    "connection after %zu bytes", got);
			else if (send_dead || sent < len)
				st = fail(err, SBXC_EIO, send_errno, "the server "
				    "closed the connection before taking the "
				    "whole request (%zu of %zu bytes)", sent,
				    len);
			else
				st = fail(err, SBXC_EPROTO, 0, "the server "
				    "closed the connection without a reply");
			break;
		}
		got += (size_t)n;
		if ((st = feed(&up, (size_t)n, reply, err)) != -1)
			break;
		if (got >= SBXC_REPLY_MAX) {
			st = fail(err, SBXC_EPROTO, 0,
			    "the reply is larger than %d bytes", SBXC_REPLY_MAX);
			break;
		}
	}
	msgpack_unpacker_destroy(&up);
	if (st != SBXC_OK) {
		msgpack_unpacked_destroy(reply);
		msgpack_unpacked_init(reply);
	} else if (err != NULL) {
		err->status = SBXC_OK;
		err->sys_errno = 0;
		err->msg[0] = '\0';
	}
	return (enum sbxc_status)st;
}

enum sbxc_status
sbxc_exchange(int fd, const void *req, size_t len,
    const struct sbxc_opts *opts, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	struct sbxc_opts o;

	opts_defaults(opts, &o);
	msgpack_unpacked_init(reply);
	return exchange_until(fd, req, len, sbxc_now_ms() + o.timeout_ms, &o,
	    reply, err);
}

enum sbxc_status
sbxc_call(const char *path, const struct sbxc_req *r,
    const struct sbxc_opts *opts, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	return sbxc_call_ext(path, r, NULL, opts, reply, err);
}

enum sbxc_status
sbxc_call_ext(const char *path, const struct sbxc_req *r,
    const struct sbxc_req_ext *x, const struct sbxc_opts *opts,
    msgpack_unpacked *reply, struct sbxc_error *err)
{
	struct sbxc_opts o;
	msgpack_sbuffer sb;
	enum sbxc_status st;
	int64_t deadline;
	int fd;

	opts_defaults(opts, &o);
	deadline = sbxc_now_ms() + o.timeout_ms;
	msgpack_unpacked_init(reply);
	if (x != NULL && x->bind_pid < 0)
		return fail(err, SBXC_EREQUEST, 0, "bind_pid %lld is not a "
		    "positive integer", (long long)x->bind_pid);
	msgpack_sbuffer_init(&sb);
	if (sbxc_pack_request_ext(&sb, r, x) == -1) {
		msgpack_sbuffer_destroy(&sb);
		return fail(err, SBXC_EREQUEST, 0, "the request has no op");
	}
	if (sb.data == NULL) {
		msgpack_sbuffer_destroy(&sb);
		return fail(err, SBXC_ENOMEM, ENOMEM, "out of memory");
	}
	if (sb.size > SBXC_REQUEST_MAX) {
		msgpack_sbuffer_destroy(&sb);
		return fail(err, SBXC_EREQUEST, 0, "the request is larger "
		    "than %d bytes", SBXC_REQUEST_MAX);
	}
	if ((st = connect_until(path, deadline, &fd, err)) != SBXC_OK) {
		msgpack_sbuffer_destroy(&sb);
		return st;
	}
	st = exchange_until(fd, sb.data, sb.size, deadline, &o, reply, err);
	close(fd);
	msgpack_sbuffer_destroy(&sb);
	return st;
}

enum sbxc_status
sbxc_reset(const char *path, const char *agent, const char *to,
    const struct sbxc_opts *opts, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	struct sbxc_req r = { .op = "reset", .agent = agent };
	struct sbxc_req_ext x = { .to = to };

	if (agent == NULL) {
		msgpack_unpacked_init(reply);
		return fail(err, SBXC_EREQUEST, 0, "reset needs an agent");
	}
	return sbxc_call_ext(path, &r, &x, opts, reply, err);
}

enum sbxc_status
sbxc_snapshot(const char *path, const char *agent, const char *name,
    const struct sbxc_opts *opts, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	struct sbxc_req r = { .op = "snapshot", .agent = agent };
	struct sbxc_req_ext x = { .name = name };

	if (agent == NULL || name == NULL) {
		msgpack_unpacked_init(reply);
		return fail(err, SBXC_EREQUEST, 0, "snapshot needs an agent "
		    "and a name");
	}
	return sbxc_call_ext(path, &r, &x, opts, reply, err);
}

const msgpack_object *
sbxc_map_get(const msgpack_object *map, const char *key)
{
	size_t n = strlen(key);
	uint32_t i;

	if (map == NULL || map->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < map->via.map.size; i++) {
		const msgpack_object *k = &map->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR && k->via.str.size == n &&
		    memcmp(k->via.str.ptr, key, n) == 0)
			return &map->via.map.ptr[i].val;
	}
	return NULL;
}

int
sbxc_str_eq(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);

	return o != NULL && o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size == n && memcmp(o->via.str.ptr, s, n) == 0;
}

/* ---- request_sandbox: one service ---- */

/* A service's name for a message: printable ASCII only, bounded. */
static void
safe_name(char *buf, size_t cap, const msgpack_object *key)
{
	size_t i, n = 0;

	if (key->type == MSGPACK_OBJECT_STR)
		n = key->via.str.size < cap - 1 ? key->via.str.size : cap - 1;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)key->via.str.ptr[i];

		if (c >= 0x20 && c < 0x7f && c != '\'')
			buf[i] = key->via.str.ptr[i];
		else
			buf[i] = '?';
	}
	buf[n] = '\0';
}

/* The value of key in map; NULL when it is absent or nil. */
static const msgpack_object *
present(const msgpack_object *map, const char *key)
{
	const msgpack_object *o = sbxc_map_get(map, key);

	return o == NULL || o->type == MSGPACK_OBJECT_NIL ? NULL : o;
}

/*
 * Copies a string that holds no NUL (a C string could not carry it, a
 * shell variable neither) and fits cap with its NUL.  0 if o is not one.
 */
static int
copy_str(char *dst, size_t cap, const msgpack_object *o)
{
	if (o == NULL || o->type != MSGPACK_OBJECT_STR ||
	    o->via.str.size >= cap ||
	    memchr(o->via.str.ptr, '\0', o->via.str.size) != NULL)
		return 0;
	memcpy(dst, o->via.str.ptr, o->via.str.size);
	dst[o->via.str.size] = '\0';
	return 1;
}

/* A port: a positive integer or a decimal string, 1..65535. */
static int
port_of(const msgpack_object *o, unsigned *port)
{
	unsigned long v = 0;
	uint32_t i;

	if (o->type == MSGPACK_OBJECT_POSITIVE_INTEGER) {
		if (o->via.u64 == 0 || o->via.u64 > 65535)
			return 0;
		*port = (unsigned)o->via.u64;
		return 1;
	}
	if (o->type != MSGPACK_OBJECT_STR || o->via.str.size == 0 ||
	    o->via.str.size > 5)
		return 0;
	for (i = 0; i < o->via.str.size; i++) {
		char c = o->via.str.ptr[i];

		if (c < '0' || c > '9')
			return 0;
		v = v * 10 + (unsigned long)(c - '0');
	}
	if (v == 0 || v > 65535)
		return 0;
	*port = (unsigned)v;
	return 1;
}

/* NULL if val is a usable service, else what is wrong with it. */
static const char *
service_why(const msgpack_object *val, struct sbxc_service *s)
{
	const msgpack_object *o;

	if (val->type != MSGPACK_OBJECT_MAP)
		return "is not a map";
	if (!copy_str(s->user, sizeof(s->user), present(val, "user")))
		return "has no valid 'user'";
	if (!copy_str(s->password, sizeof(s->password),
	    present(val, "password")))
		return "has no valid 'password'";
	if (!copy_str(s->database, sizeof(s->database),
	    present(val, "database")))
		return "has no valid 'database'";
	/* absolute: libpq takes a host that starts with '/' for a directory */
	if ((o = present(val, "socket")) != NULL &&
	    (!copy_str(s->socket, sizeof(s->socket), o) || s->socket[0] != '/'))
		return "has no valid 'socket' (an absolute path)";
	if ((o = present(val, "host")) != NULL &&
	    (!copy_str(s->host, sizeof(s->host), o) || s->host[0] == '\0'))
		return "has no valid 'host'";
	if ((o = present(val, "port")) != NULL && !port_of(o, &s->port))
		return "has no valid 'port'";
	/* one without the other reaches nothing */
	if (s->host[0] != '\0' && s->port == 0)
		return "has a 'host' but no 'port'";
	if (s->port != 0 && s->host[0] == '\0')
		return "has a 'port' but no 'host'";
	if (s->socket[0] == '\0' && s->host[0] == '\0')
		return "has neither a 'socket' nor a 'host'";
	return NULL;
}

enum sbxc_status
sbxc_service_parse(const msgpack_object *key, const msgpack_object *val,
    struct sbxc_service *out, struct sbxc_error *err)
{
	char name[65];
	const char *why;

	memset(out, 0, sizeof(*out));
	if (key == NULL || val == NULL ||
	    !copy_str(out->name, sizeof(out->name), key) ||
	    out->name[0] == '\0')
		return fail(err, SBXC_EPROTO, 0, "a service name in the reply "
		    "is not a string of 1 to %d bytes", SBXC_FIELD_MAX - 1);
	if ((why = service_why(val, out)) != NULL) {
		safe_name(name, sizeof(name), key);
		memset(out, 0, sizeof(*out));
		return fail(err, SBXC_EPROTO, 0, "service '%s' %s", name, why);
	}
	if (err != NULL) {
		err->status = SBXC_OK;
		err->sys_errno = 0;
		err->msg[0] = '\0';
	}
	return SBXC_OK;
}

/* ---- refusals ---- */

/* In the order of enum sbxc_code, from SBXC_CODE_NONE. */
static const char *const code_names[] = {
	"ok", "bad_request", "disabled", "unknown_project", "not_opted_in",
	"forbidden", "conflict", "runtime_failed", "timeout", "busy",
	"internal", "no_sandbox", "unknown_snapshot", "seed_failed",
};
#define NCODES	(sizeof(code_names) / sizeof(code_names[0]))

const char *
sbxc_code_name(enum sbxc_code c)
{
	if ((int)c < 0 || (size_t)c >= NCODES)
		return "unknown";
	return code_names[c];
}

enum sbxc_code
sbxc_code_parse(const char *s, size_t len)
{
	size_t i;

	/* from 1: "ok" is no refusal's code */
	for (i = 1; s != NULL && i < NCODES; i++)
		if (strlen(code_names[i]) == len &&
		    memcmp(code_names[i], s, len) == 0)
			return (enum sbxc_code)i;
	return SBXC_CODE_UNKNOWN;
}

/* Copies a string object, cut to cap, each NUL as '?'. */
static void
copy_cut(char *dst, size_t cap, const msgpack_object *o)
{
	size_t i, n = 0;

	if (o != NULL && o->type == MSGPACK_OBJECT_STR)
		n = o->via.str.size < cap - 1 ? o->via.str.size : cap - 1;
	for (i = 0; i < n; i++) {
		dst[i] = o->via.str.ptr[i];
		if (dst[i] == '\0')
			dst[i] = '?';
	}
	dst[n] = '\0';
}

int
sbxc_refusal_parse(const msgpack_object *reply, struct sbxc_refusal *out)
{
	const msgpack_object *ok = sbxc_map_get(reply, "ok"), *o;

	memset(out, 0, sizeof(*out));
	out->code = SBXC_CODE_NONE;
	out->retry_after_ms = -1;
	if (ok == NULL || ok->type != MSGPACK_OBJECT_BOOLEAN)
		return -1;
	if (ok->via.boolean)
		return 1;
	o = sbxc_map_get(reply, "error");
	copy_cut(out->error, sizeof(out->error), o);
	out->code = o != NULL && o->type == MSGPACK_OBJECT_STR ?
	    sbxc_code_parse(o->via.str.ptr, o->via.str.size) :
	    SBXC_CODE_UNKNOWN;
	copy_cut(out->message, sizeof(out->message),
	    sbxc_map_get(reply, "message"));
	o = sbxc_map_get(reply, "retry_after_ms");
	if (o != NULL && o->type == MSGPACK_OBJECT_POSITIVE_INTEGER)
		out->retry_after_ms = o->via.u64 > INT64_MAX ? INT64_MAX :
		    (int64_t)o->via.u64;
	return 0;
}
