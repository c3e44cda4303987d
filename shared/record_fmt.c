/*
 * record_fmt.c - a record's checks, the writer's and the reader's.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_ADOPT (root, runtime deny filter)
 */
#include <string.h>

#include "record_fmt.h"
#include "slug.h"

size_t
record_size(uint32_t nservices)
{
	return offsetof(struct record, svc) +
	    nservices * sizeof(struct record_svc);
}

static bool
conn_valid(const struct sbx_conn *c)
{
	return memchr(c->socket, '\0', sizeof(c->socket)) != NULL &&
	    memchr(c->host, '\0', sizeof(c->host)) != NULL &&
	    memchr(c->user, '\0', sizeof(c->user)) != NULL &&
	    memchr(c->password, '\0', sizeof(c->password)) != NULL &&
	    memchr(c->database, '\0', sizeof(c->database)) != NULL &&
	    c->port <= 65535 && slug_field_valid(c->name, sizeof(c->name)) &&
	    c->password[0] != '\0';
}

bool
record_valid(const struct record *r)
{
	uint32_t i;

	if (r->magic != RECORD_MAGIC || r->version < 2 ||
	    r->version > RECORD_VERSION || r->nservices == 0 ||
	    r->bind_pid < 0 ||
	    r->nservices > SBX_MAX_SERVICES ||
	    !slug_field_valid(r->agent, sizeof(r->agent)) ||
	    !slug_field_valid(r->project, sizeof(r->project)))
		return false;
	for (i = 0; i < r->nservices; i++)
		if (!conn_valid(&r->svc[i].conn))
			return false;
	return true;
}

/* Up to version 2, a record holds the other hash (config_parse.c,
 * service_hash_v2). */
bool
record_same_config(const struct record *r, uint32_t i,
    const struct service_cfg *s)
{
	return r->svc[i].confhash == (r->version >= 3 ? s->hash : s->hash_v2);
}
