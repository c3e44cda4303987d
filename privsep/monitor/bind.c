/*
 * bind.c - the agent socket, from JOB_BIND's worker (privsep/worker/bind.c):
 * making state_dir and binding the socket is root's work on the file
 * system, not the loop's.
 * runs in: the monitor at its start (root, unfiltered)
 *
 * What comes back is checked as anything another process sends: a result
 * of its exact size whose sentence ends, and a descriptor only with no
 * sentence, which must be a listening Unix stream socket bound to
 * sbx.conf's socket.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "bind.h"
#include "iox.h"
#include "log.h"
#include "jobpool.h"

#define BIND_DEADLINE_MS	10000	/* a socket still served: 2 s */

static bool
listens_at(int fd, const char *path)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun), tlen = sizeof(int), alen = sizeof(int);
	int type = 0, listening = 0;

	memset(&sun, 0, sizeof(sun));
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) == 0 &&
	    type == SOCK_STREAM &&
	    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &alen) == 0 &&
	    listening == 1 &&
	    getsockname(fd, (struct sockaddr *)&sun, &len) == 0 &&
	    sun.sun_family == AF_UNIX &&
	    len > offsetof(struct sockaddr_un, sun_path) &&
	    strncmp(sun.sun_path, path, sizeof(sun.sun_path)) == 0;
}

int
bind_result_take(const struct bind_result *r, ssize_t n,
    struct fdpass_rx *rx, const char *path, char *err, size_t errlen)
{
	if (n == (ssize_t)sizeof(*r) && !rx->truncated && !rx->foreign &&
	    memchr(r->err, '\0', sizeof(r->err)) != NULL) {
		if (r->err[0] != '\0' && rx->nfds == 0) {
			snprintf(err, errlen, "%s", r->err);
			return -1;
		}
		if (r->err[0] == '\0' && rx->nfds == 1 &&
		    listens_at(rx->fds[0], path) &&
		    set_nonblock(rx->fds[0]) == 0)
			return rx->fds[0];
	}
	fdpass_close(rx);
	snprintf(err, errlen, "%s: the worker that binds it answered what it "
	    "cannot", path);
	return -1;
}

int
bind_agent_socket(const struct sbx_config *cfg, char *err, size_t errlen)
{
	struct job_bind j = { .mode = cfg->socket_mode };
	struct bind_result r;
	struct fdpass_rx rx = { .nfds = 0 };
	ssize_t n = -1;
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		fatal("socketpair");
	strlcpy(j.socket, cfg->socket, sizeof(j.socket));
	if (worker_spawn_wait(JOB_BIND, 0, &j, sizeof(j), sp[1], now_ms() +
	    BIND_DEADLINE_MS) == 0)
		n = recv_fds(sp[0], &r, sizeof(r), &rx);
	close(sp[0]);
	close(sp[1]);
	if (n == -1) {
		snprintf(err, errlen, "cannot bind %s: its worker failed (see "
		    "above)", cfg->socket);
		return -1;
	}
	return bind_result_take(&r, n, &rx, cfg->socket, err, errlen);
}
