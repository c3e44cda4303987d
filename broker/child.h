/* child.h - one agent connection, from request bytes to reply bytes. */
#ifndef SBX_CHILD_H
#define SBX_CHILD_H

struct child_opts {
	int	chan;			/* broker channel to the monitor */
	int	request_timeout_ms;	/* for the agent to send its map */
	int	answer_timeout_ms;	/* for the monitor to answer */
};

/* In the parent, before it confines itself: compile the child's filter. */
int	child_prepare(void);
void	child_main(int agent, const struct child_opts *) __attribute__((noreturn));

#endif
