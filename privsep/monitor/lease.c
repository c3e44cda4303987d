/*
 * lease.c - bind_pid: a sandbox that lives as long as a process of its
 * owner's.
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 *
 * The process is held by a pidfd, which turns readable when it exits (the
 * loop polls them all through one epoll descriptor); a pid is taken only
 * for a live process whose real uid is the caller's, checked after the
 * pidfd is open, so that the pidfd and the checked process are one. Its
 * start time (/proc/PID/stat) goes into the record, so that a restart
 * tells it from a later process with the same pid.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lease.h"
#include "proc.h"

/* The real uid of pid, from its status; -1 if not found. */
static long long
proc_uid(pid_t pid)
{
	char buf[4096], *p, *end;
	long long uid;

	if (proc_file(pid, "status", buf, sizeof(buf)) == -1 ||
	    (p = strstr(buf, "\nUid:\t")) == NULL)
		return -1;
	errno = 0;
	uid = strtoll(p + 6, &end, 10);
	return errno != 0 || end == p + 6 || uid < 0 ? -1 : uid;
}

static bool
alive(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 0;
}

int
lease_open(pid_t pid, uid_t uid, uint64_t start, struct sbx_lease *l)
{
	long long owner;

	l->pidfd = -1;
	if (pid <= 0 || (l->pidfd = proc_pidfd(pid)) == -1)
		return -1;
	l->pid = pid;
	l->start = proc_start(pid);
	owner = proc_uid(pid);
	if (owner != (long long)uid || l->start == 0 ||
	    (start != 0 && l->start != start) || !alive(l->pidfd)) {
		close(l->pidfd);
		l->pidfd = -1;
		return -1;
	}
	return 0;
}
