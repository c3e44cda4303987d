/*
 * iox.h - deadline-bounded I/O and the monotonic clock.
 * runs in: the monitor (root, monitor allowlist once started) and a worker's
 *   fork before its exec (root, runtime deny filter); sbx-worker jobs and
 *   their children (root, runtime deny filter), the prober (the sandbox's
 *   prober uid, probe allowlist), a session child (root until its drop, then
 *   the sandbox's prober uid, session allowlist); the broker (broker user,
 *   broker allowlist) and its children (broker user, broker and child
 *   allowlists)
 */
#ifndef SBX_IOX_H
#define SBX_IOX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

int64_t	now_ms(void);
int64_t	wall_ms(void);
int	set_nonblock(int fd);
/* 0 on success; -1 with errno (ETIMEDOUT past the deadline, EPIPE on EOF). */
int	write_all(int fd, const void *buf, size_t len, int64_t deadline);
int	read_full(int fd, void *buf, size_t len, int64_t deadline);
/* Wait for fd to be readable: 1 ready, 0 deadline passed, -1 error. */
int	wait_readable(int fd, int64_t deadline);

#endif
