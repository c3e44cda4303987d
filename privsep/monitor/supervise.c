/*
 * supervise.c - the broker's life cycle, seen from the monitor.
 * runs in: the monitor (root, unfiltered), and exec_broker in the broker's
 *   fork before its exec (root, unfiltered)
 *
 * The broker is fork+exec'd (a fresh address space: nothing of the
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
#include "drop_user.h"
#include "supervise.h"
#include "proc.h"
#include "jobpool.h"

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

static void __attribute__((noreturn))
exec_broker(const struct broker_proc *b, const struct sbx_config *cfg,
    int listen_fd, int chan)
{
	char nbuf[16], cbuf[16], tbuf[16], ubuf[32];
	char root[CFG_STR + 8];
	uid_t uid;
	gid_t gid;
	char *argv[16];
	char *const envp[] = { NULL };
	int i = 0, ranges;

	/* broker_kill() kills the group: a broker outside it is refused. */
	if (setpgid(0, 0) == -1)
		_exit(126);
	proc_reset_signals();
	/* The broker is static and has no NSS: it gets numbers. Resolved
	 * before the descriptors are closed, so that none NSS opens (sssd,
	 * LDAP) reaches the broker. */
	if (user_ids(cfg->broker_user, &uid, &gid) == -1 ||
	    (ranges = subuids_fd(b)) == -1)
		_exit(126);
	/* chan may be 3 already: move all out of the way first. */
	if ((listen_fd = fcntl(listen_fd, F_DUPFD, 10)) == -1 ||
	    (chan = fcntl(chan, F_DUPFD, 10)) == -1 ||
	    (ranges = fcntl(ranges, F_DUPFD, 10)) == -1 ||
	    dup2(listen_fd, 3) == -1 || dup2(chan, 4) == -1 ||
	    dup2(ranges, 5) == -1 ||
	    (b->log_w != -1 && dup2(b->log_w, STDERR_FILENO) == -1))
		_exit(126);
	closefrom(6);
	snprintf(ubuf, sizeof(ubuf), "%u:%u", (unsigned)uid, (unsigned)gid);
	snprintf(nbuf, sizeof(nbuf), "%u", cfg->max_children);
	snprintf(cbuf, sizeof(cbuf), "%u", cfg->max_connections_per_uid);
	snprintf(tbuf, sizeof(tbuf), "%u", cfg->request_timeout);
	snprintf(root, sizeof(root), "%s/empty", cfg->state_dir);
	argv[i++] = (char *)(uintptr_t)"sbx-broker";
	if (b->foreground)
		argv[i++] = (char *)(uintptr_t)"-d";
	argv[i++] = (char *)(uintptr_t)"-u";
	argv[i++] = ubuf;
	argv[i++] = (char *)(uintptr_t)"-r";
	argv[i++] = root;
	argv[i++] = (char *)(uintptr_t)"-n";
	argv[i++] = nbuf;
	argv[i++] = (char *)(uintptr_t)"-c";
	argv[i++] = cbuf;
	argv[i++] = (char *)(uintptr_t)"-t";
	argv[i++] = tbuf;
	argv[i] = NULL;
	execve(b->path, argv, envp);
	fprintf(stderr, "sbx-monitor: exec %s: %s\n", b->path, strerror(errno));
	_exit(127);
}

int
broker_start(struct broker_proc *b, const struct sbx_config *cfg,
    int listen_fd, int64_t now)
{
	int sp[2], p[2];
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
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0)
		exec_broker(b, cfg, listen_fd, sp[1]);
	close(sp[1]);
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

