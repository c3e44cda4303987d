/*
 * iox.c - reads and writes that end by a deadline, on non-blocking fds,
 * so a slow or stuck peer costs a bounded wait and never a hang.
 * runs in: the monitor (root, monitor allowlist once started) and a worker's
 *   fork before its exec (root, runtime deny filter); sbx-worker jobs and
 *   their children (root, runtime deny filter), the prober (the sandbox's
 *   prober uid, probe allowlist), a session child (root until its drop, then
 *   the sandbox's prober uid, session allowlist); the broker (broker user,
 *   broker allowlist) and its children (broker user, broker and child
 *   allowlists)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>

#include "iox.h"

static int64_t
clock_ms(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t
now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* For times that must survive a restart (record.c): the wall clock. */
int64_t
wall_ms(void)
{
	return clock_ms(CLOCK_REALTIME);
}

int
set_nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl == -1)
		return -1;
	return fcntl(fd, F_SETFL, fl | O_NONBLOCK);
}

static int
wait_fd(int fd, short events, int64_t deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int64_t left;
	int r;

	for (;;) {
		left = deadline - now_ms();
		if (left <= 0)
			return 0;
		r = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 1;
		if (r == -1 && errno != EINTR)
			return -1;
	}
}

int
wait_readable(int fd, int64_t deadline)
{
	return wait_fd(fd, POLLIN, deadline);
}

int
write_all(int fd, const void *buf, size_t len, int64_t deadline)
{
	const char *p = buf;
	ssize_t n;
	int r;

	while (len > 0) {
		n = write(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno != EAGAIN)
			return -1;
		if ((r = wait_fd(fd, POLLOUT, deadline)) <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}

int
read_full(int fd, void *buf, size_t len, int64_t deadline)
{
	char *p = buf;
	ssize_t n;
	int r;

	while (len > 0) {
		n = read(fd, p, len);
		if (n > 0) {
			p += n;
			len -= (size_t)n;
			continue;
		}
		if (n == 0) {
			errno = EPIPE;
			return -1;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN)
			return -1;
		if ((r = wait_fd(fd, POLLIN, deadline)) <= 0) {
			if (r == 0)
				errno = ETIMEDOUT;
			return -1;
		}
	}
	return 0;
}
