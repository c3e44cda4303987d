/*
 * jobpool.c - the monitor's only way to do slow things: jobs for
 * sbx-worker, the executable opened at start.
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * The monitor puts a job in a sealed memfd; a worker is a child of the
 * monitor (spawner.c) in its own process group, with only the job on
 * stdin, stdout on /dev/null, stderr and its result pipe open, and the
 * runtime seccomp deny list loaded, which executes sbx-worker: from then
 * on it holds the one job it was given (a provision's passwords, say)
 * and nothing else of the monitor's memory. It writes one fixed-size result and exits; the
 * monitor reads it from the poll loop. Past its deadline the whole
 * process group is killed and the result is "failed".
 *
 * A worker counts toward max_workers until its process has exited, which
 * its pidfd tells, not until its result: a reset's worker tidies up after
 * it answered. Its own children (runtime calls, probers, session
 * children) die with it (PR_SET_PDEATHSIG, SIGKILL, sent before its pidfd
 * says it exited), so once it has, none of them runs code of its own.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fdpass.h"
#include "iox.h"
#include "log.h"
#include "proc.h"
#include "jobpool.h"
#include "spawner.h"


static const struct sbx_config	*job_cfg;	/* what jobs' env is made of */
static int			 job_exe = -1;	/* sbx-worker, opened at start */

void
workers_init(struct worker_pool *p, unsigned max,
    const struct sbx_config *cfg)
{
	TAILQ_INIT(&p->live);
	p->n = 0;
	p->max = max;
	job_cfg = cfg;
}

int
workers_open(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;

	if ((fd = open(path, O_PATH | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		goto bad;
	}
	/* Root's and written by nobody else, as the monitor's own binary. */
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || !(st.st_mode & S_IXUSR)) {
		snprintf(err, errlen, "%s: not an executable of root's that "
		    "only root may write", path);
		goto bad;
	}
	job_exe = fd;
	return 0;
bad:
	if (fd != -1)
		close(fd);
	return -1;
}

int
workers_exe(void)
{
	return job_exe;
}

/* What a job needs of [sbx], and how many sections of svcmask follow.
 * JOB_CONFIG's is empty: no config is known yet. */
static void
job_env(struct job_env *e, uint32_t svcmask)
{
	size_t i;

	memset(e, 0, sizeof(*e));
	e->foreground = (uint32_t)log_foreground();
	if (job_cfg == NULL)
		return;
	memcpy(e->runtime, job_cfg->runtime, sizeof(e->runtime));
	e->nruntime_args = (uint32_t)job_cfg->nruntime_args;
	memcpy(e->runtime_args, job_cfg->runtime_args,
	    sizeof(e->runtime_args));
	memcpy(e->run_dir, job_cfg->run_dir, sizeof(e->run_dir));
	memcpy(e->state_dir, job_cfg->state_dir, sizeof(e->state_dir));
	memcpy(e->projects, job_cfg->projects, sizeof(e->projects));
	memcpy(e->subuid_file, job_cfg->subuid_file, sizeof(e->subuid_file));
	e->runtime_timeout = job_cfg->runtime_timeout;
	for (i = 0; i < job_cfg->nservices; i++)
		e->nservices += (svcmask >> i) & 1;
}

/* The job's memfd: head, env, the services of svcmask, the body. */
static int
write_job(int fd, enum job_type type, uint32_t svcmask, const void *job,
    size_t len)
{
	struct job_head h = { .magic = JOB_MAGIC, .type = type, .len = len };
	struct job_env e;
	size_t i;

	job_env(&e, svcmask);
	if (write_all(fd, &h, sizeof(h), INT64_MAX) == -1 ||
	    write_all(fd, &e, sizeof(e), INT64_MAX) == -1)
		return -1;
	for (i = 0; e.nservices > 0 && i < job_cfg->nservices; i++)
		if (((svcmask >> i) & 1) && write_all(fd, &job_cfg->services[i],
		    sizeof(job_cfg->services[i]), INT64_MAX) == -1)
			return -1;
	if (len > 0 && write_all(fd, job, len, INT64_MAX) == -1)
		return -1;
	return fcntl(fd, F_ADD_SEALS, JOB_SEALS) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1 ? -1 : 0;
}

/* The job's sealed memfd, or -1. */
static int
job_fd(enum job_type type, uint32_t svcmask, const void *job, size_t len)
{
	int fd;

	if ((fd = memfd_create("sbx-job", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1)
		return -1;
	if (write_job(fd, type, svcmask, job, len) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A worker for the job, keep_fd (or -1) at its fd 3: its pid, or -1. */
static pid_t
worker_start(enum job_type type, uint32_t svcmask, const void *job,
    size_t len, int keep_fd)
{
	pid_t pid;
	int fd;

	if ((fd = job_fd(type, svcmask, job, len)) == -1) {
		log_warn("worker %s: cannot write its job", job_name(type));
		return -1;
	}
	pid = spawn_worker(type, fd, keep_fd, job_exe);
	close(fd);
	return pid;
}

pid_t
worker_spawn_long(enum job_type type, int keep_fd)
{
	return worker_start(type, 0, NULL, 0, keep_fd);
}

int
worker_spawn_wait(enum job_type type, uint32_t svcmask, const void *job,
    size_t len, int keep_fd, int64_t deadline)
{
	pid_t pid;
	int status;

	if ((pid = worker_start(type, svcmask, job, len, keep_fd)) == -1)
		return -1;
	status = proc_wait(pid, deadline);
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
	    0 : -1;
}

int
worker_spawn(struct worker_pool *p, enum job_type type, uint32_t svcmask,
    const void *arg, size_t len, size_t result_size, int64_t deadline,
    worker_done done, void *done_arg)
{
	return worker_spawn_held(p, type, svcmask, arg, len, result_size,
	    deadline, done, done_arg, NULL, NULL);
}

/* Has w's process exited? Until it has, it is not reaped and its pid
 * and process group are still w's. */
static bool
worker_exited_now(const struct worker *w)
{
	struct pollfd pfd = { .fd = w->pidfd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* w and its process group, killed; never a pid that may be another's. */
static void
worker_kill(struct worker *w)
{
	if (worker_exited_now(w))
		return;
	(void)syscall(SYS_pidfd_send_signal, w->pidfd, SIGKILL, NULL, 0);
	kill(-w->pid, SIGKILL);
}

/* A pool entry for a job of result_size bytes, if the pool has room:
 * NULL with errno EAGAIN when it has not. */
static struct worker *
worker_new(const struct worker_pool *p, size_t result_size)
{
	struct worker *w;

	if (p->n >= p->max) {
		errno = EAGAIN;
		return NULL;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->buf = calloc(1, result_size)) == NULL) {
		free(w);
		return NULL;
	}
	w->want = result_size;
	return w;
}

/* w, its process (pid, pidfd) and its result pipe (fd) known, counted
 * in the pool. */
static void
worker_enter(struct worker_pool *p, struct worker *w, int fd,
    int64_t deadline, worker_done done, void *done_arg, worker_exited exited,
    void *exited_arg)
{
	set_nonblock(fd);
	w->fd = fd;
	w->deadline = deadline;
	w->done = done;
	w->arg = done_arg;
	w->exited = exited;
	w->exited_arg = exited_arg;
	TAILQ_INSERT_TAIL(&p->live, w, entry);
	p->n++;
}

/* w's pidfd, opened before the loop reads its signals, so that the pid
 * is still ours; a worker whose pidfd cannot be had is killed: -1. */
static int
worker_pidfd(struct worker *w, enum job_type type)
{
	if ((w->pidfd = proc_pidfd(w->pid)) != -1)
		return 0;
	log_warn("worker %s: pidfd", job_name(type));
	kill(w->pid, SIGKILL);
	return -1;
}

static void
worker_free(struct worker *w)
{
	free(w->buf);
	free(w);
}

int
worker_spawn_held(struct worker_pool *p, enum job_type type,
    uint32_t svcmask, const void *arg, size_t len, size_t result_size,
    int64_t deadline, worker_done done, void *done_arg,
    worker_exited exited, void *exited_arg)
{
	struct worker *w;
	int pfd[2];

	if ((w = worker_new(p, result_size)) == NULL)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) == -1)
		goto fail;
	w->pid = worker_start(type, svcmask, arg, len, pfd[1]);
	close(pfd[1]);
	if (w->pid == -1) {
		close(pfd[0]);
		goto fail;
	}
	if (worker_pidfd(w, type) == -1) {
		close(pfd[0]);
		goto fail;
	}
	worker_enter(p, w, pfd[0], deadline, done, done_arg, exited,
	    exited_arg);
	return 0;
fail:
	worker_free(w);
	return -1;
}

int
worker_send_held(struct worker_pool *p, pid_t pid, int chan, const void *msg,
    size_t len, size_t result_size, int64_t deadline, worker_done done,
    void *done_arg, worker_exited exited, void *exited_arg)
{
	struct worker *w;
	int rp[2], ep[2], fds[2];
	ssize_t sent;

	if ((w = worker_new(p, result_size)) == NULL)
		return -1;
	if (pipe2(rp, O_CLOEXEC) == -1)
		goto fail;
	if (pipe2(ep, O_CLOEXEC) == -1) {
		close(rp[0]);
		close(rp[1]);
		goto fail;
	}
	fds[0] = rp[1];
	fds[1] = ep[1];
	sent = send_fds(chan, msg, len, fds, 2);
	close(rp[1]);
	close(ep[1]);
	if (sent != (ssize_t)len) {
		close(rp[0]);
		close(ep[0]);
		goto fail;
	}
	/* The end's pipe stands for the process: its EOF is the job's
	 * end; the pid (a group leader that holds the pipe's other end
	 * until it exits) is whom a deadline kills. */
	w->pid = pid;
	w->pidfd = ep[0];
	worker_enter(p, w, rp[0], deadline, done, done_arg, exited,
	    exited_arg);
	return 0;
fail:
	worker_free(w);
	return -1;
}

pid_t
worker_spawn_watched(struct worker_pool *p, enum job_type type,
    uint32_t svcmask, const void *arg, size_t len, int keep_fd,
    worker_exited exited, void *exited_arg)
{
	struct worker *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return -1;
	if ((w->pid = worker_start(type, svcmask, arg, len, keep_fd)) == -1) {
		free(w);
		return -1;
	}
	if (worker_pidfd(w, type) == -1) {
		free(w);
		return -1;
	}
	w->fd = -1;
	w->deadline = INT64_MAX;
	w->uncounted = 1;
	w->exited = exited;
	w->exited_arg = exited_arg;
	TAILQ_INSERT_TAIL(&p->live, w, entry);
	return w->pid;
}

size_t
workers_pollfds(struct worker_pool *p, struct pollfd *pfd, size_t max)
{
	struct worker *w;
	size_t n = 0;

	TAILQ_FOREACH(w, &p->live, entry) {
		if (n == max)
			break;
		pfd[n].fd = w->fd != -1 ? w->fd : w->pidfd;
		pfd[n].events = POLLIN;
		pfd[n].revents = 0;
		n++;
	}
	return n;
}

/* The result is in, or will never be: done is told, and w stays in the
 * pool, its pidfd polled, until its process has exited. */
static void
finish(struct worker *w)
{
	int ok = w->got == w->want && !w->killed;

	close(w->fd);
	w->fd = -1;
	if (!ok)
		worker_kill(w);
	w->done(w->arg, ok ? w->buf : NULL, ok ? w->got : 0);
	explicit_bzero(w->buf, w->want);
	free(w->buf);
	w->buf = NULL;
}

/* Its process exited: it leaves the pool. */
static void
ended(struct worker_pool *p, struct worker *w)
{
	TAILQ_REMOVE(&p->live, w, entry);
	if (!w->uncounted)
		p->n--;
	close(w->pidfd);
	if (w->exited != NULL)
		w->exited(w->exited_arg);
	free(w);
}

static void
on_readable(struct worker *w)
{
	ssize_t n;

	for (;;) {
		if (w->got == w->want) {
			finish(w);	/* what it writes past it is not read */
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
		finish(w);	/* EOF or error: short result */
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
			if (w->fd != -1 && w->fd == pfd[i].fd) {
				on_readable(w);
				break;
			} else if (w->fd == -1 && w->pidfd == pfd[i].fd) {
				ended(p, w);
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
			w->deadline = INT64_MAX;	/* its exit comes next */
			if (w->fd != -1)
				finish(w);
			else
				worker_kill(w);
		}
}

bool
workers_spare(const struct worker_pool *p, unsigned max_provisions,
    size_t provisions)
{
	unsigned need = max_provisions > provisions ?
	    max_provisions - (unsigned)provisions : 0;

	return p->n + need + 2 <= p->max;
}
