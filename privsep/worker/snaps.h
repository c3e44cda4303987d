/*
 * snaps.h - the snapshots one service holds, by slot, and the check each
 * data session makes before it acts (snaps.c): what pg_data.c and
 * redis_data.c share.
 * runs in: a session child of JOB_DATA (the sandbox's prober uid, session
 *   allowlist)
 */
#ifndef SBX_SNAPS_H
#define SBX_SNAPS_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

struct data_req;

/* The snapshots a service holds, by slot: "" a free one. Names come
 * from the tenant's server: only slugs are taken. */
struct snaps {
	char	name[SBX_MAX_SNAPSHOTS][SBX_SLUG_MAX];
	bool	present[SBX_MAX_SNAPSHOTS];	/* a copy is there, named or not */
};

/* s's slot i as named by name (a tenant's text); ignored unless a slug. */
void	snaps_set(struct snaps *, unsigned i, const char *name);
/* The slot of name, or -1. */
int	snaps_find(const struct snaps *, const char *name);
/* Where name goes: its slot, or a free one (a copy with no valid name is
 * free); -1 if it is new and max are held. */
int	snaps_slot(const struct snaps *, const char *name, uint32_t max);
/* The check every service makes: 0, or -1 with its reply reported. */
int	data_check(const struct snaps *, const struct data_req *,
	    const char *service, int *slot);

#endif
