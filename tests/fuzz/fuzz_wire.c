/*
 * fuzz_wire.c - libFuzzer harness for the broker child's request path.
 *
 * Input: one byte that picks how the bytes are cut into read()s, then the
 * bytes an agent would send. The harness walks them through the same
 * wire_reader_space / wire_reader_feed loop as read_request() in
 * broker/child.c, and then checks what the child relies on:
 *
 *  - chunking never changes the verdict: the chunked reader and the
 *    whole-buffer wire_decode agree on status, reason and message;
 *  - an accepted request is exactly what the monitor accepts: the right
 *    size for its type, every slug NUL-padded and of the contract's
 *    syntax (checked here independently of slug.c), services unique and
 *    nothing past nservices;
 *  - a refusal has a one-line reason that fits the answer's message;
 *  - the reply the agent would get (the monitor's answer_pack for an
 *    accepted request, the child's pack_error for a refused one) decodes
 *    back with msgpack-c, and a sandbox answer's services carry socket,
 *    host and port exactly where the struct has them, each transport's
 *    shape in turn.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#include "answer.h"
#include "msg.h"
#include "pack.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Same cap as tests/unit/test_wire.c: the child's 256 MiB RLIMIT_AS in
 * ASan's terms, so a header claiming 2^32-1 elements fails to allocate
 * (as in production) instead of being reported as an OOM. */
const char *__asan_default_options(void);
const char *
__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=256";
}

#define SMALL_CUTS_MAX	8192
#define SLUG_HEAD	"abcdefghijklmnopqrstuvwxyz0123456789"
#define SLUG_TAIL	SLUG_HEAD "._-"

/* The contract's slug, written differently from shared/slug.c on purpose. */
static int
slug_ok(const char *f, size_t size)
{
	size_t len = strnlen(f, size), i;

	if (len == 0 || len == size || strchr(SLUG_HEAD, f[0]) == NULL)
		return 0;
	if (strspn(f, SLUG_TAIL) != len)
		return 0;
	for (i = len; i < size; i++)
		if (f[i] != '\0')
			return 0;
	return 1;
}

static size_t
type_size(uint32_t type)
{
	switch (type) {
	case SBX_REQ_PING:	return sizeof(struct sbx_req_ping);
	case SBX_REQ_AVAILABLE:	return sizeof(struct sbx_req_available);
	case SBX_REQ_SANDBOX:	return sizeof(struct sbx_req_sandbox);
	case SBX_REQ_RELEASE:	return sizeof(struct sbx_req_release);
	case SBX_REQ_STATUS:	return sizeof(struct sbx_req_status);
	case SBX_REQ_RESET:	return sizeof(struct sbx_req_reset);
	case SBX_REQ_SNAPSHOT:	return sizeof(struct sbx_req_snapshot);
	default:		return 0;
	}
}

static void
check_sandbox(const struct sbx_req_sandbox *r)
{
	static const char zero[SBX_SLUG_MAX];
	uint32_t i, j;

	assert(slug_ok(r->agent, sizeof(r->agent)));
	assert(slug_ok(r->project, sizeof(r->project)));
	assert(r->nservices <= SBX_MAX_SERVICES);
	for (i = 0; i < SBX_MAX_SERVICES; i++) {
		if (i >= r->nservices) {
			assert(memcmp(r->services[i], zero, sizeof(zero)) == 0);
			continue;
		}
		assert(slug_ok(r->services[i], SBX_SLUG_MAX));
		for (j = 0; j < i; j++)
			assert(strcmp(r->services[i], r->services[j]) != 0);
	}
}

static void
check_accepted(const union sbx_req_any *rq, size_t len)
{
	assert(rq->hdr.magic == SBX_MSG_MAGIC);
	assert(len != 0 && len == type_size(rq->hdr.type));
	switch (rq->hdr.type) {
	case SBX_REQ_AVAILABLE:
		assert(slug_ok(rq->available.project, SBX_SLUG_MAX));
		break;
	case SBX_REQ_SANDBOX:
		check_sandbox(&rq->sandbox);
		break;
	case SBX_REQ_RELEASE:
		assert(slug_ok(rq->release.agent, SBX_SLUG_MAX));
		break;
	case SBX_REQ_RESET:
		assert(slug_ok(rq->reset.agent, SBX_SLUG_MAX));
		/* to: a slug, or absent: all zero */
		assert(slug_ok(rq->reset.to, SBX_SLUG_MAX) ||
		    memcmp(rq->reset.to, (const char[SBX_SLUG_MAX]){ 0 },
		    SBX_SLUG_MAX) == 0);
		break;
	case SBX_REQ_SNAPSHOT:
		assert(slug_ok(rq->snapshot.agent, SBX_SLUG_MAX));
		assert(slug_ok(rq->snapshot.name, SBX_SLUG_MAX));
		break;
	default:
		break;
	}
}

/*
 * Cut sizes: 1 byte at a time, small odd pieces, or what read() gets.
 * Past the first few KiB small pieces only slow the fuzzer down: there
 * the reader takes what fits, as wire_decode does.
 */
static size_t
chunk_size(uint8_t mode, size_t i, size_t done)
{
	if (done >= SMALL_CUTS_MAX)
		return SIZE_MAX;
	switch (mode & 3) {
	case 0:
		return SIZE_MAX;
	case 1:
		return 1;
	case 2:
		return 1 + (mode ^ (i * 31)) % 7;
	default:
		return 1 + (mode * 131u + i * 977u) % 1500;
	}
}

/* read_request() of broker/child.c, with the socket replaced by buf. */
static enum wire_status
read_chunked(uint8_t mode, const uint8_t *buf, size_t len,
    union sbx_req_any *out, size_t *outlen, char *err)
{
	struct wire_reader r;
	enum wire_status st = WIRE_MORE;
	size_t cap, n, i, done = 0;
	char *space;

	if (wire_reader_init(&r) == -1)
		abort();
	for (i = 0; st == WIRE_MORE && len > 0; i++) {
		if ((space = wire_reader_space(&r, &cap)) == NULL) {
			st = WIRE_BAD;
			strlcpy(err, "the request is larger than 64 KiB.",
			    WIRE_ERR_MAX);
			break;
		}
		assert(cap > 0);
		n = chunk_size(mode, i, done);
		if (n > cap)
			n = cap;
		if (n > len)
			n = len;
		memcpy(space, buf, n);
		buf += n;
		len -= n;
		done += n;
		st = wire_reader_feed(&r, n, out, outlen, err);
	}
	wire_reader_free(&r);
	return st;
}

static int
str_eq(const msgpack_object *o, const char *s)
{
	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == strlen(s) &&
	    memcmp(o->via.str.ptr, s, o->via.str.size) == 0;
}

/* Counts key k of map m (at most once), and checks its value is v. */
static uint32_t
has_str(const msgpack_object *m, const char *k, const char *v)
{
	uint32_t i, n = 0;

	for (i = 0; i < m->via.map.size; i++)
		if (str_eq(&m->via.map.ptr[i].key, k)) {
			assert(v[0] != '\0' && str_eq(&m->via.map.ptr[i].val, v));
			n++;
		}
	assert(n == (v[0] != '\0'));
	return n;
}

/* A service map has socket, host and port exactly where c has them. */
static void
check_conn(const msgpack_object *m, const struct sbx_conn *c)
{
	uint32_t i, n, nport = 0;

	assert(m->type == MSGPACK_OBJECT_MAP);
	n = has_str(m, "socket", c->socket) + has_str(m, "host", c->host) +
	    has_str(m, "user", c->user) +
	    has_str(m, "password", c->password) +
	    has_str(m, "database", c->database);
	for (i = 0; i < m->via.map.size; i++)
		if (str_eq(&m->via.map.ptr[i].key, "port")) {
			assert(m->via.map.ptr[i].val.type ==
			    MSGPACK_OBJECT_POSITIVE_INTEGER &&
			    m->via.map.ptr[i].val.via.u64 == c->port);
			nport++;
		}
	assert(nport == (c->port != 0));
	assert(m->via.map.size == n + nport);
}

static void
check_services(const msgpack_sbuffer *sb, const struct sbx_ans *a)
{
	const msgpack_object *svcs;
	msgpack_unpacked u;
	size_t off = 0;
	uint32_t i;

	msgpack_unpacked_init(&u);
	assert(msgpack_unpack_next(&u, sb->data, sb->size, &off) ==
	    MSGPACK_UNPACK_SUCCESS);
	assert(u.data.via.map.size == 2 &&
	    str_eq(&u.data.via.map.ptr[1].key, "services"));
	svcs = &u.data.via.map.ptr[1].val;
	assert(svcs->type == MSGPACK_OBJECT_MAP &&
	    svcs->via.map.size == a->nservices);
	for (i = 0; i < a->nservices; i++) {
		assert(str_eq(&svcs->via.map.ptr[i].key, a->services[i].name));
		check_conn(&svcs->via.map.ptr[i].val, &a->services[i]);
	}
	msgpack_unpacked_destroy(&u);
}

/* Unpack what the child would write and look at its first key. */
static void
check_reply(const msgpack_sbuffer *sb, int ok, const char *message)
{
	msgpack_unpacked u;
	const msgpack_object_kv *kv;
	size_t off = 0;
	uint32_t i;

	msgpack_unpacked_init(&u);
	assert(msgpack_unpack_next(&u, sb->data, sb->size, &off) ==
	    MSGPACK_UNPACK_SUCCESS);
	assert(off == sb->size);
	assert(u.data.type == MSGPACK_OBJECT_MAP && u.data.via.map.size >= 2);
	kv = u.data.via.map.ptr;
	assert(kv->val.type == MSGPACK_OBJECT_BOOLEAN &&
	    kv->val.via.boolean == (ok != 0));
	for (i = 0; message != NULL && i < u.data.via.map.size; i++) {
		kv = &u.data.via.map.ptr[i];
		if (kv->key.via.str.size == 7 &&
		    memcmp(kv->key.via.str.ptr, "message", 7) == 0)
			assert(kv->val.type == MSGPACK_OBJECT_STR &&
			    kv->val.via.str.size == strlen(message) &&
			    memcmp(kv->val.via.str.ptr, message,
			    kv->val.via.str.size) == 0);
	}
	msgpack_unpacked_destroy(&u);
}

/*
 * The transports' shapes in turn (docs/contract.md, "Reaching a sandbox"):
 * unix postgres (socket, host its directory, port from its name), unix
 * other (socket only), tcp (host, port), both (socket, host, port).
 */
static void
conn_shape(struct sbx_conn *c, uint32_t i)
{
	static const char dir[] = "/run/sbx/1000/a1.x";

	if (i % 4 != 2)
		snprintf(c->socket, sizeof(c->socket), "%s/%s", dir,
		    i % 4 == 0 ? ".s.PGSQL.5432" : c->name);
	if (i % 4 == 0) {
		strlcpy(c->host, dir, sizeof(c->host));
		c->port = 5432;
	} else if (i % 4 >= 2) {
		strlcpy(c->host, "127.0.0.1", sizeof(c->host));
		c->port = 40000 + i;
	}
}

/* The success answer a monitor could give to rq, echoing its names. */
static void
fake_answer(const union sbx_req_any *rq, struct sbx_ans *a,
    struct sbx_status_rec *rec)
{
	uint32_t i;

	memset(a, 0, sizeof(*a));
	memset(rec, 0, sizeof(*rec));
	a->type = rq->hdr.type;
	a->released = 1;
	if (rq->hdr.type == SBX_REQ_SANDBOX) {
		a->nservices = rq->sandbox.nservices;
		for (i = 0; i < a->nservices; i++) {
			struct sbx_conn *c = &a->services[i];

			strlcpy(c->name, rq->sandbox.services[i], sizeof(c->name));
			conn_shape(c, i);
			strlcpy(c->user, rq->sandbox.agent, sizeof(c->user));
			strlcpy(c->password, "0123456789abcdef0123456789abcdef",
			    sizeof(c->password));
			strlcpy(c->database, rq->sandbox.project,
			    sizeof(c->database));
		}
	} else if (rq->hdr.type == SBX_REQ_RESET) {	/* a hit's reply */
		a->nservices = 1;
		strlcpy(a->services[0].name, "postgres",
		    sizeof(a->services[0].name));
		conn_shape(&a->services[0], 0);
		strlcpy(a->services[0].user, rq->reset.agent,
		    sizeof(a->services[0].user));
		strlcpy(a->services[0].password, "0123456789abcdef",
		    sizeof(a->services[0].password));
		strlcpy(a->services[0].database, "sbx",
		    sizeof(a->services[0].database));
	} else if (rq->hdr.type == SBX_REQ_SNAPSHOT) {
		memcpy(a->snapshot, rq->snapshot.name, SBX_SLUG_MAX);
	} else if (rq->hdr.type == SBX_REQ_AVAILABLE) {
		a->nservices = 1;
		memcpy(a->services[0].name, rq->available.project,
		    SBX_SLUG_MAX);
	} else if (rq->hdr.type == SBX_REQ_STATUS) {
		a->nstatus = 1;
		rec->uid = 1000;
		rec->nservices = 1;
		strlcpy(rec->agent, "dev-1", sizeof(rec->agent));
		strlcpy(rec->project, "demo", sizeof(rec->project));
		strlcpy(rec->services[0], "redis", sizeof(rec->services[0]));
	}
}

static void
encode(const union sbx_req_any *rq, enum wire_status st, const char *err)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct sbx_status_rec rec;
	struct sbx_ans a;

	msgpack_sbuffer_init(&sb);
	if (st == WIRE_OK) {
		fake_answer(rq, &a, &rec);
		assert(answer_pack(&a, &rec, a.nstatus, &sb.data, &sb.size) == 0);
		sb.alloc = sb.size;
		check_reply(&sb, 1, NULL);
		if (a.type == SBX_REQ_SANDBOX || a.type == SBX_REQ_RESET)
			check_services(&sb, &a);
	} else {
		msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
		pack_error(&pk, SBX_E_BAD_REQUEST, err);
		check_reply(&sb, 0, err);
	}
	msgpack_sbuffer_destroy(&sb);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union sbx_req_any a, b;
	char ea[WIRE_ERR_MAX], eb[WIRE_ERR_MAX];
	size_t la = 0, lb = 0;
	enum wire_status sa, sb;
	uint8_t mode;

	if (size < 1)
		return 0;
	mode = data[0];
	data++;
	size--;
	memset(&a, 0xa5, sizeof(a));
	memset(&b, 0xa5, sizeof(b));
	memset(ea, 0, sizeof(ea));
	memset(eb, 0, sizeof(eb));
	sa = read_chunked(mode, data, size, &a, &la, ea);
	sb = wire_decode((const char *)data, size, &b, &lb, eb);

	assert(sa == sb);
	if (sa == WIRE_OK) {
		assert(la == lb && memcmp(&a, &b, sizeof(a)) == 0);
		check_accepted(&a, la);
	} else if (sa == WIRE_BAD) {
		/* one sentence that fits struct sbx_ans.message */
		assert(ea[0] != '\0' && memchr(ea, '\0', sizeof(ea)) != NULL);
		assert(strlen(ea) < SBX_MESSAGE_MAX && strchr(ea, '\n') == NULL);
		assert(strcmp(ea, eb) == 0);
	}
	if (sa != WIRE_MORE)	/* MORE: the child answers a fixed sentence */
		encode(&a, sa, ea);
	return 0;
}
