/*
 * dispatch.h - validation of every message the broker sends.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#ifndef SBX_DISPATCH_H
#define SBX_DISPATCH_H

#include <stddef.h>
#include <sys/types.h>

#include "fdpass.h"
#include "handle.h"
#include "msg.h"

/* The SO_MARK of an agent socket that has carried its one request. */
#define DISPATCH_MARK	0x73627831u	/* "sbx1" */

/*
 * Checks one received message and its descriptor. On success returns the
 * request type and sets *uid from SO_PEERCRED of the agent's socket, which
 * is marked taken and whose input is shut and empty; the caller owns
 * rx->fds[0] and answers on it. On failure returns -1 with a reason in
 * why, having passed every received fd to release (the monitor's is
 * dispatch_release_apart; fdpass_close for a caller that may wait).
 */
int	dispatch_valid(const void *buf, size_t len, struct fdpass_rx *rx,
	    const char *socket_path, uid_t *uid, char *why, size_t whylen,
	    void (*release)(struct fdpass_rx *));

/* Closes a refused message's descriptors so that none is released in
 * the caller: a child holding copies drops them last, in its exit. */
void	dispatch_release_apart(struct fdpass_rx *rx);

/* The handler of a message dispatch_valid() accepted: the table's. */
void	dispatch_handle(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);

#endif
