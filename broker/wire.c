/*
 * wire.c - decode one agent request. Replies are the monitor's
 * (privsep/monitor/answer.c), but for the child's own errors (pack.h).
 * runs in: the broker's children (broker user, the broker allowlist and the
 *   child's stacked on it), and wire_reader_init in the broker (broker user,
 *   before its allowlist)
 *
 * The decoder takes msgpack-c's unpacker as it is (its stack depth is
 * fixed at MSGPACK_EMBED_STACK_SIZE, deeper input is a parse error) and
 * adds the contract's checks on the object it yields: a map, string keys,
 * each known key at most once and of the right type, slugs where slugs go.
 * Anything else is WIRE_BAD with one sentence for the agent.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "code.h"
#include "slug.h"
#include "wire.h"

#define READ_CHUNK	4096


/* The keys a request may carry; anything else is ignored. */
struct fields {
	const msgpack_object *op, *agent, *project, *services, *bind_pid;
	const msgpack_object *to, *name;	/* reset's, snapshot's */
};

static enum wire_status
bad(char *err, const char *why)
{
	snprintf(err, WIRE_ERR_MAX, "%s", why);
	return WIRE_BAD;
}

static bool
str_is(const msgpack_object *o, const char *s)
{
	size_t n = strlen(s);

	return o->type == MSGPACK_OBJECT_STR && o->via.str.size == n &&
	    memcmp(o->via.str.ptr, s, n) == 0;
}

static enum wire_status
collect_fields(const msgpack_object *obj, struct fields *f, char *err)
{
	static const char *const names[] = { "op", "agent", "project",
	    "services", "bind_pid", "to", "name" };
	const msgpack_object **slots[] = { &f->op, &f->agent, &f->project,
	    &f->services, &f->bind_pid, &f->to, &f->name };
	uint32_t i;
	size_t k;

	memset(f, 0, sizeof(*f));
	if (obj->type != MSGPACK_OBJECT_MAP)
		return bad(err, "the request must be a msgpack map.");
	for (i = 0; i < obj->via.map.size; i++) {
		const msgpack_object_kv *kv = &obj->via.map.ptr[i];

		if (kv->key.type != MSGPACK_OBJECT_STR)
			return bad(err, "every key of the request must be a string.");
		for (k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			if (!str_is(&kv->key, names[k]))
				continue;
			if (*slots[k] != NULL)
				return bad(err, "a key appears twice in the request.");
			*slots[k] = &kv->val;
		}
	}
	if (f->op == NULL)
		return bad(err, "the request has no 'op'.");
	if (f->op->type != MSGPACK_OBJECT_STR)
		return bad(err, "'op' must be a string.");
	return WIRE_OK;
}

static enum wire_status
copy_slug(const msgpack_object *o, const char *key, char dst[SBX_SLUG_MAX],
    char *err)
{
	if (o == NULL) {
		snprintf(err, WIRE_ERR_MAX, "the request needs '%s'.", key);
		return WIRE_BAD;
	}
	if (o->type != MSGPACK_OBJECT_STR ||
	    !slug_valid(o->via.str.ptr, o->via.str.size)) {
		snprintf(err, WIRE_ERR_MAX,
		    "'%s' must be a string matching [a-z0-9][a-z0-9._-]{0,62}.",
		    key);
		return WIRE_BAD;
	}
	memset(dst, 0, SBX_SLUG_MAX);
	memcpy(dst, o->via.str.ptr, o->via.str.size);
	return WIRE_OK;
}

static enum wire_status
copy_services(const msgpack_object *o, struct sbx_req_sandbox *rq, char *err)
{
	uint32_t i, j;

	if (o == NULL)
		return bad(err, "the request needs 'services'.");
	if (o->type != MSGPACK_OBJECT_ARRAY)
		return bad(err, "'services' must be an array of service names.");
	if (o->via.array.size > SBX_MAX_SERVICES)
		return bad(err, "'services' names more than 16 services.");
	for (i = 0; i < o->via.array.size; i++) {
		if (copy_slug(&o->via.array.ptr[i], "services[]",
		    rq->services[i], err) != WIRE_OK)
			return WIRE_BAD;
		for (j = 0; j < i; j++)
			if (strcmp(rq->services[i], rq->services[j]) == 0)
				return bad(err, "'services' names a service twice.");
	}
	rq->nservices = o->via.array.size;
	return WIRE_OK;
}

/* reset's to, if present: a snapshot's name, a slug; absent is "". A nil
 * is not absence but a value of the wrong type, as for bind_pid. */
static enum wire_status
copy_to(const msgpack_object *o, char dst[SBX_SLUG_MAX], char *err)
{
	if (o == NULL)
		return WIRE_OK;
	return copy_slug(o, "to", dst, err);
}

/* bind_pid, if present: a positive integer that a pid can be. */
static enum wire_status
copy_bind_pid(const msgpack_object *o, struct sbx_req_sandbox *rq, char *err)
{
	if (o == NULL)
		return WIRE_OK;
	if (o->type != MSGPACK_OBJECT_POSITIVE_INTEGER ||
	    o->via.u64 == 0 || o->via.u64 > INT32_MAX)
		return bad(err, "'bind_pid' must be a process id, a positive "
		    "integer.");
	rq->bind_pid = (int32_t)o->via.u64;
	return WIRE_OK;
}

/* The op's fields into its message (msg.h), and the message's size. */
static enum wire_status
fill_body(const struct fields *f, union sbx_req_any *out, size_t *len,
    char *err)
{
	switch (out->hdr.type) {
	case SBX_REQ_PING:
		*len = sizeof(out->ping);
		return WIRE_OK;
	case SBX_REQ_AVAILABLE:
		*len = sizeof(out->available);
		return copy_slug(f->project, "project", out->available.project,
		    err);
	case SBX_REQ_SANDBOX:
		*len = sizeof(out->sandbox);
		if (copy_slug(f->agent, "agent", out->sandbox.agent, err) ||
		    copy_slug(f->project, "project", out->sandbox.project, err) ||
		    copy_bind_pid(f->bind_pid, &out->sandbox, err))
			return WIRE_BAD;
		return copy_services(f->services, &out->sandbox, err);
	case SBX_REQ_RELEASE:
		*len = sizeof(out->release);
		return copy_slug(f->agent, "agent", out->release.agent, err);
	case SBX_REQ_STATUS:
		*len = sizeof(out->status);
		return WIRE_OK;
	case SBX_REQ_RESET:
		*len = sizeof(out->reset);
		if (copy_slug(f->agent, "agent", out->reset.agent, err))
			return WIRE_BAD;
		return copy_to(f->to, out->reset.to, err);
	case SBX_REQ_SNAPSHOT:
		*len = sizeof(out->snapshot);
		if (copy_slug(f->agent, "agent", out->snapshot.agent, err))
			return WIRE_BAD;
		return copy_slug(f->name, "name", out->snapshot.name, err);
	default:
		return bad(err, "unknown 'op'.");
	}
}

enum wire_status
wire_validate(const msgpack_object *obj, union sbx_req_any *out,
    size_t *outlen, char *err)
{
	struct fields f;
	int type;

	if (collect_fields(obj, &f, err) != WIRE_OK)
		return WIRE_BAD;
	memset(out, 0, sizeof(*out));
	/* The contract's op names are shared/code.c's, the monitor's too. */
	for (type = 1; type < SBX_REQ_MAX; type++)
		if (str_is(f.op, sbx_req_name(type)))
			break;
	if (type == SBX_REQ_MAX)
		return bad(err, "unknown 'op'.");
	out->hdr.magic = SBX_MSG_MAGIC;
	out->hdr.type = (uint32_t)type;
	return fill_body(&f, out, outlen, err);
}

/*
 * msgpack-c 4 makes the unpacker's zone at the first map or array it
 * meets: one empty map makes it now, so that a reader made before a
 * fork allocates nothing in the child for a request of up to 8 KiB.
 */
int
wire_reader_init(struct wire_reader *r)
{
	r->total = 0;
	/* Twice the chunk, so the first reserve does not reallocate. */
	if (!msgpack_unpacker_init(&r->up, 2 * READ_CHUNK))
		return -1;
	if (!msgpack_unpacker_reserve_buffer(&r->up, 1)) {
		msgpack_unpacker_destroy(&r->up);
		return -1;
	}
	*msgpack_unpacker_buffer(&r->up) = (char)0x80;	/* fixmap, empty */
	msgpack_unpacker_buffer_consumed(&r->up, 1);
	if (msgpack_unpacker_execute(&r->up) != 1) {
		msgpack_unpacker_destroy(&r->up);
		return -1;
	}
	msgpack_unpacker_reset(&r->up);
	return 0;
}

void
wire_reader_free(struct wire_reader *r)
{
	msgpack_unpacker_destroy(&r->up);
}

char *
wire_reader_space(struct wire_reader *r, size_t *cap)
{
	size_t left = WIRE_MAX_REQUEST - r->total;

	if (left == 0 || !msgpack_unpacker_reserve_buffer(&r->up, READ_CHUNK))
		return NULL;
	*cap = msgpack_unpacker_buffer_capacity(&r->up);
	if (*cap > left)
		*cap = left;
	return msgpack_unpacker_buffer(&r->up);
}

enum wire_status
wire_reader_feed(struct wire_reader *r, size_t n, union sbx_req_any *out,
    size_t *outlen, char *err)
{
	msgpack_object obj;
	enum wire_status st;

	r->total += n;
	msgpack_unpacker_buffer_consumed(&r->up, n);
	/* execute, not next: the object stays in the unpacker's zone, and
	 * no new zone is allocated for a next request there never is. */
	switch (msgpack_unpacker_execute(&r->up)) {
	case 1:
		obj = msgpack_unpacker_data(&r->up);
		st = wire_validate(&obj, out, outlen, err);
		break;
	case 0:
		st = WIRE_MORE;
		if (r->total >= WIRE_MAX_REQUEST)
			st = bad(err, "the request is larger than 64 KiB.");
		break;
	case MSGPACK_UNPACK_NOMEM_ERROR:
		st = bad(err, "the request is nested too deeply or claims more elements than it holds.");
		break;
	default:
		st = bad(err, "the request is not valid msgpack.");
		break;
	}
	return st;
}

enum wire_status
wire_decode(const char *buf, size_t len, union sbx_req_any *out,
    size_t *outlen, char *err)
{
	struct wire_reader r;
	enum wire_status st = WIRE_MORE;
	size_t cap, n;
	char *space;

	if (wire_reader_init(&r) == -1)
		return bad(err, "out of memory.");
	while (st == WIRE_MORE) {
		if ((space = wire_reader_space(&r, &cap)) == NULL) {
			st = bad(err, "the request is larger than 64 KiB.");
			break;
		}
		if (len == 0)
			break;		/* truncated: still WIRE_MORE */
		n = len < cap ? len : cap;
		memcpy(space, buf, n);
		buf += n;
		len -= n;
		st = wire_reader_feed(&r, n, out, outlen, err);
	}
	wire_reader_free(&r);
	return st;
}
