/*
 * test_client.c - the sbx client's pure parts (format.c) and its
 * request/reply layer (lib/libsbx.c) against small fake servers forked by the
 * tests: over a socketpair for sbxc_exchange, over a Unix socket in a
 * temporary directory for sbxc_call.
 *
 * Links client/format.c and lib/libsbx.c, never client/sbx.c (which has
 * main).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "format.h"
#include "sbx.h"

/* ---- helpers ---------------------------------------------------------- */

struct mem {
	char	*buf;
	size_t	 len;
	FILE	*f;
};

static FILE *
mem_open(struct mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	cr_assert_not_null(m->f);
	return m->f;
}

/* Closes the stream; the text stays in m->buf (free it with mem_free). */
static const char *
mem_text(struct mem *m)
{
	cr_assert_eq(fclose(m->f), 0);
	m->f = NULL;
	return m->buf != NULL ? m->buf : "";
}

static void
mem_free(struct mem *m)
{
	if (m->f != NULL)
		fclose(m->f);
	m->f = NULL;
	free(m->buf);
	m->buf = NULL;
}

/*
 * Packs by a little format: m N (map of N pairs), a N (array), s STR,
 * S PTR LEN (str with bytes), b PTR LEN (bin), u UINT, i INT, d DOUBLE,
 * T true, F false, n nil.  Spaces are ignored.
 */
static void
pk(msgpack_packer *p, const char *fmt, ...)
{
	va_list ap;
	const char *s;
	size_t n;

	va_start(ap, fmt);
	for (; *fmt != '\0'; fmt++) {
		switch (*fmt) {
		case ' ':
			break;
		case 'm':
			msgpack_pack_map(p, (size_t)va_arg(ap, int));
			break;
		case 'a':
			msgpack_pack_array(p, (size_t)va_arg(ap, int));
			break;
		case 's':
			s = va_arg(ap, const char *);
			msgpack_pack_str(p, strlen(s));
			msgpack_pack_str_body(p, s, strlen(s));
			break;
		case 'S':
			s = va_arg(ap, const char *);
			n = va_arg(ap, size_t);
			msgpack_pack_str(p, n);
			msgpack_pack_str_body(p, s, n);
			break;
		case 'b':
			s = va_arg(ap, const char *);
			n = va_arg(ap, size_t);
			msgpack_pack_bin(p, n);
			msgpack_pack_bin_body(p, s, n);
			break;
		case 'u':
			msgpack_pack_uint64(p, va_arg(ap, uint64_t));
			break;
		case 'i':
			msgpack_pack_int64(p, va_arg(ap, int64_t));
			break;
		case 'd':
			msgpack_pack_double(p, va_arg(ap, double));
			break;
		case 'T':
			msgpack_pack_true(p);
			break;
		case 'F':
			msgpack_pack_false(p);
			break;
		case 'n':
			msgpack_pack_nil(p);
			break;
		default:
			cr_assert_fail("bad pk format '%c'", *fmt);
		}
	}
	va_end(ap);
}

struct obj {
	msgpack_sbuffer	 sb;
	msgpack_packer	 p;
	msgpack_unpacked up;
};

static void
obj_begin(struct obj *o)
{
	msgpack_sbuffer_init(&o->sb);
	msgpack_packer_init(&o->p, &o->sb, msgpack_sbuffer_write);
	msgpack_unpacked_init(&o->up);
}

static const msgpack_object *
obj_end(struct obj *o)
{
	size_t off = 0;

	cr_assert_eq(msgpack_unpack_next(&o->up, o->sb.data, o->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, o->sb.size);
	return &o->up.data;
}

static void
obj_free(struct obj *o)
{
	msgpack_unpacked_destroy(&o->up);
	msgpack_sbuffer_destroy(&o->sb);
}

static char *
json_of(const char *s, size_t len)
{
	struct mem m;

	sbxf_json_string(mem_open(&m), s, len);
	(void)mem_text(&m);
	return m.buf;
}

#define JSON_IS(lit, expect) do {					\
	char *j_ = json_of((lit), sizeof(lit) - 1);			\
	cr_expect_str_eq(j_, (expect), "json of %s", #lit);		\
	free(j_);							\
} while (0)

/* Runs sh -c SCRIPT with $1 = arg; returns its stdout (malloc'd). */
static char *
sh_run(const char *script, const char *arg)
{
	int p[2], st;
	pid_t pid;
	char *out = NULL, *grown;
	size_t len = 0, cap = 0;

	cr_assert_eq(pipe(p), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		dup2(p[1], STDOUT_FILENO);
		close(p[0]);
		close(p[1]);
		execl("/bin/sh", "sh", "-c", script, "sh", arg, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		ssize_t n;

		if (len + 4096 + 1 > cap) {
			cap = (cap + 4096) * 2;
			grown = realloc(out, cap);
			cr_assert_not_null(grown);
			out = grown;
		}
		n = read(p[0], out + len, cap - len - 1);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	out[len] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sh failed: %s",
	    script);
	return out;
}

/* ---- slugs ------------------------------------------------------------ */

Test(slug, valid)
{
	char s63[64];

	memset(s63, 'a', 63);
	s63[63] = '\0';
	cr_expect(sbxf_slug_ok("a"));
	cr_expect(sbxf_slug_ok("0"));
	cr_expect(sbxf_slug_ok("my-agent_1.2"));
	cr_expect(sbxf_slug_ok("9-._"));
	cr_expect(sbxf_slug_ok(s63));
}

Test(slug, invalid)
{
	char s64[65];

	memset(s64, 'a', 64);
	s64[64] = '\0';
	cr_expect_not(sbxf_slug_ok(""));
	cr_expect_not(sbxf_slug_ok(NULL));
	cr_expect_not(sbxf_slug_ok(s64));
	cr_expect_not(sbxf_slug_ok("Agent"));
	cr_expect_not(sbxf_slug_ok("aB"));
	cr_expect_not(sbxf_slug_ok("-a"));
	cr_expect_not(sbxf_slug_ok(".a"));
	cr_expect_not(sbxf_slug_ok("_a"));
	cr_expect_not(sbxf_slug_ok("a b"));
	cr_expect_not(sbxf_slug_ok("a/b"));
	cr_expect_not(sbxf_slug_ok("a\n"));
	cr_expect_not(sbxf_slug_ok("caf\xc3\xa9"));
	cr_expect_not(sbxf_slug_ok("a:b"));
}

/* ---- shell quoting ---------------------------------------------------- */

static char *
quoted(const char *s)
{
	struct mem m;

	sbxf_shell_quote(mem_open(&m), s, strlen(s));
	(void)mem_text(&m);
	return m.buf;
}

Test(shell, quote_forms)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "127.0.0.1",	"127.0.0.1" },
		{ "abc_DEF-1:2,3@x%y+z=w/v", "abc_DEF-1:2,3@x%y+z=w/v" },
		{ "",		"''" },
		{ "a b",	"'a b'" },
		{ "it's",	"'it'\\''s'" },
		{ "'",		"''\\'''" },
		{ "$HOME",	"'$HOME'" },
		{ "~",		"'~'" },
		{ "a\nb",	"'a\nb'" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = quoted(cases[i].in);

		cr_expect_str_eq(q, cases[i].out, "quote of [%s]", cases[i].in);
		free(q);
	}
}

/* Whatever the bytes, sh reads them back unchanged. */
Test(shell, roundtrip_through_sh)
{
	static const char *const cases[] = {
		"", "plain", "a b", "it's", "'", "''", "'\\''", "$HOME",
		"${HOME}", "`id`", "$(id)", "a\nb\n", "~", "~root", "x=~/y",
		"a;b&c|d", "\\", "\\\\n", "*", "?", "[a]", "-n", "\t",
		"caf\xc3\xa9", "\"", "!", "#x", "a\"b'c\\d$e`f", "%s%n",
		"\xff\xfe", "{a,b}", "a:~/b",
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *q = quoted(cases[i]), *script, *out;

		cr_assert_neq(asprintf(&script, "x=%s; printf '%%s' \"$x\"",
		    q), -1);
		out = sh_run(script, "");
		cr_expect_str_eq(out, cases[i], "sh read back [%s] via %s",
		    cases[i], q);
		free(out);
		free(script);
		free(q);
	}
}

/* ---- environment names ------------------------------------------------ */

Test(envname, derivation)
{
	static const struct { const char *in, *out; } cases[] = {
		{ "postgres",	"POSTGRES" },
		{ "redis",	"REDIS" },
		{ "my-pg.2",	"MY_PG_2" },
		{ "pg_16",	"PG_16" },
		{ "2pg",	"_2PG" },
		{ "Ab",		"AB" },
		{ "caf\xc3\xa9", "CAF__" },
		{ "a$b",	"A_B" },
	};
	char buf[SBXF_ENV_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(sbxf_env_name(buf, sizeof(buf), cases[i].in,
		    strlen(cases[i].in)), 0);
		cr_expect_str_eq(buf, cases[i].out);
	}
}

Test(envname, limits)
{
	char buf[8];

	cr_expect_eq(sbxf_env_name(buf, sizeof(buf), "", 0), -1);
	cr_expect_eq(sbxf_env_name(buf, sizeof(buf), "abcdefg", 7), 0);
	cr_expect_str_eq(buf, "ABCDEFG");
	cr_expect_eq(sbxf_env_name(buf, sizeof(buf), "abcdefgh", 8), -1);
	cr_expect_eq(sbxf_env_name(buf, sizeof(buf), "1bcdefg", 7), -1);
	cr_expect_eq(sbxf_env_name(buf, sizeof(buf), "1bcdef", 6), 0);
	cr_expect_str_eq(buf, "_1BCDEF");
}

/* ---- UTF-8 and JSON --------------------------------------------------- */

Test(utf8, decode)
{
	uint32_t cp = 0;

	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"A", 1, &cp), 1);
	cr_expect_eq(cp, 'A');
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xc3\xa9", 2,
	    &cp), 2);
	cr_expect_eq(cp, 0xe9);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xe2\x82\xac", 3,
	    &cp), 3);
	cr_expect_eq(cp, 0x20ac);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xf0\x9f\x98\x80",
	    4, &cp), 4);
	cr_expect_eq(cp, 0x1f600);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xf4\x8f\xbf\xbf",
	    4, &cp), 4);
	/* invalid */
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\x80", 1, &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xc0\xaf", 2, &cp),
	    0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xc1\xbf", 2, &cp),
	    0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xe0\x80\xaf", 3,
	    &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xed\xa0\x80", 3,
	    &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xf4\x90\x80\x80",
	    4, &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xf5\x80\x80\x80",
	    4, &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xe2\x82", 2, &cp),
	    0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xe2\x82\xac", 2,
	    &cp), 0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xc3" "A", 2, &cp),
	    0);
	cr_expect_eq(sbxf_utf8_next((const unsigned char *)"\xff", 1, &cp), 0);
}

Test(json, escaping)
{
	JSON_IS("", "\"\"");
	JSON_IS("plain", "\"plain\"");
	JSON_IS("a\"b", "\"a\\\"b\"");
	JSON_IS("a\\b", "\"a\\\\b\"");
	JSON_IS("/", "\"/\"");
	JSON_IS("\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
	JSON_IS("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
	JSON_IS("a\0b", "\"a\\u0000b\"");
	JSON_IS("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80",
	    "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	JSON_IS("\xff", "\"\\ufffd\"");
	JSON_IS("a\xc3", "\"a\\ufffd\"");
	JSON_IS("\xe2\x82z", "\"\\ufffd\\ufffdz\"");
	JSON_IS("\xc0\xaf", "\"\\ufffd\\ufffd\"");
	JSON_IS("\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"");
	JSON_IS("\xe2\x80\xa8", "\"\\u2028\"");
	JSON_IS("\xc2\x9b\xc2\xa0", "\"\\u009b\xc2\xa0\"");
}

Test(json, objects)
{
	static const char bin[] = { 'x', '\0', '\xff' };
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m", 6);
	pk(&o.p, "s a", "a", 6);
	pk(&o.p, "u i T F n d", (uint64_t)18446744073709551615ull,
	    (int64_t)-9223372036854775807ll - 1, 1.5);
	pk(&o.p, "s m s s", "b", 1, "c", "d");
	pk(&o.p, "u s", (uint64_t)1, "one");
	pk(&o.p, "s b", "bin", bin, sizeof(bin));
	pk(&o.p, "s d", "nan", (double)NAN);
	pk(&o.p, "s a", "empty", 0);
	sbxf_json(mem_open(&m), obj_end(&o));
	cr_expect_str_eq(mem_text(&m),
	    "{\"a\":[18446744073709551615,-9223372036854775808,true,false,"
	    "null,1.5],\"b\":{\"c\":\"d\"},\"1\":\"one\","
	    "\"bin\":\"x\\u0000\\ufffd\",\"nan\":null,\"empty\":[]}");
	mem_free(&m);
	obj_free(&o);
}

Test(json, reply_with_hostile_strings)
{
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s F s s s S", 3, "ok", "error", "x\"\n",
	    "message", "\x1b[2J\xfe", (size_t)5);
	sbxf_json(mem_open(&m), obj_end(&o));
	cr_expect_str_eq(mem_text(&m), "{\"ok\":false,\"error\":\"x\\\"\\n\","
	    "\"message\":\"\\u001b[2J\\ufffd\"}");
	mem_free(&m);
	obj_free(&o);
}

/* ---- terminal-safe text, durations ------------------------------------ */

Test(display, print_safe)
{
	static const char in[] = "ok caf\xc3\xa9\x1b[31m\x07\xc2\x9b\xff\x7f!";
	struct mem m;

	sbxf_print_safe(mem_open(&m), in, sizeof(in) - 1);
	cr_expect_str_eq(mem_text(&m), "ok caf\xc3\xa9?[31m????" "!");
	mem_free(&m);
}

Test(display, duration)
{
	static const struct { uint64_t s; const char *out; } cases[] = {
		{ 0, "0s" }, { 59, "59s" }, { 60, "1m00s" }, { 61, "1m01s" },
		{ 3599, "59m59s" }, { 3600, "1h00m" }, { 7505, "2h05m" },
		{ 86399, "23h59m" }, { 86400, "1d00h" }, { 273600, "3d04h" },
	};
	char buf[32];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		sbxf_duration(buf, sizeof(buf), cases[i].s);
		cr_expect_str_eq(buf, cases[i].out);
	}
}

/* ---- replies to output ------------------------------------------------ */

Test(reply, check_ok)
{
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s s", 2, "ok", "version", "0.1.0");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), 1);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s F s s s s", 3, "ok", "error", "not_opted_in",
	    "message", "the project does not offer mysql.");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), 0);
	cr_expect_str_eq(mem_text(&m),
	    "sbx: not_opted_in: the project does not offer mysql.\n");
	mem_free(&m);
	obj_free(&o);

	/* No error or message: still one line.  Controls are neutralised. */
	obj_begin(&o);
	pk(&o.p, "m s F s s", 2, "ok", "message", "bad\x1b]0;pwned\x07");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), 0);
	cr_expect_str_eq(mem_text(&m), "sbx: unknown: bad?]0;pwned?\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s s", 1, "ok", "yes");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), -1);
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T", 1, "version", "0.1.0");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), -1);
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "a T", 1);
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), -1);
	mem_free(&m);
	obj_free(&o);
}

Test(reply, ping_available_release)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s s s u", 3, "ok", "version", "1.2.3", "future", (uint64_t)7);
	cr_expect_eq(sbxf_ping(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m), "1.2.3\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s a s s", 2, "ok", "services", 2, "postgres", "redis");
	cr_expect_eq(sbxf_available(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "postgres\nredis\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s a", 2, "ok", "services", 0);
	cr_expect_eq(sbxf_available(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s a s u", 2, "ok", "services", 2, "postgres", 5);
	cr_expect_eq(sbxf_available(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s T", 2, "ok", "released");
	cr_expect_eq(sbxf_release(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "released\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s F", 2, "ok", "released");
	cr_expect_eq(sbxf_release(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "nothing to release\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T", 1, "ok");
	cr_expect_eq(sbxf_release(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect(strstr(err, "released") != NULL);
	mem_free(&m);
	obj_free(&o);
}

static void
pk_conn(msgpack_packer *p, const char *name, const char *host, uint64_t port,
    const char *user, const char *pass, const char *db)
{
	pk(p, "s m", name, 5);
	pk(p, "s s s u", "host", host, "port", port);
	pk(p, "s s s s s s", "user", user, "password", pass, "database", db);
}

static const char env_expected[] =
    "export POSTGRES_HOST=127.0.0.1\n"
    "export POSTGRES_PORT=5432\n"
    "export POSTGRES_USER=sbx\n"
    "export POSTGRES_PASSWORD='p'\\''w d$x'\n"
    "export POSTGRES_DATABASE=app\n"
    "export POSTGRES_URL=postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app\n"
    "export PGHOST=127.0.0.1\n"
    "export PGPORT=5432\n"
    "export PGUSER=sbx\n"
    "export PGPASSWORD='p'\\''w d$x'\n"
    "export PGDATABASE=app\n"
    "export REDIS_HOST=127.0.0.1\n"
    "export REDIS_PORT=6379\n"
    "export REDIS_USER=default\n"
    "export REDIS_PASSWORD=0123456789abcdef\n"
    "export REDIS_DATABASE=0\n"
    "export REDIS_URL=redis://default:0123456789abcdef@127.0.0.1:6379/0\n"
    "export MY_TCP_2_HOST=::1\n"
    "export MY_TCP_2_PORT=7000\n"
    "export MY_TCP_2_USER=''\n"
    "export MY_TCP_2_PASSWORD=''\n"
    "export MY_TCP_2_DATABASE=''\n"
    "export DATABASE_URL=postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app\n";

static const msgpack_object *
sandbox_reply(struct obj *o)
{
	obj_begin(o);
	pk(&o->p, "m s T s T s m", 3, "ok", "cached", "services", 3);
	pk_conn(&o->p, "postgres", "127.0.0.1", 5432, "sbx", "p'w d$x", "app");
	pk_conn(&o->p, "redis", "127.0.0.1", 6379, "default",
	    "0123456789abcdef", "0");
	pk_conn(&o->p, "my-tcp.2", "::1", 7000, "", "", "");
	return obj_end(o);
}

Test(reply, env_lines)
{
	char err[128];
	struct obj o;
	struct mem m, w;

	cr_assert_eq(sbxf_env(mem_open(&m), mem_open(&w), sandbox_reply(&o),
	    err, sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), env_expected);
	cr_expect_str_eq(mem_text(&w), "");
	mem_free(&m);
	mem_free(&w);
	obj_free(&o);
}

/* What the CLI prints is what a POSIX shell ends up with after eval. */
Test(reply, env_eval_roundtrip)
{
	char err[128], *out;
	struct obj o;
	struct mem m;

	cr_assert_eq(sbxf_env(mem_open(&m), NULL, sandbox_reply(&o), err,
	    sizeof(err)), 0);
	out = sh_run("eval \"$1\"; printf '%s|%s|%s|%s|%s|%s' "
	    "\"$POSTGRES_PASSWORD\" \"$POSTGRES_URL\" \"$REDIS_URL\" "
	    "\"$MY_TCP_2_HOST\" \"$MY_TCP_2_USER\" \"${MY_TCP_2_URL-unset}\"",
	    mem_text(&m));
	cr_expect_str_eq(out, "p'w d$x|"
	    "postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app|"
	    "redis://default:0123456789abcdef@127.0.0.1:6379/0|::1||unset");
	free(out);
	mem_free(&m);
	obj_free(&o);
}

Test(reply, env_url_details)
{
	char err[128];
	struct obj o;
	struct mem m;

	/* IPv6 host in brackets, port as a string, an explicit probe key,
	 * no user: no '@'. */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 1);
	pk(&o.p, "s m", "cache", 6);
	pk(&o.p, "s s s s s s", "host", "::1", "port", "6380", "user", "");
	pk(&o.p, "s s s s s s", "password", "", "database", "3", "probe",
	    "redis");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect(strstr(mem_text(&m),
	    "export CACHE_URL='redis://[::1]:6380/3'\n") != NULL, "%s", m.buf);
	mem_free(&m);
	obj_free(&o);
}

Test(reply, env_all_or_nothing)
{
	static const char *const bad_port[] = { "0", "65536", "12a", "" };
	char err[128];
	struct obj o;
	struct mem m;
	size_t i;

	/* The second service has no port: nothing at all is printed. */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_conn(&o.p, "postgres", "127.0.0.1", 5432, "u", "p", "d");
	pk(&o.p, "s m s s s s s s s s", "redis", 4, "host", "127.0.0.1",
	    "user", "u", "password", "p", "database", "0");
	cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect_str_eq(mem_text(&m), "");
	cr_expect(strstr(err, "'redis'") && strstr(err, "port"), "%s", err);
	mem_free(&m);
	obj_free(&o);

	for (i = 0; i < sizeof(bad_port) / sizeof(bad_port[0]); i++) {
		obj_begin(&o);
		pk(&o.p, "m s T s m", 2, "ok", "services", 1);
		pk(&o.p, "s m s s s s s s s s s s", "pg", 5, "host", "h",
		    "port", bad_port[i], "user", "u", "password", "p",
		    "database", "d");
		cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
		    sizeof(err)), -1, "port '%s'", bad_port[i]);
		cr_expect_str_eq(mem_text(&m), "");
		mem_free(&m);
		obj_free(&o);
	}

	/* A NUL inside a value cannot live in a shell variable. */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 1);
	pk(&o.p, "s m s s s u s s s S s s", "pg", 5, "host", "h", "port",
	    (uint64_t)1, "user", "u", "password", "a\0b", (size_t)3,
	    "database", "d");
	cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	obj_free(&o);

	/* services must be a map (available's array is not). */
	obj_begin(&o);
	pk(&o.p, "m s T s a s", 2, "ok", "services", 1, "pg");
	cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), -1);
	mem_free(&m);
	obj_free(&o);

	/* An empty map prints nothing and is fine. */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 0);
	cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	obj_free(&o);
}

/* A service entry with socket, host and port only where not NULL / 0. */
static void
pk_svc(msgpack_packer *p, const char *name, const char *socket,
    const char *host, uint64_t port, const char *user, const char *pass,
    const char *db)
{
	pk(p, "s m", name, 3 + (socket != NULL) + (host != NULL) + (port != 0));
	if (socket != NULL)
		pk(p, "s s", "socket", socket);
	if (host != NULL)
		pk(p, "s s", "host", host);
	if (port != 0)
		pk(p, "s u", "port", port);
	pk(p, "s s s s s s", "user", user, "password", pass, "database", db);
}

/* transport unix, as the broker packs it: postgres with the socket's
 * directory and port as host and port, redis with its socket only */
static const msgpack_object *
unix_reply(struct obj *o)
{
	obj_begin(o);
	pk(&o->p, "m s T s m", 2, "ok", "services", 2);
	pk_svc(&o->p, "postgres", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432",
	    "/run/sbx/1000/a1.postgres", 5432, "sbx",
	    "9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35", "sbx");
	pk_svc(&o->p, "redis", "/run/sbx/1000/a1.redis/redis.sock", NULL, 0,
	    "default", "51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d", "0");
	return obj_end(o);
}

static const char env_unix_expected[] =
    "export POSTGRES_SOCKET=/run/sbx/1000/a1.postgres/.s.PGSQL.5432\n"
    "export POSTGRES_HOST=/run/sbx/1000/a1.postgres\n"
    "export POSTGRES_PORT=5432\n"
    "export POSTGRES_USER=sbx\n"
    "export POSTGRES_PASSWORD=9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35\n"
    "export POSTGRES_DATABASE=sbx\n"
    "export POSTGRES_URL='postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35"
    "@localhost/sbx?host=/run/sbx/1000/a1.postgres&port=5432'\n"
    "export PGHOST=/run/sbx/1000/a1.postgres\n"
    "export PGPORT=5432\n"
    "export PGUSER=sbx\n"
    "export PGPASSWORD=9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35\n"
    "export PGDATABASE=sbx\n"
    "export REDIS_SOCKET=/run/sbx/1000/a1.redis/redis.sock\n"
    "export REDIS_USER=default\n"
    "export REDIS_PASSWORD=51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d\n"
    "export REDIS_DATABASE=0\n"
    "export REDIS_URL='unix://default:51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d"
    "@/run/sbx/1000/a1.redis/redis.sock?db=0'\n"
    "export DATABASE_URL='postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35"
    "@localhost/sbx?host=/run/sbx/1000/a1.postgres&port=5432'\n";

Test(reply, env_unix)
{
	char err[128];
	struct obj o;
	struct mem m, w;

	cr_assert_eq(sbxf_env(mem_open(&m), mem_open(&w), unix_reply(&o),
	    err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m), env_unix_expected);
	cr_expect_str_eq(mem_text(&w), "");
	mem_free(&m);
	mem_free(&w);
	obj_free(&o);
}

/* psql -h "$POSTGRES_HOST" -p "$POSTGRES_PORT" is libpq's socket path;
 * nothing of tcp is left set. */
Test(reply, env_unix_eval_roundtrip)
{
	char err[128], *out;
	struct obj o;
	struct mem m;

	cr_assert_eq(sbxf_env(mem_open(&m), NULL, unix_reply(&o), err,
	    sizeof(err)), 0, "%s", err);
	out = sh_run("eval \"$1\"; printf '%s|%s|%s|%s|%s|%s' "
	    "\"$POSTGRES_HOST/.s.PGSQL.$POSTGRES_PORT\" \"$POSTGRES_URL\" "
	    "\"$REDIS_SOCKET\" \"$REDIS_URL\" \"${REDIS_HOST-unset}\" "
	    "\"${REDIS_PORT-unset}\"", mem_text(&m));
	cr_expect_str_eq(out, "/run/sbx/1000/a1.postgres/.s.PGSQL.5432|"
	    "postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35@localhost/sbx?"
	    "host=/run/sbx/1000/a1.postgres&port=5432|"
	    "/run/sbx/1000/a1.redis/redis.sock|"
	    "unix://default:51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d@"
	    "/run/sbx/1000/a1.redis/redis.sock?db=0|unset|unset");
	free(out);
	mem_free(&m);
	obj_free(&o);
}

/* transport both: tcp's host and port as _HOST/_PORT and in the URL,
 * which every client's parser takes; the socket in _SOCKET and in
 * libpq's PGHOST, with libpq's port from the socket's name. */
Test(reply, env_both)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_svc(&o.p, "postgres", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432",
	    "127.0.0.1", 40123, "sbx", "pw", "sbx");
	pk_svc(&o.p, "redis", "/run/sbx/1000/a1.redis/redis.sock",
	    "127.0.0.1", 40124, "default", "pw", "0");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m),
	    "export POSTGRES_SOCKET=/run/sbx/1000/a1.postgres/.s.PGSQL.5432\n"
	    "export POSTGRES_HOST=127.0.0.1\n"
	    "export POSTGRES_PORT=40123\n"
	    "export POSTGRES_USER=sbx\n"
	    "export POSTGRES_PASSWORD=pw\n"
	    "export POSTGRES_DATABASE=sbx\n"
	    "export POSTGRES_URL=postgresql://sbx:pw@127.0.0.1:40123/sbx\n"
	    "export PGHOST=/run/sbx/1000/a1.postgres\n"
	    "export PGPORT=5432\n"
	    "export PGUSER=sbx\n"
	    "export PGPASSWORD=pw\n"
	    "export PGDATABASE=sbx\n"
	    "export REDIS_SOCKET=/run/sbx/1000/a1.redis/redis.sock\n"
	    "export REDIS_HOST=127.0.0.1\n"
	    "export REDIS_PORT=40124\n"
	    "export REDIS_USER=default\n"
	    "export REDIS_PASSWORD=pw\n"
	    "export REDIS_DATABASE=0\n"
	    "export REDIS_URL=redis://default:pw@127.0.0.1:40124/0\n"
	    "export DATABASE_URL=postgresql://sbx:pw@127.0.0.1:40123/sbx\n");
	mem_free(&m);
	obj_free(&o);
}

/* Neither socket nor host: refused by name, nothing printed, even for
 * the services before it. */
Test(reply, env_neither_socket_nor_host)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_svc(&o.p, "redis", "/run/sbx/1000/a1.redis/redis.sock", NULL, 0,
	    "default", "pw", "0");
	pk_svc(&o.p, "postgres", NULL, NULL, 0, "sbx", "pw", "sbx");
	cr_expect_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect_str_eq(mem_text(&m), "");
	cr_expect_str_eq(err, "service 'postgres' has neither a 'socket' nor "
	    "a 'host'");
	mem_free(&m);
	obj_free(&o);
}

/* Percent-decodes s into a malloc'd string (the inverse of RFC 3986). */
static char *
unpct(const char *s, size_t n)
{
	char *out = malloc(n + 1), hex[3] = { 0 };
	size_t i, o = 0;

	cr_assert_not_null(out);
	for (i = 0; i < n; i++) {
		if (s[i] == '%') {
			cr_assert(i + 2 < n, "truncated %% escape");
			hex[0] = s[i + 1];
			hex[1] = s[i + 2];
			out[o++] = (char)strtoul(hex, NULL, 16);
			i += 2;
		} else
			out[o++] = s[i];
	}
	out[o] = '\0';
	return out;
}

/* The text of "export NAME=" in out up to the newline, unquoted by sh. */
static char *
value_of(const char *env, const char *name)
{
	char script[128];

	snprintf(script, sizeof(script), "eval \"$1\"; printf '%%s' \"$%s\"",
	    name);
	return sh_run(script, env);
}

/*
 * Socket paths with bytes a URL or a shell would take for syntax: the
 * postgres host parameter and the redis path escape every one of them
 * but '/', and each decodes to the exact path.
 */
Test(reply, env_odd_socket_paths)
{
	static const char pgdir[] = "/run/sbx/a b'c%d?e#f&g+h=i\xc3\xbc";
	static const char rsock[] = "/tmp/r d&x?y#z%'/redis.sock";
	char err[128], pgsock[128], *v, *dec;
	const char *q, *amp;
	struct obj o;
	struct mem m;

	snprintf(pgsock, sizeof(pgsock), "%s/.s.PGSQL.6543", pgdir);
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_svc(&o.p, "pg", pgsock, pgdir, 6543, "u", "p", "d b");
	pk_svc(&o.p, "redis-2", rsock, NULL, 0, "", "p w", "2");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	(void)mem_text(&m);

	v = value_of(m.buf, "PG_URL");
	cr_expect_str_eq(v, "postgresql://u:p@localhost/d%20b?host=/run/sbx/"
	    "a%20b%27c%25d%3Fe%23f%26g%2Bh%3Di%C3%BC&port=6543");
	q = strstr(v, "?host=");
	amp = strstr(v, "&port=");
	cr_assert(q != NULL && amp != NULL && amp > q);
	dec = unpct(q + 6, (size_t)(amp - q - 6));
	cr_expect_str_eq(dec, pgdir);
	free(dec);
	free(v);

	v = value_of(m.buf, "PG_SOCKET");
	cr_expect_str_eq(v, pgsock);
	free(v);

	/* no user: no '@' but the password's ':' */
	v = value_of(m.buf, "REDIS_2_URL");
	cr_expect_str_eq(v, "unix://:p%20w@/tmp/r%20d%26x%3Fy%23z%25%27/"
	    "redis.sock?db=2");
	q = strchr(v, '@');
	amp = strchr(v, '?');
	cr_assert(q != NULL && amp != NULL && amp > q);
	dec = unpct(q + 1, (size_t)(amp - q - 1));
	cr_expect_str_eq(dec, rsock);
	free(dec);
	free(v);

	v = value_of(m.buf, "REDIS_2_SOCKET");
	cr_expect_str_eq(v, rsock);
	free(v);
	mem_free(&m);
	obj_free(&o);
}

/*
 * Where the URL's socket directory comes from: a host that is a
 * directory serves without a socket; a socket that libpq cannot name
 * falls back to tcp, else leaves no URL and says so; a service of no
 * known kind gets _SOCKET and no URL.
 */
Test(reply, env_url_sources)
{
	char err[128];
	struct obj o;
	struct mem m, w;

	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 4);
	pk_svc(&o.p, "pg-dir", NULL, "/srv/pg", 5433, "u", "", "d");
	pk_svc(&o.p, "pg-odd", "/srv/x/pg.sock", "127.0.0.1", 7, "u", "", "d");
	pk_svc(&o.p, "pg-none", "/srv/x/.s.PGSQL.0", NULL, 0, "u", "", "d");
	pk_svc(&o.p, "mq", "/srv/mq/mq.sock", NULL, 0, "u", "", "d");
	cr_assert_eq(sbxf_env(mem_open(&m), mem_open(&w), obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m),
	    "export PG_DIR_HOST=/srv/pg\n"
	    "export PG_DIR_PORT=5433\n"
	    "export PG_DIR_USER=u\n"
	    "export PG_DIR_PASSWORD=''\n"
	    "export PG_DIR_DATABASE=d\n"
	    "export PG_DIR_URL='postgresql://u@localhost/d?host=/srv/pg&port=5433'\n"
	    "export PGHOST=/srv/pg\n"
	    "export PGPORT=5433\n"
	    "export PGUSER=u\n"
	    "export PGPASSWORD=''\n"
	    "export PGDATABASE=d\n"
	    "export PG_ODD_SOCKET=/srv/x/pg.sock\n"
	    "export PG_ODD_HOST=127.0.0.1\n"
	    "export PG_ODD_PORT=7\n"
	    "export PG_ODD_USER=u\n"
	    "export PG_ODD_PASSWORD=''\n"
	    "export PG_ODD_DATABASE=d\n"
	    "export PG_ODD_URL=postgresql://u@127.0.0.1:7/d\n"
	    "export PG_NONE_SOCKET=/srv/x/.s.PGSQL.0\n"
	    "export PG_NONE_USER=u\n"
	    "export PG_NONE_PASSWORD=''\n"
	    "export PG_NONE_DATABASE=d\n"
	    "export MQ_SOCKET=/srv/mq/mq.sock\n"
	    "export MQ_USER=u\n"
	    "export MQ_PASSWORD=''\n"
	    "export MQ_DATABASE=d\n");
	cr_expect_str_eq(mem_text(&w), "sbx: warning: no PG_NONE_URL: the "
	    "service has no socket or host that a postgresql URL can name\n");
	mem_free(&m);
	mem_free(&w);
	obj_free(&o);
}

Test(reply, env_name_collision_warns)
{
	char err[128];
	struct obj o;
	struct mem m, w;

	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_conn(&o.p, "pg-a", "h", 1, "u", "p", "d");
	pk_conn(&o.p, "pg.a", "h", 2, "u", "p", "d");
	cr_expect_eq(sbxf_env(mem_open(&m), mem_open(&w), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect(strstr(mem_text(&w), "PG_A_") != NULL);
	cr_expect(strstr(mem_text(&m), "export PG_A_PORT=2\n") != NULL);
	mem_free(&m);
	mem_free(&w);
	obj_free(&o);
}

/* ---- request --format: dotenv, json; DATABASE_URL and REDIS_URL ------- */

Test(format, parse)
{
	enum sbxf_format f = SBXF_FMT_JSON;

	cr_expect_eq(sbxf_format_parse("env", &f), 0);
	cr_expect_eq(f, SBXF_FMT_ENV);
	cr_expect_eq(sbxf_format_parse("dotenv", &f), 0);
	cr_expect_eq(f, SBXF_FMT_DOTENV);
	cr_expect_eq(sbxf_format_parse("json", &f), 0);
	cr_expect_eq(f, SBXF_FMT_JSON);
	cr_expect_eq(sbxf_format_parse("", &f), -1);
	cr_expect_eq(sbxf_format_parse("ENV", &f), -1);
	cr_expect_eq(sbxf_format_parse("yaml", &f), -1);
	cr_expect_eq(sbxf_format_parse("env ", &f), -1);
	cr_expect_eq(f, SBXF_FMT_JSON, "a refusal leaves the format");
}

static char *
dotenv_of(const char *s, size_t len)
{
	struct mem m;

	sbxf_dotenv_quote(mem_open(&m), s, len);
	(void)mem_text(&m);
	return m.buf;
}

#define DOTENV_IS(lit, expect) do {					\
	char *d_ = dotenv_of((lit), sizeof(lit) - 1);			\
	cr_expect_str_eq(d_, (expect), "dotenv of %s", #lit);		\
	free(d_);							\
} while (0)

Test(format, dotenv_quoting)
{
	DOTENV_IS("9f2c0b7e", "9f2c0b7e");
	DOTENV_IS("/run/sbx/1000/a1.redis/redis.sock",
	    "/run/sbx/1000/a1.redis/redis.sock");
	DOTENV_IS("", "''");
	DOTENV_IS("a b", "'a b'");
	DOTENV_IS("x#y", "'x#y'");		/* not a comment */
	DOTENV_IS("$HOME ${X}", "'$HOME ${X}'");	/* not expanded */
	DOTENV_IS("u:p@/d?host=%2Fx&port=1", "'u:p@/d?host=%2Fx&port=1'");
	DOTENV_IS("it's", "\"it's\"");
	DOTENV_IS("a\\b", "\"a\\\\b\"");
	DOTENV_IS("a\"b'c", "\"a\\\"b'c\"");
	DOTENV_IS("l1\nl2\r", "\"l1\\nl2\\r\"");
}

/* A dotenv file of single-quoted and bare values is also what sh reads
 * with `set -a; . FILE`: the same values as env's eval. */
Test(format, dotenv_sh_roundtrip)
{
	char err[128], *out;
	struct obj o;
	struct mem m;

	cr_assert_eq(sbxf_request(mem_open(&m), NULL, SBXF_FMT_DOTENV,
	    unix_reply(&o), err, sizeof(err)), 0, "%s", err);
	cr_expect(strstr(mem_text(&m), "export") == NULL);
	out = sh_run("set -a; eval \"$1\"; printf '%s|%s|%s|%s' "
	    "\"$POSTGRES_URL\" \"$DATABASE_URL\" \"$REDIS_URL\" \"$PGHOST\"",
	    m.buf);
	cr_expect_str_eq(out,
	    "postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35@localhost/sbx?"
	    "host=/run/sbx/1000/a1.postgres&port=5432|"
	    "postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35@localhost/sbx?"
	    "host=/run/sbx/1000/a1.postgres&port=5432|"
	    "unix://default:51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d@"
	    "/run/sbx/1000/a1.redis/redis.sock?db=0|/run/sbx/1000/a1.postgres");
	free(out);
	mem_free(&m);
	obj_free(&o);
}

Test(format, dotenv_lines)
{
	char err[128];
	struct obj o;
	struct mem m;

	cr_assert_eq(sbxf_request(mem_open(&m), NULL, SBXF_FMT_DOTENV,
	    sandbox_reply(&o), err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m),
	    "POSTGRES_HOST=127.0.0.1\n"
	    "POSTGRES_PORT=5432\n"
	    "POSTGRES_USER=sbx\n"
	    "POSTGRES_PASSWORD=\"p'w d$x\"\n"
	    "POSTGRES_DATABASE=app\n"
	    "POSTGRES_URL=postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app\n"
	    "PGHOST=127.0.0.1\n"
	    "PGPORT=5432\n"
	    "PGUSER=sbx\n"
	    "PGPASSWORD=\"p'w d$x\"\n"
	    "PGDATABASE=app\n"
	    "REDIS_HOST=127.0.0.1\n"
	    "REDIS_PORT=6379\n"
	    "REDIS_USER=default\n"
	    "REDIS_PASSWORD=0123456789abcdef\n"
	    "REDIS_DATABASE=0\n"
	    "REDIS_URL=redis://default:0123456789abcdef@127.0.0.1:6379/0\n"
	    "MY_TCP_2_HOST=::1\n"
	    "MY_TCP_2_PORT=7000\n"
	    "MY_TCP_2_USER=''\n"
	    "MY_TCP_2_PASSWORD=''\n"
	    "MY_TCP_2_DATABASE=''\n"
	    "DATABASE_URL=postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app\n");
	mem_free(&m);
	obj_free(&o);
}

Test(format, json_services)
{
	char err[128];
	struct obj o;
	struct mem m;

	cr_assert_eq(sbxf_request(mem_open(&m), NULL, SBXF_FMT_JSON,
	    unix_reply(&o), err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m), "{\"postgres\":{"
	    "\"socket\":\"/run/sbx/1000/a1.postgres/.s.PGSQL.5432\","
	    "\"host\":\"/run/sbx/1000/a1.postgres\",\"port\":5432,"
	    "\"user\":\"sbx\","
	    "\"password\":\"9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35\","
	    "\"database\":\"sbx\","
	    "\"url\":\"postgresql://sbx:9f2c0b7e5d1a4c3f8e6b2a9d0c7f1e35@localhost/sbx?"
	    "host=/run/sbx/1000/a1.postgres&port=5432\"},"
	    "\"redis\":{\"socket\":\"/run/sbx/1000/a1.redis/redis.sock\","
	    "\"user\":\"default\","
	    "\"password\":\"51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d\","
	    "\"database\":\"0\","
	    "\"url\":\"unix://default:51ab7c9e0d2f4a6b8c1e3d5f7a9b0c2d@"
	    "/run/sbx/1000/a1.redis/redis.sock?db=0\"}}\n");
	mem_free(&m);
	obj_free(&o);

	/* tcp, a password to escape, a service with no URL: no "url" key;
	 * no aliases in JSON */
	cr_assert_eq(sbxf_request(mem_open(&m), NULL, SBXF_FMT_JSON,
	    sandbox_reply(&o), err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m), "{\"postgres\":{\"host\":\"127.0.0.1\","
	    "\"port\":5432,\"user\":\"sbx\",\"password\":\"p'w d$x\","
	    "\"database\":\"app\","
	    "\"url\":\"postgresql://sbx:p%27w%20d%24x@127.0.0.1:5432/app\"},"
	    "\"redis\":{\"host\":\"127.0.0.1\",\"port\":6379,"
	    "\"user\":\"default\",\"password\":\"0123456789abcdef\","
	    "\"database\":\"0\","
	    "\"url\":\"redis://default:0123456789abcdef@127.0.0.1:6379/0\"},"
	    "\"my-tcp.2\":{\"host\":\"::1\",\"port\":7000,\"user\":\"\","
	    "\"password\":\"\",\"database\":\"\"}}\n");
	mem_free(&m);
	obj_free(&o);

	/* an empty set is an empty object */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 0);
	cr_assert_eq(sbxf_request(mem_open(&m), NULL, SBXF_FMT_JSON,
	    obj_end(&o), err, sizeof(err)), 0, "%s", err);
	cr_expect_str_eq(mem_text(&m), "{}\n");
	mem_free(&m);
	obj_free(&o);
}

/* dotenv and json are all or nothing too. */
Test(format, all_or_nothing)
{
	static const enum sbxf_format fmts[] = { SBXF_FMT_DOTENV,
	    SBXF_FMT_JSON };
	char err[128];
	struct obj o;
	struct mem m;
	size_t i;

	for (i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		obj_begin(&o);
		pk(&o.p, "m s T s m", 2, "ok", "services", 2);
		pk_svc(&o.p, "redis", "/r/redis.sock", NULL, 0, "u", "p", "0");
		pk_svc(&o.p, "postgres", NULL, NULL, 0, "sbx", "pw", "sbx");
		cr_expect_eq(sbxf_request(mem_open(&m), NULL, fmts[i],
		    obj_end(&o), err, sizeof(err)), -1);
		cr_expect_str_eq(mem_text(&m), "", "format %zu", i);
		cr_expect_str_eq(err, "service 'postgres' has neither a "
		    "'socket' nor a 'host'");
		mem_free(&m);
		obj_free(&o);
	}
}

/* Lines of out that start with NAME=  (after "export "). */
static int
lines_named(const char *out, const char *name)
{
	char pfx[64];
	const char *p;
	int n = 0;

	snprintf(pfx, sizeof(pfx), "export %s=", name);
	for (p = out; p != NULL && *p != '\0'; p = strchr(p, '\n'),
	    p = p != NULL ? p + 1 : NULL)
		if (strncmp(p, pfx, strlen(pfx)) == 0)
			n++;
	return n;
}

Test(alias, one_postgres_and_one_redis)
{
	char err[128], *a, *b;
	struct obj o;
	struct mem m;

	/* names that are not "postgres" and "redis": the aliases are the
	 * only DATABASE_URL and REDIS_URL */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_svc(&o.p, "pg", "/s/pg/.s.PGSQL.5432", "/s/pg", 5432, "u", "p", "d");
	pk_svc(&o.p, "valkey", "/s/v/valkey.sock", NULL, 0, "default", "q",
	    "0");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	(void)mem_text(&m);
	cr_expect_eq(lines_named(m.buf, "DATABASE_URL"), 1);
	cr_expect_eq(lines_named(m.buf, "REDIS_URL"), 1);
	a = value_of(m.buf, "DATABASE_URL");
	b = value_of(m.buf, "PG_URL");
	cr_expect_str_eq(a, b);
	cr_expect_str_eq(a, "postgresql://u:p@localhost/d?host=/s/pg&port=5432");
	free(a);
	free(b);
	a = value_of(m.buf, "REDIS_URL");
	b = value_of(m.buf, "VALKEY_URL");
	cr_expect_str_eq(a, b);
	cr_expect_str_eq(a, "unix://default:q@/s/v/valkey.sock?db=0");
	free(a);
	free(b);
	mem_free(&m);
	obj_free(&o);
}

Test(alias, none_for_two_of_a_kind)
{
	char err[128], *v;
	struct obj o;
	struct mem m;

	/* two postgres: no DATABASE_URL (which one?); the one redis,
	 * named redis, has its own REDIS_URL, printed once */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 3);
	pk_conn(&o.p, "postgres", "127.0.0.1", 5432, "u", "p", "d");
	pk_conn(&o.p, "pg-2", "127.0.0.1", 5433, "u", "p", "d");
	pk_conn(&o.p, "redis", "127.0.0.1", 6379, "u", "p", "0");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	(void)mem_text(&m);
	cr_expect_eq(lines_named(m.buf, "DATABASE_URL"), 0, "%s", m.buf);
	cr_expect_eq(lines_named(m.buf, "REDIS_URL"), 1, "%s", m.buf);
	v = value_of(m.buf, "REDIS_URL");
	cr_expect_str_eq(v, "redis://u:p@127.0.0.1:6379/0");
	free(v);
	mem_free(&m);
	obj_free(&o);

	/* two redis, no postgres: neither alias */
	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 2);
	pk_conn(&o.p, "redis-a", "127.0.0.1", 6379, "u", "p", "0");
	pk_conn(&o.p, "redis-b", "127.0.0.1", 6380, "u", "p", "0");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	(void)mem_text(&m);
	cr_expect_eq(lines_named(m.buf, "DATABASE_URL"), 0);
	cr_expect_eq(lines_named(m.buf, "REDIS_URL"), 0);
	mem_free(&m);
	obj_free(&o);
}

/* A service whose own variables are DATABASE_*: its DATABASE_URL is
 * printed once, never overwritten by the alias. */
Test(alias, a_service_named_database_keeps_its_own)
{
	char err[128], *v;
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s m", 2, "ok", "services", 1);
	pk(&o.p, "s m", "database", 6);
	pk(&o.p, "s s s u s s", "host", "127.0.0.1", "port", (uint64_t)5432,
	    "user", "u");
	pk(&o.p, "s s s s s s", "password", "p", "database", "d", "probe",
	    "postgres");
	cr_assert_eq(sbxf_env(mem_open(&m), NULL, obj_end(&o), err,
	    sizeof(err)), 0, "%s", err);
	(void)mem_text(&m);
	cr_expect_eq(lines_named(m.buf, "DATABASE_URL"), 1, "%s", m.buf);
	v = value_of(m.buf, "DATABASE_URL");
	cr_expect_str_eq(v, "postgresql://u:p@127.0.0.1:5432/d");
	free(v);
	mem_free(&m);
	obj_free(&o);
}

/* ---- bash completion (contrib/sbx.bash-completion) --------------------- */

#define COMPLETION	"contrib/sbx.bash-completion"

/*
 * Completes the words of WORDS (a bash array's body, the last one being
 * completed) with the completion file sourced in a clean bash, after the
 * commands PRE.  Returns "[COMPREPLY joined by spaces]" (malloc'd).
 */
static char *
complete_words(const char *pre, const char *words)
{
	char script[1024];

	cr_assert_eq(access(COMPLETION, R_OK), 0, "%s: run from the top "
	    "of the checkout", COMPLETION);
	snprintf(script, sizeof(script), "exec bash --norc --noprofile -c '"
	    "source " COMPLETION " || exit 1; %s; COMP_WORDS=(%s); "
	    "COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); _sbx; "
	    "printf \"[%%s]\" \"${COMPREPLY[*]}\"'", pre, words);
	return sh_run(script, "");
}

#define COMPLETES(pre, words, expect) do {				\
	char *c_ = complete_words((pre), (words));			\
	cr_expect_str_eq(c_, (expect), "completing %s", (words));	\
	free(c_);							\
} while (0)

Test(completion, commands_options_formats)
{
	COMPLETES(":", "sbx \"\"", "[ping available request reset snapshot "
	    "release status help]");
	COMPLETES(":", "sbx re", "[request reset release]");
	COMPLETES(":", "sbx sn", "[snapshot]");
	COMPLETES(":", "sbx -S /x.sock st", "[status]");
	COMPLETES(":", "sbx --t", "[--timeout]");
	COMPLETES(":", "sbx request -a a1 --f", "[--format]");
	COMPLETES(":", "sbx release -", "[-a --agent -S --socket -t --timeout "
	    "-j --json -h --help -V --version]");
	COMPLETES(":", "sbx request -f \"\"", "[env dotenv json]");
	/* the new commands' and options' */
	COMPLETES(":", "sbx request -a a1 --b", "[--bind-pid]");
	COMPLETES(":", "sbx reset --", "[--agent --format --to --socket "
	    "--timeout --json --help --version]");
	COMPLETES(":", "sbx reset -a a1 -f \"\"", "[env dotenv json]");
	COMPLETES(":", "sbx snapshot -", "[-a --agent -S --socket -t --timeout "
	    "-j --json -h --help -V --version]");
	COMPLETES(":", "sbx reset --to \"\"", "[]");
	COMPLETES(":", "sbx request --bind-pid \"\"", "[]");
	/* an option's value is no command: --to's is not taken for one */
	COMPLETES(":", "sbx --to s1 re", "[request reset release]");
	COMPLETES(":", "sbx request -a a1 --format d", "[dotenv]");
	/* `=` breaks words: --format=j is --format = j, and --format= */
	COMPLETES(":", "sbx request --format = j", "[json]");
	COMPLETES(":", "sbx request --format =", "[env dotenv json]");
	/* a timeout or an agent is the user's to type */
	COMPLETES(":", "sbx -t \"\"", "[]");
	COMPLETES(":", "sbx release -a \"\"", "[]");
	/* registered for the command */
	{
		char *c = sh_run("exec bash --norc --noprofile -c 'source "
		    COMPLETION "; complete -p sbx'", "");

		cr_expect_str_eq(c, "complete -F _sbx sbx\n");
		free(c);
	}
}

/*
 * Projects from the projects directory that SBX_CONF names, and after
 * -p PROJECT the services that `sbx available PROJECT` answers, asked of
 * the socket of -S: a stub sbx (the line's first word) answers them.
 */
Test(completion, projects_and_services)
{
	char dir[] = "/tmp/sbx-comp.XXXXXX", path[256], words[512], pre[300];
	FILE *f;
	char *rm;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/projects", dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/projects/demo.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/projects/docs.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/projects/cache.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/projects/notes.txt", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fclose(f);
	snprintf(path, sizeof(path), "%s/sbx.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fprintf(f, "[sbx]\nsocket = /x.sock\nprojects = %s/projects ; mine\n",
	    dir);
	fclose(f);
	/* the stub answers only `-S /t.sock -t 2 available demo` */
	snprintf(path, sizeof(path), "%s/sbx", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("#!/bin/sh\n[ \"$*\" = \"-S /t.sock -t 2 available demo\" ] "
	    "|| exit 1\nprintf 'postgres\\nredis\\n'\n", f);
	fclose(f);
	cr_assert_eq(chmod(path, 0755), 0);

	snprintf(pre, sizeof(pre), "export SBX_CONF=%s/sbx.conf", dir);
	COMPLETES(pre, "sbx available \"\"", "[cache demo docs]");
	COMPLETES(pre, "sbx request -a a1 -p d", "[demo docs]");
	COMPLETES(pre, "sbx request --project = c", "[cache]");
	COMPLETES(pre, "sbx available demo \"\"", "[]");

	snprintf(words, sizeof(words), "%s/sbx -S /t.sock request -a a1 "
	    "-p demo \"\"", dir);
	COMPLETES(":", words, "[postgres redis]");
	snprintf(words, sizeof(words), "%s/sbx -S /t.sock request -a a1 "
	    "-p demo postgres \"\"", dir);
	COMPLETES(":", words, "[redis]");
	/* another socket: the stub refuses, nothing is offered */
	snprintf(words, sizeof(words), "%s/sbx -S /u.sock request -a a1 "
	    "-p demo \"\"", dir);
	COMPLETES(":", words, "[]");
	/* no project yet: no services */
	snprintf(words, sizeof(words), "%s/sbx -S /t.sock request -a a1 "
	    "\"\"", dir);
	COMPLETES(":", words, "[]");

	rm = sh_run("rm -rf \"$1\"", dir);
	free(rm);
}

Test(reply, status_table)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s a", 2, "ok", "sandboxes", 3);
	pk(&o.p, "m s u s s s s s a s s s u s u", 6, "uid", (uint64_t)1000,
	    "agent", "claude-1", "project", "shop", "services", 2,
	    "postgres", "redis", "age_s", (uint64_t)3725, "idle_s",
	    (uint64_t)42);
	pk(&o.p, "m s u s s s s s a s s u s u", 6, "uid", (uint64_t)0,
	    "agent", "a", "project", "very-long-project", "services", 1,
	    "redis", "age_s", (uint64_t)90061, "idle_s", (uint64_t)0);
	/* Missing and mistyped fields show as '?', no services as '-'. */
	pk(&o.p, "m s s s a", 2, "agent", "x\x1by", "services", 0);
	cr_assert_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m),
	    "UID   AGENT     PROJECT            SERVICES        AGE    IDLE\n"
	    "1000  claude-1  shop               postgres,redis  1h02m  42s\n"
	    "0     a         very-long-project  redis           1d01h  0s\n"
	    "?     x?y       ?                  -               ?      ?\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s a", 2, "ok", "sandboxes", 0);
	cr_assert_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m),
	    "UID  AGENT  PROJECT  SERVICES  AGE  IDLE\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T", 1, "ok");
	cr_expect_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    -1);
	mem_free(&m);
	obj_free(&o);
}

/* A BIND_PID column only when a sandbox carries one; "-" for the others. */
Test(reply, status_bind_pid)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s a", 2, "ok", "sandboxes", 3);
	pk(&o.p, "m s u s s s s s a s s u s u s u", 7, "uid", (uint64_t)1000,
	    "agent", "a1", "project", "shop", "services", 1, "postgres",
	    "age_s", (uint64_t)5, "idle_s", (uint64_t)1, "bind_pid",
	    (uint64_t)4242);
	pk(&o.p, "m s u s s s s s a s s u s u s n", 7, "uid", (uint64_t)1000,
	    "agent", "a2", "project", "shop", "services", 1, "redis",
	    "age_s", (uint64_t)61, "idle_s", (uint64_t)2, "bind_pid");
	pk(&o.p, "m s u s s s s s a s s u s u s s", 7, "uid", (uint64_t)1000,
	    "agent", "a3", "project", "shop", "services", 1, "redis",
	    "age_s", (uint64_t)7, "idle_s", (uint64_t)3, "bind_pid", "x");
	cr_assert_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m),
	    "UID   AGENT  PROJECT  SERVICES  AGE    IDLE  BIND_PID\n"
	    "1000  a1     shop     postgres  5s     1s    4242\n"
	    "1000  a2     shop     redis     1m01s  2s    -\n"
	    "1000  a3     shop     redis     7s     3s    ?\n");
	mem_free(&m);
	obj_free(&o);

	/* nil everywhere: no column */
	obj_begin(&o);
	pk(&o.p, "m s T s a", 2, "ok", "sandboxes", 1);
	pk(&o.p, "m s u s s s s s a s s u s u s n", 7, "uid", (uint64_t)7,
	    "agent", "a", "project", "p", "services", 1, "redis",
	    "age_s", (uint64_t)0, "idle_s", (uint64_t)0, "bind_pid");
	cr_assert_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m),
	    "UID  AGENT  PROJECT  SERVICES  AGE  IDLE\n"
	    "7    a      p        redis     0s   0s\n");
	mem_free(&m);
	obj_free(&o);
}

/* The warm line's names are the server's strings: made safe too. */
Test(reply, status_warm_line)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s a s m s u s u", 3, "ok", "sandboxes", 0, "warm", 2,
	    "postgres", (uint64_t)2, "re\x1b[2Jdis", (uint64_t)1);
	cr_assert_eq(sbxf_status(mem_open(&m), obj_end(&o), err, sizeof(err)),
	    0);
	cr_expect_str_eq(mem_text(&m),
	    "UID  AGENT  PROJECT  SERVICES  AGE  IDLE\n"
	    "warm containers ready: postgres 2, re?[2Jdis 1\n");
	mem_free(&m);
	obj_free(&o);
}

Test(reply, snapshot)
{
	char err[128];
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s T s s", 2, "ok", "name", "before-migration");
	cr_expect_eq(sbxf_snapshot(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), 0);
	cr_expect_str_eq(mem_text(&m), "saved snapshot before-migration\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s T s u", 2, "ok", "name", (uint64_t)1);
	cr_expect_eq(sbxf_snapshot(mem_open(&m), obj_end(&o), err,
	    sizeof(err)), -1);
	cr_expect_str_eq(mem_text(&m), "");
	cr_expect(strstr(err, "'name'") != NULL, "%s", err);
	mem_free(&m);
	obj_free(&o);
}

/* What stdout gets when request or reset fails: env is eval'd. */
Test(format, request_failed)
{
	struct mem m;

	sbxf_request_failed(mem_open(&m), SBXF_FMT_ENV);
	cr_expect_str_eq(mem_text(&m), "false\n");
	mem_free(&m);
	sbxf_request_failed(mem_open(&m), SBXF_FMT_DOTENV);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
	sbxf_request_failed(mem_open(&m), SBXF_FMT_JSON);
	cr_expect_str_eq(mem_text(&m), "");
	mem_free(&m);
}

/*
 * The 'false' stops a set -e script at the eval, as a shell runs it,
 * where the empty output of a failure did not (the trap it closes).
 */
#define SET_E_EVAL "sh -c 'set -e; eval \"$1\"; echo survived' sh \"$1\"; " \
	"echo \"rc=$?\""

Test(format, request_failed_stops_set_e)
{
	struct mem m;
	char *out;

	sbxf_request_failed(mem_open(&m), SBXF_FMT_ENV);
	out = sh_run(SET_E_EVAL, mem_text(&m));
	cr_expect_str_eq(out, "rc=1\n");
	free(out);
	mem_free(&m);
	out = sh_run(SET_E_EVAL, "");
	cr_expect_str_eq(out, "survived\nrc=0\n");
	free(out);
}

/* ---- refusals: codes, retry_after_ms (sbxc_refusal_parse) ------------- */

Test(code, values_and_names)
{
	static const struct {
		enum sbxc_code	 c;
		int		 v;
		const char	*name;
	} codes[] = {
		{ SBXC_CODE_NONE, 0, "ok" },
		{ SBXC_CODE_BAD_REQUEST, 1, "bad_request" },
		{ SBXC_CODE_DISABLED, 2, "disabled" },
		{ SBXC_CODE_UNKNOWN_PROJECT, 3, "unknown_project" },
		{ SBXC_CODE_NOT_OPTED_IN, 4, "not_opted_in" },
		{ SBXC_CODE_FORBIDDEN, 5, "forbidden" },
		{ SBXC_CODE_CONFLICT, 6, "conflict" },
		{ SBXC_CODE_RUNTIME_FAILED, 7, "runtime_failed" },
		{ SBXC_CODE_TIMEOUT, 8, "timeout" },
		{ SBXC_CODE_BUSY, 9, "busy" },
		{ SBXC_CODE_INTERNAL, 10, "internal" },
		{ SBXC_CODE_NO_SANDBOX, 11, "no_sandbox" },
		{ SBXC_CODE_UNKNOWN_SNAPSHOT, 12, "unknown_snapshot" },
		{ SBXC_CODE_SEED_FAILED, 13, "seed_failed" },
	};
	size_t i;

	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++) {
		/* the values are ABI: appended, never renumbered */
		cr_expect_eq((int)codes[i].c, codes[i].v, "%s",
		    codes[i].name);
		cr_expect_str_eq(sbxc_code_name(codes[i].c), codes[i].name);
		if (codes[i].c == SBXC_CODE_NONE)
			continue;
		cr_expect_eq(sbxc_code_parse(codes[i].name,
		    strlen(codes[i].name)), codes[i].c, "%s", codes[i].name);
	}
	cr_expect_eq((int)SBXC_CODE_UNKNOWN, -1);
	cr_expect_str_eq(sbxc_code_name(SBXC_CODE_UNKNOWN), "unknown");
	cr_expect_str_eq(sbxc_code_name((enum sbxc_code)14), "unknown");
	/* "ok" is no refusal; prefixes and longer names are not codes */
	cr_expect_eq(sbxc_code_parse("ok", 2), SBXC_CODE_UNKNOWN);
	cr_expect_eq(sbxc_code_parse("busy", 3), SBXC_CODE_UNKNOWN);
	cr_expect_eq(sbxc_code_parse("busyy", 5), SBXC_CODE_UNKNOWN);
	cr_expect_eq(sbxc_code_parse("no_sandbox!", 10), SBXC_CODE_NO_SANDBOX);
	cr_expect_eq(sbxc_code_parse(NULL, 0), SBXC_CODE_UNKNOWN);
	cr_expect_eq(SBXC_API, 2);
}

Test(refusal, parse)
{
	struct sbxc_refusal rf;
	struct obj o;

	obj_begin(&o);
	pk(&o.p, "m s F s s s s s u", 4, "ok", "error", "busy", "message",
	    "uid 1000 holds 4 sandboxes, its limit.", "retry_after_ms",
	    (uint64_t)1500);
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_BUSY);
	cr_expect_str_eq(rf.error, "busy");
	cr_expect_str_eq(rf.message, "uid 1000 holds 4 sandboxes, its limit.");
	cr_expect_eq(rf.retry_after_ms, 1500);
	obj_free(&o);

	/* the new codes; no retry_after_ms is -1 */
	obj_begin(&o);
	pk(&o.p, "m s F s s s s", 3, "ok", "error", "seed_failed", "message",
	    "myproj.sql:12: syntax error");
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_SEED_FAILED);
	cr_expect_str_eq(rf.message, "myproj.sql:12: syntax error");
	cr_expect_eq(rf.retry_after_ms, -1);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s F s s", 2, "ok", "error", "no_sandbox");
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_NO_SANDBOX);
	cr_expect_str_eq(rf.message, "");
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s F s s s u", 3, "ok", "error", "unknown_snapshot",
	    "retry_after_ms", (uint64_t)0);
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_UNKNOWN_SNAPSHOT);
	cr_expect_eq(rf.retry_after_ms, 0);
	obj_free(&o);

	/* retry_after_ms that is no non-negative integer is none; a
	 * newer server's code is UNKNOWN but kept as sent; a NUL is '?' */
	obj_begin(&o);
	pk(&o.p, "m s F s s s S s i", 4, "ok", "error", "quota", "message",
	    "a\0b", (size_t)3, "retry_after_ms", (int64_t)-5);
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_UNKNOWN);
	cr_expect_str_eq(rf.error, "quota");
	cr_expect_str_eq(rf.message, "a?b");
	cr_expect_eq(rf.retry_after_ms, -1);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s F s u s s", 3, "ok", "error", (uint64_t)3,
	    "retry_after_ms", "1500");
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(rf.code, SBXC_CODE_UNKNOWN);
	cr_expect_str_eq(rf.error, "");
	cr_expect_eq(rf.retry_after_ms, -1);
	obj_free(&o);

	/* success, and no ok at all */
	obj_begin(&o);
	pk(&o.p, "m s T s u", 2, "ok", "retry_after_ms", (uint64_t)9);
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 1);
	cr_expect_eq(rf.code, SBXC_CODE_NONE);
	cr_expect_eq(rf.retry_after_ms, -1);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s s", 1, "error", "busy");
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), -1);
	obj_free(&o);
}

/* A long message is cut to fit, NUL-terminated. */
Test(refusal, long_message_cut)
{
	struct sbxc_refusal rf;
	char big[3000];
	struct obj o;

	memset(big, 'm', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	obj_begin(&o);
	pk(&o.p, "m s F s s s s", 3, "ok", "error", "internal", "message", big);
	cr_expect_eq(sbxc_refusal_parse(obj_end(&o), &rf), 0);
	cr_expect_eq(strlen(rf.message), sizeof(rf.message) - 1);
	obj_free(&o);
}

/* The CLI's error line: busy's retry_after_ms at its end, when sent. */
Test(reply, check_ok_retry_after)
{
	struct obj o;
	struct mem m;

	obj_begin(&o);
	pk(&o.p, "m s F s s s s s u", 4, "ok", "error", "busy", "message",
	    "uid 1000: too many provisions running.", "retry_after_ms",
	    (uint64_t)250);
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), 0);
	cr_expect_str_eq(mem_text(&m), "sbx: busy: uid 1000: too many "
	    "provisions running. (retry after 250 ms)\n");
	mem_free(&m);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s F s s s s", 3, "ok", "error", "unknown_snapshot",
	    "message", "no snapshot 'x'.");
	cr_expect_eq(sbxf_check_ok(mem_open(&m), obj_end(&o)), 0);
	cr_expect_str_eq(mem_text(&m),
	    "sbx: unknown_snapshot: no snapshot 'x'.\n");
	mem_free(&m);
	obj_free(&o);
}

/* ---- one service of a request_sandbox reply (sbxc_service_parse) ------ */

/* The only service of the services map packed in o, parsed. */
static enum sbxc_status
parse_only(struct obj *o, struct sbxc_service *s, struct sbxc_error *e)
{
	const msgpack_object *svcs = obj_end(o);

	cr_assert_eq(svcs->type, MSGPACK_OBJECT_MAP);
	cr_assert_eq(svcs->via.map.size, 1);
	return sbxc_service_parse(&svcs->via.map.ptr[0].key,
	    &svcs->via.map.ptr[0].val, s, e);
}

Test(service, unix_postgres)
{
	struct sbxc_service s;
	struct sbxc_error e;
	struct obj o;

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "postgres", 6);
	pk(&o.p, "s s", "socket", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	pk(&o.p, "s s s u", "host", "/run/sbx/1000/a1.postgres", "port",
	    (uint64_t)5432);
	pk(&o.p, "s s s s s s", "user", "sbx", "password", "pw", "database",
	    "app");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_str_eq(s.name, "postgres");
	cr_expect_str_eq(s.socket, "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	cr_expect_str_eq(s.host, "/run/sbx/1000/a1.postgres");
	cr_expect_eq(s.port, 5432);
	cr_expect_str_eq(s.user, "sbx");
	cr_expect_str_eq(s.password, "pw");
	cr_expect_str_eq(s.database, "app");
	cr_expect_str_eq(e.msg, "");
	obj_free(&o);
}

Test(service, unix_redis_has_no_host_nor_port)
{
	struct sbxc_service s;
	struct sbxc_error e;
	struct obj o;

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "redis", 4);
	pk(&o.p, "s s", "socket", "/run/sbx/1000/a1.redis/redis.sock");
	pk(&o.p, "s s s s s s", "user", "default", "password", "pw",
	    "database", "0");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_str_eq(s.socket, "/run/sbx/1000/a1.redis/redis.sock");
	cr_expect_str_eq(s.host, "");
	cr_expect_eq(s.port, 0);
	cr_expect_str_eq(s.database, "0");
	obj_free(&o);
}

Test(service, tcp_and_both)
{
	struct sbxc_service s;
	struct sbxc_error e;
	struct obj o;

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "redis", 5);
	pk(&o.p, "s s s u", "host", "127.0.0.1", "port", (uint64_t)40124);
	pk(&o.p, "s s s s s s", "user", "default", "password", "pw",
	    "database", "0");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_str_eq(s.socket, "");
	cr_expect_str_eq(s.host, "127.0.0.1");
	cr_expect_eq(s.port, 40124);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "postgres", 6);
	pk(&o.p, "s s", "socket", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	pk(&o.p, "s s s u", "host", "127.0.0.1", "port", (uint64_t)40123);
	pk(&o.p, "s s s s s s", "user", "sbx", "password", "pw", "database",
	    "app");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_str_eq(s.socket, "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	cr_expect_str_eq(s.host, "127.0.0.1");
	cr_expect_eq(s.port, 40123);
	obj_free(&o);
}

/* nil counts as absent; a port may come as a decimal string. */
Test(service, nil_is_absent_and_port_as_string)
{
	struct sbxc_service s;
	struct sbxc_error e;
	struct obj o;

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "cache", 6);
	pk(&o.p, "s s s n s n", "socket", "/tmp/c.sock", "host", "port");
	pk(&o.p, "s s s s s s", "user", "", "password", "", "database", "");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_str_eq(s.host, "");
	cr_expect_eq(s.port, 0);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "cache", 5);
	pk(&o.p, "s s s s", "host", "::1", "port", "65535");
	pk(&o.p, "s s s s s s", "user", "", "password", "", "database", "");
	cr_assert_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	cr_expect_eq(s.port, 65535);
	obj_free(&o);
}

/* Each broken service is refused with a message that names it and what
 * is wrong, and leaves nothing half-filled. */
Test(service, refusals_name_the_service)
{
	static const struct {
		const char	*socket, *host, *port;	/* NULL: absent */
		const char	*why;
	} c[] = {
		{ NULL, NULL, NULL, "neither a 'socket' nor a 'host'" },
		{ NULL, "127.0.0.1", NULL, "a 'host' but no 'port'" },
		{ NULL, NULL, "5432", "a 'port' but no 'host'" },
		{ "run/x.sock", NULL, NULL, "no valid 'socket'" },
		{ "", NULL, NULL, "no valid 'socket'" },
		{ NULL, "", "1", "no valid 'host'" },
		{ NULL, "h", "0", "no valid 'port'" },
		{ NULL, "h", "65536", "no valid 'port'" },
		{ NULL, "h", "12a", "no valid 'port'" },
		{ NULL, "h", "", "no valid 'port'" },
	};
	struct sbxc_service s, zero;
	struct sbxc_error e;
	struct obj o;
	size_t i;

	memset(&zero, 0, sizeof(zero));
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		obj_begin(&o);
		pk(&o.p, "m s m", 1, "my-db", 3 + (c[i].socket != NULL) +
		    (c[i].host != NULL) + (c[i].port != NULL));
		if (c[i].socket != NULL)
			pk(&o.p, "s s", "socket", c[i].socket);
		if (c[i].host != NULL)
			pk(&o.p, "s s", "host", c[i].host);
		if (c[i].port != NULL)
			pk(&o.p, "s s", "port", c[i].port);
		pk(&o.p, "s s s s s s", "user", "u", "password", "p",
		    "database", "d");
		cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO, "case %zu",
		    i);
		cr_expect_eq(e.status, SBXC_EPROTO);
		cr_expect(strstr(e.msg, "service 'my-db' ") == e.msg,
		    "case %zu: %s", i, e.msg);
		cr_expect(strstr(e.msg, c[i].why) != NULL, "case %zu: %s", i,
		    e.msg);
		cr_expect_eq(memcmp(&s, &zero, sizeof(s)), 0, "case %zu", i);
		obj_free(&o);
	}
}

Test(service, refusals_of_strings)
{
	char longsock[SBXC_SOCKET_MAX + 1];
	struct sbxc_service s;
	struct sbxc_error e;
	struct obj o;

	/* a socket path that cannot fit sun_path */
	memset(longsock, 'x', sizeof(longsock) - 1);
	longsock[0] = '/';
	longsock[SBXC_SOCKET_MAX] = '\0';
	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 4);
	pk(&o.p, "s s", "socket", longsock);
	pk(&o.p, "s s s s s s", "user", "u", "password", "p", "database", "d");
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "'socket'") != NULL, "%s", e.msg);
	obj_free(&o);
	/* one byte shorter fits */
	longsock[SBXC_SOCKET_MAX - 1] = '\0';
	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 4);
	pk(&o.p, "s s", "socket", longsock);
	pk(&o.p, "s s s s s s", "user", "u", "password", "p", "database", "d");
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_OK, "%s", e.msg);
	obj_free(&o);

	/* a NUL inside a value, a missing database, a non-string user */
	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 4);
	pk(&o.p, "s s s s s S s s", "socket", "/s", "user", "u", "password",
	    "a\0b", (size_t)3, "database", "d");
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "'password'") != NULL, "%s", e.msg);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 3);
	pk(&o.p, "s s s s s s", "socket", "/s", "user", "u", "password", "p");
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "'database'") != NULL, "%s", e.msg);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 4);
	pk(&o.p, "s s s u s s s s", "socket", "/s", "user", (uint64_t)1,
	    "password", "p", "database", "d");
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "'user'") != NULL, "%s", e.msg);
	obj_free(&o);

	/* not a map; a name that is not a string; control bytes in a name
	 * do not reach the message */
	obj_begin(&o);
	pk(&o.p, "m s a", 1, "pg", 0);
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect_str_eq(e.msg, "service 'pg' is not a map");
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m u m", 1, (uint64_t)7, 0);
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "service name") != NULL, "%s", e.msg);
	obj_free(&o);

	obj_begin(&o);
	pk(&o.p, "m s m", 1, "a\x1b[2Jb", 0);
	cr_expect_eq(parse_only(&o, &s, &e), SBXC_EPROTO);
	cr_expect(strstr(e.msg, "service 'a?[2Jb' has no valid 'user'") ==
	    e.msg, "%s", e.msg);
	obj_free(&o);

	/* err may be NULL */
	obj_begin(&o);
	pk(&o.p, "m s m", 1, "pg", 0);
	cr_expect_eq(parse_only(&o, &s, NULL), SBXC_EPROTO);
	obj_free(&o);
}

/* ---- request packing -------------------------------------------------- */

Test(request, pack)
{
	static const char *const svcs[] = { "postgres", "redis" };
	struct sbxc_req r = { .op = "request_sandbox", .agent = "a1",
	    .project = "p1", .services = svcs, .nservices = 2 };
	const msgpack_object *o, *s;
	msgpack_sbuffer sb;
	msgpack_unpacked up;
	size_t off = 0;

	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request(&sb, &r), 0);
	msgpack_unpacked_init(&up);
	cr_assert_eq(msgpack_unpack_next(&up, sb.data, sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, sb.size);
	o = &up.data;
	cr_assert_eq(o->type, MSGPACK_OBJECT_MAP);
	cr_expect_eq(o->via.map.size, 4);
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "op"), "request_sandbox"));
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "agent"), "a1"));
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "project"), "p1"));
	s = sbxc_map_get(o, "services");
	cr_assert(s != NULL && s->type == MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(s->via.array.size, 2);
	cr_expect(sbxc_str_eq(&s->via.array.ptr[1], "redis"));
	cr_expect_null(sbxc_map_get(o, "nope"));
	cr_expect_null(sbxc_map_get(&s->via.array.ptr[0], "op"));
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	/* ping: op only; no op: refused. */
	msgpack_sbuffer_init(&sb);
	r = (struct sbxc_req){ .op = "ping" };
	cr_assert_eq(sbxc_pack_request(&sb, &r), 0);
	cr_expect_eq(sb.size, 1 + 3 + 5);
	r.op = NULL;
	cr_expect_eq(sbxc_pack_request(&sb, &r), -1);
	msgpack_sbuffer_destroy(&sb);
}

/* Unpacks sb's one map into up (the caller destroys both). */
static const msgpack_object *
unpack_sb(const msgpack_sbuffer *sb, msgpack_unpacked *up)
{
	size_t off = 0;

	msgpack_unpacked_init(up);
	cr_assert_eq(msgpack_unpack_next(up, sb->data, sb->size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, sb->size);
	cr_assert_eq(up->data.type, MSGPACK_OBJECT_MAP);
	return &up->data;
}

Test(request, pack_ext)
{
	struct sbxc_req r = { .op = "reset", .agent = "a1" };
	struct sbxc_req_ext x = { .to = "clean" };
	const msgpack_object *o;
	msgpack_sbuffer sb;
	msgpack_unpacked up;

	/* reset with to */
	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request_ext(&sb, &r, &x), 0);
	o = unpack_sb(&sb, &up);
	cr_expect_eq(o->via.map.size, 3);
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "op"), "reset"));
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "agent"), "a1"));
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "to"), "clean"));
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	/* reset without: no to key at all; NULL x is API 1's request */
	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request_ext(&sb, &r, NULL), 0);
	o = unpack_sb(&sb, &up);
	cr_expect_eq(o->via.map.size, 2);
	cr_expect_null(sbxc_map_get(o, "to"));
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	/* snapshot */
	r = (struct sbxc_req){ .op = "snapshot", .agent = "a1" };
	x = (struct sbxc_req_ext){ .name = "s1" };
	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request_ext(&sb, &r, &x), 0);
	o = unpack_sb(&sb, &up);
	cr_expect_eq(o->via.map.size, 3);
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "op"), "snapshot"));
	cr_expect(sbxc_str_eq(sbxc_map_get(o, "name"), "s1"));
	cr_expect_null(sbxc_map_get(o, "to"));
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);
}

Test(request, pack_bind_pid)
{
	static const char *const svcs[] = { "postgres" };
	struct sbxc_req r = { .op = "request_sandbox", .agent = "a1",
	    .project = "p1", .services = svcs, .nservices = 1 };
	struct sbxc_req_ext x = { .bind_pid = 4194304 };
	const msgpack_object *o, *v;
	msgpack_sbuffer sb;
	msgpack_unpacked up;

	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request_ext(&sb, &r, &x), 0);
	o = unpack_sb(&sb, &up);
	cr_expect_eq(o->via.map.size, 5);
	v = sbxc_map_get(o, "bind_pid");
	cr_assert_not_null(v);
	cr_expect_eq(v->type, MSGPACK_OBJECT_POSITIVE_INTEGER);
	cr_expect_eq(v->via.u64, 4194304);
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	/* 0: not sent, the request is API 1's byte for byte */
	x.bind_pid = 0;
	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request_ext(&sb, &r, &x), 0);
	{
		msgpack_sbuffer sb1;

		msgpack_sbuffer_init(&sb1);
		cr_assert_eq(sbxc_pack_request(&sb1, &r), 0);
		cr_expect_eq(sb.size, sb1.size);
		cr_expect_eq(memcmp(sb.data, sb1.data, sb.size), 0);
		msgpack_sbuffer_destroy(&sb1);
	}
	o = unpack_sb(&sb, &up);
	cr_expect_null(sbxc_map_get(o, "bind_pid"));
	msgpack_unpacked_destroy(&up);
	msgpack_sbuffer_destroy(&sb);

	/* negative: refused */
	x.bind_pid = -1;
	msgpack_sbuffer_init(&sb);
	cr_expect_eq(sbxc_pack_request_ext(&sb, &r, &x), -1);
	msgpack_sbuffer_destroy(&sb);
}

/* ---- fake servers ----------------------------------------------------- */

enum fake {
	F_ECHO,		/* {ok: true, echo: <the request map>} */
	F_SPLIT,	/* the same reply, one byte at a time, slowly */
	F_SLOW,		/* the same reply after 700 ms */
	F_TRUNC,	/* half a reply, then close */
	F_SILENT,	/* reads the request, never answers */
	F_NOTMAP,	/* [1, 2] */
	F_STRING,	/* "hello" */
	F_GARBAGE,	/* 0xc1: never valid msgpack */
	F_CLOSE,	/* reads the request, closes */
	F_EARLY,	/* reads nothing, answers bad_request at once, closes */
	F_EXACT_MAX,	/* a reply of exactly SBXC_REPLY_MAX bytes */
	F_OVER_MAX,	/* a reply that does not end within SBXC_REPLY_MAX */
	F_TRAILING,	/* a reply, then junk that must be ignored */
	F_CONN_ECHO,	/* F_ECHO after a delay, to outlast an EINTR storm */
	F_BUSY,		/* busy, with retry_after_ms 250 */
	F_SANDBOX,	/* a request_sandbox reply: one postgres on a socket */
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

static void
write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n > 0) {
		ssize_t w = send(fd, c, n, MSG_NOSIGNAL);

		if (w == -1 && errno == EINTR)
			continue;
		if (w <= 0)
			_exit(3);
		c += w;
		n -= (size_t)w;
	}
}

/* Reads one complete msgpack object (never waiting for EOF); returns it
 * packed again in sb. */
static void
read_request(int fd, msgpack_sbuffer *sb)
{
	msgpack_unpacker up;
	msgpack_unpacked obj;
	msgpack_packer p;

	if (!msgpack_unpacker_init(&up, 4096))
		_exit(4);
	msgpack_unpacked_init(&obj);
	for (;;) {
		ssize_t n;

		if (!msgpack_unpacker_reserve_buffer(&up, 4096))
			_exit(4);
		n = read(fd, msgpack_unpacker_buffer(&up),
		    msgpack_unpacker_buffer_capacity(&up));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(5);
		msgpack_unpacker_buffer_consumed(&up, (size_t)n);
		if (msgpack_unpacker_next(&up, &obj) == MSGPACK_UNPACK_SUCCESS)
			break;
	}
	msgpack_packer_init(&p, sb, msgpack_sbuffer_write);
	msgpack_pack_object(&p, obj.data);
	msgpack_unpacked_destroy(&obj);
	msgpack_unpacker_destroy(&up);
}

static void
echo_reply(msgpack_sbuffer *out, const msgpack_sbuffer *req)
{
	msgpack_packer p;

	msgpack_packer_init(&p, out, msgpack_sbuffer_write);
	pk(&p, "m s T s", 2, "ok", "echo");
	msgpack_sbuffer_write(out, req->data, req->size);
}

static void serve(int, enum fake) __attribute__((noreturn));

static void
serve(int fd, enum fake how)
{
	msgpack_sbuffer req, rep;
	msgpack_packer p;
	size_t i;
	char *big;

	msgpack_sbuffer_init(&req);
	msgpack_sbuffer_init(&rep);
	msgpack_packer_init(&p, &rep, msgpack_sbuffer_write);
	if (how != F_EARLY)
		read_request(fd, &req);
	switch (how) {
	case F_ECHO:
	case F_TRAILING:
		echo_reply(&rep, &req);
		write_all(fd, rep.data, rep.size);
		if (how == F_TRAILING)
			write_all(fd, "\xc1\xc1junk", 6);
		break;
	case F_CONN_ECHO:
	case F_SLOW:
		sleep_ms(700);
		echo_reply(&rep, &req);
		write_all(fd, rep.data, rep.size);
		break;
	case F_SPLIT:
		echo_reply(&rep, &req);
		for (i = 0; i < rep.size; i++) {
			write_all(fd, rep.data + i, 1);
			sleep_ms(5);
		}
		break;
	case F_TRUNC:
		echo_reply(&rep, &req);
		write_all(fd, rep.data, rep.size / 2);
		break;
	case F_SILENT:
		for (;;)
			pause();
	case F_NOTMAP:
		pk(&p, "a u u", 2, (uint64_t)1, (uint64_t)2);
		write_all(fd, rep.data, rep.size);
		break;
	case F_STRING:
		pk(&p, "s", "hello");
		write_all(fd, rep.data, rep.size);
		break;
	case F_GARBAGE:
		write_all(fd, "\xc1", 1);
		sleep_ms(200);
		break;
	case F_CLOSE:
		break;
	case F_EARLY:
		pk(&p, "m s F s s s s", 3, "ok", "error", "bad_request",
		    "message", "the request is larger than 64 KiB.");
		write_all(fd, rep.data, rep.size);
		break;
	case F_BUSY:
		pk(&p, "m s F s s s s s u", 4, "ok", "error", "busy",
		    "message", "uid 0 has 2 provisions running, its limit.",
		    "retry_after_ms", (uint64_t)250);
		write_all(fd, rep.data, rep.size);
		break;
	case F_SANDBOX:
		pk(&p, "m s T s m s m s s s s s s s s", 2, "ok", "services", 1,
		    "postgres", 4, "socket",
		    "/run/sbx/0/a1/postgres/.s.PGSQL.5432", "user", "sbx",
		    "password", "it's", "database", "sbx");
		write_all(fd, rep.data, rep.size);
		break;
	case F_EXACT_MAX:
	case F_OVER_MAX:
		/* fixmap(2) "ok" true "pad" bin32: 1+3+1+4+5 = 14 bytes */
		i = SBXC_REPLY_MAX - 14 + (how == F_OVER_MAX);
		big = calloc(1, i);
		if (big == NULL)
			_exit(6);
		pk(&p, "m s T s b", 2, "ok", "pad", big, i);
		write_all(fd, rep.data, rep.size);
		free(big);
		break;
	}
	close(fd);
	_exit(0);
}

/*
 * Every test that talks to a fake server is killed by SIGALRM if it hangs
 * (the library's own timeouts should always come first).
 */
static void
watchdog(void)
{
	alarm(30);
}

/* A child serving one exchange on the other end of a socketpair. */
static pid_t
fake_pair(enum fake how, int *client)
{
	int sv[2];
	pid_t pid;

	watchdog();
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv),
	    0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		close(sv[0]);
		serve(sv[1], how);
	}
	close(sv[1]);
	*client = sv[0];
	return pid;
}

static void
reap(pid_t pid)
{
	int st;

	kill(pid, SIGKILL);
	(void)waitpid(pid, &st, 0);
}

static enum sbxc_status
exchange_ping(enum fake how, int64_t timeout_ms, msgpack_unpacked *reply,
    struct sbxc_error *err)
{
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_opts o = { .timeout_ms = timeout_ms };
	msgpack_sbuffer sb;
	enum sbxc_status st;
	pid_t pid;
	int fd;

	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request(&sb, &r), 0);
	pid = fake_pair(how, &fd);
	st = sbxc_exchange(fd, sb.data, sb.size, &o, reply, err);
	close(fd);
	reap(pid);
	msgpack_sbuffer_destroy(&sb);
	return st;
}

static void
expect_echo_of_ping(const msgpack_unpacked *reply)
{
	const msgpack_object *e;

	cr_assert_eq(reply->data.type, MSGPACK_OBJECT_MAP);
	cr_expect(sbxc_map_get(&reply->data, "ok")->via.boolean);
	e = sbxc_map_get(&reply->data, "echo");
	cr_assert_not_null(e);
	cr_expect_eq(e->type, MSGPACK_OBJECT_MAP);
	cr_expect_eq(e->via.map.size, 1);
	cr_expect(sbxc_str_eq(sbxc_map_get(e, "op"), "ping"));
}

Test(exchange, echo)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_assert_eq(exchange_ping(F_ECHO, 5000, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	expect_echo_of_ping(&reply);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, reply_one_byte_at_a_time)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_assert_eq(exchange_ping(F_SPLIT, 5000, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	expect_echo_of_ping(&reply);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, trailing_bytes_ignored)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_assert_eq(exchange_ping(F_TRAILING, 5000, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	expect_echo_of_ping(&reply);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, truncated_reply)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_expect_eq(exchange_ping(F_TRUNC, 5000, &reply, &err), SBXC_EPROTO);
	cr_expect_eq(err.status, SBXC_EPROTO);
	cr_expect(strstr(err.msg, "truncated") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);	/* harmless on failure */
}

Test(exchange, closed_without_reply)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_expect_eq(exchange_ping(F_CLOSE, 5000, &reply, &err), SBXC_EPROTO);
	cr_expect(strstr(err.msg, "without a reply") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, silent_server_times_out)
{
	struct sbxc_error err;
	msgpack_unpacked reply;
	int64_t t0 = sbxc_now_ms(), dt;

	cr_expect_eq(exchange_ping(F_SILENT, 300, &reply, &err),
	    SBXC_ETIMEOUT);
	dt = sbxc_now_ms() - t0;
	cr_expect(dt >= 290 && dt < 3000, "took %lld ms", (long long)dt);
	cr_expect(strstr(err.msg, "300 ms") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, reply_not_a_map)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_expect_eq(exchange_ping(F_NOTMAP, 5000, &reply, &err), SBXC_EPROTO);
	cr_expect(strstr(err.msg, "not a msgpack map") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
	cr_expect_eq(exchange_ping(F_STRING, 5000, &reply, &err), SBXC_EPROTO);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, garbage_reply)
{
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_expect_eq(exchange_ping(F_GARBAGE, 5000, &reply, &err),
	    SBXC_EPROTO);
	cr_expect(strstr(err.msg, "not valid msgpack") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
}

Test(exchange, reply_size_limit)
{
	struct sbxc_error err;
	msgpack_unpacked reply;
	const msgpack_object *pad;

	cr_assert_eq(exchange_ping(F_EXACT_MAX, 10000, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	pad = sbxc_map_get(&reply.data, "pad");
	cr_assert_not_null(pad);
	cr_expect_eq(pad->via.bin.size, SBXC_REPLY_MAX - 14);
	msgpack_unpacked_destroy(&reply);

	cr_expect_eq(exchange_ping(F_OVER_MAX, 10000, &reply, &err),
	    SBXC_EPROTO);
	cr_expect(strstr(err.msg, "larger than") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
}

/* The server answers before taking the whole request (as the broker does
 * for an oversized one) and closes: the client still hears the answer. */
Test(exchange, early_answer_to_a_large_request)
{
	struct sbxc_opts o = { .timeout_ms = 10000 };
	struct sbxc_error err;
	msgpack_unpacked reply;
	size_t len = 4 << 20;
	char *req = calloc(1, len);
	pid_t pid;
	int fd;

	cr_assert_not_null(req);
	req[0] = '\xc6';			/* bin32 of len - 5 bytes */
	req[1] = (char)(((len - 5) >> 24) & 0xff);
	req[2] = (char)(((len - 5) >> 16) & 0xff);
	req[3] = (char)(((len - 5) >> 8) & 0xff);
	req[4] = (char)((len - 5) & 0xff);
	pid = fake_pair(F_EARLY, &fd);
	cr_assert_eq(sbxc_exchange(fd, req, len, &o, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	cr_expect(sbxc_str_eq(sbxc_map_get(&reply.data, "error"),
	    "bad_request"));
	msgpack_unpacked_destroy(&reply);
	close(fd);
	reap(pid);
	free(req);
}

struct ticks {
	int	 n;
	int64_t	 last;
	int	 monotonic;
};

static void
count_tick(void *arg, int64_t elapsed)
{
	struct ticks *t = arg;

	if (elapsed < t->last)
		t->monotonic = 0;
	t->last = elapsed;
	t->n++;
}

Test(exchange, progress_ticks)
{
	struct ticks t = { 0, 0, 1 };
	struct sbxc_opts o = { .timeout_ms = 5000, .tick = count_tick,
	    .tick_arg = &t, .tick_ms = 100 };
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	msgpack_sbuffer sb;
	int64_t t0, dt;
	pid_t pid;
	int fd;

	msgpack_sbuffer_init(&sb);
	cr_assert_eq(sbxc_pack_request(&sb, &r), 0);
	pid = fake_pair(F_SLOW, &fd);
	t0 = sbxc_now_ms();
	cr_assert_eq(sbxc_exchange(fd, sb.data, sb.size, &o, &reply, &err),
	    SBXC_OK, "%s", err.msg);
	dt = sbxc_now_ms() - t0;
	/* one tick per 100 ms waited, none early */
	cr_expect(t.n >= 4 && t.n <= dt / 100 + 1, "%d ticks in %lld ms", t.n,
	    (long long)dt);
	cr_expect(t.last >= 500, "last tick at %lld", (long long)t.last);
	cr_expect(t.monotonic);
	msgpack_unpacked_destroy(&reply);
	msgpack_sbuffer_destroy(&sb);
	close(fd);
	reap(pid);
}

static void
on_usr1(int sig)
{
	(void)sig;
}

/*
 * Signals without SA_RESTART interrupt poll() every few ms (sent by a
 * pinger child): the exchange neither fails nor ends early.
 */
Test(exchange, eintr_storm)
{
	struct sigaction sa;
	struct sbxc_error err;
	msgpack_unpacked reply;
	pid_t parent = getpid(), pinger;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigemptyset(&sa.sa_mask);
	cr_assert_eq(sigaction(SIGUSR1, &sa, NULL), 0);
	pinger = fork();
	cr_assert_neq(pinger, -1);
	if (pinger == 0) {
		for (;;) {
			if (kill(parent, SIGUSR1) == -1)
				_exit(0);
			sleep_ms(3);
		}
	}
	cr_expect_eq(exchange_ping(F_CONN_ECHO, 5000, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	reap(pinger);
	expect_echo_of_ping(&reply);
	msgpack_unpacked_destroy(&reply);
}

/* ---- sbxc_call over a real Unix socket -------------------------------- */

struct sockdir {
	char	dir[64];
	char	path[128];
};

static void
sockdir_make(struct sockdir *d)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->dir, sizeof(d->dir), "/tmp/sbxc-test.XXXXXX");
	cr_assert_not_null(mkdtemp(d->dir));
	snprintf(d->path, sizeof(d->path), "%s/sock", d->dir);
}

static void
sockdir_remove(struct sockdir *d)
{
	unlink(d->path);
	rmdir(d->dir);
}

static int
bind_at(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(fd, -1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0, "%s",
	    strerror(errno));
	return fd;
}

/* Listens at path and serves one connection as `how`. */
static pid_t
fake_listener(const char *path, enum fake how)
{
	int lfd = bind_at(path);
	pid_t pid;

	watchdog();
	cr_assert_eq(listen(lfd, 4), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		int cfd = accept(lfd, NULL, NULL);

		if (cfd == -1)
			_exit(7);
		close(lfd);
		serve(cfd, how);
	}
	close(lfd);
	return pid;
}

Test(call, request_sandbox_roundtrip)
{
	static const char *const svcs[] = { "postgres", "redis" };
	struct sbxc_req r = { .op = "request_sandbox", .agent = "agent-1",
	    .project = "shop", .services = svcs, .nservices = 2 };
	struct sbxc_opts o = { .timeout_ms = 5000 };
	const msgpack_object *e, *s;
	struct sbxc_error err;
	msgpack_unpacked reply;
	struct sockdir d;
	pid_t pid;

	sockdir_make(&d);
	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_call(d.path, &r, &o, &reply, &err), SBXC_OK, "%s",
	    err.msg);
	e = sbxc_map_get(&reply.data, "echo");
	cr_assert_not_null(e);
	cr_expect_eq(e->via.map.size, 4);
	cr_expect(sbxc_str_eq(sbxc_map_get(e, "op"), "request_sandbox"));
	cr_expect(sbxc_str_eq(sbxc_map_get(e, "agent"), "agent-1"));
	cr_expect(sbxc_str_eq(sbxc_map_get(e, "project"), "shop"));
	s = sbxc_map_get(e, "services");
	cr_assert(s != NULL && s->type == MSGPACK_OBJECT_ARRAY &&
	    s->via.array.size == 2);
	cr_expect(sbxc_str_eq(&s->via.array.ptr[0], "postgres"));
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	sockdir_remove(&d);
}

Test(call, default_options)
{
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	struct sockdir d;
	pid_t pid;

	sockdir_make(&d);
	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_call(d.path, &r, NULL, &reply, &err), SBXC_OK, "%s",
	    err.msg);
	expect_echo_of_ping(&reply);
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	sockdir_remove(&d);
}

Test(call, no_socket)
{
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	struct sockdir d;

	sockdir_make(&d);
	cr_expect_eq(sbxc_call(d.path, &r, NULL, &reply, &err),
	    SBXC_ECONNECT);
	cr_expect_eq(err.sys_errno, ENOENT);
	cr_expect(strstr(err.msg, d.path) != NULL, "%s", err.msg);
	cr_expect_null(strchr(err.msg, '\n'));
	msgpack_unpacked_destroy(&reply);
	sockdir_remove(&d);
}

Test(call, refused)
{
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	struct sockdir d;
	int fd;

	sockdir_make(&d);
	fd = bind_at(d.path);			/* bound, not listening */
	cr_expect_eq(sbxc_call(d.path, &r, NULL, &reply, &err),
	    SBXC_ECONNECT);
	cr_expect_eq(err.sys_errno, ECONNREFUSED);
	close(fd);
	sockdir_remove(&d);
}

Test(call, path_too_long)
{
	struct sbxc_req r = { .op = "ping" };
	struct sbxc_error err;
	msgpack_unpacked reply;
	char path[200];

	memset(path, 'x', sizeof(path) - 1);
	path[0] = '/';
	path[sizeof(path) - 1] = '\0';
	cr_expect_eq(sbxc_call(path, &r, NULL, &reply, &err), SBXC_ECONNECT);
	cr_expect_eq(err.sys_errno, ENAMETOOLONG);
	cr_expect_eq(sbxc_call("", &r, NULL, &reply, &err), SBXC_ECONNECT);
}

/* Over 64 KiB is refused before connecting. */
Test(call, request_too_large)
{
	static char names[2000][64];
	const char *svcs[2000];
	struct sbxc_req r = { .op = "request_sandbox", .agent = "a",
	    .project = "p", .services = svcs, .nservices = 2000 };
	struct sbxc_error err;
	msgpack_unpacked reply;
	size_t i;

	for (i = 0; i < 2000; i++) {
		memset(names[i], 'a', 63);
		svcs[i] = names[i];
	}
	cr_expect_eq(sbxc_call("/nonexistent/sock", &r, NULL, &reply, &err),
	    SBXC_EREQUEST);
	cr_expect(strstr(err.msg, "larger") != NULL, "%s", err.msg);
	r.op = NULL;
	cr_expect_eq(sbxc_call("/nonexistent/sock", &r, NULL, &reply, &err),
	    SBXC_EREQUEST);
}

Test(call, null_err_is_fine)
{
	struct sbxc_req r = { .op = "ping" };
	msgpack_unpacked reply;

	cr_expect_eq(sbxc_call("/nonexistent/sock", &r, NULL, &reply, NULL),
	    SBXC_ECONNECT);
	cr_expect_str_eq(sbxc_status_name(SBXC_ETIMEOUT), "timeout");
}

/* ---- reset, snapshot, bind_pid through sbxc_call_ext ----------------- */

/* The echo of the request the fake listener got, as JSON. */
static char *
echo_json(const msgpack_unpacked *reply)
{
	const msgpack_object *e = sbxc_map_get(&reply->data, "echo");
	struct mem m;

	cr_assert_not_null(e);
	sbxf_json(mem_open(&m), e);
	(void)mem_text(&m);
	return m.buf;
}

Test(call, reset_snapshot_bind_pid)
{
	static const char *const svcs[] = { "postgres" };
	struct sbxc_req r = { .op = "request_sandbox", .agent = "a1",
	    .project = "shop", .services = svcs, .nservices = 1 };
	struct sbxc_req_ext x = { .bind_pid = 31337 };
	struct sbxc_opts o = { .timeout_ms = 5000 };
	struct sbxc_error err;
	msgpack_unpacked reply;
	struct sockdir d;
	char *j;
	pid_t pid;

	sockdir_make(&d);
	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_call_ext(d.path, &r, &x, &o, &reply, &err), SBXC_OK,
	    "%s", err.msg);
	j = echo_json(&reply);
	cr_expect_str_eq(j, "{\"op\":\"request_sandbox\",\"agent\":\"a1\","
	    "\"project\":\"shop\",\"services\":[\"postgres\"],"
	    "\"bind_pid\":31337}");
	free(j);
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	unlink(d.path);

	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_reset(d.path, "a1", "clean", &o, &reply, &err),
	    SBXC_OK, "%s", err.msg);
	j = echo_json(&reply);
	cr_expect_str_eq(j, "{\"op\":\"reset\",\"agent\":\"a1\","
	    "\"to\":\"clean\"}");
	free(j);
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	unlink(d.path);

	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_reset(d.path, "a1", NULL, &o, &reply, &err),
	    SBXC_OK, "%s", err.msg);
	j = echo_json(&reply);
	cr_expect_str_eq(j, "{\"op\":\"reset\",\"agent\":\"a1\"}");
	free(j);
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	unlink(d.path);

	pid = fake_listener(d.path, F_ECHO);
	cr_assert_eq(sbxc_snapshot(d.path, "a1", "s1", &o, &reply, &err),
	    SBXC_OK, "%s", err.msg);
	j = echo_json(&reply);
	cr_expect_str_eq(j, "{\"op\":\"snapshot\",\"agent\":\"a1\","
	    "\"name\":\"s1\"}");
	free(j);
	msgpack_unpacked_destroy(&reply);
	reap(pid);
	sockdir_remove(&d);
}

/* What cannot be a request is refused before connecting. */
Test(call, ext_refusals)
{
	struct sbxc_req r = { .op = "request_sandbox", .agent = "a" };
	struct sbxc_req_ext x = { .bind_pid = -7 };
	struct sbxc_error err;
	msgpack_unpacked reply;

	cr_expect_eq(sbxc_call_ext("/nonexistent/sock", &r, &x, NULL, &reply,
	    &err), SBXC_EREQUEST);
	cr_expect(strstr(err.msg, "bind_pid") != NULL, "%s", err.msg);
	msgpack_unpacked_destroy(&reply);
	cr_expect_eq(sbxc_reset("/nonexistent/sock", NULL, "x", NULL, &reply,
	    &err), SBXC_EREQUEST);
	msgpack_unpacked_destroy(&reply);
	cr_expect_eq(sbxc_snapshot("/nonexistent/sock", "a", NULL, NULL,
	    &reply, &err), SBXC_EREQUEST);
	msgpack_unpacked_destroy(&reply);
	cr_expect_eq(sbxc_snapshot("/nonexistent/sock", NULL, "s", NULL,
	    &reply, NULL), SBXC_EREQUEST);
	msgpack_unpacked_destroy(&reply);
	/* a well-formed one gets as far as the socket */
	cr_expect_eq(sbxc_reset("/nonexistent/sock", "a", NULL, NULL, &reply,
	    &err), SBXC_ECONNECT);
	msgpack_unpacked_destroy(&reply);
}

/* ---- the sbx command (client/sbx.c), run beside this binary ---------- */

/* The sbx built with this test binary ($(O)/sbx; tests.mk builds it). */
static const char *
sbx_bin(void)
{
	static char path[PATH_MAX];
	ssize_t n;
	char *slash;

	n = readlink("/proc/self/exe", path, sizeof(path) - 5);
	cr_assert(n > 0);
	path[n] = '\0';
	cr_assert_not_null(slash = strrchr(path, '/'));
	strcpy(slash + 1, "sbx");
	cr_assert_eq(access(path, X_OK), 0, "%s: build it (make %s)", path,
	    path);
	return path;
}

/*
 * Runs sbx ARGS in sh with a fake listener (how; none if how < 0) at the
 * socket, stderr to stdout when err is set (else to /dev/null); returns
 * the output, then "rc=N".
 */
static char *
sbx_run(int how, bool err, const char *args)
{
	char script[1024];
	struct sockdir d;
	char *out;
	pid_t pid = -1;

	sockdir_make(&d);
	if (how >= 0)
		pid = fake_listener(d.path, (enum fake)how);
	snprintf(script, sizeof(script), "%s -S %s %s %s; echo \"rc=$?\"",
	    sbx_bin(), d.path, args, err ? "2>&1" : "2>/dev/null");
	out = sh_run(script, "");
	if (pid != -1)
		reap(pid);
	sockdir_remove(&d);
	return out;
}

#define SBX_SAYS(how, err, args, expect) do {				\
	char *o_ = sbx_run((how), (err), (args));			\
	cr_expect_str_eq(o_, (expect), "sbx %s: got [%s]", (args), o_); \
	free(o_);							\
} while (0)

/* -f env: every failure ends in 'false' on stdout; others print nothing. */
Test(cli, false_on_failure)
{
	/* a refusal, no socket, a usage error before and after the command */
	SBX_SAYS(F_BUSY, false, "request -a a1 -p shop postgres",
	    "false\nrc=1\n");
	SBX_SAYS(-1, false, "request -a a1 -p shop postgres",
	    "false\nrc=3\n");
	SBX_SAYS(-1, false, "--bogus request -a a1 -p shop",
	    "false\nrc=2\n");
	SBX_SAYS(-1, false, "request -a A1 -p shop -f env", "false\nrc=2\n");
	SBX_SAYS(-1, false, "request --bind-pid -3 -a a1 -p shop",
	    "false\nrc=2\n");
	/* a bad reply (the echo has no services) */
	SBX_SAYS(F_ECHO, false, "request -a a1 -p shop", "false\nrc=4\n");
	/* reset prints as request does, and fails as it does */
	SBX_SAYS(F_BUSY, false, "reset -a a1 --to s1", "false\nrc=1\n");
	/* data formats, --json and other commands: nothing */
	SBX_SAYS(F_BUSY, false, "request -a a1 -p shop -f dotenv",
	    "rc=1\n");
	SBX_SAYS(F_BUSY, false, "request -a a1 -p shop -f json", "rc=1\n");
	SBX_SAYS(-1, false, "reset -f json -a a1 --bogus", "rc=2\n");
	SBX_SAYS(-1, false, "snapshot -a a1 s1", "rc=3\n");
	SBX_SAYS(-1, false, "release -a a1", "rc=3\n");
}

/* The man page's idiom: set -e stops at a failed eval, goes on after a
 * good one. */
Test(cli, set_e_eval)
{
	char script[1024];
	struct sockdir d;
	char *out;
	pid_t pid;

	sockdir_make(&d);
	snprintf(script, sizeof(script), "sh -c 'set -e; eval \"$(%s -S %s "
	    "request -a a1 -p shop -f env postgres 2>/dev/null)\"; "
	    "echo \"survived $POSTGRES_PASSWORD\"'; echo \"rc=$?\"",
	    sbx_bin(), d.path);
	out = sh_run(script, "");
	cr_expect_str_eq(out, "rc=1\n");
	free(out);

	pid = fake_listener(d.path, F_SANDBOX);
	out = sh_run(script, "");
	cr_expect_str_eq(out, "survived it's\nrc=0\n");
	free(out);
	reap(pid);
	sockdir_remove(&d);
}

/* busy's retry_after_ms ends the error line. */
Test(cli, busy_retry_after)
{
	SBX_SAYS(F_BUSY, true, "snapshot -a a1 s1", "sbx: busy: uid 0 has 2 "
	    "provisions running, its limit. (retry after 250 ms)\nrc=1\n");
}

/* What the new options send, seen in the fake's echo (--json). */
Test(cli, sends)
{
	SBX_SAYS(F_ECHO, false, "--json request -a a1 -p shop --bind-pid 42 "
	    "postgres", "{\"ok\":true,\"echo\":{\"op\":\"request_sandbox\","
	    "\"agent\":\"a1\",\"project\":\"shop\",\"services\":[\"postgres\"],"
	    "\"bind_pid\":42}}\nrc=0\n");
	SBX_SAYS(F_ECHO, false, "--json request -a a1 -p shop",
	    "{\"ok\":true,\"echo\":{\"op\":\"request_sandbox\","
	    "\"agent\":\"a1\",\"project\":\"shop\",\"services\":[]}}\nrc=0\n");
	SBX_SAYS(F_ECHO, false, "reset -j -a a1 --to s1",
	    "{\"ok\":true,\"echo\":{\"op\":\"reset\",\"agent\":\"a1\","
	    "\"to\":\"s1\"}}\nrc=0\n");
	SBX_SAYS(F_ECHO, false, "reset -j -a a1",
	    "{\"ok\":true,\"echo\":{\"op\":\"reset\",\"agent\":\"a1\"}}\n"
	    "rc=0\n");
	SBX_SAYS(F_ECHO, false, "snapshot -j -a a1 s1",
	    "{\"ok\":true,\"echo\":{\"op\":\"snapshot\",\"agent\":\"a1\","
	    "\"name\":\"s1\"}}\nrc=0\n");
	SBX_SAYS(F_ECHO, false, "status -j",
	    "{\"ok\":true,\"echo\":{\"op\":\"status\"}}\nrc=0\n");
	SBX_SAYS(F_SANDBOX, false, "reset -a a1 -f dotenv",
	    "POSTGRES_SOCKET=/run/sbx/0/a1/postgres/.s.PGSQL.5432\n"
	    "POSTGRES_USER=sbx\n"
	    "POSTGRES_PASSWORD=\"it's\"\n"
	    "POSTGRES_DATABASE=sbx\n"
	    "POSTGRES_URL='postgresql://sbx:it%27s@localhost/sbx?host=/run/sbx/0"
	    "/a1/postgres&port=5432'\n"
	    "PGHOST=/run/sbx/0/a1/postgres\n"
	    "PGPORT=5432\n"
	    "PGUSER=sbx\n"
	    "PGPASSWORD=\"it's\"\n"
	    "PGDATABASE=sbx\n"
	    "DATABASE_URL='postgresql://sbx:it%27s@localhost/sbx?host=/run/sbx/0"
	    "/a1/postgres&port=5432'\n"
	    "rc=0\n");
}

/* Who takes what: misplaced new options are usage errors. */
Test(cli, usage)
{
	SBX_SAYS(-1, true, "status --to s1", "sbx: 'status' takes no --to: "
	    "it is reset's\nTry 'sbx -h' for help.\nrc=2\n");
	SBX_SAYS(-1, true, "reset -a a1 --bind-pid 1", "sbx: 'reset' takes "
	    "no --bind-pid: it is request's\nTry 'sbx -h' for help.\n"
	    "false\nrc=2\n");
	SBX_SAYS(-1, true, "snapshot -a a1", "sbx: usage: sbx snapshot -a "
	    "AGENT NAME\nTry 'sbx -h' for help.\nrc=2\n");
	SBX_SAYS(-1, true, "snapshot -a a1 Bad", "sbx: invalid snapshot name "
	    "'Bad': must match [a-z0-9][a-z0-9._-]{0,62}\nrc=2\n");
	SBX_SAYS(-1, true, "request -a a1 -p p --bind-pid 2147483648",
	    "sbx: invalid pid '2147483648': expected an integer from 1 to "
	    "2147483647\nTry 'sbx -h' for help.\nfalse\nrc=2\n");
	SBX_SAYS(-1, true, "request -a a1 -p p --bind-pid",
	    "sbx: option '--bind-pid' needs an argument\n"
	    "Try 'sbx -h' for help.\nfalse\nrc=2\n");
	/* the help names the new commands; status is no longer root's */
	SBX_SAYS(-1, true, "-h | grep -E '^  (reset|snapshot|status) '",
	    "  reset -a AGENT [--to NAME] [-f FORMAT]\n"
	    "  snapshot -a AGENT NAME                save the sandbox's state "
	    "as NAME\n"
	    "  status                                your sandboxes (root: "
	    "everyone's)\n"
	    "rc=0\n");
}
