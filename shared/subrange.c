/*
 * subrange.c - who owns a subordinate uid; see subrange.h.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_RELOAD and JOB_CONFIG (root, runtime deny filter), the broker (root
 *   until its drop, then broker user; unfiltered, then the broker allowlist)
 */
#include "subrange.h"

bool
subrange_owner(const struct subuid_range *v, size_t n, uid_t uid,
    uid_t *owner)
{
	size_t lo = 0, hi = n, mid;

	if (v == NULL || n == 0 || uid == 0)
		return false;
	/* The last range starting at or below uid is the only candidate. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (v[mid].start <= (uint32_t)uid)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || (uint64_t)v[lo - 1].start + v[lo - 1].count <=
	    (uint32_t)uid)
		return false;
	*owner = v[lo - 1].owner;
	return true;
}

bool
subrange_valid(const struct subuid_range *v, size_t n)
{
	size_t i;

	if (n > SUBUID_MAX_RANGES)
		return false;
	for (i = 0; i < n; i++) {
		if (v[i].start == 0 || v[i].count == 0 ||
		    (uint64_t)v[i].start + v[i].count > UINT32_MAX)
			return false;
		if (i > 0 && (uint64_t)v[i - 1].start + v[i - 1].count >
		    v[i].start)
			return false;
	}
	return true;
}
