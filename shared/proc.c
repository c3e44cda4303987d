/*
 * proc.c - children of the monitor (workers, the broker) and of a worker
 * (runtime calls, listings): what each one starts with, and waiting for
 * one without waiting forever.
 * runs in: the monitor (root, monitor allowlist once started), its forks of a
 *   worker and of the broker until their exec (root, unfiltered);
 *   sbx-worker's JOB_ADOPT and JOB_PURGE, and their listings' children until
 *   their exec (root, runtime deny filter)
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "proc.h"

void
proc_reset_signals(void)
{
	sigset_t none;
	int s;

	for (s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			signal(s, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

void
proc_child_setup(int in_fd, int keep_fd, int exe_fd)
{
	int null;

	/* Out of the way of fds 3 and 4 first: keep_fd may be 4, exe_fd 3. */
	if (exe_fd >= 0 && (exe_fd = fcntl(exe_fd, F_DUPFD_CLOEXEC, 5)) == -1)
		_exit(1);
	if (in_fd >= 0 && dup2(in_fd, STDIN_FILENO) == -1)
		_exit(1);
	setpgid(0, 0);
	proc_reset_signals();
	/* Nothing would read a child that outlived its parent. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(1);
	if ((null = open("/dev/null", O_RDWR)) != -1) {
		if (in_fd < 0)
			dup2(null, STDIN_FILENO);
		dup2(null, STDOUT_FILENO);
		if (null > STDERR_FILENO)
			close(null);
	}
	if (keep_fd >= 0 && keep_fd != 3) {
		if (dup2(keep_fd, 3) == -1)
			_exit(1);
		close(keep_fd);
	}
	if (exe_fd >= 0 && dup3(exe_fd, 4, O_CLOEXEC) == -1)
		_exit(1);
	closefrom(exe_fd >= 0 ? 5 : keep_fd >= 0 ? 4 : 3);
	/* Whatever sat at 3 (a descriptor the job came with) is not its. */
	if (keep_fd < 0 && exe_fd >= 0)
		(void)close(3);
	if (keep_fd >= 0)
		fcntl(3, F_SETFD, FD_CLOEXEC);
}

int
proc_pidfd(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

int
proc_wait(pid_t pid, int64_t deadline)
{
	int pidfd = proc_pidfd(pid), status;
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int64_t left;

	while (pidfd != -1 && (left = deadline - now_ms()) > 0 &&
	    poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) == 0)
		;
	if (pidfd == -1 || deadline - now_ms() <= 0)
		kill(pid, SIGKILL);
	if (pidfd != -1)
		close(pidfd);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return status;
}

ssize_t
proc_file(pid_t pid, const char *file, char *buf, size_t cap)
{
	char path[40];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, cap - 1);
	close(fd);
	if (n < 0 || (size_t)n == cap - 1)
		return -1;
	buf[n] = '\0';
	return n;
}

uint64_t
proc_start(pid_t pid)
{
	char buf[1024], *p, *end;
	unsigned long long v;
	int field;

	/* The name (field 2) is the process's own choice: past its last
	 * ')' come fields 3 on, blank-separated; the start is field 22. */
	if (proc_file(pid, "stat", buf, sizeof(buf)) <= 0 ||
	    (p = strrchr(buf, ')')) == NULL)
		return 0;
	for (field = 2; field < 22; field++)
		if ((p = strchr(p + 1, ' ')) == NULL)
			return 0;
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	return errno != 0 || end == p + 1 ? 0 : (uint64_t)v;
}
