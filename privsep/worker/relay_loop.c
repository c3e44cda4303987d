/*
 * relay_loop.c - the relay's work: bytes between the namespace's one
 * abstract address and a service's port on the host's 127.0.0.1.
 * runs in: the relay that the prober and a session child fork, after its
 *   drop (the sandbox's prober uid, not dumpable, runtime deny filter)
 *
 * relay.c's relay_start opens the listener, takes the relay back to the
 * host's network and drops it; from there on the relay runs only this,
 * and reads nothing of what it passes on.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "relay_loop.h"

/* n bytes of buf to fd, blocking; 0 or -1. */
static int
put_all(int fd, const char *buf, size_t n)
{
	ssize_t w;

	while (n > 0)
		if ((w = write(fd, buf, n)) > 0) {
			buf += w;
			n -= (size_t)w;
		} else if (w == -1 && errno != EINTR)
			return -1;
	return 0;
}

/* Bytes both ways between the client's connection (c) and the
 * service's (t), unread. The service's EOF is passed on; the client's
 * ends the copy (neither protocol half-closes), so that a client that
 * gave up on a silent service frees the relay for its next try. */
static void
relay_copy(int c, int t)
{
	struct pollfd p[2] = { { .fd = c, .events = POLLIN },
	    { .fd = t, .events = POLLIN } };
	int fd[2] = { c, t }, i;
	char buf[16384];
	ssize_t n;

	for (;;) {
		if (poll(p, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			return;
		}
		for (i = 0; i < 2; i++) {
			if (p[i].fd == -1 || p[i].revents == 0)
				continue;
			if ((n = read(fd[i], buf, sizeof(buf))) > 0) {
				if (put_all(fd[1 - i], buf, (size_t)n) == -1)
					return;
			} else if (n == 0 && i == 1) {
				(void)shutdown(c, SHUT_WR);
				p[1].fd = -1;
			} else if (n == 0 || errno != EINTR)
				return;
		}
	}
}

void
relay_loop(int l, uint16_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons(port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int c, t;

	for (;;) {
		if ((c = accept4(l, NULL, NULL, SOCK_CLOEXEC)) == -1) {
			if (errno == EINTR)
				continue;
			_exit(1);
		}
		if ((t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) !=
		    -1 && connect(t, (struct sockaddr *)&sin,
		    sizeof(sin)) == 0)
			relay_copy(c, t);
		if (t != -1)
			close(t);
		close(c);
	}
}
