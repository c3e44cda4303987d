/*
 * project.c - the lookups of the projects' table: a request's only
 * contact with the policy is a binary search.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 *
 * The table is read by a worker (privsep/worker/projects.c), at start and
 * on SIGHUP.
 */
#include <stdlib.h>
#include <string.h>

#include "project.h"

int
project_slug_cmp(const void *a, const void *b)
{
	return strcmp(((const struct project *)a)->slug,
	    ((const struct project *)b)->slug);
}

void
projects_free(struct project_table *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

const struct project *
project_find(const struct project_table *t, const char *slug)
{
	struct project key;

	if (t->n == 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	strlcpy(key.slug, slug, sizeof(key.slug));
	return bsearch(&key, t->v, t->n, sizeof(*t->v), project_slug_cmp);
}

bool
project_offers(const struct project *p, const char *service)
{
	size_t i;

	for (i = 0; i < p->nservices; i++)
		if (strcmp(p->services[i], service) == 0)
			return true;
	return false;
}

bool
project_allows(const struct project *p, uid_t uid)
{
	size_t i;

	if (p->anyone || uid == 0)
		return true;
	for (i = 0; i < p->nuids; i++)
		if (p->uids[i] == uid)
			return true;
	return false;
}
