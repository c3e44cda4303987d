/*
 * fuzz_pool.c - libFuzzer harness for what the monitor's loop reads of
 * descriptors others hold: a worker's result pipe (on_readable in
 * privsep/monitor/jobpool.c, reached through workers_events as the loop
 * reaches it) and a hit's liveness check of a tenant's service
 * (rt_is_live in privsep/monitor/liveness.c, rt_listening in
 * shared/listen.c).
 * runs in: the fuzz_pool harness (libFuzzer, as root)
 *
 * Input: byte 0 picks the reader (even: the result pipe, odd: liveness),
 * the rest drives it.
 *
 * The result pipe: a worker of the pool as worker_spawn_held leaves it,
 * built by hand (no fork): its result pipe a real pipe whose write end
 * the input plays, its pidfd an eventfd that reads as exited, so that
 * nothing is ever killed. The input is a script: write a chunk, let the
 * loop poll and dispatch, close the write end, or pass the deadline.
 * What must hold: done is told once, the result exactly when want bytes
 * were there before the deadline, those bytes as written; a short or
 * late result is NULL; what is written past want stays in the pipe,
 * unread; the worker leaves the pool once its pidfd says it exited, its
 * descriptors closed, exited told once.
 *
 * Liveness: a sandbox of up to 4 services, each choosing what a tenant
 * controls: whether its container's process still runs, what its login
 * check said, whether its port was seen lately, and what is at its
 * socket's path or loopback port (a listener, one with a full backlog,
 * a socket bound but not listening, a datagram or seqpacket socket, a
 * file, a fifo, a directory, nothing, a link to a listener, a loop of
 * links; a tcp port listening or not). The verdict must be what those
 * say, worked out here apart; a live sandbox's logins are checked and its
 * record touched, a dead one's not.
 */
#include <assert.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <unistd.h>

#include "cache.h"
#include "iox.h"
#include "jobpool.h"
#include "liveness.h"
#include "listen.h"
#include "log.h"
#include "login.h"
#include "record.h"
#include "spawner.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static int	log_rd = -1;	/* the log relay's read end */

#define DEADLINE	1000	/* a worker's, on the clock workers_expire is
				 * given here */

/* The spawner executes workers (spawner.c); none is started here. */
pid_t
spawn_worker(enum job_type type, int jobfd, int keep_fd, int exe)
{
	(void)type; (void)jobfd; (void)keep_fd; (void)exe;
	abort();
}

/* ---- the result pipe ------------------------------------------------- */

static struct {
	int		 calls, exited;
	bool		 ok;
	size_t		 len;
	uint8_t		 buf[8192];
} told;

static void
done(void *arg, const void *result, size_t len)
{
	(void)arg;
	assert(told.exited == 0);
	told.calls++;
	told.ok = result != NULL;
	told.len = len;
	if (result != NULL) {
		assert(len <= sizeof(told.buf));
		memcpy(told.buf, result, len);
	} else
		assert(len == 0);
}

static void
exited(void *arg)
{
	(void)arg;
	told.exited++;
}

/* The loop's turn: poll the pool's descriptors without waiting, and
 * hand what is readable to workers_events. */
static void
loop_once(struct worker_pool *p)
{
	struct pollfd pfd[4];
	size_t n = workers_pollfds(p, pfd, 4);

	if (poll(pfd, n, 0) > 0)
		workers_events(p, pfd, n);
}

/*
 * Input: the result's size (mode byte: a provision's outcome, a code, a
 * data job's result, or 1 + the next 2 bytes modulo 8192), then steps:
 * a byte whose low 2 bits say what (0: write the next byte's count of
 * bytes, 1: the loop's turn, 2: the worker closes its end, 3: the
 * deadline passes). The script ends with the write end closed and the
 * loop's turns until the worker has left the pool.
 */
static void
result_pipe(const uint8_t *data, size_t size)
{
	static uint8_t written[1 << 16];
	struct worker_pool pool;
	struct worker *w;	/* the pool's once in it: freed when it ends */
	size_t want, nw = 0, read_at_most = 0, len;
	bool closed = false, finished = false, expect_ok = false;
	int p[2], spy, efd, pending, turns;

	if (size < 3)
		return;
	switch (data[0] & 3) {
	case 0:	want = sizeof(struct job_outcome); break;
	case 1:	want = sizeof(uint32_t); break;
	case 2:	want = sizeof(struct data_result); break;
	default: want = 1 + (data[1] | (size_t)data[2] << 8) % 8192; break;
	}
	data += 3;
	size -= 3;

	memset(&told, 0, sizeof(told));
	workers_init(&pool, 4, NULL);
	assert(pipe2(p, O_CLOEXEC) == 0);
	assert((spy = dup(p[0])) != -1);	/* what is left unread */
	assert((efd = eventfd(1, EFD_CLOEXEC)) != -1);	/* "exited" */
	assert(set_nonblock(p[0]) == 0 && set_nonblock(p[1]) == 0);
	w = calloc(1, sizeof(*w));
	assert(w != NULL);
	w->buf = calloc(1, want);
	assert(w->buf != NULL);
	w->pid = 0x3ffffff0;	/* past pid_max: kill() finds no one */
	w->fd = p[0];
	w->pidfd = efd;
	w->want = want;
	w->deadline = DEADLINE;
	w->done = done;
	w->exited = exited;
	TAILQ_INSERT_TAIL(&pool.live, w, entry);
	pool.n++;

	while (size > 0) {
		unsigned op = data[0] & 3;

		data++;
		size--;
		if (op == 0 && size > 0) {
			len = data[0] < size - 1 ? data[0] : size - 1;
			if (len > sizeof(written) - nw)
				len = sizeof(written) - nw;
			if (!closed && len > 0) {
				assert(write(p[1], data + 1, len) ==
				    (ssize_t)len);
				memcpy(written + nw, data + 1, len);
				nw += len;
			}
			data += 1 + len;
			size -= 1 + len;
		} else if (op == 1) {
			loop_once(&pool);
			if (!finished && nw >= want) {
				finished = expect_ok = true;
				read_at_most = want;
			} else if (!finished && closed) {
				finished = true;
				read_at_most = nw;
			} else if (!finished)
				read_at_most = nw;
		} else if (op == 2 && !closed) {
			close(p[1]);
			closed = true;
		} else if (op == 3) {
			/* w may be freed by now: the pool's alone from here */
			workers_expire(&pool, DEADLINE);
			finished = true;
		}
		/* done is told exactly when the model says, once */
		assert(told.calls == (finished ? 1 : 0));
	}
	if (!closed)
		close(p[1]);
	if (!finished) {
		loop_once(&pool);
		if (nw >= want)
			expect_ok = true;
		read_at_most = expect_ok ? want : nw;
	}
	assert(told.calls == 1 && told.ok == expect_ok);
	if (expect_ok) {
		assert(told.len == want);
		assert(memcmp(told.buf, written, want) == 0);
	}
	/* Past want, or after the result, nothing was read. */
	assert(ioctl(spy, FIONREAD, &pending) == 0);
	assert((size_t)pending == nw - read_at_most);
	/* Its pidfd says it exited: it leaves the pool, its fds closed. */
	for (turns = 0; pool.n > 0 && turns < 4; turns++)
		loop_once(&pool);
	assert(pool.n == 0 && TAILQ_EMPTY(&pool.live) && told.exited == 1);
	assert(fcntl(p[0], F_GETFD) == -1 && fcntl(efd, F_GETFD) == -1);
	close(spy);
}

/* ---- a hit's liveness ------------------------------------------------ */

enum at {			/* what is at a service's endpoint */
	AT_LISTEN,		/* a stream socket listening */
	AT_FULL,		/* the same, its backlog full */
	AT_BOUND,		/* bound, not listening */
	AT_DGRAM,
	AT_SEQPACKET,		/* listening */
	AT_FILE,
	AT_FIFO,
	AT_DIR,
	AT_NOTHING,
	AT_LINK,		/* a symbolic link to AT_LISTEN's socket */
	AT_LOOP,		/* a link to itself */
	AT_TCP_LISTEN,		/* 127.0.0.1, listening */
	AT_TCP_CLOSED,		/* 127.0.0.1, bound and not listening */
	AT_MAX
};

/* Does a non-blocking connect find someone there (listen.c's rule: a
 * full backlog says that someone is)? Worked out from what is there. */
static const bool at_listens[AT_MAX] = {
	[AT_LISTEN] = true, [AT_FULL] = true, [AT_LINK] = true,
	[AT_TCP_LISTEN] = true,
};

static char	at_path[AT_MAX][64];
static int	at_fd[AT_MAX] = { -1 };
static uint32_t	port_listening, port_closed;
static int	pidfd_alive, pidfd_dead;
static int	logins, touches;

void
login_spawn(struct rt_cli *rt, struct sbx_sandbox *sb, size_t svc)
{
	(void)rt;
	assert(svc < sb->nservices);
	logins++;
}

void
record_touch(struct sbx_sandbox *sb, int64_t now)
{
	(void)sb;
	(void)now;
	touches++;
}

static int
unix_at(int type, const char *path, int backlog)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	assert(fd != -1);
	strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
	assert(bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	if (backlog >= 0)
		assert(listen(fd, backlog) == 0);
	return fd;
}

static uint32_t
tcp_at(bool listening, int *fdp)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	assert(fd != -1);
	assert(bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0);
	if (listening)
		assert(listen(fd, 64) == 0);
	assert(getsockname(fd, (struct sockaddr *)&sin, &len) == 0);
	*fdp = fd;
	return ntohs(sin.sin_port);
}

static char	live_dir[] = "/tmp/sbx-fuzz-live.XXXXXX";

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* The fixtures' directory goes with the process (libFuzzer exits). */
static void
rm_fixtures(void)
{
	(void)nftw(live_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void
liveness_fixtures(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	pid_t pid;
	int i, c;

	assert(mkdtemp(live_dir) != NULL);
	atexit(rm_fixtures);
	for (i = 0; i < AT_MAX; i++)
		snprintf(at_path[i], sizeof(at_path[i]), "%s/%d", live_dir,
		    i);
	at_fd[AT_LISTEN] = unix_at(SOCK_STREAM, at_path[AT_LISTEN], 64);
	at_fd[AT_FULL] = unix_at(SOCK_STREAM, at_path[AT_FULL], 0);
	strlcpy(sun.sun_path, at_path[AT_FULL], sizeof(sun.sun_path));
	for (i = 0; i < 8; i++) {	/* never accepted: the backlog fills */
		c = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
		if (connect(c, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
			close(c);
			break;
		}
	}
	assert(i < 8);
	at_fd[AT_BOUND] = unix_at(SOCK_STREAM, at_path[AT_BOUND], -1);
	at_fd[AT_DGRAM] = unix_at(SOCK_DGRAM, at_path[AT_DGRAM], -1);
	at_fd[AT_SEQPACKET] = unix_at(SOCK_SEQPACKET, at_path[AT_SEQPACKET],
	    64);
	assert((c = open(at_path[AT_FILE], O_CREAT | O_WRONLY | O_CLOEXEC,
	    0600)) != -1);
	close(c);
	assert(mkfifo(at_path[AT_FIFO], 0600) == 0);
	assert(mkdir(at_path[AT_DIR], 0700) == 0);
	assert(symlink(at_path[AT_LISTEN], at_path[AT_LINK]) == 0);
	assert(symlink(at_path[AT_LOOP], at_path[AT_LOOP]) == 0);
	port_listening = tcp_at(true, &at_fd[AT_TCP_LISTEN]);
	port_closed = tcp_at(false, &at_fd[AT_TCP_CLOSED]);
	assert(set_nonblock(at_fd[AT_LISTEN]) == 0 &&
	    set_nonblock(at_fd[AT_TCP_LISTEN]) == 0);	/* drain() */

	assert((pidfd_alive = (int)syscall(SYS_pidfd_open, getpid(), 0)) !=
	    -1);
	if ((pid = fork()) == 0)
		_exit(0);
	assert(pid > 0);
	assert((pidfd_dead = (int)syscall(SYS_pidfd_open, pid, 0)) != -1);
	assert(waitpid(pid, NULL, 0) == pid);
}

/* The listeners' connections, accepted and closed: each input meets a
 * backlog as it was. */
static void
drain(int fd)
{
	int c;

	while ((c = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) !=
	    -1)
		close(c);
}

/*
 * Input: the number of services (0-4), then for each two bytes: what is
 * at its endpoint (enum at, modulo AT_MAX) and flags (bit 0: its
 * process exited; bit 1: the monitor has no pidfd for it; bit 2: its
 * login check failed; bit 3: its port was seen lately).
 */
static void
liveness(const uint8_t *data, size_t size)
{
	struct sbx_svc svc[4];
	struct sbx_sandbox sb;
	int64_t before, t0;
	size_t n, i;
	bool want = true, late = false, live, fresh[4];

	if (size < 1)
		return;
	n = data[0] % 5;
	data++;
	size--;
	if (size < 2 * n)
		return;
	memset(&sb, 0, sizeof(sb));
	memset(svc, 0, sizeof(svc));
	sb.nservices = n;
	sb.svc = svc;
	before = now_ms();
	for (i = 0; i < n; i++) {
		enum at at = (enum at)(data[2 * i] % AT_MAX);
		uint8_t f = data[2 * i + 1];

		strlcpy(svc[i].conn.name, "svc", sizeof(svc[i].conn.name));
		if (at == AT_TCP_LISTEN || at == AT_TCP_CLOSED)
			svc[i].conn.port = at == AT_TCP_LISTEN ?
			    port_listening : port_closed;
		else
			strlcpy(svc[i].conn.socket, at_path[at],
			    sizeof(svc[i].conn.socket));
		svc[i].pidfd = f & 2 ? -1 : f & 1 ? pidfd_dead : pidfd_alive;
		svc[i].login_failed = f & 4;
		fresh[i] = f & 8;
		svc[i].port_seen_ms = fresh[i] ? before : 0;
		if (f & 3 || f & 4 || (!fresh[i] && !at_listens[at]))
			want = false;
		if (!fresh[i] && at == AT_TCP_CLOSED)
			late = true;
	}
	logins = touches = 0;
	t0 = now_ms();
	live = rt_is_live(NULL, &sb);
	/*
	 * A closed port's refusal is in by the time connect returns unless
	 * the kernel left the SYN's answer to ksoftirqd (under load): then
	 * the port looks taken this once. Exact otherwise.
	 */
	assert(live == want || (late && live));
	want = live;
	/* It never waits (10 s is libFuzzer's -timeout; this is tighter). */
	assert(now_ms() - t0 < 2000);
	assert(logins == (want ? (int)n : 0) && touches == (want ? 1 : 0));
	for (i = 0; want && i < n; i++)
		assert(svc[i].port_seen_ms >= before);
	drain(at_fd[AT_LISTEN]);
	drain(at_fd[AT_TCP_LISTEN]);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int ready;
	char buf[4096];
	int p[2];

	if (!ready++) {
		signal(SIGPIPE, SIG_IGN);
		assert(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
		log_relay(p[1]);	/* workers_expire's line, unprinted */
		log_rd = p[0];
		liveness_fixtures();
	}
	if (size < 1)
		return 0;
	if (data[0] & 1)
		liveness(data + 1, size - 1);
	else
		result_pipe(data + 1, size - 1);
	while (read(log_rd, buf, sizeof(buf)) > 0)
		;
	return 0;
}
