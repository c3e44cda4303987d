/*
 * adopt_check.c - JOB_ADOPT's answer, checked before adopt.c uses any of
 * it: the worker read files on disk and the runtime's listing, whose
 * names tenants choose.
 * runs in: the monitor at its start (root, unfiltered)
 */
#include <string.h>

#include "adopt.h"
#include "slug.h"

/* A record file's name: what record.c writes, nothing to escape. */
static bool
file_valid(const char *f, size_t cap)
{
	size_t n = strnlen(f, cap);

	return n > 0 && n < cap && f[0] != '.' &&
	    strspn(f, SLUG_BYTES) == n;
}

/* What the worker found, checked before any of it is used. */
bool
adopt_found_valid(const struct adopt_found *a)
{
	uint32_t i;

	if (!file_valid(a->file, sizeof(a->file)) || !record_valid(&a->r) ||
	    a->why >= ADOPT_NO_RECORD ||
	    (a->r.uid == RECORD_POOL_UID && (a->r.nservices != 1 ||
	    a->r.idmap == 0 || a->r.svc[0].warm != a->r.idmap)) ||
	    a->pool_named >> a->r.nservices != 0)
		return false;
	for (i = 0; i < a->r.nservices; i++)
		if (a->why == ADOPT_WHOLE && a->pid[i] <= 0)
			return false;
	return true;
}

bool
adopt_gone_valid(const struct adopt_gone *g)
{
	const struct rt_gone *r = &g->g;

	if (g->why < ADOPT_NO_RECORD || g->why >= ADOPT_NWHY ||
	    memchr(g->container, '\0', sizeof(g->container)) == NULL ||
	    memchr(r->name, '\0', sizeof(r->name)) == NULL ||
	    memchr(r->service, '\0', sizeof(r->service)) == NULL)
		return false;
	if (g->why == ADOPT_POOL_NO_RECORD)
		return r->name[0] != '\0' && r->key.uid == (uid_t)-1;
	return r->name[0] == '\0' &&
	    slug_field_valid(r->key.agent, sizeof(r->key.agent)) &&
	    (r->service[0] == '\0') == (g->why == ADOPT_NO_RECORD) &&
	    (r->service[0] == '\0' || slug_valid(r->service,
	    strlen(r->service)));
}
