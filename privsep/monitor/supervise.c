/*
 * supervise.c - the broker's life cycle, seen from the monitor.
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * The broker is started by the spawner (spawner.c: a fresh address space: nothing of the
 * monitor's memory, the cache and its passwords included, survives into
 * it), with exactly three descriptors besides stdio: the agent socket on
 * fd 3, its end of a private SOCK_SEQPACKET channel on fd 4, and on fd 5
 * a sealed copy of the subordinate uid ranges (numbers only); without
 * -d, its stderr is a pipe whose lines a worker logs for it. A broker
 * that dies is started again after a backoff that doubles per quick
 * failure, up to 5 s; the cache lives in the monitor and is untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "supervise.h"
#include "proc.h"
#include "jobpool.h"
#include "spawner.h"

#define BACKOFF_MIN_MS	100
#define BACKOFF_MAX_MS	5000
#define HEALTHY_MS	10000

/* The ranges in a sealed memfd: the broker reads them, cannot change
 * them, and checks them (subrange_valid) before use. */
static int
subuids_fd(const struct broker_proc *b)
{
	size_t len = b->nsubuids * sizeof(*b->subuids);
	int fd;

	if ((fd = memfd_create("sbx-subuids", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1)
		return -1;
	if ((len > 0 && write(fd, b->subuids, len) != (ssize_t)len) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW |
	    F_SEAL_WRITE | F_SEAL_SEAL) == -1 || lseek(fd, 0, SEEK_SET) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

int
broker_start(struct broker_proc *b, int listen_fd, int64_t now)
{
	int sp[2], p[2], ranges;
	pid_t pid;

	/* Non-blocking at both ends: the broker drops a line rather than
	 * wait for the worker that reads them. */
	if (!b->foreground && b->log_r == -1) {
		if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
			return -1;
		b->log_r = p[0];
		b->log_w = p[1];
	}
	broker_logger(b);
	if ((ranges = subuids_fd(b)) == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1) {
		close(ranges);
		return -1;
	}
	pid = spawn_broker(&b->exe, b->foreground, listen_fd, sp[1], ranges,
	    b->log_w);
	close(ranges);
	close(sp[1]);
	if (pid == -1) {
		close(sp[0]);
		return -1;
	}
	b->pid = pid;
	b->chan = sp[0];
	b->started_ms = now;
	b->restart_at = 0;
	log_info("broker started, pid %d", (int)pid);
	return 0;
}

void
broker_died(struct broker_proc *b, int64_t now, int stopping)
{
	int64_t delay;

	if (b->chan != -1)
		close(b->chan);
	b->chan = -1;
	b->pid = 0;
	if (stopping) {
		log_info("broker stopped");
		return;
	}
	if (now - b->started_ms > HEALTHY_MS)
		b->failures = 0;
	delay = (int64_t)BACKOFF_MIN_MS << (b->failures < 6 ? b->failures : 6);
	if (delay > BACKOFF_MAX_MS)
		delay = BACKOFF_MAX_MS;
	b->failures++;
	b->restart_at = now + delay;
	log_warnx("broker died; restarting in %lld ms", (long long)delay);
}

/* None with -d (no pipe). A worker that fails to start is tried again
 * at the next tick; the lines wait in the pipe meanwhile. */
void
broker_logger(struct broker_proc *b)
{
	if (b->log_r != -1 && b->logger <= 0 &&
	    (b->logger = worker_spawn_long(JOB_BROKERLOG, b->log_r)) == -1)
		b->logger = 0;
}

void
broker_kill(struct broker_proc *b, const char *why)
{
	if (b->pid <= 0)
		return;
	log_warnx("killing the broker: %s", why);
	kill(-b->pid, SIGKILL);
	kill(b->pid, SIGKILL);
}

