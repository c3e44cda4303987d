/*
 * conntab.h - the broker's live children, each with the uid it serves.
 * runs in: the broker (root until its drop: conntab_init; then broker user,
 *   broker allowlist)
 */
#ifndef SBX_CONNTAB_H
#define SBX_CONNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct conn {
	pid_t	pid;
	uid_t	uid;
	bool	handed;		/* its request is the monitor's now */
};

struct conntab {
	struct conn	*v;
	size_t		 n;
	size_t		 cap;		/* max_children */
	unsigned	 per_uid;	/* max_connections_per_uid */
};

enum admit {
	ADMIT_OK,
	ADMIT_FULL,		/* max_children live: busy for everyone */
	ADMIT_UID_FULL		/* this uid holds per_uid: busy for it alone */
};

/* 0, or -1 if cap is 0, per_uid is not in 1..cap, or out of memory. */
int		conntab_init(struct conntab *, size_t cap, unsigned per_uid);
void		conntab_free(struct conntab *);
enum admit	conntab_admit(const struct conntab *, uid_t);
/* The uid's children that have not handed their request over. */
unsigned	conntab_count(const struct conntab *, uid_t);
/* -1 if the table is full. */
int		conntab_add(struct conntab *, pid_t, uid_t);
/* The child said it hands its request over: it counts toward the table
 * only. A pid not in the table (reaped already, or made up) is ignored. */
void		conntab_handed(struct conntab *, pid_t);
/* Children that have handed their request over and are not reaped yet:
 * only exiting, which they do once no request waits for a core. */
unsigned	conntab_exiting(const struct conntab *);
/* 0 with the child's uid in *uid, or -1 if pid is not a child of ours. */
int		conntab_del(struct conntab *, pid_t, uid_t *uid);

#endif
