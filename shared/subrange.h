/*
 * subrange.h - subordinate uid ranges (/etc/subuid, resolved to numbers by
 * the monitor) and who owns a uid in one.
 * runs in: the monitor (root, monitor allowlist once started) and its fork of
 *   the broker (root, unfiltered), sbx-worker's JOB_RELOAD and JOB_CONFIG
 *   (root, runtime deny filter), the broker (root until its drop, then broker
 *   user; unfiltered, then the broker allowlist)
 *
 * The monitor counts a request's quotas toward that owner; the broker,
 * which gets the ranges from the monitor as a descriptor (it has no NSS),
 * counts connections so.
 */
#ifndef SBX_SUBRANGE_H
#define SBX_SUBRANGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define SUBUID_MAX_RANGES	65536

struct subuid_range {
	uint32_t	start;
	uint32_t	count;
	uid_t		owner;
};

/* v sorted by start, without overlaps. Never true for root. */
bool	subrange_owner(const struct subuid_range *v, size_t n, uid_t uid,
	    uid_t *owner);
/* What the broker was given is checked before use: sorted, no overlap,
 * no range holding uid 0. */
bool	subrange_valid(const struct subuid_range *v, size_t n);

#endif
