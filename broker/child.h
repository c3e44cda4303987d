/* child.h - one agent connection, from request bytes to reply bytes. */
#ifndef SBX_CHILD_H
#define SBX_CHILD_H

#include <sys/types.h>

struct child_opts {
	int	chan;			/* broker channel to the monitor */
	int	request_timeout_ms;	/* for the agent to send its map */
	int	answer_timeout_ms;	/* for the monitor to answer */
};

/* In the parent, before it confines itself: compile the child's filter. */
int	child_prepare(void);
/* uid: the agent's SO_PEERCRED, read by the parent, for audit lines only
 * (the monitor reads it again itself; it never trusts ours). */
void	child_main(int agent, uid_t uid, const struct child_opts *)
	    __attribute__((noreturn));
/* The audit line for a refusal the broker makes without the monitor. */
void	audit_refusal(uid_t uid, const char *code);

#endif
