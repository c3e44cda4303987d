/*
 * guard.h - the kernel keeps other uids off a tcp service's port (guard.c).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter)
 */
#ifndef SBX_GUARD_H
#define SBX_GUARD_H

#include <stddef.h>
#include <sys/types.h>

#include "msg.h"

struct sbx_config;
struct sbx_key;

/* A tcp service's port, for its owner (and root, and its prober) alone,
 * from before it is published until its container is gone: a free port
 * to publish, a rule added by its note (a key's or a warm container's),
 * a claim's change of hands, removals by key (service NULL: all of the
 * key's) or by warm slot, and at start the rules the records want. 0, or
 * -1 (logged). */
#define GUARD_NO_OWNER	((uid_t)-1)
#define GUARD_NOTE_MAX	(SBX_SLUG_MAX * 2 + 24)
struct guard_want {
	size_t	n;
	struct {
		char	 note[GUARD_NOTE_MAX];
		unsigned port;
		uid_t	 owner, prober;
	}	*v;
	size_t	 nbusy;
	unsigned *busy;		/* ports containers publish */
};
void	guard_note_key(char *, size_t, uid_t, const char *agent,
	    const char *service);
void	guard_note_pool(char *, size_t, const char *service, unsigned slot);
int	guard_open(const struct sbx_config *, const char *note, uid_t owner,
	    uid_t prober, unsigned *port);
struct guard_hand {
	const struct sbx_key *key;	/* its new owner's */
	const char	*service;
	unsigned	 slot, port;	/* the warm slot, the loopback port */
	uid_t		 prober;
};
int	guard_claim(const struct sbx_config *, const struct guard_hand *,
	    size_t n);
int	guard_del(const struct sbx_config *, uid_t, const char *agent,
	    const char *service);
int	guard_del_pool(const struct sbx_config *, const char *service,
	    unsigned slot);
int	guard_sync(const struct sbx_config *, const struct guard_want *);

#endif
