/*
 * format.c - the pure parts of the sbx CLI (format.h).
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "sbx.h"

#define JSON_MAX_DEPTH	64

static bool
is_lower_digit(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static bool
is_alnum(unsigned char c)
{
	return is_lower_digit(c) || (c >= 'A' && c <= 'Z');
}

bool
sbxf_slug_ok(const char *s)
{
	size_t i;

	if (s == NULL || !is_lower_digit((unsigned char)s[0]))
		return false;
	for (i = 1; s[i] != '\0'; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= SBXF_SLUG_MAX)
			return false;
		if (!is_lower_digit(c) && c != '.' && c != '_' && c != '-')
			return false;
	}
	return true;
}

static bool
shell_safe(unsigned char c)
{
	return is_alnum(c) || (c != '\0' && strchr("_@%+=:,./-", c) != NULL);
}

void
sbxf_shell_quote(FILE *f, const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!shell_safe((unsigned char)s[i]))
			break;
	if (len > 0 && i == len) {
		fwrite(s, 1, len, f);
		return;
	}
	putc('\'', f);
	for (i = 0; i < len; i++) {
		if (s[i] == '\'')
			fputs("'\\''", f);
		else
			putc(s[i], f);
	}
	putc('\'', f);
}

int
sbxf_env_name(char *buf, size_t cap, const char *name, size_t len)
{
	size_t i, o = 0;

	if (len == 0 || cap == 0)
		return -1;
	if (name[0] >= '0' && name[0] <= '9') {
		if (cap < 2)
			return -1;
		buf[o++] = '_';
	}
	if (len >= cap - o)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c >= 'a' && c <= 'z')
			buf[o++] = (char)(c - 'a' + 'A');
		else if (is_alnum(c))
			buf[o++] = (char)c;
		else
			buf[o++] = '_';
	}
	buf[o] = '\0';
	return 0;
}

size_t
sbxf_utf8_next(const unsigned char *p, size_t len, uint32_t *cp)
{
	uint32_t c = p[0], min;
	size_t need, i;

	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c < 0xc2)			/* continuation, or overlong 2-byte */
		return 0;
	if (c < 0xe0) {
		need = 1;
		c &= 0x1f;
		min = 0x80;
	} else if (c < 0xf0) {
		need = 2;
		c &= 0x0f;
		min = 0x800;
	} else if (c < 0xf5) {
		need = 3;
		c &= 0x07;
		min = 0x10000;
	} else
		return 0;
	if (len <= need)
		return 0;
	for (i = 1; i <= need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return need + 1;
}

void
sbxf_json_string(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t i = 0, n;

	putc('"', f);
	while (i < len) {
		unsigned char c = p[i];

		if (c >= 0x80) {
			n = sbxf_utf8_next(p + i, len - i, &cp);
			if (n == 0) {
				fputs("\\ufffd", f);
				i++;
			} else {
				/* C1 controls and the JS line breaks escaped:
				 * valid JSON either way, safer on a terminal */
				if ((cp >= 0x80 && cp <= 0x9f) ||
				    cp == 0x2028 || cp == 0x2029)
					fprintf(f, "\\u%04x", (unsigned)cp);
				else
					fwrite(p + i, 1, n, f);
				i += n;
			}
			continue;
		}
		switch (c) {
		case '"':	fputs("\\\"", f); break;
		case '\\':	fputs("\\\\", f); break;
		case '\b':	fputs("\\b", f); break;
		case '\f':	fputs("\\f", f); break;
		case '\n':	fputs("\\n", f); break;
		case '\r':	fputs("\\r", f); break;
		case '\t':	fputs("\\t", f); break;
		default:
			if (c < 0x20 || c == 0x7f)
				fprintf(f, "\\u%04x", (unsigned)c);
			else
				putc(c, f);
		}
		i++;
	}
	putc('"', f);
}

static void json_value(FILE *, const msgpack_object *, int depth);

/*
 * JSON keys must be strings: anything else is written as JSON, then quoted.
 * json_key and json_value recurse, bounded by JSON_MAX_DEPTH.
 */
static void
json_key(FILE *f, const msgpack_object *k, int depth)	/* NOLINT(misc-no-recursion) */
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m;

	if (k->type == MSGPACK_OBJECT_STR || k->type == MSGPACK_OBJECT_BIN) {
		json_value(f, k, depth);
		return;
	}
	if ((m = open_memstream(&buf, &len)) == NULL) {
		fputs("\"?\"", f);
		return;
	}
	json_value(m, k, depth);
	if (fclose(m) != 0 || buf == NULL)
		fputs("\"?\"", f);
	else
		sbxf_json_string(f, buf, len);
	free(buf);
}

static void
json_value(FILE *f, const msgpack_object *o, int depth)	/* NOLINT(misc-no-recursion) */
{
	uint32_t i;

	if (depth > JSON_MAX_DEPTH) {
		fputs("null", f);
		return;
	}
	switch (o->type) {
	case MSGPACK_OBJECT_NIL:
		fputs("null", f);
		break;
	case MSGPACK_OBJECT_BOOLEAN:
		fputs(o->via.boolean ? "true" : "false", f);
		break;
	case MSGPACK_OBJECT_POSITIVE_INTEGER:
		fprintf(f, "%llu", (unsigned long long)o->via.u64);
		break;
	case MSGPACK_OBJECT_NEGATIVE_INTEGER:
		fprintf(f, "%lld", (long long)o->via.i64);
		break;
	case MSGPACK_OBJECT_FLOAT32:
	case MSGPACK_OBJECT_FLOAT64:
		if (isfinite(o->via.f64))
			fprintf(f, o->type == MSGPACK_OBJECT_FLOAT32 ?
			    "%.9g" : "%.17g", o->via.f64);
		else
			fputs("null", f);
		break;
	case MSGPACK_OBJECT_STR:
		sbxf_json_string(f, o->via.str.ptr, o->via.str.size);
		break;
	case MSGPACK_OBJECT_BIN:
		sbxf_json_string(f, o->via.bin.ptr, o->via.bin.size);
		break;
	case MSGPACK_OBJECT_ARRAY:
		putc('[', f);
		for (i = 0; i < o->via.array.size; i++) {
			if (i > 0)
				putc(',', f);
			json_value(f, &o->via.array.ptr[i], depth + 1);
		}
		putc(']', f);
		break;
	case MSGPACK_OBJECT_MAP:
		putc('{', f);
		for (i = 0; i < o->via.map.size; i++) {
			if (i > 0)
				putc(',', f);
			json_key(f, &o->via.map.ptr[i].key, depth + 1);
			putc(':', f);
			json_value(f, &o->via.map.ptr[i].val, depth + 1);
		}
		putc('}', f);
		break;
	default:			/* ext */
		fputs("null", f);
		break;
	}
}

void
sbxf_json(FILE *f, const msgpack_object *o)
{
	json_value(f, o, 0);
}

void
sbxf_print_safe(FILE *f, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t cp;
	size_t i = 0, n;

	while (i < len) {
		if (p[i] < 0x80) {
			putc(p[i] < 0x20 || p[i] == 0x7f ? '?' : p[i], f);
			i++;
			continue;
		}
		n = sbxf_utf8_next(p + i, len - i, &cp);
		if (n == 0 || (cp >= 0x80 && cp <= 0x9f)) {
			putc('?', f);
			i += n == 0 ? 1 : n;
		} else {
			fwrite(p + i, 1, n, f);
			i += n;
		}
	}
}

void
sbxf_duration(char *buf, size_t cap, uint64_t s)
{
	if (s < 60)
		snprintf(buf, cap, "%llus", (unsigned long long)s);
	else if (s < 3600)
		snprintf(buf, cap, "%llum%02llus", (unsigned long long)(s / 60),
		    (unsigned long long)(s % 60));
	else if (s < 86400)
		snprintf(buf, cap, "%lluh%02llum",
		    (unsigned long long)(s / 3600),
		    (unsigned long long)(s % 3600 / 60));
	else
		snprintf(buf, cap, "%llud%02lluh",
		    (unsigned long long)(s / 86400),
		    (unsigned long long)(s % 86400 / 3600));
}

/* 1 and the bytes if o is a string. */
static int
str_of(const msgpack_object *o, const char **p, size_t *n)
{
	if (o == NULL || o->type != MSGPACK_OBJECT_STR)
		return 0;
	*p = o->via.str.ptr;
	*n = o->via.str.size;
	return 1;
}

static int bad(char *, size_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static int
bad(char *err, size_t cap, const char *fmt, ...)
{
	if (err != NULL && cap > 0) {
		va_list ap;

		va_start(ap, fmt);
		vsnprintf(err, cap, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
sbxf_check_ok(FILE *errf, const msgpack_object *reply)
{
	struct sbxc_refusal rf;
	int r;

	if ((r = sbxc_refusal_parse(reply, &rf)) != 0)
		return r;
	fputs("sbx: ", errf);
	if (rf.error[0] != '\0')
		sbxf_print_safe(errf, rf.error, strlen(rf.error));
	else
		fputs("unknown", errf);
	fputs(": ", errf);
	if (rf.message[0] != '\0')
		sbxf_print_safe(errf, rf.message, strlen(rf.message));
	else
		fputs("the server gave no message", errf);
	/* busy: when to try again, if the server said */
	if (rf.retry_after_ms >= 0)
		fprintf(errf, " (retry after %lld ms)",
		    (long long)rf.retry_after_ms);
	putc('\n', errf);
	return 0;
}

int
sbxf_ping(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	const char *v;
	size_t n;

	if (!str_of(sbxc_map_get(reply, "version"), &v, &n))
		return bad(err, cap, "the reply has no %s", "'version' string");
	sbxf_print_safe(f, v, n);
	putc('\n', f);
	return 0;
}

int
sbxf_available(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	const msgpack_object *s = sbxc_map_get(reply, "services");
	const char *p;
	size_t n;
	uint32_t i;

	if (s == NULL || s->type != MSGPACK_OBJECT_ARRAY)
		return bad(err, cap, "the reply has no %s",
		    "'services' array");
	for (i = 0; i < s->via.array.size; i++)
		if (!str_of(&s->via.array.ptr[i], &p, &n))
			return bad(err, cap, "%s", "'services' holds a "
			    "non-string");
	for (i = 0; i < s->via.array.size; i++) {
		(void)str_of(&s->via.array.ptr[i], &p, &n);
		sbxf_print_safe(f, p, n);
		putc('\n', f);
	}
	return 0;
}

int
sbxf_release(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	const msgpack_object *r = sbxc_map_get(reply, "released");

	if (r == NULL || r->type != MSGPACK_OBJECT_BOOLEAN)
		return bad(err, cap, "the reply has no %s",
		    "'released' boolean");
	fputs(r->via.boolean ? "released\n" : "nothing to release\n", f);
	return 0;
}

int
sbxf_snapshot(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	const char *v;
	size_t n;

	if (!str_of(sbxc_map_get(reply, "name"), &v, &n))
		return bad(err, cap, "the reply has no %s", "'name' string");
	fputs("saved snapshot ", f);
	sbxf_print_safe(f, v, n);
	putc('\n', f);
	return 0;
}

/* ---- request_sandbox -> shell ---- */

static bool
has_prefix(const char *s, size_t n, const char *pfx)
{
	size_t m = strlen(pfx);

	return n >= m && memcmp(s, pfx, m) == 0;
}

/*
 * The URL scheme of a service: from a "probe" (or "kind") key when the
 * server sends one, else from the name.  NULL: no URL (tcp and unknown).
 */
static const char *
url_scheme(const msgpack_object *svc, const char *name, size_t n)
{
	const msgpack_object *k = sbxc_map_get(svc, "probe");

	if (k == NULL)
		k = sbxc_map_get(svc, "kind");
	if (k != NULL && k->type == MSGPACK_OBJECT_STR) {
		if (sbxc_str_eq(k, "postgres") || sbxc_str_eq(k, "postgresql"))
			return "postgresql";
		if (sbxc_str_eq(k, "redis"))
			return "redis";
		return NULL;
	}
	if (has_prefix(name, n, "postgres") || (n == 2 &&
	    memcmp(name, "pg", 2) == 0) || has_prefix(name, n, "pg-") ||
	    has_prefix(name, n, "pg_") || has_prefix(name, n, "pg."))
		return "postgresql";
	if (has_prefix(name, n, "redis") || has_prefix(name, n, "valkey"))
		return "redis";
	return NULL;
}

/*
 * RFC 3986: unreserved bytes as is, everything else %XX; '/' too, unless
 * the bytes are a URL's path.
 */
static void
pct(FILE *f, const char *s, size_t n, bool path)
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (is_alnum(c) || c == '-' || c == '.' || c == '_' ||
		    c == '~' || (path && c == '/'))
			putc(c, f);
		else
			fprintf(f, "%%%02X", c);
	}
}

static void
pct_str(FILE *f, const char *s)
{
	pct(f, s, strlen(s), false);
}

/* ---- request_sandbox -> env, dotenv, json ---- */

int
sbxf_format_parse(const char *s, enum sbxf_format *fmt)
{
	if (strcmp(s, "env") == 0)
		*fmt = SBXF_FMT_ENV;
	else if (strcmp(s, "dotenv") == 0)
		*fmt = SBXF_FMT_DOTENV;
	else if (strcmp(s, "json") == 0)
		*fmt = SBXF_FMT_JSON;
	else
		return -1;
	return 0;
}

void
sbxf_dotenv_quote(FILE *f, const char *s, size_t len)
{
	size_t i;
	bool dq = false;

	for (i = 0; i < len; i++)
		if (!shell_safe((unsigned char)s[i]))
			break;
	if (len > 0 && i == len) {
		fwrite(s, 1, len, f);
		return;
	}
	for (i = 0; i < len; i++)
		if (s[i] == '\'' || s[i] == '\\' || s[i] == '\n' ||
		    s[i] == '\r')
			dq = true;
	if (!dq) {
		putc('\'', f);
		fwrite(s, 1, len, f);
		putc('\'', f);
		return;
	}
	putc('"', f);
	for (i = 0; i < len; i++) {
		switch (s[i]) {
		case '\\':	fputs("\\\\", f); break;
		case '"':	fputs("\\\"", f); break;
		case '\n':	fputs("\\n", f); break;
		case '\r':	fputs("\\r", f); break;
		default:	putc(s[i], f); break;
		}
	}
	putc('"', f);
}

/* One NAME=value line in the chosen format (env or dotenv). */
static void
put_var(FILE *f, enum sbxf_format fmt, const char *name, const char *v,
    size_t n)
{
	if (fmt == SBXF_FMT_ENV) {
		fprintf(f, "export %s=", name);
		sbxf_shell_quote(f, v, n);
	} else {
		fprintf(f, "%s=", name);
		sbxf_dotenv_quote(f, v, n);
	}
	putc('\n', f);
}

static void
put_str(FILE *f, enum sbxf_format fmt, const char *env, const char *suffix,
    const char *v)
{
	char name[SBXF_ENV_MAX + 16];

	snprintf(name, sizeof(name), "%s_%s", env, suffix);
	put_var(f, fmt, name, v, strlen(v));
}

/*
 * libpq's way to a Unix socket: the directory that holds it and the port
 * in its name, .s.PGSQL.<port>.  Taken from the socket when it is so
 * named (with transport both, host and port are tcp's), else from a host
 * that is a directory.  0 when the service has neither.
 */
static int
pg_socket(const struct sbxc_service *s, const char **dir, size_t *dirlen,
    unsigned *port)
{
	static const char pfx[] = ".s.PGSQL.";
	const char *base = strrchr(s->socket, '/'), *num, *p;
	unsigned long v = 0;

	if (base != NULL && strncmp(base + 1, pfx, sizeof(pfx) - 1) == 0) {
		num = base + sizeof(pfx);
		for (p = num; *p >= '0' && *p <= '9' && v <= 65535; p++)
			v = v * 10 + (unsigned long)(*p - '0');
		if (p > num && *p == '\0' && v > 0 && v <= 65535) {
			*dir = s->socket;
			*dirlen = base == s->socket ? 1 : (size_t)(base - s->socket);
			*port = (unsigned)v;
			return 1;
		}
	}
	if (s->host[0] == '/') {
		*dir = s->host;
		*dirlen = strlen(s->host);
		*port = s->port;
		return 1;
	}
	return 0;
}

static void
userinfo(FILE *m, const struct sbxc_service *s)
{
	pct_str(m, s->user);
	if (s->password[0] != '\0') {
		putc(':', m);
		pct_str(m, s->password);
	}
	if (s->user[0] != '\0' || s->password[0] != '\0')
		putc('@', m);
}

/*
 * The URL of a service: its loopback port when it has one, which every
 * client's URL parser takes (the kernel lets no other uid reach it, as it
 * keeps them out of the socket's directory: docs/contract.md, "Reaching a
 * sandbox"); else its Unix socket, in the form the scheme's clients share
 * most. 0, with nothing written, when the scheme has no URL for what the
 * service offers.
 */
static int
url_body(FILE *m, const char *scheme, const struct sbxc_service *s)
{
	const char *dir;
	size_t dirlen;
	unsigned port;
	bool v6;

	if (s->host[0] != '\0' && s->host[0] != '/') {
		v6 = strchr(s->host, ':') != NULL && s->host[0] != '[';
		fprintf(m, "%s://", scheme);
		userinfo(m, s);
		fprintf(m, "%s%s%s:%u/", v6 ? "[" : "", s->host,
		    v6 ? "]" : "", s->port);
		pct_str(m, s->database);
		return 1;
	}
	if (strcmp(scheme, "postgresql") == 0 &&
	    pg_socket(s, &dir, &dirlen, &port)) {
		/* libpq, and node-pg after it, take the query's host over
		 * the authority's, and a host that starts with '/' as a
		 * socket directory, unencoded: no '%' for configparser
		 * (alembic), and a host that WHATWG's parser (Node's URL)
		 * requires beside credentials. */
		fputs("postgresql://", m);
		userinfo(m, s);
		fputs("localhost/", m);
		pct_str(m, s->database);
		fputs("?host=", m);
		pct(m, dir, dirlen, true);
		fprintf(m, "&port=%u", port);
		return 1;
	}
	if (strcmp(scheme, "redis") == 0 && s->socket[0] != '\0') {
		/* redis-py's form: no Unix-socket URL is shared by redis'
		 * clients, which is why the installed config publishes
		 * redis on 127.0.0.1 too */
		fputs("unix://", m);
		userinfo(m, s);
		pct(m, s->socket, strlen(s->socket), true);
		if (s->database[0] != '\0') {
			fputs("?db=", m);
			pct_str(m, s->database);
		}
		return 1;
	}
	return 0;
}

/*
 * libpq's own variables, so that a bare `psql` (or any libpq program)
 * reaches the sandbox: the socket directory when there is one (no
 * slirp4netns between), else the loopback host.
 */
static bool
put_libpq(FILE *f, enum sbxf_format fmt, const struct sbxc_service *s)
{
	const char *dir = s->host;
	size_t dirlen = strlen(s->host);
	unsigned port = s->port;
	char num[8];

	if (!pg_socket(s, &dir, &dirlen, &port) && s->host[0] == '\0')
		return false;
	snprintf(num, sizeof(num), "%u", port);
	put_var(f, fmt, "PGHOST", dir, dirlen);
	put_var(f, fmt, "PGPORT", num, strlen(num));
	put_var(f, fmt, "PGUSER", s->user, strlen(s->user));
	put_var(f, fmt, "PGPASSWORD", s->password, strlen(s->password));
	put_var(f, fmt, "PGDATABASE", s->database, strlen(s->database));
	return true;
}

/*
 * The URL of a service (malloc'd) in *url, or NULL in it when the scheme
 * has no URL for what the service offers.  -1: out of memory.
 */
static int
make_url(const char *scheme, const struct sbxc_service *s, char **url)
{
	size_t len = 0;
	FILE *m;
	int r;

	*url = NULL;
	if ((m = open_memstream(url, &len)) == NULL)
		return -1;
	r = url_body(m, scheme, s);
	if (fclose(m) != 0 || *url == NULL) {
		free(*url);
		*url = NULL;
		return -1;
	}
	if (r == 0) {
		free(*url);
		*url = NULL;
	}
	return 0;
}

/*
 * DATABASE_URL and REDIS_URL, the names most frameworks read: the URL of
 * the reply's only postgres and its only redis service.  None when there
 * are two of a kind (which one would be a guess), or when a service's own
 * variables already take the name (a service called "redis" has its
 * REDIS_URL, the same).
 */
enum { AL_PG, AL_REDIS, AL_N };

static const char *const alias_env[AL_N] = { "DATABASE", "REDIS" };

struct aliases {
	unsigned	 n[AL_N];	/* services of the kind */
	char		*url[AL_N];	/* the first one's URL, if any */
	bool		 taken[AL_N];	/* a service's env prefix is it */
};

static void
alias_note(struct aliases *al, const char *env, const char *scheme,
    char **url)
{
	int k;

	for (k = 0; k < AL_N; k++)
		if (strcmp(env, alias_env[k]) == 0)
			al->taken[k] = true;
	if (scheme == NULL)
		return;
	k = strcmp(scheme, "postgresql") == 0 ? AL_PG : AL_REDIS;
	if (al->n[k]++ == 0) {
		al->url[k] = *url;	/* the alias owns it now */
		*url = NULL;
	}
}

static void
alias_put(FILE *f, enum sbxf_format fmt, const struct aliases *al)
{
	int k;

	for (k = 0; k < AL_N; k++)
		if (al->n[k] == 1 && al->url[k] != NULL && !al->taken[k])
			put_str(f, fmt, alias_env[k], "URL", al->url[k]);
}

static void
alias_free(struct aliases *al)
{
	int k;

	for (k = 0; k < AL_N; k++)
		free(al->url[k]);
}

static int
env_service(FILE *m, FILE *warnf, enum sbxf_format fmt,
    const msgpack_object_kv *kv, char (*seen)[SBXF_ENV_MAX + 1],
    uint32_t idx, bool *pg_done, struct aliases *al, char *err, size_t cap)
{
	const char *scheme;
	char port[8], *env = seen[idx], *url = NULL;
	struct sbxc_service s;
	struct sbxc_error e;
	uint32_t j;

	if (sbxc_service_parse(&kv->key, &kv->val, &s, &e) != SBXC_OK)
		return bad(err, cap, "%s", e.msg);
	if (sbxf_env_name(env, SBXF_ENV_MAX + 1, s.name, strlen(s.name)) == -1)
		return bad(err, cap, "%s", "a service name in the reply is "
		    "too long");
	for (j = 0; j < idx; j++)
		if (strcmp(seen[j], env) == 0 && warnf != NULL)
			fprintf(warnf, "sbx: warning: two services map to "
			    "%s_*; the last one wins\n", env);
	/* each only where the transport gives it (sbxc_service) */
	if (s.socket[0] != '\0')
		put_str(m, fmt, env, "SOCKET", s.socket);
	if (s.host[0] != '\0') {
		snprintf(port, sizeof(port), "%u", s.port);
		put_str(m, fmt, env, "HOST", s.host);
		put_str(m, fmt, env, "PORT", port);
	}
	put_str(m, fmt, env, "USER", s.user);
	put_str(m, fmt, env, "PASSWORD", s.password);
	put_str(m, fmt, env, "DATABASE", s.database);
	scheme = url_scheme(&kv->val, s.name, strlen(s.name));
	if (scheme != NULL && make_url(scheme, &s, &url) == -1)
		return bad(err, cap, "%s", "out of memory");
	if (url != NULL)
		put_str(m, fmt, env, "URL", url);
	else if (scheme != NULL && warnf != NULL)
		fprintf(warnf, "sbx: warning: no %s_URL: the service has no "
		    "socket or host that a %s URL can name\n", env, scheme);
	/* PG*: the first postgres service's, as libpq has one of each */
	if (scheme != NULL && strcmp(scheme, "postgresql") == 0 && !*pg_done)
		*pg_done = put_libpq(m, fmt, &s);
	alias_note(al, env, scheme, &url);
	free(url);
	return 0;
}

/* One service as a JSON member: "name": {socket, host, port, user,
 * password, database, url}, each only where there is one. */
static int
json_service(FILE *m, const msgpack_object_kv *kv, uint32_t idx, char *err,
    size_t cap)
{
	const char *scheme;
	struct sbxc_service s;
	struct sbxc_error e;
	char *url = NULL;

	if (sbxc_service_parse(&kv->key, &kv->val, &s, &e) != SBXC_OK)
		return bad(err, cap, "%s", e.msg);
	scheme = url_scheme(&kv->val, s.name, strlen(s.name));
	if (scheme != NULL && make_url(scheme, &s, &url) == -1)
		return bad(err, cap, "%s", "out of memory");
	if (idx > 0)
		putc(',', m);
	sbxf_json_string(m, s.name, strlen(s.name));
	putc(':', m);
	putc('{', m);
	if (s.socket[0] != '\0') {
		fputs("\"socket\":", m);
		sbxf_json_string(m, s.socket, strlen(s.socket));
		putc(',', m);
	}
	if (s.host[0] != '\0') {
		fputs("\"host\":", m);
		sbxf_json_string(m, s.host, strlen(s.host));
		fprintf(m, ",\"port\":%u,", s.port);
	}
	fputs("\"user\":", m);
	sbxf_json_string(m, s.user, strlen(s.user));
	fputs(",\"password\":", m);
	sbxf_json_string(m, s.password, strlen(s.password));
	fputs(",\"database\":", m);
	sbxf_json_string(m, s.database, strlen(s.database));
	if (url != NULL) {
		fputs(",\"url\":", m);
		sbxf_json_string(m, url, strlen(url));
	}
	putc('}', m);
	free(url);
	return 0;
}

int
sbxf_request(FILE *f, FILE *warnf, enum sbxf_format fmt,
    const msgpack_object *reply, char *err, size_t cap)
{
	const msgpack_object *s = sbxc_map_get(reply, "services");
	char (*seen)[SBXF_ENV_MAX + 1];
	struct aliases al;
	char *buf = NULL;
	size_t len = 0;
	uint32_t i;
	bool pg_done;
	FILE *m;
	int rc = 0;

	if (s == NULL || s->type != MSGPACK_OBJECT_MAP)
		return bad(err, cap, "the reply has no %s", "'services' map");
	if (s->via.map.size == 0 && fmt != SBXF_FMT_JSON)
		return 0;
	pg_done = false;
	memset(&al, 0, sizeof(al));
	if ((seen = calloc(s->via.map.size + 1, sizeof(*seen))) == NULL)
		return bad(err, cap, "%s", "out of memory");
	if ((m = open_memstream(&buf, &len)) == NULL) {
		free(seen);
		return bad(err, cap, "%s", "out of memory");
	}
	if (fmt == SBXF_FMT_JSON)
		putc('{', m);
	for (i = 0; i < s->via.map.size && rc == 0; i++) {
		if (fmt == SBXF_FMT_JSON)
			rc = json_service(m, &s->via.map.ptr[i], i, err, cap);
		else
			rc = env_service(m, warnf, fmt, &s->via.map.ptr[i],
			    seen, i, &pg_done, &al, err, cap);
	}
	if (fmt == SBXF_FMT_JSON)
		fputs("}\n", m);
	else if (rc == 0)
		alias_put(m, fmt, &al);
	if (fclose(m) != 0 && rc == 0)
		rc = bad(err, cap, "%s", "out of memory");
	if (rc == 0 && buf != NULL)
		fwrite(buf, 1, len, f);
	free(buf);
	free(seen);
	alias_free(&al);
	return rc;
}

void
sbxf_request_failed(FILE *f, enum sbxf_format fmt)
{
	if (fmt == SBXF_FMT_ENV)
		fputs("false\n", f);
}

int
sbxf_env(FILE *f, FILE *warnf, const msgpack_object *reply, char *err,
    size_t cap)
{
	return sbxf_request(f, warnf, SBXF_FMT_ENV, reply, err, cap);
}

/* ---- status -> table ---- */

#define NCOL	7	/* the last, BIND_PID, only when a sandbox has one */

static const char *const status_head[NCOL] = {
	"UID", "AGENT", "PROJECT", "SERVICES", "AGE", "IDLE", "BIND_PID"
};

/* Display width, roughly: code points (cells are print_safe output). */
static size_t
width(const char *s)
{
	size_t w = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static char *
cell_str(const msgpack_object *o)
{
	char *buf = NULL;
	size_t len = 0;
	const char *p;
	size_t n;
	FILE *m;

	if ((m = open_memstream(&buf, &len)) == NULL)
		return NULL;
	if (str_of(o, &p, &n) && n > 0)
		sbxf_print_safe(m, p, n);
	else
		putc('?', m);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *
cell_services(const msgpack_object *o)
{
	char *buf = NULL;
	size_t len = 0, n;
	const char *p;
	uint32_t i;
	FILE *m;

	if ((m = open_memstream(&buf, &len)) == NULL)
		return NULL;
	if (o == NULL || o->type != MSGPACK_OBJECT_ARRAY)
		putc('?', m);
	else if (o->via.array.size == 0)
		putc('-', m);
	for (i = 0; o != NULL && o->type == MSGPACK_OBJECT_ARRAY &&
	    i < o->via.array.size; i++) {
		if (i > 0)
			putc(',', m);
		if (str_of(&o->via.array.ptr[i], &p, &n))
			sbxf_print_safe(m, p, n);
		else
			putc('?', m);
	}
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static char *
cell_num(const msgpack_object *o, bool dur)
{
	char buf[32];

	if (o == NULL || o->type != MSGPACK_OBJECT_POSITIVE_INTEGER)
		snprintf(buf, sizeof(buf), "?");
	else if (dur)
		sbxf_duration(buf, sizeof(buf), o->via.u64);
	else
		snprintf(buf, sizeof(buf), "%llu",
		    (unsigned long long)o->via.u64);
	return strdup(buf);
}

/* bind_pid: "-" where the sandbox is bound to no process. */
static char *
cell_pid(const msgpack_object *o)
{
	if (o == NULL || o->type == MSGPACK_OBJECT_NIL)
		return strdup("-");
	return cell_num(o, false);
}

static void
print_row(FILE *f, const char *const *cells, const size_t *w, size_t ncol)
{
	size_t c, pad;

	for (c = 0; c < ncol; c++) {
		fputs(cells[c], f);
		if (c + 1 == ncol)
			break;
		for (pad = width(cells[c]); pad < w[c] + 2; pad++)
			putc(' ', f);
	}
	putc('\n', f);
}

/* "warm containers ready: postgres 2, redis 1", when the host keeps any. */
static void
print_warm(FILE *f, const msgpack_object *m)
{
	uint32_t i;

	if (m == NULL || m->type != MSGPACK_OBJECT_MAP || m->via.map.size == 0)
		return;
	fputs("warm containers ready:", f);
	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object_kv *kv = &m->via.map.ptr[i];

		if (kv->key.type != MSGPACK_OBJECT_STR ||
		    kv->val.type != MSGPACK_OBJECT_POSITIVE_INTEGER)
			continue;
		fputs(i ? ", " : " ", f);
		sbxf_print_safe(f, kv->key.via.str.ptr, kv->key.via.str.size);
		fprintf(f, " %llu", (unsigned long long)kv->val.via.u64);
	}
	putc('\n', f);
}

/* 1 if a sandbox of the array carries a bind_pid (not nil). */
static bool
any_bound(const msgpack_object *s)
{
	const msgpack_object *o;
	uint32_t r;

	for (r = 0; r < s->via.array.size; r++)
		if ((o = sbxc_map_get(&s->via.array.ptr[r], "bind_pid")) != NULL &&
		    o->type != MSGPACK_OBJECT_NIL)
			return true;
	return false;
}

int
sbxf_status(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	const msgpack_object *s = sbxc_map_get(reply, "sandboxes");
	size_t w[NCOL], nrows, r, c, nw, ncol;
	char **cells;
	int rc = 0;

	if (s == NULL || s->type != MSGPACK_OBJECT_ARRAY)
		return bad(err, cap, "the reply has no %s",
		    "'sandboxes' array");
	nrows = s->via.array.size;
	ncol = any_bound(s) ? NCOL : NCOL - 1;
	if ((cells = calloc(nrows * NCOL + 1, sizeof(*cells))) == NULL)
		return bad(err, cap, "%s", "out of memory");
	for (c = 0; c < ncol; c++)
		w[c] = strlen(status_head[c]);
	for (r = 0; r < nrows; r++) {
		const msgpack_object *row = &s->via.array.ptr[r];
		char **rc_ = &cells[r * NCOL];

		rc_[0] = cell_num(sbxc_map_get(row, "uid"), false);
		rc_[1] = cell_str(sbxc_map_get(row, "agent"));
		rc_[2] = cell_str(sbxc_map_get(row, "project"));
		rc_[3] = cell_services(sbxc_map_get(row, "services"));
		rc_[4] = cell_num(sbxc_map_get(row, "age_s"), true);
		rc_[5] = cell_num(sbxc_map_get(row, "idle_s"), true);
		if (ncol == NCOL)
			rc_[6] = cell_pid(sbxc_map_get(row, "bind_pid"));
		for (c = 0; c < ncol; c++) {
			if (rc_[c] == NULL) {
				rc = bad(err, cap, "%s", "out of memory");
				goto out;
			}
			if ((nw = width(rc_[c])) > w[c])
				w[c] = nw;
		}
	}
	print_row(f, status_head, w, ncol);
	for (r = 0; r < nrows; r++)
		print_row(f, (const char *const *)&cells[r * NCOL], w, ncol);
	print_warm(f, sbxc_map_get(reply, "warm"));
out:
	for (r = 0; r < nrows * NCOL; r++)
		free(cells[r]);
	free(cells);
	return rc;
}
