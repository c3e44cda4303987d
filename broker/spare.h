/*
 * spare.h - children forked while the broker is idle, each waiting for
 * one agent socket, so that a burst of connections waits on no fork.
 * runs in: the broker (broker user, broker allowlist) and its spares (broker
 *   user, the broker allowlist, then the child's stacked on it)
 */
#ifndef SBX_SPARE_H
#define SBX_SPARE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define SPARES_MAX	8

struct spares {
	pid_t	pid[SPARES_MAX];
	int	sock[SPARES_MAX];	/* our end of each one's socketpair */
	size_t	n;
};

/*
 * A new spare. In the parent: its pid, or -1 (none made). In the spare:
 * 0, with every other spare's end closed and its own in *end.
 */
pid_t	spare_fork(struct spares *, int *end);
/* In a spare: the agent socket the parent sends, or -1 if it closed
 * its end instead (it stops, or died). */
int	spare_wait(int end);
/* The agent socket to the newest spare: its pid, or -1 if none took
 * it (none left, or each one asked was gone). */
pid_t	spare_hand(struct spares *, int agent);
/* pid was reaped: if it was a waiting spare, it is forgotten. */
bool	spare_reaped(struct spares *, pid_t);
/* Every spare's end closed: each one exits. */
void	spares_close(struct spares *);

#endif
