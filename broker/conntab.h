/* conntab.h - the broker's live children, each with the uid it serves. */
#ifndef SBX_CONNTAB_H
#define SBX_CONNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct conn {
	pid_t	pid;		/* 0: a free slot */
	uid_t	uid;
};

struct conntab {
	struct conn	*v;		/* cap slots */
	unsigned char	*handed;	/* cap bytes, shared with the children */
	size_t		 n;		/* live children */
	size_t		 hi;		/* every live child's slot is below */
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
/* Before the fork: the flag of the slot the next conntab_add fills,
 * cleared, for the child to set (conntab_handed); NULL if full. */
unsigned char	*conntab_next(struct conntab *);
/* -1 if the table is full. */
int		conntab_add(struct conntab *, pid_t, uid_t);
/* In the child, just before the hand-over: count toward max_children
 * only from now on. */
void		conntab_handed(unsigned char *);
/* 0 with the child's uid in *uid, or -1 if pid is not a child of ours. */
int		conntab_del(struct conntab *, pid_t, uid_t *uid);

#endif
