/*
 * answer.c - the msgpack reply for an answer, with msgpack-c's packer
 * (inline code of its headers; the monitor links no msgpack-c object and
 * never unpacks anything).
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "answer.h"
#include "pack.h"

void
answer_init(struct sbx_ans *a, enum sbx_req_type type, enum sbx_code code,
    const char *fmt, ...)
{
	va_list ap;

	memset(a, 0, sizeof(*a));
	a->type = type;
	a->code = code;
	va_start(ap, fmt);
	vsnprintf(a->message, sizeof(a->message), fmt, ap);
	va_end(ap);
}

static void
pack_conn(msgpack_packer *pk, const struct sbx_conn *c)
{
	pack_str(pk, c->name);
	/* user, password, database; socket, host, port where there is one */
	msgpack_pack_map(pk, 3 + (c->socket[0] != '\0') +
	    (c->host[0] != '\0') + (c->port != 0));
	if (c->socket[0] != '\0')
		pack_kv_str(pk, "socket", c->socket);
	if (c->host[0] != '\0')
		pack_kv_str(pk, "host", c->host);
	if (c->port != 0) {
		pack_str(pk, "port");
		msgpack_pack_uint32(pk, c->port);
	}
	pack_kv_str(pk, "user", c->user);
	pack_kv_str(pk, "password", c->password);
	pack_kv_str(pk, "database", c->database);
}

static void
pack_status_rec(msgpack_packer *pk, const struct sbx_status_rec *r)
{
	uint32_t i;

	msgpack_pack_map(pk, 6);
	pack_str(pk, "uid");
	msgpack_pack_uint32(pk, r->uid);
	pack_kv_str(pk, "agent", r->agent);
	pack_kv_str(pk, "project", r->project);
	pack_str(pk, "services");
	msgpack_pack_array(pk, r->nservices);
	for (i = 0; i < r->nservices; i++)
		pack_str(pk, r->services[i]);
	pack_str(pk, "age_s");
	msgpack_pack_uint64(pk, r->age_s);
	pack_str(pk, "idle_s");
	msgpack_pack_uint64(pk, r->idle_s);
	if (r->bind_pid > 0) {
		pack_str(pk, "bind_pid");
		msgpack_pack_int32(pk, r->bind_pid);
	}
}

static void
pack_ok(msgpack_packer *pk, const struct sbx_ans *a,
    const struct sbx_status_rec *recs, size_t nrecs)
{
	uint32_t i;

	msgpack_pack_map(pk, a->type == SBX_REQ_STATUS ? 3 : 2);
	pack_str(pk, "ok");
	msgpack_pack_true(pk);
	switch (a->type) {
	case SBX_REQ_PING:
		pack_kv_str(pk, "version", SBX_VERSION);
		break;
	case SBX_REQ_AVAILABLE:
		pack_str(pk, "services");
		msgpack_pack_array(pk, a->nservices);
		for (i = 0; i < a->nservices; i++)
			pack_str(pk, a->services[i].name);
		break;
	case SBX_REQ_SANDBOX:
	case SBX_REQ_RESET:	/* a hit's reply */
		pack_str(pk, "services");
		msgpack_pack_map(pk, a->nservices);
		for (i = 0; i < a->nservices; i++)
			pack_conn(pk, &a->services[i]);
		break;
	case SBX_REQ_RELEASE:
		pack_str(pk, "released");
		if (a->released)
			msgpack_pack_true(pk);
		else
			msgpack_pack_false(pk);
		break;
	case SBX_REQ_SNAPSHOT:
		pack_kv_str(pk, "name", a->snapshot);
		break;
	case SBX_REQ_STATUS:
		pack_str(pk, "sandboxes");
		msgpack_pack_array(pk, nrecs);
		for (i = 0; i < nrecs; i++)
			pack_status_rec(pk, &recs[i]);
		pack_str(pk, "warm");	/* ready, per service that has any */
		msgpack_pack_map(pk, a->nservices);
		for (i = 0; i < a->nservices; i++) {
			pack_str(pk, a->services[i].name);
			msgpack_pack_uint32(pk, a->warm[i]);
		}
		break;
	default:
		break;
	}
}

/* msgpack-c's packer does not stop at a failed write: remember it. */
struct outbuf {
	msgpack_sbuffer	sb;
	int		failed;
};

static int
outbuf_write(void *data, const char *buf, size_t len)
{
	struct outbuf *o = data;

	if (msgpack_sbuffer_write(&o->sb, buf, len) == -1)
		o->failed = 1;
	return o->failed ? -1 : 0;
}

/* Room for any sandbox answer (16 services) at once: no realloc leaves a
 * copy of a password behind in freed memory. */
#define ANSWER_ROOM	16384

int
answer_pack(const struct sbx_ans *a, const struct sbx_status_rec *recs,
    size_t nrecs, char **buf, size_t *len)
{
	struct outbuf o = { .failed = 0 };
	msgpack_packer pk;

	msgpack_sbuffer_init(&o.sb);
	if ((o.sb.data = malloc(ANSWER_ROOM)) == NULL)
		return -1;
	o.sb.alloc = ANSWER_ROOM;
	msgpack_packer_init(&pk, &o, outbuf_write);
	if (a->code != SBX_OK && a->retry_after_ms > 0)
		pack_error_retry(&pk, (enum sbx_code)a->code, a->message,
		    a->retry_after_ms);
	else if (a->code != SBX_OK)
		pack_error(&pk, (enum sbx_code)a->code, a->message);
	else
		pack_ok(&pk, a, recs, nrecs);
	if (o.failed) {
		explicit_bzero(o.sb.data, o.sb.alloc);
		msgpack_sbuffer_destroy(&o.sb);
		return -1;
	}
	*len = o.sb.size;
	*buf = msgpack_sbuffer_release(&o.sb);
	return 0;
}
