/* conntab.h - the broker's live children, each with the uid it serves. */
#ifndef SBX_CONNTAB_H
#define SBX_CONNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum conn_state {
	CONN_SERVING,		/* reads its agent's request */
	CONN_HANDED,		/* its request is the monitor's; it exits */
	CONN_KEPT		/* waits for the next socket of its peer uid */
};

struct conn {
	pid_t		 pid;
	uid_t		 uid;		/* whose share it counts toward */
	uid_t		 peer;		/* the only uid it ever serves */
	enum conn_state	 state;
	int		 sock;		/* our end of its channel; -1: none */
	int64_t		 since_ms;	/* kept since */
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
/* -1 if the table is full. sock: our end of its channel, now the
 * table's to close. */
int		conntab_add(struct conntab *, pid_t, uid_t uid, uid_t peer,
		    int sock);
/* The child said it hands its request over: it counts toward the table
 * only. A pid not in the table (reaped already, or made up), or not
 * serving, is ignored. Kept (waiting for its peer uid's next socket,
 * since now_ms) if it has a channel and fewer than keep of its peer
 * uid are kept; else its channel is closed, and it exits. */
void		conntab_handed(struct conntab *, pid_t, unsigned keep,
		    int64_t now_ms);
/* Kept children of this peer uid. */
unsigned	conntab_kept(const struct conntab *, uid_t peer);
/* A kept child of this peer uid, serving again: its channel, or -1 if
 * none is kept. *pid is its pid. */
int		conntab_take(struct conntab *, uid_t peer, pid_t *pid);
/* Kept since before `before` (every one, with INT64_MAX) told to exit:
 * its channel closed. Returns how many; *next the oldest left's since,
 * or -1 if none is left. */
unsigned	conntab_release(struct conntab *, int64_t before, int64_t *next);
/* Children that have handed their request over, not kept, and are not
 * reaped yet: only exiting, which they do once no request waits for a
 * core. */
unsigned	conntab_exiting(const struct conntab *);
/* 0 with the child's uid in *uid, or -1 if pid is not a child of ours.
 * Its channel is closed. */
int		conntab_del(struct conntab *, pid_t, uid_t *uid);
/* In a new child: every channel end of ours closed. */
void		conntab_close_all(struct conntab *);

#endif
