/*
 * fdpass.c - SCM_RIGHTS in both directions.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_BIND (root, runtime deny filter), the broker (broker user, broker
 *   allowlist) and its spares and children (broker user, broker and child
 *   allowlists)
 *
 * The receiving side never trusts the sender about how many descriptors
 * came along: every fd the kernel installed is recorded (up to FDPASS_MAX,
 * the control buffer's size, so more than that shows up as MSG_CTRUNC) and
 * the caller closes whatever its message type does not declare.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"

ssize_t
send_fds(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
	} cmsgbuf;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf,
	    .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cmsg;
	ssize_t n;

	if (nfds < 0 || nfds > FDPASS_MAX) {
		errno = EINVAL;
		return -1;
	}
	if (nfds > 0) {
		memset(&cmsgbuf, 0, sizeof(cmsgbuf));
		msg.msg_control = cmsgbuf.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		cmsg = CMSG_FIRSTHDR(&msg);
		cmsg->cmsg_level = SOL_SOCKET;
		cmsg->cmsg_type = SCM_RIGHTS;
		cmsg->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(cmsg), fds, sizeof(int) * (size_t)nfds);
	}
	do
		n = sendmsg(sock, &msg, MSG_NOSIGNAL);
	while (n == -1 && errno == EINTR);
	return n;
}

static void
collect_rights(struct cmsghdr *cmsg, struct fdpass_rx *rx)
{
	size_t payload = cmsg->cmsg_len - CMSG_LEN(0);
	size_t i, n = payload / sizeof(int);
	int fd;

	for (i = 0; i < n; i++) {
		memcpy(&fd, CMSG_DATA(cmsg) + i * sizeof(int), sizeof(int));
		if (rx->nfds < FDPASS_MAX)
			rx->fds[rx->nfds++] = fd;
		else {
			close(fd);
			rx->truncated = 1;
		}
	}
}

ssize_t
recv_fds(int sock, void *buf, size_t cap, struct fdpass_rx *rx)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * FDPASS_MAX)];
	} cmsgbuf;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cmsgbuf.buf, .msg_controllen = sizeof(cmsgbuf) };
	struct cmsghdr *cmsg;
	ssize_t n;

	memset(rx, 0, sizeof(*rx));
	do
		n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
	while (n == -1 && errno == EINTR);
	if (n == -1)
		return -1;
	for (cmsg = CMSG_FIRSTHDR(&msg); cmsg != NULL;
	    cmsg = CMSG_NXTHDR(&msg, cmsg)) {
		if (cmsg->cmsg_level == SOL_SOCKET &&
		    cmsg->cmsg_type == SCM_RIGHTS)
			collect_rights(cmsg, rx);
		else
			rx->foreign = 1;
	}
	if (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))
		rx->truncated = 1;
	return n;
}

void
fdpass_close(struct fdpass_rx *rx)
{
	int i;

	for (i = 0; i < rx->nfds; i++)
		close(rx->fds[i]);
	rx->nfds = 0;
}
