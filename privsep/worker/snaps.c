/*
 * snaps.c - the snapshots one service holds, by slot, and the check each
 * data session makes before it acts (snaps.h): what pg_data.c and
 * redis_data.c share.
 * runs in: a session child of JOB_DATA (the sandbox's prober uid, session
 *   allowlist)
 *
 * Names come from the tenant's server: only slugs are taken.
 */
#include <string.h>

#include "data.h"
#include "session_client.h"
#include "slug.h"
#include "snaps.h"

void
snaps_set(struct snaps *s, unsigned i, const char *name)
{
	if (i >= SBX_MAX_SNAPSHOTS)
		return;
	s->present[i] = true;
	s->name[i][0] = '\0';
	if (name != NULL && slug_valid(name, strlen(name)))
		strlcpy(s->name[i], name, sizeof(s->name[i]));
}

int
snaps_find(const struct snaps *s, const char *name)
{
	int i;

	for (i = 0; i < SBX_MAX_SNAPSHOTS; i++)
		if (s->name[i][0] != '\0' && strcmp(s->name[i], name) == 0)
			return i;
	return -1;
}

int
snaps_slot(const struct snaps *s, const char *name, uint32_t max)
{
	uint32_t held = 0;
	int i, unnamed = -1;

	if ((i = snaps_find(s, name)) != -1)
		return i;
	for (i = 0; i < SBX_MAX_SNAPSHOTS; i++)
		if (s->name[i][0] != '\0')
			held++;
	if (held >= max)
		return -1;
	/* An empty slot first; a copy with no name is taken over last. */
	for (i = 0; i < SBX_MAX_SNAPSHOTS; i++) {
		if (!s->present[i])
			return i;
		if (s->name[i][0] == '\0' && unnamed == -1)
			unnamed = i;
	}
	return unnamed;
}

int
data_check(const struct snaps *s, const struct data_req *q,
    const char *service, int *slot)
{
	*slot = -1;
	if (q->op == DATA_RESET) {
		if (q->snapshot[0] == '\0' ||
		    (*slot = snaps_find(s, q->snapshot)) != -1)
			return 0;
		session_report(SBX_E_UNKNOWN_SNAPSHOT, "%s holds no snapshot "
		    "named %s.", service, q->snapshot);
		return -1;
	}
	if ((*slot = snaps_slot(s, q->snapshot, q->max)) != -1)
		return 0;
	session_report(SBX_E_BAD_REQUEST, "this sandbox holds max_snapshots "
	    "(%u) snapshots; replace one by its name.", q->max);
	return -1;
}
