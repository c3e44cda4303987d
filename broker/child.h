/*
 * child.h - one agent connection, from request bytes to the monitor.
 * runs in: the broker's children and spares (broker user, the broker
 *   allowlist and the child's stacked on it), and child_prepare in the broker
 *   (broker user, before its allowlist)
 */
#ifndef SBX_CHILD_H
#define SBX_CHILD_H

#include <sys/types.h>

struct child_opts {
	int	chan;			/* broker channel to the monitor */
	int	request_timeout_ms;	/* for the agent to send its map */
	int	notice;			/* our pid, written at the hand-over */
};

/* In the parent, before it confines itself: the child's reader and filter. */
int	child_prepare(void);
/*
 * A child that refuses its agent without the monitor exits with
 * CHILD_REFUSED + the sbx_code it answered; the parent writes the audit
 * line, under its per-uid limit (one child cannot know how many lines
 * its uid's other children have written).
 */
#define CHILD_REFUSED	64
/* In a new child: its own filter on the broker's, signals unblocked. */
void	child_confine(void);
/* Under that filter: the agent's request to the monitor, then exit. */
void	child_serve(int agent, const struct child_opts *)
	    __attribute__((noreturn));
/*
 * A spare (spare.c), end its channel, SC_SPARE_FD free unless end is it:
 * confined and its page faults taken before its agent comes, then
 * child_serve. Exits 0 if its channel closes first.
 */
void	child_spare(int end, const struct child_opts *)
	    __attribute__((noreturn));

#endif
