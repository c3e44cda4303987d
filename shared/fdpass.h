/*
 * fdpass.h - one message plus SCM_RIGHTS fds over a Unix socket.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_BIND (root, runtime deny filter), the broker (broker user, broker
 *   allowlist) and its spares and children (broker user, broker and child
 *   allowlists)
 */
#ifndef SBX_FDPASS_H
#define SBX_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

#define FDPASS_MAX	4

/* What recv_fds saw besides the payload, for the receiver to judge. */
struct fdpass_rx {
	int	fds[FDPASS_MAX];
	int	nfds;
	int	truncated;	/* MSG_TRUNC or MSG_CTRUNC: reject */
	int	foreign;	/* a control message other than SCM_RIGHTS */
};

ssize_t	send_fds(int sock, const void *buf, size_t len, const int *fds,
	    int nfds);
ssize_t	recv_fds(int sock, void *buf, size_t cap, struct fdpass_rx *rx);
void	fdpass_close(struct fdpass_rx *rx);

#endif
