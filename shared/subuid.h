/*
 * subuid.h - /etc/subuid as a table (read by a worker,
 * privsep/worker/subuid_parse.c): which user owns the subordinate uid a
 * request comes from.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 */
#ifndef SBX_SUBUID_H
#define SBX_SUBUID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "subrange.h"

struct subuid_table {
	struct subuid_range *v;		/* sorted by start, no overlap */
	size_t		n, cap;
	size_t		skipped;	/* lines that were not a range */
};

void	subuid_free(struct subuid_table *);
/* Is uid in someone's range? Then *owner is that user. Never for root. */
bool	subuid_owner(const struct subuid_table *, uid_t uid, uid_t *owner);

#endif
