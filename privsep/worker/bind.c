/*
 * bind.c - JOB_BIND, at the monitor's start: state_dir, its empty/ (the
 * broker's chroot), and the agent socket, bound and listening, sent back
 * to the monitor on fd 3 (a socketpair) with a bind_result, or only the
 * result saying why not.
 * runs in: sbx-worker's JOB_BIND (root, runtime deny filter)
 *
 * The monitor checks both (privsep/monitor/bind.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bind.h"
#include "config.h"
#include "fdpass.h"
#include "job.h"

/*
 * Does something accept on the socket? For 2 s: the broker of a monitor
 * just killed -9 holds it until the kernel has delivered its death
 * signal (PR_SET_PDEATHSIG) and it has exited; a live monitor's keeps it.
 */
#define SERVED_TRIES	20

static bool
served(const struct sockaddr_un *sun)
{
	struct timespec pause = { 0, 100 * 1000000L };
	int i, fd, rc;

	for (i = 0; i < SERVED_TRIES; i++) {
		if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
			return false;
		rc = connect(fd, (const struct sockaddr *)sun, sizeof(*sun));
		close(fd);
		if (rc == -1)
			return false;
		nanosleep(&pause, NULL);
	}
	return true;
}

static int
bind_socket(const struct job_bind *j, char *err, size_t errlen)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct stat st;
	int fd;

	strlcpy(sun.sun_path, j->socket, sizeof(sun.sun_path));
	if (lstat(j->socket, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(err, errlen, "%s exists and is not a socket",
			    j->socket);
			return -1;
		}
		if (served(&sun)) {
			snprintf(err, errlen, "%s: another monitor is serving it",
			    j->socket);
			return -1;
		}
		unlink(j->socket);	/* stale, from a monitor killed -9 */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd == -1 || bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    chmod(j->socket, j->mode) == -1 ||
	    listen(fd, SOMAXCONN) == -1) {
		snprintf(err, errlen, "cannot bind %s: %s", j->socket,
		    strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* state_dir (0711) and state_dir/empty (0755, the broker's chroot). */
static int
prepare_state_dir(const struct sbx_config *cfg, char *err, size_t errlen)
{
	char empty[CFG_STR + 8];
	struct stat st;

	snprintf(empty, sizeof(empty), "%s/empty", cfg->state_dir);
	if ((mkdir(cfg->state_dir, 0711) == -1 && errno != EEXIST) ||
	    (mkdir(empty, 0755) == -1 && errno != EEXIST)) {
		snprintf(err, errlen, "cannot create %s: %s", empty,
		    strerror(errno));
		return -1;
	}
	if (stat(empty, &st) == -1 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s must be a root-owned directory not "
		    "writable by others", empty);
		return -1;
	}
	return 0;
}

int
bind_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	const struct job_bind *j = job;
	struct bind_result r;
	int s = -1;

	(void)len;
	memset(&r, 0, sizeof(r));
	if (memchr(j->socket, '\0', sizeof(j->socket)) == NULL)
		strlcpy(r.err, "the socket's path does not end", sizeof(r.err));
	else if (prepare_state_dir(cfg, r.err, sizeof(r.err)) == 0)
		s = bind_socket(j, r.err, sizeof(r.err));
	if (send_fds(fd, &r, sizeof(r), &s, s == -1 ? 0 : 1) !=
	    (ssize_t)sizeof(r))
		return 1;
	return 0;
}
