/*
 * subuid.c - whose /etc/subuid range a uid is in (the table: JOB_RELOAD).
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 */
#include <stdlib.h>
#include <string.h>

#include "subuid.h"

void
subuid_free(struct subuid_table *t)
{
	free(t->v);
	memset(t, 0, sizeof(*t));
}

bool
subuid_owner(const struct subuid_table *t, uid_t uid, uid_t *owner)
{
	return t != NULL && subrange_owner(t->v, t->n, uid, owner);
}
