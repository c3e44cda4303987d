/*
 * svc_session.c - a worker's session with a sandbox's service, as its
 * client: the seed at a provision (seed.c), a reset or a snapshot
 * (data.c). Here the session child is forked, confined and dropped, and
 * the parent talks to it; what the child runs after its drop, libpq and
 * hiredis among it, is session_client.c (the keeper's password,
 * session_keeper.c, first).
 * runs in: sbx-worker's JOB_DATA, JOB_RESIDENT and JOB_WARM_START and a
 *   provision's service children (root, runtime deny filter), and the
 *   session child they fork (root until its drop, then the sandbox's
 *   prober uid, not dumpable, session allowlist)
 *
 * What the service sends is a tenant's bytes, and libpq and hiredis parse
 * them: never as root, and with nothing else in reach. While still root
 * the child loads libpq (it opens files), leaves the host's network for
 * a namespace of its own (no address, none of the host's abstract Unix
 * sockets) and takes the service's socket directory as its root (no
 * socket path outside it: not the agent socket, not another tenant's;
 * drop.c's drop_network). A tcp service is reached through a relay
 * (relay.c), forked before the drop: it goes back to the host's network
 * and joins each connection on the child's one abstract address to
 * 127.0.0.1 at the published port; it passes bytes on unread. The
 * child then drops to the top uid of the sandbox's range, with the
 * group of that directory (the container's own: it may enter the
 * keeper's directory there, keep/, which the agent's uid may not; it
 * cannot ptrace or signal the container's processes, another uid), and
 * makes itself not dumpable
 * (checked: no process of that uid may ptrace it or read the password it
 * holds). An alarm ends the child at its deadline, whatever libpq or
 * hiredis wait for. Before it reads a byte of the server's, the child
 * loads the session's seccomp allowlist (policy/seccomp/session.list):
 * Unix sockets, reads and writes, memory; no open, no exec, no fork, no
 * uid change. Its stderr is a pipe the worker reads at its end and
 * relays under a prefix of its own, never the monitor's log stream.
 *
 * The child talks to its parent over one socket pair: struct data_result
 * reports up (their code and message checked and cleaned by the parent,
 * as a tenant's), single bytes down; the parent's shutdown is the last
 * word. The parent writes to the socket with MSG_NOSIGNAL: a child gone
 * is an error, not a SIGPIPE for the worker.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drop.h"
#include "iox.h"
#include "job.h"
#include "log.h"
#include "pq.h"
#include "relay.h"
#include "scfilter.h"
#include "session_keeper.h"
#include "slug.h"
#include "svc_session.h"

#define SESSION_IDENT	"sbx-session"
/* What the worker relays of a child's stderr, at most. */
#define RELAY_LINES	32
#define RELAY_LINE	256

void
session_text(char *dst, size_t cap, const char *src)
{
	size_t i = 0;
	unsigned char c;

	if (cap == 0)
		return;
	while (i + 1 < cap && (c = (unsigned char)*src++) != '\0')
		dst[i++] = (char)(c >= 0x20 && c < 0x7f ? c :
		    c == '\n' || c == '\t' ? ' ' : '?');
	/* libpq's messages end in a newline: none at the end */
	while (i > 0 && dst[i - 1] == ' ')
		i--;
	dst[i] = '\0';
}

/* The session's filter: compiled once by the worker, before its first
 * fork (len 0: not yet), and installed by each child, as the broker does
 * for its own (libseccomp's build would cost each child more than the
 * install). */
static struct sc_prog session_filter;

/* stdin from /dev/null, stdout and stderr onto the pipe the worker reads
 * (never the monitor's log stream), and this process's lines there. */
static int
stdio_to(int logfd)
{
	int null;

	if ((null = open("/dev/null", O_RDONLY | O_CLOEXEC)) == -1 ||
	    dup2(null, STDIN_FILENO) == -1 || dup2(logfd, STDOUT_FILENO) ==
	    -1 || dup2(logfd, STDERR_FILENO) == -1)
		return -1;
	close(null);
	close(logfd);
	log_init(SESSION_IDENT, LOG_TO_STDERR);
	return 0;
}

/*
 * While root, after what opens files (libpq and its libraries, OpenSSL's
 * configuration: a libpq that cannot be loaded is session_pg's to say):
 * a network namespace of the child's own, and the socket directory as
 * its root (an empty one for a tcp service, reached through its relay).
 * *gid: the directory's group, the container's.
 */
static int
isolate(const struct svc_reach *r, gid_t *gid)
{
	if (r->s->probe == PROBE_POSTGRES)
		(void)pq_load();
	return relay_confine(r->dir, r->port, r->uid, *gid, gid);
}

static void __attribute__((noreturn))
session_child(const struct svc_reach *r, int sock, int logfd,
    session_fn fn, void *arg, int64_t deadline, pid_t parent)
{
	struct session_env e = { .r = r };
	int64_t left = deadline - now_ms();
	gid_t gid = r->gid;

	/* INT64_MAX: a kept session, whose parent bounds each job. */
	if (left <= 0 || stdio_to(logfd) == -1 ||
	    (sock != SESSION_FD_PARENT &&
	    dup2(sock, SESSION_FD_PARENT) == -1))
		_exit(2);
	closefrom(SESSION_FD_PARENT + 1);
	if (isolate(r, &gid) == -1 ||
	    drop_to_ids(r->uid, gid, NULL) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(2);
	if (deadline != INT64_MAX)
		alarm((unsigned)(left / 1000 + 1));
	session_keeper_read(&e);
	if (e.keeper_pw[0] == '\0' && r->keeper_pw[0] != '\0')
		memcpy(e.keeper_pw, r->keeper_pw, sizeof(e.keeper_pw));
	/* before the tenant's server sends a byte */
	if (sc_install(&session_filter) == -1)
		_exit(2);
	snprintf(e.host, sizeof(e.host), "%s", r->dir != NULL ? "/" :
	    "@" RELAY_HOST);
	fn(&e, arg);
	explicit_bzero(e.keeper_pw, sizeof(e.keeper_pw));
	_exit(0);
}

int
session_start(struct session *ss, const struct svc_reach *r, session_fn fn,
    void *arg, int64_t deadline)
{
	pid_t parent = getpid();
	int sv[2] = { -1, -1 }, lp[2];

	ss->pid = -1;
	ss->fd = -1;
	ss->log = -1;
	if (r->uid == 0 || r->gid == 0 || (session_filter.fprog.len == 0 &&
	    sc_compile_allow("session", &session_filter) == -1) ||
	    pipe2(lp, O_CLOEXEC) == -1)
		return -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) == -1 ||
	    (ss->pid = fork()) == -1) {
		if (sv[0] != -1) {
			close(sv[0]);
			close(sv[1]);
		}
		close(lp[0]);
		close(lp[1]);
		return -1;
	}
	if (ss->pid == 0) {
		close(sv[0]);
		close(lp[0]);
		session_child(r, sv[1], lp[1], fn, arg, deadline, parent);
	}
	close(sv[1]);
	close(lp[1]);
	ss->fd = sv[0];
	ss->log = lp[0];
	snprintf(ss->name, sizeof(ss->name), "%s", r->s->name);
	return set_nonblock(ss->fd) == -1 || set_nonblock(ss->log) == -1 ?
	    -1 : 0;
}

int
session_recv(struct session *ss, struct data_result *res, int64_t deadline)
{
	char msg[sizeof(res->message)];

	memset(res, 0, sizeof(*res));
	if (ss->fd == -1 || read_full(ss->fd, res, sizeof(*res),
	    deadline) == -1) {
		memset(res, 0, sizeof(*res));
		return -1;
	}
	/* The child read a tenant's bytes: what it says is checked. */
	res->message[sizeof(res->message) - 1] = '\0';
	session_text(msg, sizeof(msg), res->message);
	memcpy(res->message, msg, sizeof(msg));
	if (res->code >= SBX_CODE_MAX)
		res->code = SBX_E_RUNTIME_FAILED;
	return 0;
}

int
session_send(struct session *ss, uint8_t b)
{
	if (ss->fd == -1)
		return -1;
	return send(ss->fd, &b, 1, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

void
session_end(struct session *ss, int64_t deadline)
{
	char buf[256];
	ssize_t n;
	int status;

	if (ss->fd != -1) {
		(void)shutdown(ss->fd, SHUT_WR);
		/* Its end closes its side: EOF, or the deadline. */
		while (wait_readable(ss->fd, deadline) == 1 &&
		    ((n = read(ss->fd, buf, sizeof(buf))) > 0 ||
		    (n == -1 && (errno == EAGAIN || errno == EINTR))))
			;
		close(ss->fd);
		ss->fd = -1;
	}
	if (ss->pid > 0) {
		if (waitpid(ss->pid, &status, WNOHANG) == 0) {
			kill(ss->pid, SIGKILL);
			waitpid(ss->pid, &status, 0);
		}
		ss->pid = -1;
	}
	if (ss->log != -1) {
		session_log_relay(ss->log, ss->name);
		close(ss->log);
		ss->log = -1;
	}
}

size_t
session_log_line(char *dst, size_t cap, const char *service,
    const char *line)
{
	char clean[RELAY_LINE];

	if (strncmp(line, SESSION_IDENT ": ", strlen(SESSION_IDENT) + 2) == 0)
		line += strlen(SESSION_IDENT) + 2;
	session_text(clean, sizeof(clean), line);
	return (size_t)snprintf(dst, cap, "%s session child said: %s",
	    service, clean);
}

/*
 * What a child wrote on its stderr, a tenant's bytes once it read the
 * server's: never on the monitor's log stream as it came. Read without
 * waiting (its writers are gone or killed), each line printable, under
 * a prefix of the worker's, at most RELAY_LINES of them.
 */
void
session_log_relay(int fd, const char *service)
{
	char buf[RELAY_LINES * RELAY_LINE], out[RELAY_LINE + 64], *p, *nl;
	size_t got = 0, lines = 0, more = 0;
	ssize_t n;

	while (got < sizeof(buf) - 1 &&
	    (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	while ((n = read(fd, out, sizeof(out))) > 0)
		more += (size_t)n;
	buf[got] = '\0';
	for (p = buf; *p != '\0' && lines < RELAY_LINES; p = nl + 1) {
		if ((nl = strchr(p, '\n')) != NULL)
			*nl = '\0';
		(void)session_log_line(out, sizeof(out), service, p);
		log_warnx("%s", out);
		lines++;
		if (nl == NULL)
			break;
	}
	if (more > 0 || (p < buf + got && lines == RELAY_LINES))
		log_warnx("%s session child: more lines dropped", service);
}

int
data_ask_valid(const struct data_ask *a)
{
	size_t n = strnlen(a->snapshot, sizeof(a->snapshot));

	if (n == sizeof(a->snapshot) || a->max > SBX_MAX_SNAPSHOTS ||
	    (a->op != DATA_RESET && a->op != DATA_SNAPSHOT))
		return -1;
	return n > 0 ? (slug_valid(a->snapshot, n) ? 0 : -1) :
	    a->op == DATA_SNAPSHOT ? -1 : 0;
}
