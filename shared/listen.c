/*
 * listen.c - does something listen at a service's socket or loopback
 * port?
 * runs in: the monitor's loop (root, monitor allowlist) and sbx-worker's
 *   JOB_ADOPT (root, runtime deny filter)
 *
 * The monitor's hit check (liveness.c) and adoption's (a worker's).
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "listen.h"

/* Was a connect that said EINPROGRESS refused already? A loopback SYN
 * is answered within the call, but the refusal can reach the socket
 * after the call chose its answer (seen on Linux 6.18): its error says
 * so. */
static bool
refused(int fd)
{
	socklen_t len = sizeof(int);
	int err = 0;

	return getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 &&
	    err != 0;
}

/*
 * Does something listen there? A non-blocking connect, from the loop: it
 * either completes (loopback and Unix connects are made in the call),
 * is refused (at once, or by the time the call returns: refused()), or
 * is still pending because the backlog is full, which says that a
 * listener is there. Nothing a tenant does makes it wait.
 */
bool
rt_listening(const struct sbx_conn *c)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)c->port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	bool unix = c->socket[0] != '\0';
	int fd, rc;

	/*
	 * Out of descriptors we cannot look; the pidfd said the container
	 * lives, and a live sandbox must not be evicted for our own lack.
	 */
	if ((fd = socket(unix ? AF_UNIX : AF_INET,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return errno == EMFILE || errno == ENFILE;
	if (unix) {
		strlcpy(sun.sun_path, c->socket, sizeof(sun.sun_path));
		rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	} else
		rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (rc == -1 && (errno == EINPROGRESS || errno == EAGAIN))
		rc = refused(fd) ? -1 : 0;
	close(fd);
	return rc == 0;
}
