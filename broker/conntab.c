/*
 * conntab.c - which uid each of the broker's live children serves, so
 * that one uid holding many connections (each may sit idle for
 * request_timeout) fills its own share, never everyone's.
 *
 * A flat array of at most max_children slots, allocated once: lookups
 * are linear, which at the default 128 (at most 4096) costs less than the
 * fork that follows every accept, and nothing here grows with what a
 * tenant does. A child keeps its slot until it is reaped.
 *
 * A child that has handed its request to the monitor holds nothing of
 * its agent's any more, but it has not exited yet, and its agent may
 * already have the monitor's answer and be connecting again. So each
 * slot has a byte the children share with us (MAP_SHARED): the child
 * sets it just before the hand-over, and from then on its place counts
 * toward max_children only, not toward its uid's share. The byte is set
 * before the monitor can answer, so an agent's next connection always
 * finds it set: back-to-back requests never meet their own shadow.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "conntab.h"

int
conntab_init(struct conntab *t, size_t cap, unsigned per_uid)
{
	t->n = t->hi = 0;
	t->cap = cap;
	t->per_uid = per_uid;
	t->v = NULL;
	t->handed = MAP_FAILED;
	if (cap == 0 || per_uid == 0 || per_uid > cap)
		return -1;
	if ((t->v = calloc(cap, sizeof(*t->v))) == NULL)
		return -1;
	t->handed = mmap(NULL, cap, PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (t->handed == MAP_FAILED) {
		conntab_free(t);
		return -1;
	}
	return 0;
}

void
conntab_free(struct conntab *t)
{
	free(t->v);
	if (t->handed != MAP_FAILED)
		munmap(t->handed, t->cap);
	t->v = NULL;
	t->handed = MAP_FAILED;
	t->n = t->hi = t->cap = 0;
}

static bool
handed(const struct conntab *t, size_t i)
{
	return __atomic_load_n(&t->handed[i], __ATOMIC_ACQUIRE) != 0;
}

/* The uid's children that still wait for their agent's request. */
unsigned
conntab_count(const struct conntab *t, uid_t uid)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < t->hi; i++)
		c += t->v[i].pid != 0 && t->v[i].uid == uid && !handed(t, i);
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

/* The first free slot, or cap. */
static size_t
free_slot(const struct conntab *t)
{
	size_t i;

	for (i = 0; i < t->cap; i++)
		if (t->v[i].pid == 0)
			return i;
	return t->cap;
}

unsigned char *
conntab_next(struct conntab *t)
{
	size_t i = free_slot(t);

	if (i == t->cap)
		return NULL;
	__atomic_store_n(&t->handed[i], 0, __ATOMIC_RELEASE);
	return &t->handed[i];
}

int
conntab_add(struct conntab *t, pid_t pid, uid_t uid)
{
	size_t i = free_slot(t);

	if (i == t->cap || pid <= 0)
		return -1;
	t->v[i].pid = pid;
	t->v[i].uid = uid;
	t->n++;
	if (i >= t->hi)
		t->hi = i + 1;
	return 0;
}

void
conntab_handed(unsigned char *flag)
{
	__atomic_store_n(flag, 1, __ATOMIC_RELEASE);
}

int
conntab_del(struct conntab *t, pid_t pid, uid_t *uid)
{
	size_t i;

	for (i = 0; i < t->hi; i++) {
		if (t->v[i].pid != pid || pid <= 0)
			continue;
		*uid = t->v[i].uid;
		t->v[i].pid = 0;
		t->n--;
		while (t->hi > 0 && t->v[t->hi - 1].pid == 0)
			t->hi--;
		return 0;
	}
	return -1;
}
