/*
 * test_wire.c - the broker's request decoder (wire_decode, wire_reader_*)
 * against every malformed shape of the wire contract, and the replies
 * (the monitor's answer_pack, and pack_error, which the broker's child
 * uses for its own refusals) round-tripped through msgpack-c's own
 * unpacker.
 *
 * Valid inputs are built with msgpack-c's packer; malformed ones that a
 * packer would never produce are raw byte arrays.
 */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "answer.h"
#include "busy.h"
#include "msg.h"
#include "pack.h"
#include "wire.h"

#if defined(__SANITIZE_ADDRESS__)
/* The broker child caps its address space at 256 MiB (RLIMIT_AS), which
 * cannot be used under ASan; this is the same cap in ASan's terms, so a
 * header claiming 2^32-1 elements fails to allocate here too. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=256";
}
#endif

/* ---- building requests ------------------------------------------------ */

struct buf {
	msgpack_sbuffer	sb;
	msgpack_packer	pk;
};

static void
buf_init(struct buf *b)
{
	msgpack_sbuffer_init(&b->sb);
	msgpack_packer_init(&b->pk, &b->sb, msgpack_sbuffer_write);
}

static void
buf_free(struct buf *b)
{
	msgpack_sbuffer_destroy(&b->sb);
}

static void
p_strn(struct buf *b, const char *s, size_t n)
{
	msgpack_pack_str(&b->pk, n);
	msgpack_pack_str_body(&b->pk, s, n);
}

static void
p_str(struct buf *b, const char *s)
{
	p_strn(b, s, strlen(s));
}

static void
p_kv(struct buf *b, const char *k, const char *v)
{
	p_str(b, k);
	p_str(b, v);
}

static void
p_strs(struct buf *b, const char *const *v, size_t n)
{
	size_t i;

	msgpack_pack_array(&b->pk, n);
	for (i = 0; i < n; i++)
		p_str(b, v[i]);
}

/* {"op":"request_sandbox","agent":..,"project":..,"services":[..]} */
static void
p_sandbox(struct buf *b, const char *agent, const char *project,
    const char *const *svcs, size_t n)
{
	msgpack_pack_map(&b->pk, 4);
	p_kv(b, "op", "request_sandbox");
	p_kv(b, "agent", agent);
	p_kv(b, "project", project);
	p_str(b, "services");
	p_strs(b, svcs, n);
}

static const char *const two_svcs[] = { "postgres", "redis" };

static enum wire_status
decode(const void *data, size_t len, union sbx_req_any *out, size_t *outlen,
    char *err)
{
	memset(out, 0xa5, sizeof(*out));
	*outlen = 0xdeadbeef;
	memset(err, 0, WIRE_ERR_MAX);
	return wire_decode(data, len, out, outlen, err);
}

static enum wire_status
decode_buf(const struct buf *b, union sbx_req_any *out, size_t *outlen,
    char *err)
{
	return decode(b->sb.data, b->sb.size, out, outlen, err);
}

/* Decode and expect WIRE_BAD with a non-empty reason. */
static void
expect_bad(const void *data, size_t len, const char *what)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	enum wire_status st = decode(data, len, &out, &outlen, err);

	cr_assert_eq(st, WIRE_BAD, "%s: status %d, want WIRE_BAD", what, st);
	cr_assert_neq(err[0], '\0', "%s: WIRE_BAD without a reason", what);
	cr_assert_not_null(memchr(err, '\0', WIRE_ERR_MAX),
	    "%s: reason not terminated", what);
}

static void
expect_bad_buf(struct buf *b, const char *what)
{
	expect_bad(b->sb.data, b->sb.size, what);
	buf_free(b);
}

/* Expect WIRE_BAD and the reason to mention `needle`. */
static void
expect_bad_msg(struct buf *b, const char *needle, const char *what)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	enum wire_status st = decode_buf(b, &out, &outlen, err);

	cr_assert_eq(st, WIRE_BAD, "%s: status %d, want WIRE_BAD", what, st);
	cr_assert_not_null(strstr(err, needle), "%s: reason '%s' lacks '%s'",
	    what, err, needle);
	buf_free(b);
}

/* Expect WIRE_BAD for a reason other than the 64 KiB budget. */
static void
expect_bad_not_size(struct buf *b, const char *what)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	enum wire_status st = decode_buf(b, &out, &outlen, err);

	cr_assert_eq(st, WIRE_BAD, "%s: status %d, want WIRE_BAD", what, st);
	cr_assert_null(strstr(err, "64 KiB"), "%s: refused for its size", what);
	buf_free(b);
}

/* ---- not a map -------------------------------------------------------- */

Test(wire_shape, array_is_not_a_map)
{
	static const unsigned char in[] = { 0x91, 0xa4, 'p', 'i', 'n', 'g' };
	struct buf b;

	expect_bad(in, sizeof(in), "[\"ping\"]");
	buf_init(&b);
	msgpack_pack_array(&b.pk, 2);
	p_str(&b, "op");
	p_str(&b, "ping");
	expect_bad_msg(&b, "map", "[op, ping]");
}

Test(wire_shape, string_is_not_a_map)
{
	static const unsigned char in[] = { 0xa4, 'p', 'i', 'n', 'g' };

	expect_bad(in, sizeof(in), "\"ping\"");
}

Test(wire_shape, int_is_not_a_map)
{
	static const unsigned char pos[] = { 0x05 };
	static const unsigned char neg[] = { 0xff };
	static const unsigned char u64[] = { 0xcf, 1, 2, 3, 4, 5, 6, 7, 8 };

	expect_bad(pos, sizeof(pos), "5");
	expect_bad(neg, sizeof(neg), "-1");
	expect_bad(u64, sizeof(u64), "uint64");
}

Test(wire_shape, nil_is_not_a_map)
{
	static const unsigned char in[] = { 0xc0 };

	expect_bad(in, sizeof(in), "nil");
}

Test(wire_shape, bool_float_bin_are_not_maps)
{
	static const unsigned char t[] = { 0xc3 };
	static const unsigned char f64[] = { 0xcb, 0x3f, 0xf0, 0, 0, 0, 0, 0, 0 };
	static const unsigned char bin[] = { 0xc4, 0x02, 'o', 'p' };

	expect_bad(t, sizeof(t), "true");
	expect_bad(f64, sizeof(f64), "1.0");
	expect_bad(bin, sizeof(bin), "bin");
}

/* ---- keys ------------------------------------------------------------- */

Test(wire_keys, non_string_key)
{
	/* {1: "ping"} */
	static const unsigned char intkey[] = { 0x81, 0x01, 0xa4, 'p', 'i',
	    'n', 'g' };
	/* {"op":"ping", nil: 1} */
	static const unsigned char nilkey[] = { 0x82, 0xa2, 'o', 'p', 0xa4,
	    'p', 'i', 'n', 'g', 0xc0, 0x01 };
	/* {bin "op": "ping"}: bin is not str */
	static const unsigned char binkey[] = { 0x81, 0xc4, 0x02, 'o', 'p',
	    0xa4, 'p', 'i', 'n', 'g' };
	/* {["op"]: "ping"} */
	static const unsigned char arrkey[] = { 0x81, 0x91, 0xa2, 'o', 'p',
	    0xa4, 'p', 'i', 'n', 'g' };

	expect_bad(intkey, sizeof(intkey), "int key");
	expect_bad(nilkey, sizeof(nilkey), "nil key after op");
	expect_bad(binkey, sizeof(binkey), "bin key");
	expect_bad(arrkey, sizeof(arrkey), "array key");
}

Test(wire_keys, missing_op)
{
	struct buf b;
	static const unsigned char empty[] = { 0x80 };

	expect_bad(empty, sizeof(empty), "{}");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	expect_bad_msg(&b, "'op'", "no op");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "OP", "ping");		/* keys are case-sensitive */
	expect_bad_msg(&b, "'op'", "OP");
}

Test(wire_keys, op_not_a_string)
{
	static const unsigned char binop[] = { 0x81, 0xa2, 'o', 'p', 0xc4,
	    0x04, 'p', 'i', 'n', 'g' };
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_str(&b, "op");
	msgpack_pack_int(&b.pk, 1);
	expect_bad_msg(&b, "'op' must be a string", "op=1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_str(&b, "op");
	msgpack_pack_nil(&b.pk);
	expect_bad_msg(&b, "'op' must be a string", "op=nil");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_str(&b, "op");
	p_strs(&b, (const char *const[]){ "ping" }, 1);
	expect_bad_msg(&b, "'op' must be a string", "op=[ping]");
	expect_bad(binop, sizeof(binop), "op=bin ping");
}

Test(wire_keys, unknown_op)
{
	static const char *const ops[] = { "pong", "PING", "pin", "pingx",
	    "", "request-sandbox", "Status", "release " };
	struct buf b;
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		buf_init(&b);
		msgpack_pack_map(&b.pk, 1);
		p_kv(&b, "op", ops[i]);
		expect_bad_msg(&b, "unknown 'op'", ops[i]);
	}
	/* "ping\0": same prefix, one byte longer */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_str(&b, "op");
	p_strn(&b, "ping\0", 5);
	expect_bad_msg(&b, "unknown 'op'", "ping\\0");
}

Test(wire_keys, duplicate_key)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "ping");
	p_kv(&b, "op", "ping");
	expect_bad_msg(&b, "twice", "op twice, same value");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "release");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "agent", "dev-2");
	expect_bad_msg(&b, "twice", "agent twice");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 5);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	p_strs(&b, two_svcs, 2);
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "twice", "services twice");

	/* twice, the second of another type: still a duplicate */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "available");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "project");
	msgpack_pack_nil(&b.pk);
	expect_bad_msg(&b, "twice", "project twice");
}

Test(wire_keys, missing_fields)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "available");
	expect_bad_msg(&b, "'project'", "available without project");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "release");
	expect_bad_msg(&b, "'agent'", "release without agent");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'agent'", "sandbox without agent");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'project'", "sandbox without project");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	expect_bad_msg(&b, "'services'", "sandbox without services");
}

/* ---- slugs ------------------------------------------------------------ */

/* Puts `bad` (len bytes, may hold a NUL) into each slug field of each op
 * in turn, and expects WIRE_BAD naming that field. */
static void
each_slug_field(const char *bad, size_t len, const char *what)
{
	struct buf b;
	char label[128];

	snprintf(label, sizeof(label), "%s as sandbox agent", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_str(&b, "agent");
	p_strn(&b, bad, len);
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'agent' must be", label);

	snprintf(label, sizeof(label), "%s as sandbox project", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "project");
	p_strn(&b, bad, len);
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'project' must be", label);

	snprintf(label, sizeof(label), "%s as a service", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	msgpack_pack_array(&b.pk, 2);
	p_str(&b, "postgres");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'services[]' must be", label);

	snprintf(label, sizeof(label), "%s as available project", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "available");
	p_str(&b, "project");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'project' must be", label);

	snprintf(label, sizeof(label), "%s as release agent", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "release");
	p_str(&b, "agent");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'agent' must be", label);

	snprintf(label, sizeof(label), "%s as reset agent", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "reset");
	p_str(&b, "agent");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'agent' must be", label);

	snprintf(label, sizeof(label), "%s as reset to", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "to");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'to' must be", label);

	snprintf(label, sizeof(label), "%s as snapshot agent", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_str(&b, "agent");
	p_strn(&b, bad, len);
	p_kv(&b, "name", "clean");
	expect_bad_msg(&b, "'agent' must be", label);

	snprintf(label, sizeof(label), "%s as snapshot name", what);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "name");
	p_strn(&b, bad, len);
	expect_bad_msg(&b, "'name' must be", label);
}

Test(wire_slug, uppercase)
{
	each_slug_field("Dev-1", 5, "Dev-1");
	each_slug_field("dev-A", 5, "dev-A");
}

Test(wire_slug, leading_dash)
{
	each_slug_field("-dev", 4, "-dev");
	each_slug_field(".dev", 4, ".dev");
	each_slug_field("_dev", 4, "_dev");
}

Test(wire_slug, sixty_four_chars)
{
	char s[64];

	memset(s, 'a', sizeof(s));
	each_slug_field(s, 64, "64 x a");
}

Test(wire_slug, empty)
{
	each_slug_field("", 0, "empty");
}

Test(wire_slug, embedded_nul)
{
	each_slug_field("dev\0x", 5, "dev\\0x");
	each_slug_field("dev\0", 4, "dev\\0");
	each_slug_field("\0", 1, "\\0");
}

Test(wire_slug, non_utf8_and_non_ascii)
{
	each_slug_field("dev\xff", 4, "dev\\xff");
	each_slug_field("\xc3\x28", 2, "invalid utf-8 sequence");
	each_slug_field("caf\xc3\xa9", 5, "valid utf-8 but not [a-z0-9]");
}

Test(wire_slug, other_forbidden_chars)
{
	each_slug_field("a b", 3, "space");
	each_slug_field("a/b", 3, "slash");
	each_slug_field("../x", 4, "dot dot");
	each_slug_field("a\n", 2, "newline");
}

Test(wire_slug, not_a_string)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_str(&b, "agent");
	msgpack_pack_int(&b.pk, 7);
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'agent' must be", "agent=7");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "project");
	msgpack_pack_nil(&b.pk);
	p_str(&b, "services");
	p_strs(&b, two_svcs, 1);
	expect_bad_msg(&b, "'project' must be", "project=nil");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "release");
	p_str(&b, "agent");
	msgpack_pack_bin(&b.pk, 5);
	msgpack_pack_bin_body(&b.pk, "dev-1", 5);
	expect_bad_msg(&b, "'agent' must be", "agent=bin");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "available");
	p_str(&b, "project");
	p_strs(&b, (const char *const[]){ "roboco-api" }, 1);
	expect_bad_msg(&b, "'project' must be", "project=[..]");
}

/* The boundary on the good side: 63 chars, digits first, inner . _ - */
Test(wire_slug, longest_and_odd_valid_slugs)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX], s63[64];
	const char *svcs[] = { "0", "a.b_c-d" };
	struct buf b;

	memset(s63, 'z', 63);
	s63[63] = '\0';
	buf_init(&b);
	p_sandbox(&b, s63, "9-lives", svcs, 2);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_str_eq(out.sandbox.agent, s63);
	cr_assert_str_eq(out.sandbox.project, "9-lives");
	cr_assert_str_eq(out.sandbox.services[0], "0");
	cr_assert_str_eq(out.sandbox.services[1], "a.b_c-d");
	buf_free(&b);
}

/* ---- services --------------------------------------------------------- */

Test(wire_services, not_an_array)
{
	struct buf b;
	int kind;

	for (kind = 0; kind < 4; kind++) {
		buf_init(&b);
		msgpack_pack_map(&b.pk, 4);
		p_kv(&b, "op", "request_sandbox");
		p_kv(&b, "agent", "dev-1");
		p_kv(&b, "project", "roboco-api");
		p_str(&b, "services");
		switch (kind) {
		case 0:
			p_str(&b, "postgres");
			break;
		case 1:
			msgpack_pack_map(&b.pk, 1);
			p_kv(&b, "postgres", "redis");
			break;
		case 2:
			msgpack_pack_nil(&b.pk);
			break;
		default:
			msgpack_pack_int(&b.pk, 1);
			break;
		}
		expect_bad_msg(&b, "'services' must be an array", "services");
	}
}

static void
n_services(struct buf *b, size_t n)
{
	char names[32][SBX_SLUG_MAX];
	const char *v[32];
	size_t i;

	for (i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "svc-%zu", i);
		v[i] = names[i];
	}
	buf_init(b);
	p_sandbox(b, "dev-1", "roboco-api", v, n);
}

Test(wire_services, more_than_sixteen)
{
	struct buf b;

	n_services(&b, 17);
	expect_bad_msg(&b, "more than 16", "17 services");
	n_services(&b, 32);
	expect_bad_msg(&b, "more than 16", "32 services");
}

Test(wire_services, exactly_sixteen)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	n_services(&b, 16);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.sandbox.nservices, 16);
	cr_assert_str_eq(out.sandbox.services[0], "svc-0");
	cr_assert_str_eq(out.sandbox.services[15], "svc-15");
	buf_free(&b);
}

Test(wire_services, duplicate_service)
{
	const char *dup[] = { "postgres", "redis", "postgres" };
	const char *adj[] = { "redis", "redis" };
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", dup, 3);
	expect_bad_msg(&b, "twice", "postgres twice");
	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", adj, 2);
	expect_bad_msg(&b, "twice", "redis twice");
}

Test(wire_services, service_not_a_string)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	msgpack_pack_array(&b.pk, 2);
	p_str(&b, "postgres");
	msgpack_pack_int(&b.pk, 5432);
	expect_bad_msg(&b, "'services[]' must be", "[postgres, 5432]");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "request_sandbox");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "project", "roboco-api");
	p_str(&b, "services");
	msgpack_pack_array(&b.pk, 1);
	msgpack_pack_array(&b.pk, 1);
	p_str(&b, "postgres");
	expect_bad_msg(&b, "'services[]' must be", "[[postgres]]");
}

Test(wire_services, empty_array)
{
	union sbx_req_any out, want;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", NULL, 0);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	memset(&want, 0, sizeof(want));
	want.hdr.magic = SBX_MSG_MAGIC;
	want.hdr.type = SBX_REQ_SANDBOX;
	strcpy(want.sandbox.agent, "dev-1");
	strcpy(want.sandbox.project, "roboco-api");
	cr_assert_eq(outlen, sizeof(struct sbx_req_sandbox));
	cr_assert_eq(out.sandbox.nservices, 0);
	cr_assert_eq(memcmp(&out, &want, sizeof(out)), 0);
	buf_free(&b);
}

/* ---- framing: truncation, size, depth, claims, garbage ----------------- */

static void
check_every_prefix(const struct buf *b, enum sbx_req_type type)
{
	union sbx_req_any out;
	size_t n, outlen;
	char err[WIRE_ERR_MAX];
	enum wire_status st;

	for (n = 0; n < b->sb.size; n++) {
		st = decode(b->sb.data, n, &out, &outlen, err);
		cr_assert_eq(st, WIRE_MORE,
		    "type %d: prefix of %zu/%zu bytes gave %d (%s)", type, n,
		    b->sb.size, st, err);
	}
	st = decode(b->sb.data, b->sb.size, &out, &outlen, err);
	cr_assert_eq(st, WIRE_OK, "type %d: whole request: %s", type, err);
	cr_assert_eq(out.hdr.type, (uint32_t)type);
}

Test(wire_frame, truncated_at_every_offset)
{
	const char *three[] = { "postgres", "redis", "minio" };
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", three, 3);
	check_every_prefix(&b, SBX_REQ_SANDBOX);
	buf_free(&b);

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "available");
	p_kv(&b, "project", "roboco-api");
	check_every_prefix(&b, SBX_REQ_AVAILABLE);
	buf_free(&b);

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "release");
	p_kv(&b, "agent", "dev-1");
	check_every_prefix(&b, SBX_REQ_RELEASE);
	buf_free(&b);

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "to", "clean");
	check_every_prefix(&b, SBX_REQ_RESET);
	buf_free(&b);

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "clean");
	check_every_prefix(&b, SBX_REQ_SNAPSHOT);
	buf_free(&b);

	/* an ignored key with a nested value, and a 300-byte string (str16) */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_str(&b, "pad");
	{
		char pad[300];

		memset(pad, 'x', sizeof(pad));
		p_strn(&b, pad, sizeof(pad));
	}
	p_str(&b, "meta");
	msgpack_pack_map(&b.pk, 1);
	p_str(&b, "k");
	msgpack_pack_array(&b.pk, 2);
	msgpack_pack_uint64(&b.pk, UINT64_MAX);
	msgpack_pack_double(&b.pk, 1.5);
	p_kv(&b, "op", "status");
	check_every_prefix(&b, SBX_REQ_STATUS);
	buf_free(&b);
}

/* The incremental reader the broker child uses: one byte per read(). */
Test(wire_frame, reader_fed_one_byte_at_a_time)
{
	struct wire_reader r;
	union sbx_req_any out;
	size_t i, cap, outlen = 0;
	char err[WIRE_ERR_MAX], *space;
	enum wire_status st = WIRE_MORE;
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", two_svcs, 2);
	cr_assert_eq(wire_reader_init(&r), 0);
	for (i = 0; i < b.sb.size; i++) {
		cr_assert_eq(st, WIRE_MORE, "done early at byte %zu", i);
		space = wire_reader_space(&r, &cap);
		cr_assert_not_null(space);
		cr_assert_geq(cap, 1);
		space[0] = b.sb.data[i];
		st = wire_reader_feed(&r, 1, &out, &outlen, err);
	}
	cr_assert_eq(st, WIRE_OK, "%s", err);
	cr_assert_eq(outlen, sizeof(struct sbx_req_sandbox));
	cr_assert_eq(out.sandbox.nservices, 2);
	cr_assert_str_eq(out.sandbox.services[1], "redis");
	wire_reader_free(&r);
	buf_free(&b);
}

/*
 * The broker makes its children's reader before it forks them: a request
 * must then allocate nothing (a child's malloc cost a copy-on-write fault
 * per heap page it walked). msgpack-c 4 makes its zone lazily, so this
 * fails if wire_reader_init stops making it.
 */
Test(wire_frame, reader_allocates_nothing_after_init)
{
#if defined(__SANITIZE_ADDRESS__)
	cr_skip_test("ASan's allocator keeps no mallinfo");
#else
	struct wire_reader r;
	union sbx_req_any out;
	size_t cap, outlen = 0, before;
	char err[WIRE_ERR_MAX], *space;
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", two_svcs, 2);
	cr_assert_eq(wire_reader_init(&r), 0);
	before = mallinfo2().uordblks;
	space = wire_reader_space(&r, &cap);
	cr_assert_geq(cap, b.sb.size);
	memcpy(space, b.sb.data, b.sb.size);
	cr_assert_eq(wire_reader_feed(&r, b.sb.size, &out, &outlen, err),
	    WIRE_OK, "%s", err);
	cr_assert_eq(mallinfo2().uordblks, before,
	    "a request allocated %zu bytes", mallinfo2().uordblks - before);
	cr_assert_str_eq(out.sandbox.services[1], "redis");
	wire_reader_free(&r);
	buf_free(&b);
#endif
}

/* {"op":"ping","pad":<str32 of padlen>} is 18 + padlen bytes. */
static void
padded_ping(struct buf *b, size_t padlen)
{
	char *pad = malloc(padlen);

	cr_assert_not_null(pad);
	memset(pad, 'x', padlen);
	buf_init(b);
	msgpack_pack_map(&b->pk, 2);
	p_kv(b, "op", "ping");
	p_str(b, "pad");
	/* force str32 so the size is exact whatever padlen is */
	msgpack_sbuffer_write(&b->sb, "\xdb", 1);
	{
		unsigned char be[4] = { (unsigned char)(padlen >> 24),
		    (unsigned char)(padlen >> 16), (unsigned char)(padlen >> 8),
		    (unsigned char)padlen };

		msgpack_sbuffer_write(&b->sb, (const char *)be, 4);
	}
	msgpack_sbuffer_write(&b->sb, pad, padlen);
	free(pad);
}

Test(wire_frame, larger_than_64k_is_bad)
{
	struct buf b;

	padded_ping(&b, 70000);
	expect_bad_msg(&b, "64 KiB", "70018-byte request");
	padded_ping(&b, WIRE_MAX_REQUEST - 18 + 1);
	cr_assert_eq(b.sb.size, WIRE_MAX_REQUEST + 1);
	expect_bad_msg(&b, "64 KiB", "64 KiB + 1");
	padded_ping(&b, 1u << 20);
	expect_bad_msg(&b, "64 KiB", "1 MiB request");
}

Test(wire_frame, exactly_64k_is_ok)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	padded_ping(&b, WIRE_MAX_REQUEST - 18);
	cr_assert_eq(b.sb.size, WIRE_MAX_REQUEST);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.hdr.type, SBX_REQ_PING);
	buf_free(&b);
}

/* Nesting inside an ignored key: {"op":"ping","x":<depth x 0x91>0} */
static void
nested(struct buf *b, size_t depth, unsigned char opener, size_t opener_len)
{
	static const unsigned char map_open[] = { 0x81, 0xa0 };	/* {"": */
	size_t i;

	buf_init(b);
	msgpack_pack_map(&b->pk, 2);
	p_kv(b, "op", "ping");
	p_str(b, "x");
	for (i = 0; i < depth; i++)
		msgpack_sbuffer_write(&b->sb, opener_len == 1 ?
		    (const char *)&opener : (const char *)map_open, opener_len);
	msgpack_pack_int(&b->pk, 0);
}

Test(wire_frame, deeply_nested_arrays_are_bad)
{
	struct buf b;

	nested(&b, 100000, 0x91, 1);
	cr_assert_gt(b.sb.size, 100000);
	expect_bad_buf(&b, "100 000 nested arrays");
	/* and well below the size limit, so it is the depth that is refused
	 * (msgpack-c reports its stack limit as NOMEM_ERROR) */
	nested(&b, 1000, 0x91, 1);
	expect_bad_not_size(&b, "1000 nested arrays");
	nested(&b, 33, 0x91, 1);
	expect_bad_not_size(&b, "33 nested arrays");
	nested(&b, 1000, 0xdc, 1);	/* array16 with no length: still bad */
	expect_bad_buf(&b, "array16 headers");
}

Test(wire_frame, deeply_nested_maps_are_bad)
{
	struct buf b;

	nested(&b, 100000, 0, 2);
	expect_bad_buf(&b, "100 000 nested maps");
	nested(&b, 1000, 0, 2);
	expect_bad_not_size(&b, "1000 nested maps");
}

Test(wire_frame, moderate_nesting_in_ignored_key_is_ok)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	nested(&b, 16, 0x91, 1);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.hdr.type, SBX_REQ_PING);
	buf_free(&b);
}

/* Mirror the broker child's address-space limit (child.c, limit_self). */
static void
child_as_limit(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	struct rlimit rl;
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	unsigned long vm_kb = 0;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmSize: %lu kB", &vm_kb) == 1)
			break;
	fclose(f);
	/* what the test process already maps plus the child's 256 MiB */
	rl.rlim_cur = rl.rlim_max = (vm_kb << 10) + (256ul << 20);
	cr_assert_eq(setrlimit(RLIMIT_AS, &rl), 0);
#endif
}

Test(wire_frame, header_claiming_2_32_minus_1_elements)
{
	static const unsigned char arr[] = { 0xdd, 0xff, 0xff, 0xff, 0xff };
	static const unsigned char map[] = { 0xdf, 0xff, 0xff, 0xff, 0xff };
	/* {"op":"ping","x":[2^32-1 ...]} */
	static const unsigned char inner[] = { 0x82, 0xa2, 'o', 'p', 0xa4,
	    'p', 'i', 'n', 'g', 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff };
	/* the top-level map claims 2^32-1 pairs and has one */
	static const unsigned char outer[] = { 0xdf, 0xff, 0xff, 0xff, 0xff,
	    0xa2, 'o', 'p', 0xa4, 'p', 'i', 'n', 'g' };

	child_as_limit();
	expect_bad(arr, sizeof(arr), "array32 of 2^32-1");
	expect_bad(map, sizeof(map), "map32 of 2^32-1");
	expect_bad(inner, sizeof(inner), "array32 of 2^32-1 under x");
	expect_bad(outer, sizeof(outer), "map32 of 2^32-1 pairs, 1 present");
}

/* A string claiming 2^32-1 bytes allocates nothing; it is the 64 KiB
 * budget that ends it. */
Test(wire_frame, string_claiming_4_gib_hits_the_size_limit)
{
	static const unsigned char head[] = { 0x82, 0xa2, 'o', 'p', 0xa4,
	    'p', 'i', 'n', 'g', 0xa1, 'x', 0xdb, 0xff, 0xff, 0xff, 0xff };
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX], *in;
	size_t len = 2 * WIRE_MAX_REQUEST;

	cr_assert_eq(decode(head, sizeof(head), &out, &outlen, err), WIRE_MORE);
	in = calloc(1, len);
	cr_assert_not_null(in);
	memcpy(in, head, sizeof(head));
	cr_assert_eq(decode(in, len, &out, &outlen, err), WIRE_BAD);
	cr_assert_not_null(strstr(err, "64 KiB"), "%s", err);
	free(in);
}

Test(wire_frame, reserved_byte_c1_is_bad)
{
	static const unsigned char lone[] = { 0xc1 };
	static const unsigned char first[] = { 0xc1, 0x81, 0xa2, 'o', 'p',
	    0xa4, 'p', 'i', 'n', 'g' };
	/* {"op": 0xc1} */
	static const unsigned char asval[] = { 0x81, 0xa2, 'o', 'p', 0xc1 };
	/* {"op":"ping", 0xc1 ...} inside the map */
	static const unsigned char askey[] = { 0x82, 0xa2, 'o', 'p', 0xa4,
	    'p', 'i', 'n', 'g', 0xc1, 0x00 };

	expect_bad(lone, sizeof(lone), "0xc1");
	expect_bad(first, sizeof(first), "0xc1 then a valid map");
	expect_bad(asval, sizeof(asval), "op: 0xc1");
	expect_bad(askey, sizeof(askey), "0xc1 as a key");
}

Test(wire_frame, unknown_keys_are_ignored)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 5);
	p_str(&b, "trace_id");
	msgpack_pack_uint32(&b.pk, 42);
	p_kv(&b, "op", "release");
	p_str(&b, "extra");
	msgpack_pack_array(&b.pk, 3);
	msgpack_pack_nil(&b.pk);
	msgpack_pack_map(&b.pk, 0);
	msgpack_pack_bin(&b.pk, 1);
	msgpack_pack_bin_body(&b.pk, "\xc1", 1);
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "Agent", "NOT A SLUG");	/* another key: ignored */
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.hdr.type, SBX_REQ_RELEASE);
	cr_assert_str_eq(out.release.agent, "dev-1");
	cr_assert_eq(outlen, sizeof(struct sbx_req_release));
	buf_free(&b);
}

Test(wire_frame, trailing_bytes_are_ignored)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "available");
	p_kv(&b, "project", "roboco-api");
	msgpack_sbuffer_write(&b.sb, "\xc1\xc1\xff garbage", 11);
	msgpack_pack_map(&b.pk, 1);	/* and a second request */
	p_kv(&b, "op", "status");
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.hdr.type, SBX_REQ_AVAILABLE);
	cr_assert_str_eq(out.available.project, "roboco-api");
	buf_free(&b);
}

/* ---- every valid op into its exact struct ------------------------------ */

static void
expect_exact(struct buf *b, const union sbx_req_any *want, size_t wantlen)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];

	cr_assert_eq(decode_buf(b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(outlen, wantlen, "outlen %zu, want %zu", outlen, wantlen);
	cr_assert_eq(out.hdr.magic, SBX_MSG_MAGIC);
	cr_assert_eq(out.hdr.type, want->hdr.type);
	/* the whole union: no byte of a previous message or of 0xa5 left */
	cr_assert_eq(memcmp(&out, want, sizeof(out)), 0,
	    "decoded message differs from the expected struct");
	buf_free(b);
}

static void
want_init(union sbx_req_any *w, enum sbx_req_type type)
{
	memset(w, 0, sizeof(*w));
	w->hdr.magic = SBX_MSG_MAGIC;
	w->hdr.type = type;
}

Test(wire_valid, ping)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_PING);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "ping");
	expect_exact(&b, &w, sizeof(struct sbx_req_ping));
}

Test(wire_valid, available)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_AVAILABLE);
	strcpy(w.available.project, "roboco-api");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "project", "roboco-api");
	p_kv(&b, "op", "available");
	expect_exact(&b, &w, sizeof(struct sbx_req_available));
}

Test(wire_valid, request_sandbox)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_SANDBOX);
	strcpy(w.sandbox.agent, "dev-1");
	strcpy(w.sandbox.project, "roboco-api");
	w.sandbox.nservices = 2;
	strcpy(w.sandbox.services[0], "postgres");
	strcpy(w.sandbox.services[1], "redis");
	buf_init(&b);
	p_sandbox(&b, "dev-1", "roboco-api", two_svcs, 2);
	expect_exact(&b, &w, sizeof(struct sbx_req_sandbox));
}

Test(wire_valid, release)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_RELEASE);
	strcpy(w.release.agent, "dev-1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "release");
	p_kv(&b, "agent", "dev-1");
	expect_exact(&b, &w, sizeof(struct sbx_req_release));
}

Test(wire_valid, status)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_STATUS);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "status");
	expect_exact(&b, &w, sizeof(struct sbx_req_status));
}

/* A long field decoded before a short one leaves no tail behind. */
Test(wire_valid, fields_are_zero_padded)
{
	union sbx_req_any out;
	size_t outlen, i;
	char err[WIRE_ERR_MAX];
	struct buf b;

	buf_init(&b);
	p_sandbox(&b, "a", "b", (const char *const[]){ "c" }, 1);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	for (i = 1; i < SBX_SLUG_MAX; i++) {
		cr_assert_eq(out.sandbox.agent[i], 0);
		cr_assert_eq(out.sandbox.project[i], 0);
		cr_assert_eq(out.sandbox.services[0][i], 0);
	}
	for (i = 1; i < SBX_MAX_SERVICES; i++)
		cr_assert_eq(out.sandbox.services[i][0], 0);
	buf_free(&b);
}

/* ---- replies ---------------------------------------------------------- */

struct reply {
	msgpack_sbuffer	sb;
	msgpack_unpacked up;
};

static void
reply_unpack(struct reply *r)
{
	size_t off = 0;

	msgpack_unpacked_init(&r->up);
	cr_assert_eq(msgpack_unpack_next(&r->up, r->sb.data, r->sb.size, &off),
	    MSGPACK_UNPACK_SUCCESS);
	cr_assert_eq(off, r->sb.size, "bytes after the reply map");
	cr_assert_eq(r->up.data.type, MSGPACK_OBJECT_MAP);
}

static void
reply_answer(struct reply *r, const struct sbx_ans *a,
    const struct sbx_status_rec *recs, size_t nrecs)
{
	char *buf;
	size_t len;

	cr_assert_eq(answer_pack(a, recs, nrecs, &buf, &len), 0);
	msgpack_sbuffer_init(&r->sb);
	r->sb.data = buf;
	r->sb.size = r->sb.alloc = len;
	reply_unpack(r);
}

static void
reply_free(struct reply *r)
{
	msgpack_unpacked_destroy(&r->up);
	msgpack_sbuffer_destroy(&r->sb);
}

static bool
obj_is(const msgpack_object *o, const char *s)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(s) &&
	    memcmp(o->via.str.ptr, s, o->via.str.size) == 0;
}

static const msgpack_object *
get(const msgpack_object *m, const char *key)
{
	uint32_t i;

	cr_assert_eq(m->type, MSGPACK_OBJECT_MAP, "looking up %s in a non-map",
	    key);
	for (i = 0; i < m->via.map.size; i++) {
		cr_assert_eq(m->via.map.ptr[i].key.type, MSGPACK_OBJECT_STR);
		if (obj_is(&m->via.map.ptr[i].key, key))
			return &m->via.map.ptr[i].val;
	}
	cr_assert_fail("no key '%s' in the reply", key);
	return NULL;
}

static void
expect_str(const msgpack_object *m, const char *key, const char *want)
{
	const msgpack_object *v = get(m, key);

	cr_assert_eq(v->type, MSGPACK_OBJECT_STR, "'%s' is not a string", key);
	cr_assert(obj_is(v, want), "'%s' is '%.*s', want '%s'", key,
	    (int)v->via.str.size, v->via.str.ptr, want);
}

static void
expect_uint(const msgpack_object *m, const char *key, uint64_t want)
{
	const msgpack_object *v = get(m, key);

	cr_assert_eq(v->type, MSGPACK_OBJECT_POSITIVE_INTEGER,
	    "'%s' is not a positive integer (type %d)", key, v->type);
	cr_assert_eq(v->via.u64, want, "'%s' is %llu, want %llu", key,
	    (unsigned long long)v->via.u64, (unsigned long long)want);
}

static void
expect_bool(const msgpack_object *m, const char *key, bool want)
{
	const msgpack_object *v = get(m, key);

	cr_assert_eq(v->type, MSGPACK_OBJECT_BOOLEAN, "'%s' is not a bool", key);
	cr_assert_eq(v->via.boolean, want, "'%s' is %d", key, v->via.boolean);
}

static void expect_no_key(const msgpack_object *, const char *);

static void
ans_init(struct sbx_ans *a, enum sbx_req_type type, enum sbx_code code)
{
	memset(a, 0, sizeof(*a));
	a->type = type;
	a->code = code;
	strcpy(a->message, code == SBX_OK ? "ok" : "try again later.");
}

/* Does the tree under o contain a map key "password"? */
static bool
has_key(const msgpack_object *o, const char *key)
{
	uint32_t i;

	switch (o->type) {
	case MSGPACK_OBJECT_MAP:
		for (i = 0; i < o->via.map.size; i++)
			if (obj_is(&o->via.map.ptr[i].key, key) ||
			    has_key(&o->via.map.ptr[i].key, key) ||
			    has_key(&o->via.map.ptr[i].val, key))
				return true;
		return false;
	case MSGPACK_OBJECT_ARRAY:
		for (i = 0; i < o->via.array.size; i++)
			if (has_key(&o->via.array.ptr[i], key))
				return true;
		return false;
	default:
		return false;
	}
}

Test(wire_reply, error_shape)
{
	struct sbx_ans a;
	struct reply r;

	ans_init(&a, SBX_REQ_SANDBOX, SBX_E_BUSY);
	/* an error must not carry what the struct happens to hold */
	a.nservices = 1;
	strcpy(a.services[0].name, "postgres");
	strcpy(a.services[0].password, "0123456789abcdef0123456789abcdef");
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 3);
	expect_bool(&r.up.data, "ok", false);
	expect_str(&r.up.data, "error", "busy");
	expect_str(&r.up.data, "message", "try again later.");
	cr_assert_null(memmem(r.sb.data, r.sb.size, "0123456789abcdef", 16));
	reply_free(&r);
}

Test(wire_reply, pack_error_every_code)
{
	static const char *const names[SBX_CODE_MAX] = {
		[SBX_E_BAD_REQUEST] = "bad_request",
		[SBX_E_DISABLED] = "disabled",
		[SBX_E_UNKNOWN_PROJECT] = "unknown_project",
		[SBX_E_NOT_OPTED_IN] = "not_opted_in",
		[SBX_E_FORBIDDEN] = "forbidden",
		[SBX_E_CONFLICT] = "conflict",
		[SBX_E_RUNTIME_FAILED] = "runtime_failed",
		[SBX_E_TIMEOUT] = "timeout",
		[SBX_E_BUSY] = "busy",
		[SBX_E_INTERNAL] = "internal",
		[SBX_E_NO_SANDBOX] = "no_sandbox",
		[SBX_E_UNKNOWN_SNAPSHOT] = "unknown_snapshot",
		[SBX_E_SEED_FAILED] = "seed_failed",
	};
	struct reply r;
	msgpack_packer pk;
	int code;

	for (code = SBX_E_BAD_REQUEST; code < SBX_CODE_MAX; code++) {
		msgpack_sbuffer_init(&r.sb);
		msgpack_packer_init(&pk, &r.sb, msgpack_sbuffer_write);
		pack_error(&pk, (enum sbx_code)code, "why it failed.");
		reply_unpack(&r);
		cr_assert_eq(r.up.data.via.map.size, 3);
		expect_bool(&r.up.data, "ok", false);
		expect_str(&r.up.data, "error", names[code]);
		expect_str(&r.up.data, "message", "why it failed.");
		reply_free(&r);
	}
	/* out of range: still a contract error name */
	msgpack_sbuffer_init(&r.sb);
	msgpack_packer_init(&pk, &r.sb, msgpack_sbuffer_write);
	pack_error(&pk, (enum sbx_code)999, "x");
	reply_unpack(&r);
	expect_str(&r.up.data, "error", "internal");
	reply_free(&r);
}

/* A busy answer with a hint carries it as retry_after_ms; one without
 * (an error of another code) has no such key. */
Test(wire_reply, busy_carries_retry_after_ms)
{
	struct sbx_ans a;
	struct reply r;

	ans_init(&a, SBX_REQ_SANDBOX, SBX_E_BUSY);
	a.retry_after_ms = 2000;
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 4);
	expect_bool(&r.up.data, "ok", false);
	expect_str(&r.up.data, "error", "busy");
	expect_str(&r.up.data, "message", "try again later.");
	expect_uint(&r.up.data, "retry_after_ms", 2000);
	reply_free(&r);

	ans_init(&a, SBX_REQ_SANDBOX, SBX_E_CONFLICT);
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 3);
	expect_no_key(&r.up.data, "retry_after_ms");
	reply_free(&r);
}

/* The broker's own busy replies (broker/busy.h), written by hand: each a
 * whole map, its message naming the limit, its hint the documented one. */
static void
expect_broker_busy(const char *bytes, size_t len, const char *names,
    uint64_t retry_ms)
{
	struct reply r;
	const msgpack_object *m;

	msgpack_sbuffer_init(&r.sb);
	msgpack_sbuffer_write(&r.sb, bytes, len);
	reply_unpack(&r);
	cr_assert_eq(r.up.data.via.map.size, 4);
	expect_bool(&r.up.data, "ok", false);
	expect_str(&r.up.data, "error", "busy");
	m = get(&r.up.data, "message");
	cr_assert_eq(m->type, MSGPACK_OBJECT_STR);
	cr_assert_not_null(memmem(m->via.str.ptr, m->via.str.size, names,
	    strlen(names)), "the message names %s", names);
	expect_uint(&r.up.data, "retry_after_ms", retry_ms);
	reply_free(&r);
}

Test(wire_reply, broker_busy_replies)
{
	expect_broker_busy(busy_uid_reply, sizeof(busy_uid_reply) - 1,
	    "for your uid", 200);
	expect_broker_busy(busy_all_reply, sizeof(busy_all_reply) - 1,
	    "too many connections", 500);
}

Test(wire_reply, ping_shape)
{
	struct sbx_ans a;
	struct reply r;

	ans_init(&a, SBX_REQ_PING, SBX_OK);
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 2);
	expect_bool(&r.up.data, "ok", true);
	expect_str(&r.up.data, "version", SBX_VERSION);
	reply_free(&r);
}

Test(wire_reply, available_shape)
{
	struct sbx_ans a;
	struct reply r;
	const msgpack_object *v;

	ans_init(&a, SBX_REQ_AVAILABLE, SBX_OK);
	a.nservices = 2;
	strcpy(a.services[0].name, "postgres");
	strcpy(a.services[1].name, "redis");
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 2);
	expect_bool(&r.up.data, "ok", true);
	v = get(&r.up.data, "services");
	cr_assert_eq(v->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(v->via.array.size, 2);
	cr_assert(obj_is(&v->via.array.ptr[0], "postgres"));
	cr_assert(obj_is(&v->via.array.ptr[1], "redis"));
	reply_free(&r);

	ans_init(&a, SBX_REQ_AVAILABLE, SBX_OK);
	reply_answer(&r, &a, NULL, 0);
	v = get(&r.up.data, "services");
	cr_assert_eq(v->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(v->via.array.size, 0, "no services: an empty array");
	reply_free(&r);
}

static void
expect_no_key(const msgpack_object *m, const char *key)
{
	uint32_t i;

	for (i = 0; i < m->via.map.size; i++)
		cr_assert_not(obj_is(&m->via.map.ptr[i].key, key),
		    "the service has a '%s' key", key);
}

static void
fill_conn(struct sbx_conn *c, const char *name, unsigned port,
    const char *pw)
{
	strcpy(c->name, name);
	strcpy(c->host, "127.0.0.1");
	c->port = port;
	snprintf(c->user, sizeof(c->user), "%s-user", name);
	strcpy(c->password, pw);
	snprintf(c->database, sizeof(c->database), "%s-db", name);
}

Test(wire_reply, request_sandbox_shape)
{
	static const char *const pw[2] = { "00112233445566778899aabbccddeeff",
	    "ffeeddccbbaa99887766554433221100" };
	struct sbx_ans a;
	struct reply r;
	const msgpack_object *svcs, *c;
	char user[SBX_SLUG_MAX], db[SBX_SLUG_MAX];
	int i;

	ans_init(&a, SBX_REQ_SANDBOX, SBX_OK);
	a.nservices = 2;
	fill_conn(&a.services[0], "postgres", 40001, pw[0]);
	fill_conn(&a.services[1], "redis", 40002, pw[1]);
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 2);
	expect_bool(&r.up.data, "ok", true);
	svcs = get(&r.up.data, "services");
	cr_assert_eq(svcs->type, MSGPACK_OBJECT_MAP, "services is a map");
	cr_assert_eq(svcs->via.map.size, 2);
	for (i = 0; i < 2; i++) {
		const char *name = a.services[i].name;

		c = get(svcs, name);
		cr_assert_eq(c->type, MSGPACK_OBJECT_MAP);
		cr_assert_eq(c->via.map.size, 5, "host,port,user,password,database");
		expect_no_key(c, "socket");
		snprintf(user, sizeof(user), "%s-user", name);
		snprintf(db, sizeof(db), "%s-db", name);
		expect_str(c, "host", "127.0.0.1");
		expect_uint(c, "port", 40001 + (unsigned)i);
		expect_str(c, "user", user);
		expect_str(c, "password", pw[i]);
		expect_str(c, "database", db);
	}
	reply_free(&r);
}

/*
 * One service packed alone, for the shapes of the transports: socket,
 * host and port are keys only where the struct holds them (docs/contract.md,
 * "Reaching a sandbox"); user, password and database always.
 */
static const msgpack_object *
conn_reply(struct reply *r, const struct sbx_conn *c)
{
	struct sbx_ans a;
	const msgpack_object *svcs;

	ans_init(&a, SBX_REQ_SANDBOX, SBX_OK);
	a.nservices = 1;
	a.services[0] = *c;
	reply_answer(r, &a, NULL, 0);
	expect_bool(&r->up.data, "ok", true);
	svcs = get(&r->up.data, "services");
	cr_assert_eq(svcs->type, MSGPACK_OBJECT_MAP);
	cr_assert_eq(svcs->via.map.size, 1);
	cr_assert(obj_is(&svcs->via.map.ptr[0].key, c->name));
	cr_assert_eq(svcs->via.map.ptr[0].val.type, MSGPACK_OBJECT_MAP);
	return &svcs->via.map.ptr[0].val;
}

static void
expect_creds(const msgpack_object *c, const char *user)
{
	expect_str(c, "user", user);
	expect_str(c, "password", "00112233445566778899aabbccddeeff");
	expect_str(c, "database", "db");
}

static void
conn_init(struct sbx_conn *c, const char *name, const char *user)
{
	memset(c, 0, sizeof(*c));
	strcpy(c->name, name);
	strcpy(c->user, user);
	strcpy(c->password, "00112233445566778899aabbccddeeff");
	strcpy(c->database, "db");
}

Test(wire_reply, conn_unix_postgres)
{
	struct sbx_conn c;
	struct reply r;
	const msgpack_object *v;

	conn_init(&c, "postgres", "sbx");
	strcpy(c.socket, "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	strcpy(c.host, "/run/sbx/1000/a1.postgres");
	c.port = 5432;
	v = conn_reply(&r, &c);
	cr_assert_eq(v->via.map.size, 6,
	    "socket,host,port,user,password,database");
	expect_str(v, "socket", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	expect_str(v, "host", "/run/sbx/1000/a1.postgres");
	expect_uint(v, "port", 5432);
	expect_creds(v, "sbx");
	reply_free(&r);
}

Test(wire_reply, conn_unix_redis)
{
	struct sbx_conn c;
	struct reply r;
	const msgpack_object *v;

	conn_init(&c, "redis", "default");
	strcpy(c.socket, "/run/sbx/1000/a1.redis/redis.sock");
	v = conn_reply(&r, &c);
	cr_assert_eq(v->via.map.size, 4, "socket,user,password,database");
	expect_str(v, "socket", "/run/sbx/1000/a1.redis/redis.sock");
	expect_no_key(v, "host");
	expect_no_key(v, "port");
	expect_creds(v, "default");
	reply_free(&r);
}

Test(wire_reply, conn_tcp)
{
	struct sbx_conn c;
	struct reply r;
	const msgpack_object *v;

	conn_init(&c, "redis", "default");
	strcpy(c.host, "127.0.0.1");
	c.port = 40124;
	v = conn_reply(&r, &c);
	cr_assert_eq(v->via.map.size, 5, "host,port,user,password,database");
	expect_no_key(v, "socket");
	expect_str(v, "host", "127.0.0.1");
	expect_uint(v, "port", 40124);
	expect_creds(v, "default");
	reply_free(&r);
}

Test(wire_reply, conn_both)
{
	struct sbx_conn c;
	struct reply r;
	const msgpack_object *v;

	conn_init(&c, "postgres", "sbx");
	strcpy(c.socket, "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	strcpy(c.host, "127.0.0.1");
	c.port = 40123;
	v = conn_reply(&r, &c);
	cr_assert_eq(v->via.map.size, 6,
	    "socket,host,port,user,password,database");
	expect_str(v, "socket", "/run/sbx/1000/a1.postgres/.s.PGSQL.5432");
	expect_str(v, "host", "127.0.0.1");
	expect_uint(v, "port", 40123);
	expect_creds(v, "sbx");
	reply_free(&r);
}

/* The longest socket the struct holds goes out whole. */
Test(wire_reply, conn_longest_socket)
{
	struct sbx_conn c;
	struct reply r;
	const msgpack_object *v;

	conn_init(&c, "redis", "default");
	memset(c.socket, 's', SBX_SOCKET_MAX - 1);
	c.socket[0] = '/';
	v = conn_reply(&r, &c);
	cr_assert_eq(v->via.map.size, 4);
	expect_str(v, "socket", c.socket);
	reply_free(&r);
}

Test(wire_reply, release_shape)
{
	struct sbx_ans a;
	struct reply r;

	ans_init(&a, SBX_REQ_RELEASE, SBX_OK);
	a.released = 1;
	reply_answer(&r, &a, NULL, 0);
	cr_assert_eq(r.up.data.via.map.size, 2);
	expect_bool(&r.up.data, "ok", true);
	expect_bool(&r.up.data, "released", true);
	reply_free(&r);

	a.released = 0;
	reply_answer(&r, &a, NULL, 0);
	expect_bool(&r.up.data, "released", false);
	reply_free(&r);
}

Test(wire_reply, status_shape_and_no_password)
{
	static const char pw[] = "5ec7e75ec7e75ec7e75ec7e75ec7e7aa";
	struct sbx_status_rec recs[2];
	struct sbx_ans a;
	struct reply r;
	const msgpack_object *sbs, *s, *sv;
	uint32_t i;

	ans_init(&a, SBX_REQ_STATUS, SBX_OK);
	/* whatever is in the struct's services, status must not show it */
	fill_conn(&a.services[0], "postgres", 1, pw);
	a.nservices = 1;	/* status: the warm pool's service names */
	a.warm[0] = 3;
	a.nstatus = 2;
	memset(recs, 0, sizeof(recs));
	recs[0].uid = 1000;
	strcpy(recs[0].agent, "dev-1");
	strcpy(recs[0].project, "roboco-api");
	recs[0].nservices = 1;
	strcpy(recs[0].services[0], "postgres");
	recs[0].age_s = 120;
	recs[0].idle_s = 7;
	recs[1].uid = 4000000000u;
	strcpy(recs[1].agent, "dev-2");
	strcpy(recs[1].project, "both");
	recs[1].nservices = 2;
	strcpy(recs[1].services[0], "postgres");
	strcpy(recs[1].services[1], "redis");
	recs[1].age_s = UINT64_MAX;
	recs[1].idle_s = 0;
	reply_answer(&r, &a, recs, 2);

	cr_assert_eq(r.up.data.via.map.size, 3, "ok, sandboxes, warm");
	expect_bool(&r.up.data, "ok", true);
	sv = get(&r.up.data, "warm");
	cr_assert_eq(sv->type, MSGPACK_OBJECT_MAP);
	cr_assert_eq(sv->via.map.size, 1);
	expect_uint(sv, "postgres", 3);
	sbs = get(&r.up.data, "sandboxes");
	cr_assert_eq(sbs->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(sbs->via.array.size, 2);
	for (i = 0; i < 2; i++) {
		s = &sbs->via.array.ptr[i];
		cr_assert_eq(s->type, MSGPACK_OBJECT_MAP);
		cr_assert_eq(s->via.map.size, 6,
		    "uid,agent,project,services,age_s,idle_s");
		expect_uint(s, "uid", recs[i].uid);
		expect_str(s, "agent", recs[i].agent);
		expect_str(s, "project", recs[i].project);
		expect_uint(s, "age_s", recs[i].age_s);
		expect_uint(s, "idle_s", recs[i].idle_s);
		sv = get(s, "services");
		cr_assert_eq(sv->type, MSGPACK_OBJECT_ARRAY);
		cr_assert_eq(sv->via.array.size, recs[i].nservices);
		cr_assert(obj_is(&sv->via.array.ptr[0], "postgres"));
	}
	cr_assert(obj_is(&sbs->via.array.ptr[1].via.map.ptr[0].key, "uid"));
	cr_assert_not(has_key(&r.up.data, "password"),
	    "status has a 'password' key");
	cr_assert_null(memmem(r.sb.data, r.sb.size, "password", 8));
	cr_assert_null(memmem(r.sb.data, r.sb.size, pw, strlen(pw)));
	reply_free(&r);
}

Test(wire_reply, status_empty)
{
	struct sbx_ans a;
	struct reply r;
	const msgpack_object *sbs;

	ans_init(&a, SBX_REQ_STATUS, SBX_OK);
	reply_answer(&r, &a, NULL, 0);
	sbs = get(&r.up.data, "sandboxes");
	cr_assert_eq(sbs->type, MSGPACK_OBJECT_ARRAY);
	cr_assert_eq(sbs->via.array.size, 0);
	reply_free(&r);
}

/* bind_pid: absent is 0; a pid is taken; anything else is bad_request. */
static void
p_sandbox_bind(struct buf *b, void (*val)(struct buf *, long long),
    long long v)
{
	msgpack_pack_map(&b->pk, 5);
	p_kv(b, "op", "request_sandbox");
	p_kv(b, "agent", "a1");
	p_kv(b, "project", "demo");
	p_str(b, "services");
	p_strs(b, two_svcs, 2);
	p_str(b, "bind_pid");
	val(b, v);
}

static void
v_int(struct buf *b, long long v)
{
	msgpack_pack_int64(&b->pk, v);
}

static void
v_str(struct buf *b, long long v)
{
	(void)v;
	p_str(b, "1234");
}

Test(wire_bind, a_pid_is_taken_and_absent_is_zero)
{
	union sbx_req_any out;
	size_t outlen;
	char err[WIRE_ERR_MAX];
	struct buf b;

	buf_init(&b);
	p_sandbox_bind(&b, v_int, 4242);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.sandbox.bind_pid, 4242);
	buf_free(&b);
	buf_init(&b);
	p_sandbox(&b, "a1", "demo", two_svcs, 2);
	cr_assert_eq(decode_buf(&b, &out, &outlen, err), WIRE_OK, "%s", err);
	cr_assert_eq(out.sandbox.bind_pid, 0, "no bind_pid: bound to nothing");
	buf_free(&b);
}

Test(wire_bind, anything_but_a_pid_is_refused)
{
	struct buf b;

	buf_init(&b);
	p_sandbox_bind(&b, v_int, 0);
	expect_bad_buf(&b, "bind_pid 0");
	buf_init(&b);
	p_sandbox_bind(&b, v_int, -5);
	expect_bad_buf(&b, "a negative bind_pid");
	buf_init(&b);
	p_sandbox_bind(&b, v_int, 1LL << 40);
	expect_bad_buf(&b, "a bind_pid past 2^31");
	buf_init(&b);
	p_sandbox_bind(&b, v_str, 0);
	expect_bad_buf(&b, "a bind_pid that is a string");
}

/* ---- reset and snapshot ----------------------------------------------- */

Test(wire_valid, reset)
{
	union sbx_req_any w;
	struct buf b;

	/* no to: back to the state at hand-out, to is all zero */
	want_init(&w, SBX_REQ_RESET);
	strcpy(w.reset.agent, "dev-1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	expect_exact(&b, &w, sizeof(struct sbx_req_reset));
}

Test(wire_valid, reset_to)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_RESET);
	strcpy(w.reset.agent, "dev-1");
	strcpy(w.reset.to, "before-migration");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "to", "before-migration");
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	expect_exact(&b, &w, sizeof(struct sbx_req_reset));
}

Test(wire_valid, snapshot)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_SNAPSHOT);
	strcpy(w.snapshot.agent, "dev-1");
	strcpy(w.snapshot.name, "s1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "name", "s1");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "op", "snapshot");
	expect_exact(&b, &w, sizeof(struct sbx_req_snapshot));
}

/* The longest names fill their arrays but for the NUL; short ones after
 * long ones leave no tail. */
Test(wire_valid, reset_snapshot_longest_names)
{
	union sbx_req_any w;
	char s63[64];
	struct buf b;

	memset(s63, 'z', 63);
	s63[63] = '\0';
	want_init(&w, SBX_REQ_SNAPSHOT);
	strcpy(w.snapshot.agent, s63);
	strcpy(w.snapshot.name, "0.a_b-c");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", s63);
	p_kv(&b, "name", "0.a_b-c");
	expect_exact(&b, &w, sizeof(struct sbx_req_snapshot));

	want_init(&w, SBX_REQ_RESET);
	strcpy(w.reset.agent, "a");
	strcpy(w.reset.to, s63);
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "a");
	p_kv(&b, "to", s63);
	expect_exact(&b, &w, sizeof(struct sbx_req_reset));
}

/* Keys of the other ops, and keys of none, are ignored: snapshot's name
 * on a reset does not make it go to a snapshot, reset's to on a snapshot
 * is not its name, whatever their values. */
Test(wire_keys, reset_snapshot_ignore_others_keys)
{
	union sbx_req_any w;
	struct buf b;

	want_init(&w, SBX_REQ_RESET);
	strcpy(w.reset.agent, "dev-1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 5);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	p_str(&b, "project");
	msgpack_pack_int(&b.pk, 3);
	p_kv(&b, "To", "NOT A SLUG");
	expect_exact(&b, &w, sizeof(struct sbx_req_reset));

	want_init(&w, SBX_REQ_SNAPSHOT);
	strcpy(w.snapshot.agent, "dev-1");
	strcpy(w.snapshot.name, "s1");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 5);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	p_str(&b, "to");
	msgpack_pack_nil(&b.pk);
	p_str(&b, "services");
	p_strs(&b, two_svcs, 2);
	expect_exact(&b, &w, sizeof(struct sbx_req_snapshot));
}

Test(wire_keys, reset_snapshot_missing_fields)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "reset");
	expect_bad_msg(&b, "the request needs 'agent'", "reset alone");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "reset");
	p_kv(&b, "to", "s1");
	expect_bad_msg(&b, "the request needs 'agent'", "reset without agent");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "name", "s1");
	expect_bad_msg(&b, "the request needs 'agent'",
	    "snapshot without agent");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	expect_bad_msg(&b, "the request needs 'name'", "snapshot without name");

	/* reset's to is not snapshot's name */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "to", "s1");
	expect_bad_msg(&b, "the request needs 'name'", "snapshot with to");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 1);
	p_kv(&b, "op", "snapshot");
	expect_bad_msg(&b, "'agent'", "snapshot alone");
}

/* Values of the wrong type: one sentence naming the key. A nil to is a
 * wrong type too, not an absent one. */
Test(wire_keys, reset_snapshot_wrong_types)
{
	struct buf b;
	int kind;

	for (kind = 0; kind < 6; kind++) {
		buf_init(&b);
		msgpack_pack_map(&b.pk, 3);
		p_kv(&b, "op", "reset");
		p_kv(&b, "agent", "dev-1");
		p_str(&b, "to");
		switch (kind) {
		case 0: msgpack_pack_int(&b.pk, 1); break;
		case 1: msgpack_pack_nil(&b.pk); break;
		case 2: msgpack_pack_true(&b.pk); break;
		case 3: p_strs(&b, (const char *const[]){ "s1" }, 1); break;
		case 4:
			msgpack_pack_bin(&b.pk, 2);
			msgpack_pack_bin_body(&b.pk, "s1", 2);
			break;
		default:
			msgpack_pack_map(&b.pk, 1);
			p_kv(&b, "name", "s1");
			break;
		}
		expect_bad_msg(&b, "'to' must be a string", "to of a wrong type");
	}
	for (kind = 0; kind < 3; kind++) {
		buf_init(&b);
		msgpack_pack_map(&b.pk, 3);
		p_kv(&b, "op", "snapshot");
		p_kv(&b, "agent", "dev-1");
		p_str(&b, "name");
		if (kind == 0)
			msgpack_pack_uint64(&b.pk, 7);
		else if (kind == 1)
			msgpack_pack_nil(&b.pk);
		else
			msgpack_pack_double(&b.pk, 1.5);
		expect_bad_msg(&b, "'name' must be a string",
		    "name of a wrong type");
	}
	buf_init(&b);
	msgpack_pack_map(&b.pk, 2);
	p_kv(&b, "op", "reset");
	p_str(&b, "agent");
	msgpack_pack_int(&b.pk, -1);
	expect_bad_msg(&b, "'agent' must be a string", "reset agent=-1");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_str(&b, "agent");
	msgpack_pack_nil(&b.pk);
	p_kv(&b, "name", "s1");
	expect_bad_msg(&b, "'agent' must be a string", "snapshot agent=nil");
}

/* "" is no snapshot's name: the hand-out state is asked for by leaving
 * to out, not by an empty one. */
Test(wire_keys, reset_to_empty_is_bad)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "to", "");
	expect_bad_msg(&b, "'to' must be", "to=\"\"");
	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "");
	expect_bad_msg(&b, "'name' must be", "name=\"\"");
}

/* Each key at most once, whatever the second one holds. */
Test(wire_keys, reset_snapshot_duplicate_keys)
{
	struct buf b;

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "to", "s1");
	p_kv(&b, "to", "s1");
	expect_bad_msg(&b, "twice", "to twice, same value");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "reset");
	p_kv(&b, "to", "s1");
	p_kv(&b, "agent", "dev-1");
	p_str(&b, "to");
	msgpack_pack_nil(&b.pk);
	expect_bad_msg(&b, "twice", "to twice, then nil");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 3);
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "agent", "dev-2");
	expect_bad_msg(&b, "twice", "reset agent twice");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	p_kv(&b, "name", "s2");
	expect_bad_msg(&b, "twice", "name twice");

	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	expect_bad_msg(&b, "twice", "snapshot agent twice");

	/* the op twice: a snapshot that is also a reset */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "snapshot");
	p_kv(&b, "op", "reset");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	expect_bad_msg(&b, "twice", "op snapshot then reset");

	/* a key of another op twice is still a key twice */
	buf_init(&b);
	msgpack_pack_map(&b.pk, 4);
	p_kv(&b, "op", "release");
	p_kv(&b, "agent", "dev-1");
	p_kv(&b, "name", "s1");
	p_kv(&b, "name", "s2");
	expect_bad_msg(&b, "twice", "release with name twice");
}

/* The ops' names are exact. */
Test(wire_keys, reset_snapshot_op_names_are_exact)
{
	static const char *const ops[] = { "Reset", "reset ", "resets",
	    "snap", "snapshots", "SNAPSHOT", "take_snapshot" };
	struct buf b;
	size_t i;

	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		buf_init(&b);
		msgpack_pack_map(&b.pk, 3);
		p_kv(&b, "op", ops[i]);
		p_kv(&b, "agent", "dev-1");
		p_kv(&b, "name", "s1");
		expect_bad_msg(&b, "unknown 'op'", ops[i]);
	}
}
