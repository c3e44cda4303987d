/* child.h - one agent connection, from request bytes to the monitor. */
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
/*
 * A new child, end its channel (spare.c; -1: none, one connection only),
 * SC_SPARE_FD free unless end is it: confined, the agent's request to
 * the monitor, then each socket the parent sends on the channel until it
 * closes it; then exit.
 */
void	child_serve(int agent, int end, const struct child_opts *)
	    __attribute__((noreturn));
/*
 * A spare: the same, its page faults taken and confined before its
 * first agent comes. Exits 0 if its channel closes first.
 */
void	child_spare(int end, const struct child_opts *)
	    __attribute__((noreturn));

#endif
