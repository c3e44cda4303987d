/*
 * spare.c - spares: children forked ahead, each waiting for one agent
 * socket (spare_wait) before it becomes a per-connection child.
 * runs in: the broker (broker user, broker allowlist): spare_fork,
 *   spare_hand, spare_reaped, spares_close; and a spare (broker user, broker
 *   allowlist, then the child's stacked on it): spare_fork's return,
 *   spare_wait
 *
 * A fork is the broker's largest cost per connection (the page tables,
 * then copy-on-write faults in both processes), and eight agents that
 * connect at once wait on eight forks in a row. So once no connection
 * has come for a moment (broker.c) the broker forks a few ahead; each
 * installs the child's filter at once, waits on a socketpair of its own
 * for one agent socket and is then an ordinary child (child.c), for
 * that one connection, and exits. A spare has seen nothing of any
 * tenant before its socket arrives, and its filter lets it take no
 * descriptor but that one.
 */
#include <errno.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "fdpass.h"
#include "spare.h"

pid_t
spare_fork(struct spares *s, int *end)
{
	int sp[2];
	pid_t pid;
	size_t i;

	if (s->n == SPARES_MAX ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		for (i = 0; i < s->n; i++)
			close(s->sock[i]);
		s->n = 0;
		close(sp[0]);
		*end = sp[1];
		return 0;
	}
	close(sp[1]);
	s->pid[s->n] = pid;
	s->sock[s->n++] = sp[0];
	return pid;
}

int
spare_wait(int end)
{
	struct pollfd pfd = { .fd = end, .events = POLLIN };
	struct fdpass_rx rx = { .nfds = 0 };
	char byte;
	ssize_t n = -1;

	do {
		if (poll(&pfd, 1, -1) == -1 && errno != EINTR)
			break;
		n = recv_fds(end, &byte, sizeof(byte), &rx);
	} while (n == -1 && (errno == EAGAIN || errno == EINTR));
	close(end);
	if (n != 1 || rx.nfds != 1 || rx.truncated || rx.foreign) {
		fdpass_close(&rx);
		return -1;
	}
	return rx.fds[0];
}

pid_t
spare_hand(struct spares *s, int agent)
{
	const char byte = 'a';
	ssize_t n;
	pid_t pid;
	int sock;

	while (s->n > 0) {
		pid = s->pid[--s->n];
		sock = s->sock[s->n];
		n = send_fds(sock, &byte, sizeof(byte), &agent, 1);
		close(sock);
		if (n == 1)
			return pid;
		/* Gone before it was reaped: the next one. */
	}
	return -1;
}

bool
spare_reaped(struct spares *s, pid_t pid)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (s->pid[i] == pid) {
			close(s->sock[i]);
			s->pid[i] = s->pid[--s->n];
			s->sock[i] = s->sock[s->n];
			return true;
		}
	return false;
}

void
spares_close(struct spares *s)
{
	while (s->n > 0)
		close(s->sock[--s->n]);
}
