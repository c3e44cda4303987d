/*
 * worker.c - the monitor's only way to do slow things.
 * runs in: the monitor's loop (root, unfiltered), and the workers it forks
 *
 * A worker is a fork of the monitor in its own process group, with only
 * stdin/stdout on /dev/null, stderr and its result pipe open, and the
 * runtime seccomp deny list loaded, which executes the monitor's binary
 * anew with its job (helper.c). It writes one fixed-size result and
 * exits; the monitor reads it from the poll loop. Past its deadline the
 * whole process group is killed and the result is "failed".
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdio.h>

#include "iox.h"
#include "log.h"
#include "scfilter.h"
#include "worker.h"

void
workers_init(struct worker_pool *p, unsigned max,
    const struct sbx_config *cfg)
{
	TAILQ_INIT(&p->live);
	p->n = 0;
	p->max = max;
	p->cfg = cfg;
}

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

/* In a fresh child of the monitor: nothing inherited but keep_fd. */
void
worker_child_setup(int keep_fd)
{
	int null;

	setpgid(0, 0);
	proc_reset_signals();
	/* A worker never outlives the monitor: nothing would read it. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1)
		_exit(1);
	if ((null = open("/dev/null", O_RDWR)) != -1) {
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
	closefrom(keep_fd >= 0 ? 4 : 3);
	if (keep_fd >= 0)
		fcntl(3, F_SETFD, FD_CLOEXEC);
}

int
worker_spawn(struct worker_pool *p, enum helper_job job, const void *arg,
    size_t len, size_t result_size, int64_t deadline, worker_done done,
    void *done_arg)
{
	struct worker *w;
	pid_t monitor = getpid();
	int pfd[2];

	if (p->n >= p->max) {
		errno = EAGAIN;
		return -1;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->buf = calloc(1, result_size)) == NULL) {
		free(w);
		return -1;
	}
	if (pipe2(pfd, O_CLOEXEC) == -1)
		goto fail;
	if ((w->pid = fork()) == -1) {
		close(pfd[0]);
		close(pfd[1]);
		goto fail;
	}
	if (w->pid == 0) {
		close(pfd[0]);
		worker_child_setup(pfd[1]);
		if (getppid() != monitor)	/* it died before the prctl */
			_exit(1);
		if (sc_load_deny("runtime") == -1)
			_exit(126);
		helper_exec(p->cfg, job, arg, len);
	}
	close(pfd[1]);
	set_nonblock(pfd[0]);
	w->fd = pfd[0];
	w->want = result_size;
	w->deadline = deadline;
	w->done = done;
	w->arg = done_arg;
	TAILQ_INSERT_TAIL(&p->live, w, entry);
	p->n++;
	return 0;
fail:
	free(w->buf);
	free(w);
	return -1;
}

size_t
workers_pollfds(struct worker_pool *p, struct pollfd *pfd, size_t max)
{
	struct worker *w;
	size_t n = 0;

	TAILQ_FOREACH(w, &p->live, entry) {
		if (n == max)
			break;
		pfd[n].fd = w->fd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

static void
finish(struct worker_pool *p, struct worker *w)
{
	int ok = w->got == w->want && !w->killed;

	TAILQ_REMOVE(&p->live, w, entry);
	p->n--;
	close(w->fd);
	if (!ok)
		kill(-w->pid, SIGKILL);
	w->done(w->arg, ok ? w->buf : NULL, ok ? w->got : 0);
	explicit_bzero(w->buf, w->want);
	free(w->buf);
	free(w);
}

static void
on_readable(struct worker_pool *p, struct worker *w)
{
	ssize_t n;

	for (;;) {
		if (w->got == w->want) {
			finish(p, w);	/* the rest of its life is not ours */
			return;
		}
		n = read(w->fd, w->buf + w->got, w->want - w->got);
		if (n > 0) {
			w->got += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno == EAGAIN)
			return;
		finish(p, w);	/* EOF or error: short result */
		return;
	}
}

void
workers_events(struct worker_pool *p, const struct pollfd *pfd, size_t n)
{
	struct worker *w, *next;
	size_t i;

	for (i = 0; i < n; i++) {
		if (pfd[i].revents == 0)
			continue;
		TAILQ_FOREACH_SAFE(w, &p->live, entry, next)
			if (w->fd == pfd[i].fd) {
				on_readable(p, w);
				break;
			}
	}
}

int64_t
workers_next_deadline(struct worker_pool *p)
{
	struct worker *w;
	int64_t d = INT64_MAX;

	TAILQ_FOREACH(w, &p->live, entry)
		if (w->deadline < d)
			d = w->deadline;
	return d;
}

void
workers_expire(struct worker_pool *p, int64_t now)
{
	struct worker *w, *next;

	TAILQ_FOREACH_SAFE(w, &p->live, entry, next)
		if (w->deadline <= now) {
			log_warnx("worker %d passed its deadline; killed",
			    (int)w->pid);
			w->killed = 1;
			finish(p, w);
		}
}

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
