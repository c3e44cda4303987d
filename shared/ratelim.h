/*
 * ratelim.h - log lines per uid: a token bucket each, in a fixed table.
 * runs in: the monitor (root, monitor allowlist once started), the broker
 *   (root until its drop, then broker user; unfiltered, then the broker
 *   allowlist)
 */
#ifndef SBX_RATELIM_H
#define SBX_RATELIM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define RL_SLOTS	64	/* uids remembered at once */

struct rl_slot {
	bool		used;
	uid_t		uid;
	unsigned	tokens;		/* lines it may log now */
	int64_t		refill_ms;	/* when the next token was due from */
	int64_t		seen_ms;	/* last line, logged or not: for LRU */
	unsigned	suppressed;	/* lines dropped in this window */
	int64_t		window_end;	/* when to report them */
};

/* Told, once per window, how many lines of uid were dropped. */
typedef void	(*rl_report_fn)(uid_t uid, unsigned count, void *arg);

struct ratelim {
	unsigned	burst;		/* lines a quiet uid may log at once */
	unsigned	refill_ms;	/* one more line per refill_ms */
	unsigned	window_ms;	/* dropped lines reported this late */
	rl_report_fn	report;
	void		*arg;
	struct rl_slot	slot[RL_SLOTS];
};

void	rl_init(struct ratelim *, unsigned burst, unsigned refill_ms,
	    unsigned window_ms, rl_report_fn, void *arg);
/* true: log this line of uid's; false: it was counted as dropped. */
bool	rl_allow(struct ratelim *, uid_t uid, int64_t now);
/* Reports every window that has ended by now. */
void	rl_tick(struct ratelim *, int64_t now);
/* The next window's end, for a poll timeout, or -1 if none is open. */
int64_t	rl_next(const struct ratelim *);
/* Reports every open window at once (at exit). */
void	rl_flush(struct ratelim *);

#endif
