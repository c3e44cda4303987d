/*
 * spawner.c - every exec the monitor asks for, a worker's or the broker's,
 * made by a fork of it that keeps the right to exec once the monitor gave
 * it up.
 * runs in: the monitor (root, its own allowlist once confined: it asks and
 *   checks the answer), the spawner (a fork of the monitor made before that,
 *   root, unfiltered: it checks the request and forks), and its forks until
 *   their exec (root, unfiltered, then a worker's runtime deny filter)
 *
 * The monitor's allowlist has no execve (policy/seccomp/monitor.list), and
 * a filter is inherited: a child it forked could never run podman. So
 * before it loads the filter it forks the spawner, which waits on a
 * private SOCK_SEQPACKET channel for one fixed request at a time, with
 * the descriptors the new process gets, and answers with a pid. It forks
 * with CLONE_PARENT: the new process is the monitor's child, which gets
 * its SIGCHLD, opens its pidfd, reaps it and is the parent its
 * PR_SET_PDEATHSIG watches, exactly as when the monitor forked it. The
 * answer comes before the monitor reads its signals again, so the pid
 * cannot be reaped, and so reused, before it is known.
 *
 * Before spawner_start (and for sbx-monitor -t and --purge) the same
 * functions fork the monitor itself.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drop_user.h"
#include "fdpass.h"
#include "iox.h"
#include "log.h"
#include "proc.h"
#include "scfilter.h"
#include "spawner.h"

/* How long the monitor waits for the spawner's answer: a fork. */
#define SPAWN_ANSWER_MS	5000
/* How long after its start or its last request the spawner makes a spare
 * (a reset's job is done in a few ms). */
#define SPARE_DELAY_MS	50

static int	spawn_chan = -1;	/* the monitor's end */
static pid_t	spawn_pid;

pid_t
spawner_pid(void)
{
	return spawn_pid;
}

/*
 * A worker, in its fresh process: its job on stdin, keep_fd at fd 3, and
 * sbx-worker executed from exe, under the runtime deny filter; a spare
 * gets its channel on stdin instead. It holds a copy of its parent's
 * memory until the exec, which leaves it its job alone. Never returns.
 */
static void __attribute__((noreturn))
exec_worker(enum job_type type, int jobfd, int keep_fd, int exe,
    pid_t monitor, int spare)
{
	char *argv[] = { (char *)(uintptr_t)JOB_ARGV0,
	    (char *)(uintptr_t)job_name(type),
	    spare ? (char *)(uintptr_t)JOB_SPARE_ARG : NULL, NULL };
	const char *js = getenv("JOURNAL_STREAM");
	char journal[64], *envp[] = { NULL, NULL };

	/* Its lines go where ours do, with their priority on the journal. */
	if (js != NULL && snprintf(journal, sizeof(journal),
	    "JOURNAL_STREAM=%s", js) < (int)sizeof(journal))
		envp[0] = journal;
	proc_child_setup(jobfd, keep_fd, exe);
	if (getppid() != monitor)	/* it died before the prctl */
		_exit(1);
	if (sc_load_deny("runtime") == -1)
		_exit(126);
	/* The result pipe stays open across this exec only. */
	if (fcntl(3, F_GETFD) != -1 && fcntl(3, F_SETFD, 0) == -1)
		_exit(127);
	syscall(SYS_execveat, 4, "", argv, envp, AT_EMPTY_PATH);
	log_warn("worker %s: cannot execute sbx-worker", job_name(type));
	_exit(127);
}

/*
 * The broker, in its fresh process: the agent socket on fd 3, its end of
 * the channel on fd 4, the sealed ranges on fd 5, stderr the log pipe
 * (without -d), in a process group of its own. Never returns.
 */
static void __attribute__((noreturn))
exec_broker(const struct spawn_broker *sb, int foreground, int listen_fd,
    int chan, int ranges, int log_w)
{
	const struct sbx_config *cfg = sb->cfg;
	char nbuf[16], cbuf[16], tbuf[16], ubuf[32];
	char root[CFG_STR + 8];
	uid_t uid;
	gid_t gid;
	char *argv[16];
	char *const envp[] = { NULL };
	int i = 0;

	/* broker_kill() kills the group: a broker outside it is refused. */
	if (setpgid(0, 0) == -1)
		_exit(126);
	proc_reset_signals();
	/* The broker is static and has no NSS: it gets numbers. Resolved
	 * before the descriptors are closed, so that none NSS opens (sssd,
	 * LDAP) reaches the broker. */
	if (user_ids(cfg->broker_user, &uid, &gid) == -1)
		_exit(126);
	/* Any of them may sit at 3 to 5 already: all out of the way first. */
	if ((listen_fd = fcntl(listen_fd, F_DUPFD, 10)) == -1 ||
	    (chan = fcntl(chan, F_DUPFD, 10)) == -1 ||
	    (ranges = fcntl(ranges, F_DUPFD, 10)) == -1 ||
	    (log_w != -1 && (log_w = fcntl(log_w, F_DUPFD, 10)) == -1) ||
	    dup2(listen_fd, 3) == -1 || dup2(chan, 4) == -1 ||
	    dup2(ranges, 5) == -1 ||
	    (log_w != -1 && dup2(log_w, STDERR_FILENO) == -1))
		_exit(126);
	closefrom(6);
	snprintf(ubuf, sizeof(ubuf), "%u:%u", (unsigned)uid, (unsigned)gid);
	snprintf(nbuf, sizeof(nbuf), "%u", cfg->max_children);
	snprintf(cbuf, sizeof(cbuf), "%u", cfg->max_connections_per_uid);
	snprintf(tbuf, sizeof(tbuf), "%u", cfg->request_timeout);
	snprintf(root, sizeof(root), "%s/empty", cfg->state_dir);
	argv[i++] = (char *)(uintptr_t)"sbx-broker";
	if (foreground)
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
	execve(sb->path, argv, envp);
	fprintf(stderr, "sbx-monitor: exec %s: %s\n", sb->path,
	    strerror(errno));
	_exit(127);
}

static int
is_sealed_memfd(int fd, int seals)
{
	int got = fcntl(fd, F_GET_SEALS);

	return got != -1 && (got & seals) == seals;
}

static int
is_type(int fd, mode_t type)
{
	struct stat st;

	return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == type;
}

static int
sock_opt(int fd, int opt)
{
	socklen_t len = sizeof(int);
	int v;

	return getsockopt(fd, SOL_SOCKET, opt, &v, &len) == 0 &&
	    len == sizeof(v) ? v : -1;
}

static int
bad(char *why, size_t whylen, const char *what)
{
	snprintf(why, whylen, "%s", what);
	return -1;
}

/* A worker's: a job type sbx-worker knows, its job in a memfd sealed as
 * jobpool.c seals it, and fd 3's a pipe or a socket, if any. */
static int
worker_req_valid(const struct spawn_req *r, int nfds, const int *fds,
    char *why, size_t whylen)
{
	if (r->foreground != 0 || job_name(r->type) == NULL)
		return bad(why, whylen, "an unknown job");
	if (nfds != 1 && nfds != 2)
		return bad(why, whylen, "not one or two descriptors");
	if (!is_sealed_memfd(fds[0], JOB_SEALS))
		return bad(why, whylen, "a job that is not a sealed memfd");
	if (nfds == 2 && !is_type(fds[1], S_IFIFO) &&
	    !is_type(fds[1], S_IFSOCK))
		return bad(why, whylen, "fd 3's neither a pipe nor a socket");
	return 0;
}

/* The broker's: a listening stream socket, a seqpacket channel, sealed
 * ranges, and a pipe for its stderr exactly when it is not in the
 * foreground. */
static int
broker_req_valid(const struct spawn_req *r, int nfds, const int *fds,
    char *why, size_t whylen)
{
	if (r->type != 0 || r->foreground > 1)
		return bad(why, whylen, "a broker's fields out of range");
	if (nfds != (r->foreground ? 3 : 4))
		return bad(why, whylen, "not the broker's descriptors");
	if (sock_opt(fds[0], SO_TYPE) != SOCK_STREAM ||
	    sock_opt(fds[0], SO_ACCEPTCONN) != 1)
		return bad(why, whylen, "an agent socket not listening");
	if (sock_opt(fds[1], SO_TYPE) != SOCK_SEQPACKET)
		return bad(why, whylen, "a channel not a seqpacket socket");
	if (!is_sealed_memfd(fds[2], F_SEAL_WRITE | F_SEAL_SHRINK |
	    F_SEAL_GROW))
		return bad(why, whylen, "ranges not a sealed memfd");
	if (nfds == 4 && !is_type(fds[3], S_IFIFO))
		return bad(why, whylen, "a log that is not a pipe");
	return 0;
}

int
spawn_req_valid(const struct spawn_req *r, size_t len, int nfds,
    const int *fds, char *why, size_t whylen)
{
	if (len != sizeof(*r) || r->magic != SPAWN_MAGIC)
		return bad(why, whylen, "not a request");
	if (r->what == SPAWN_WORKER)
		return worker_req_valid(r, nfds, fds, why, whylen);
	if (r->what == SPAWN_BROKER)
		return broker_req_valid(r, nfds, fds, why, whylen);
	return bad(why, whylen, "an unknown request");
}

pid_t
spawn_ans_valid(const struct spawn_ans *a, ssize_t len)
{
	siginfo_t si;

	if (len != (ssize_t)sizeof(*a) || a->magic != SPAWN_MAGIC ||
	    a->pid == 0) {
		errno = EPROTO;
		return -1;
	}
	if (a->pid < 0) {
		errno = a->pid > -4096 ? -a->pid : EPROTO;
		return -1;
	}
	/* Ours, and not reaped yet: any other pid is refused. */
	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)a->pid, &si, WEXITED | WNOHANG | WNOWAIT) ==
	    -1) {
		errno = ESRCH;
		return -1;
	}
	return a->pid;
}

/* fork(), or as the spawner a process whose parent is the monitor. */
static pid_t
fork_for(pid_t monitor)
{
	if (monitor == getpid())
		return fork();
	return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL,
	    NULL, NULL);
}

/*
 * The spawner's spare: a data worker executed ahead (privsep/worker/
 * spare.c), so that a reset or a snapshot, the one job an agent waits on
 * that talks to its own server, costs no exec and no load of libpq on its
 * path. It waits on a channel of its own; the next JOB_DATA's descriptors
 * go to it there, and its pid is the answer. It is the monitor's child
 * like any worker, made SPARE_DELAY_MS after the last was taken, so that
 * its start does not share the cores with the job it follows.
 */
static pid_t	spare_pid;
static int	spare_chan = -1;

static void
spare_make(int exe, pid_t monitor)
{
	int sp[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return;
	if ((pid = fork_for(monitor)) == 0) {
		close(sp[0]);
		exec_worker(JOB_DATA, sp[1], -1, exe, monitor, 1);
	}
	close(sp[1]);
	if (pid == -1) {
		close(sp[0]);
		return;
	}
	spare_pid = pid;
	spare_chan = sp[0];
}

/* The job's descriptors to the spare: its pid, or 0 when there is none
 * or it is gone (its end of the channel closed with it). */
static pid_t
spare_take(const int *fds, int nfds)
{
	const char go = JOB_SPARE_GO;
	pid_t pid = spare_pid;
	int sent;

	if (spare_chan == -1)
		return 0;
	sent = send_fds(spare_chan, &go, 1, fds, nfds) == 1;
	close(spare_chan);
	spare_chan = -1;
	spare_pid = 0;
	return sent ? pid : 0;
}

/* The spawner's act for one checked request: the new pid, or -errno. */
static int32_t
spawn_here(const struct spawn_req *r, const int *fds, int nfds, int exe,
    const struct spawn_broker *sb, pid_t monitor)
{
	pid_t pid;

	if (r->what == SPAWN_WORKER && r->type == JOB_DATA &&
	    (pid = spare_take(fds, nfds)) > 0)
		return pid;
	pid = fork_for(monitor);

	if (pid == -1)
		return -errno;
	if (pid == 0 && r->what == SPAWN_WORKER)
		exec_worker(r->type, fds[0], nfds == 2 ? fds[1] : -1, exe,
		    monitor, 0);
	if (pid == 0)
		exec_broker(sb, (int)r->foreground, fds[0], fds[1], fds[2],
		    nfds == 4 ? fds[3] : -1);
	return pid;
}

/* One request, answered, or the spare made when none came for
 * SPARE_DELAY_MS; 0 when the monitor closed the channel. */
static int
serve_one(int chan, int exe, const struct spawn_broker *sb, pid_t monitor)
{
	unsigned char raw[sizeof(struct spawn_req) + 1];
	struct spawn_req r;
	struct spawn_ans a = { .magic = SPAWN_MAGIC };
	struct pollfd pfd = { .fd = chan, .events = POLLIN };
	struct fdpass_rx rx;
	char why[96];
	ssize_t n;
	int i;

	if ((n = poll(&pfd, 1, spare_chan == -1 ? SPARE_DELAY_MS : -1)) ==
	    -1)
		return errno == EINTR ? 1 : 0;
	if (n == 0) {
		spare_make(exe, monitor);
		return 1;
	}
	if ((n = recv_fds(chan, raw, sizeof(raw), &rx)) == -1)
		return errno == EAGAIN || errno == EINTR ? 1 : 0;
	if (n == 0)
		return 0;
	memset(&r, 0, sizeof(r));
	memcpy(&r, raw, (size_t)n < sizeof(r) ? (size_t)n : sizeof(r));
	if (rx.truncated || rx.foreign ||
	    spawn_req_valid(&r, (size_t)n, rx.nfds, rx.fds, why,
	    sizeof(why)) == -1) {
		log_warnx("spawner: a request refused: %s",
		    rx.truncated || rx.foreign ? "truncated or foreign" : why);
		a.pid = -EINVAL;
	} else
		a.pid = spawn_here(&r, rx.fds, rx.nfds, exe, sb, monitor);
	for (i = 0; i < rx.nfds; i++)
		close(rx.fds[i]);
	return send(chan, &a, sizeof(a), MSG_NOSIGNAL) == (ssize_t)sizeof(a);
}

/* The spawner: nothing of the monitor's open but its channel and
 * sbx-worker, dead with the monitor. Never returns. */
static void __attribute__((noreturn))
spawner_main(int chan, int exe, const struct spawn_broker *sb,
    pid_t monitor)
{
	int fd, top = chan > exe ? chan : exe;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) == -1 || getppid() != monitor)
		_exit(1);
	(void)prctl(PR_SET_NAME, "sbx-spawner");
	for (fd = STDERR_FILENO + 1; fd < top; fd++)
		if (fd != chan && fd != exe)
			close(fd);
	closefrom(top + 1);
	while (serve_one(chan, exe, sb, monitor))
		;
	_exit(0);
}

int
spawner_start(int exe, const struct spawn_broker *sb)
{
	pid_t pid, monitor = getpid();
	int sp[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(sp[0]);
		close(sp[1]);
		return -1;
	}
	if (pid == 0) {
		close(sp[0]);
		spawner_main(sp[1], exe, sb, monitor);
	}
	close(sp[1]);
	spawn_chan = sp[0];
	spawn_pid = pid;
	log_info("spawner started, pid %d", (int)pid);
	return 0;
}

void
spawner_stop(void)
{
	if (spawn_chan == -1)
		return;
	close(spawn_chan);
	spawn_chan = -1;
	(void)proc_wait(spawn_pid, now_ms() + SPAWN_ANSWER_MS);
	spawn_pid = 0;
}

/* Ask the spawner; its answer, checked. A spawner that does not answer
 * in time is one the monitor cannot go on without. */
static pid_t
ask(const struct spawn_req *r, const int *fds, int nfds)
{
	struct pollfd pfd = { .fd = spawn_chan, .events = POLLIN };
	struct spawn_ans a;
	ssize_t n;

	if (send_fds(spawn_chan, r, sizeof(*r), fds, nfds) !=
	    (ssize_t)sizeof(*r))
		fatal("the spawner's channel");
	do
		n = poll(&pfd, 1, SPAWN_ANSWER_MS);
	while (n == -1 && errno == EINTR);
	if (n != 1)
		fatalx("the spawner did not answer");
	do
		n = recv(spawn_chan, &a, sizeof(a), MSG_TRUNC | MSG_DONTWAIT);
	while (n == -1 && errno == EINTR);
	return spawn_ans_valid(&a, n);
}

pid_t
spawn_worker(enum job_type type, int jobfd, int keep_fd, int exe)
{
	struct spawn_req r = { .magic = SPAWN_MAGIC, .what = SPAWN_WORKER,
	    .type = type };
	int fds[2] = { jobfd, keep_fd };
	pid_t pid, monitor = getpid();

	if (spawn_chan != -1)
		return ask(&r, fds, keep_fd == -1 ? 1 : 2);
	if ((pid = fork()) == 0)
		exec_worker(type, jobfd, keep_fd, exe, monitor, 0);
	return pid;
}

pid_t
spawn_broker(const struct spawn_broker *sb, int foreground, int listen_fd,
    int chan, int ranges, int log_w)
{
	struct spawn_req r = { .magic = SPAWN_MAGIC, .what = SPAWN_BROKER,
	    .foreground = (uint32_t)(foreground != 0) };
	int fds[4] = { listen_fd, chan, ranges, log_w };
	pid_t pid;

	if (spawn_chan != -1)
		return ask(&r, fds, log_w == -1 ? 3 : 4);
	if ((pid = fork()) == 0)
		exec_broker(sb, foreground, listen_fd, chan, ranges, log_w);
	return pid;
}
