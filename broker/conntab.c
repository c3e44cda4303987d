/*
 * conntab.c - which uid each of the broker's live children serves, so
 * that one uid holding many connections (each may sit idle for
 * request_timeout) fills its own share, never everyone's.
 * runs in: the broker (root until its drop: conntab_init; then broker user,
 *   broker allowlist)
 *
 * A flat array of at most max_children entries, allocated once: lookups
 * are linear, which at the default 128 (at most 4096) costs less than the
 * fork that follows every accept, and nothing here grows with what a
 * tenant does.
 *
 * A child that has handed its request to the monitor holds nothing of
 * its agent's any more, but it has not exited yet, and its agent may
 * already have the monitor's answer and be connecting again. So a child
 * says so before its hand-over (its pid on a pipe, broker.c), and from
 * then on its place counts toward max_children only, not toward its
 * uid's share.
 */
#include <stdlib.h>

#include "conntab.h"

int
conntab_init(struct conntab *t, size_t cap, unsigned per_uid)
{
	t->n = 0;
	t->cap = cap;
	t->per_uid = per_uid;
	t->v = NULL;
	if (cap == 0 || per_uid == 0 || per_uid > cap)
		return -1;
	if ((t->v = calloc(cap, sizeof(*t->v))) == NULL)
		return -1;
	return 0;
}

void
conntab_free(struct conntab *t)
{
	free(t->v);
	t->v = NULL;
	t->n = t->cap = 0;
}

unsigned
conntab_count(const struct conntab *t, uid_t uid)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		c += t->v[i].uid == uid && !t->v[i].handed;
	return c;
}

/* The uid's own limit first: a uid at its share is told so even when
 * the broker is full, since waiting for others would not help it. */
enum admit
conntab_admit(const struct conntab *t, uid_t uid)
{
	if (conntab_count(t, uid) >= t->per_uid)
		return ADMIT_UID_FULL;
	if (t->n >= t->cap)
		return ADMIT_FULL;
	return ADMIT_OK;
}

int
conntab_add(struct conntab *t, pid_t pid, uid_t uid)
{
	if (t->n >= t->cap)
		return -1;
	t->v[t->n].pid = pid;
	t->v[t->n].uid = uid;
	t->v[t->n].handed = false;
	t->n++;
	return 0;
}

void
conntab_handed(struct conntab *t, pid_t pid)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].pid == pid) {
			t->v[i].handed = true;
			return;
		}
}

unsigned
conntab_exiting(const struct conntab *t)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		c += t->v[i].handed;
	return c;
}

int
conntab_del(struct conntab *t, pid_t pid, uid_t *uid)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].pid != pid)
			continue;
		*uid = t->v[i].uid;
		t->v[i] = t->v[--t->n];	/* order does not matter */
		return 0;
	}
	return -1;
}
