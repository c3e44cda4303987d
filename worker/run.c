/*
 * run.c - one runtime call: fork, execve with a clean environment (never
 * a shell), its stdout and stderr captured, killed at its deadline.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "work.h"

static void
drain_into(int fd, char *buf, size_t cap, size_t *len)
{
	ssize_t n;

	for (;;) {
		if (*len + 1 >= cap) {
			char sink[512];

			n = read(fd, sink, sizeof(sink));
		} else
			n = read(fd, buf + *len, cap - 1 - *len);
		if (n > 0 && *len + 1 < cap)
			*len += (size_t)n;
		if (n <= 0 && !(n == -1 && errno == EINTR))
			break;
	}
	buf[*len] = '\0';
}

/*
 * Did execve work? The child's end of a close-on-exec pipe closes at a
 * successful exec and carries execve's errno otherwise, so an exit status
 * of 127 from the runtime itself is never taken for "not executed".
 */
static int
exec_result(int fd)
{
	int err = 0;
	ssize_t n;

	while ((n = read(fd, &err, sizeof(err))) == -1 && errno == EINTR)
		;
	close(fd);
	return n == (ssize_t)sizeof(err) ? err : 0;
}

static void
drain_pair(struct pollfd *pfd, struct run_result *r, size_t *olen,
    size_t *elen, int *open_fds)
{
	if (pfd[0].fd >= 0 && pfd[0].revents) {
		drain_into(pfd[0].fd, r->out, sizeof(r->out), olen);
		if (pfd[0].revents & (POLLHUP | POLLERR)) {
			pfd[0].fd = -1;
			(*open_fds)--;
		}
	}
	if (pfd[1].fd >= 0 && pfd[1].revents) {
		drain_into(pfd[1].fd, r->err, sizeof(r->err), elen);
		if (pfd[1].revents & (POLLHUP | POLLERR)) {
			pfd[1].fd = -1;
			(*open_fds)--;
		}
	}
}

/*
 * fork + execve argv with envp; stdout and stderr captured (truncated to
 * their buffers), killed at the deadline. Never a shell.
 */
int
run_argv(char *const argv[], char *const envp[], int64_t deadline,
    struct run_result *r)
{
	struct pollfd pfd[2];
	int out[2], err[2], ex[2], status, open_fds = 2;
	size_t olen = 0, elen = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	r->status = -1;
	if (pipe2(out, O_CLOEXEC) == -1 || pipe2(err, O_CLOEXEC) == -1 ||
	    pipe2(ex, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		/* The runtime call dies with its worker (and so with the
		 * monitor): a podman run that outlived them could make a
		 * container after the next monitor's adoption looked. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		if (ex[1] != 3 && (dup2(ex[1], 3) == -1 ||
		    fcntl(3, F_SETFD, FD_CLOEXEC) == -1))
			_exit(127);
		closefrom(4);
		execve(argv[0], argv, envp);
		status = errno;
		_exit(write(3, &status, sizeof(status)) == sizeof(status) ?
		    127 : 126);
	}
	close(out[1]);
	close(err[1]);
	close(ex[1]);
	r->exec_errno = exec_result(ex[0]);
	set_nonblock(out[0]);
	set_nonblock(err[0]);
	pfd[0] = (struct pollfd){ .fd = out[0], .events = POLLIN };
	pfd[1] = (struct pollfd){ .fd = err[0], .events = POLLIN };
	while (open_fds > 0) {
		int64_t left = deadline - now_ms();

		if (left <= 0) {
			kill(pid, SIGKILL);
			snprintf(r->err, sizeof(r->err), "timed out");
			break;
		}
		if (poll(pfd, 2, (int)(left > 1000 ? 1000 : left)) == -1 &&
		    errno != EINTR)
			break;
		drain_pair(pfd, r, &olen, &elen, &open_fds);
	}
	close(out[0]);
	close(err[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	if (open_fds == 0 && WIFEXITED(status) && r->exec_errno == 0)
		r->status = WEXITSTATUS(status);
	return 0;
}
