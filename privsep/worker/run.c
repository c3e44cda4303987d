/*
 * run.c - one runtime call: fork, execve with a clean environment (never
 * a shell), its stdout and stderr captured, killed at its deadline; and
 * what to say when it fails.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and a runtime call's child until its exec (root, runtime
 *   deny filter)
 *
 * A job (provision.c) calls the runtime through run_logged: a failure is
 * logged with the call's verb, its exit status and the runtime's own
 * words, any secret scrubbed, and explain() turns it into the agent's one
 * sentence.
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
#include "msg.h"
#include "run.h"

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

/* Replace every occurrence of secret in s by "***". */
static void
scrub(char *s, const char *secret)
{
	size_t n = strlen(secret);
	char *p;

	if (n < 3)	/* secrets are 32 hex digits */
		return;
	while ((p = strstr(s, secret)) != NULL) {
		memmove(p + 3, p + n, strlen(p + n) + 1);	/* n >= 3 */
		p[0] = p[1] = p[2] = '*';
	}
}

/* The runtime's first non-empty line of err, at most 100 bytes. */
static void
first_line(char *dst, size_t cap, const char *prefix, const char *text)
{
	size_t n;

	text += strspn(text, "\n");
	if ((n = strcspn(text, "\n")) > 100)
		n = 100;
	snprintf(dst, cap, "%s%.*s", prefix, (int)n, text);
}

/*
 * One line in the log for a failed runtime call: what ran, how it ended,
 * what the runtime said (its stderr, newlines folded, already scrubbed).
 */
static void
log_runtime_failure(char *const argv[], const struct run_result *r)
{
	const char *verb = argv[1] != NULL ? argv[1] : "?";
	char said[sizeof(r->err)];
	size_t i;

	strlcpy(said, r->err, sizeof(said));
	for (i = 0; said[i] != '\0'; i++)
		if (said[i] == '\n' || said[i] == '\r')
			said[i] = said[i + 1] == '\0' ? '\0' : ' ';
	if (r->exec_errno != 0)
		log_warnx("runtime %s %s: cannot execute: %s", argv[0], verb,
		    strerror(r->exec_errno));
	else if (r->status == -1)
		log_warnx("runtime %s %s: killed at its deadline; said: %s",
		    argv[0], verb, said[0] ? said : "nothing");
	else
		log_warnx("runtime %s %s: exit status %d; said: %s", argv[0],
		    verb, r->status, said[0] ? said : "nothing");
}

/* Run argv; on failure log it. 0 when the runtime exited 0. */
int
run_logged(char *const argv[], char *const envp[], int64_t deadline,
    const char *secret, struct run_result *r)
{
	run_argv(argv, envp, deadline, r);
	if (secret != NULL) {
		scrub(r->err, secret);
		scrub(r->out, secret);
	}
	if (r->status != 0)
		log_runtime_failure(argv, r);
	return r->status == 0 ? 0 : -1;
}

/* The agent's sentence for a failed runtime call. */
void
explain(char *msg, size_t cap, const char *what, const char *image,
    const struct run_result *r)
{
	if (r->exec_errno != 0)
		snprintf(msg, cap, "%s: the container runtime could not be "
		    "executed (%s).", what, strerror(r->exec_errno));
	else if (r->status == -1)
		snprintf(msg, cap, "%s: the container runtime did not answer "
		    "in time.", what);
	else if (image != NULL && (strstr(r->err, "image not known") != NULL ||
	    strstr(r->err, "No such image") != NULL ||
	    strstr(r->err, "initializing source") != NULL))
		snprintf(msg, cap, "%s: image %.60s is missing (run make "
		    "images).", what, image);
	else if (strstr(r->err, "netavark") != NULL ||
	    strstr(r->err, "slirp4netns") != NULL ||
	    strstr(r->err, "iptables") != NULL ||
	    strstr(r->err, "network namespace") != NULL) {
		char line[SBX_MESSAGE_MAX];

		first_line(line, sizeof(line), "", r->err);
		snprintf(msg, cap, "%s: the runtime's network back-end "
		    "failed: %.100s", what, line);
	} else {
		char pfx[64];

		snprintf(pfx, sizeof(pfx), "%s: the runtime failed: ", what);
		first_line(msg, cap, pfx, r->err);
	}
}
