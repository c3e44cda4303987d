/*
 * conntab.c - which uid each of the broker's live children serves, so
 * that one uid holding many connections (each may sit idle for
 * request_timeout) fills its own share, never everyone's.
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
 * uid's share. It is then kept for its peer uid's next connection, on
 * the channel whose end the table holds, or that end is closed and it
 * exits. A kept child is taken by its own peer uid only: the uid its
 * first connection's SO_PEERCRED gave, not the owner it counts toward.
 */
#include <stdlib.h>
#include <unistd.h>

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

/* Children in state st, of this share's uid or this peer uid (NULL:
 * any). */
static unsigned
tally(const struct conntab *t, enum conn_state st, const uid_t *uid,
    const uid_t *peer)
{
	unsigned c = 0;
	size_t i;

	for (i = 0; i < t->n; i++)
		c += t->v[i].state == st &&
		    (uid == NULL || t->v[i].uid == *uid) &&
		    (peer == NULL || t->v[i].peer == *peer);
	return c;
}

unsigned
conntab_count(const struct conntab *t, uid_t uid)
{
	return tally(t, CONN_SERVING, &uid, NULL);
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
conntab_add(struct conntab *t, pid_t pid, uid_t uid, uid_t peer, int sock)
{
	if (t->n >= t->cap)
		return -1;
	t->v[t->n] = (struct conn){ .pid = pid, .uid = uid, .peer = peer,
	    .state = CONN_SERVING, .sock = sock };
	t->n++;
	return 0;
}

static void
unkeep(struct conn *c)
{
	if (c->sock != -1)
		close(c->sock);
	c->sock = -1;
	c->state = CONN_HANDED;
}

void
conntab_handed(struct conntab *t, pid_t pid, unsigned keep, int64_t now_ms)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].pid != pid || t->v[i].state != CONN_SERVING)
			continue;
		if (t->v[i].sock != -1 && conntab_kept(t, t->v[i].peer) < keep) {
			t->v[i].state = CONN_KEPT;
			t->v[i].since_ms = now_ms;
		} else
			unkeep(&t->v[i]);
		return;
	}
}

unsigned
conntab_kept(const struct conntab *t, uid_t peer)
{
	return tally(t, CONN_KEPT, NULL, &peer);
}

/* The one kept last: its pages are the likeliest still cached. */
int
conntab_take(struct conntab *t, uid_t peer, pid_t *pid)
{
	struct conn *best = NULL;
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].state == CONN_KEPT && t->v[i].peer == peer &&
		    (best == NULL || t->v[i].since_ms > best->since_ms))
			best = &t->v[i];
	if (best == NULL)
		return -1;
	best->state = CONN_SERVING;
	*pid = best->pid;
	return best->sock;
}

unsigned
conntab_release(struct conntab *t, int64_t before, int64_t *next)
{
	unsigned c = 0;
	size_t i;

	*next = -1;
	for (i = 0; i < t->n; i++) {
		if (t->v[i].state != CONN_KEPT)
			continue;
		if (t->v[i].since_ms < before) {
			unkeep(&t->v[i]);
			c++;
		} else if (*next == -1 || t->v[i].since_ms < *next)
			*next = t->v[i].since_ms;
	}
	return c;
}

unsigned
conntab_exiting(const struct conntab *t)
{
	return tally(t, CONN_HANDED, NULL, NULL);
}

int
conntab_del(struct conntab *t, pid_t pid, uid_t *uid)
{
	size_t i;

	for (i = 0; i < t->n; i++) {
		if (t->v[i].pid != pid)
			continue;
		*uid = t->v[i].uid;
		if (t->v[i].sock != -1)
			close(t->v[i].sock);
		t->v[i] = t->v[--t->n];	/* order does not matter */
		return 0;
	}
	return -1;
}

void
conntab_close_all(struct conntab *t)
{
	size_t i;

	for (i = 0; i < t->n; i++)
		if (t->v[i].sock != -1)
			close(t->v[i].sock);
}
