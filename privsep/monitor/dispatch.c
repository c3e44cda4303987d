/*
 * dispatch.c - the monitor's view of a broker message, hostile until
 * every byte has been accounted for.
 * runs in: the monitor's loop (root, monitor allowlist), and the child that
 *   holds a refused message's descriptors until the loop has closed its own
 *   (root, unfiltered)
 *
 * A request type is known by the table below, which fixes its exact
 * size and the checks of its body; the one fd must be a Unix stream
 * connection accepted on our own agent socket (getsockname), so the uid
 * comes from a real agent and never from a socket the broker made, and
 * it must be fresh: the first request it carries marks it (SO_MARK,
 * which only a privileged process can set), so a broker that hoards
 * accepted sockets gets one request out of each, no more.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dispatch.h"
#include "log.h"
#include "slug.h"

typedef int (*body_check)(const void *, char *, size_t);

static int
fail(char *why, size_t n, const char *msg)
{
	snprintf(why, n, "%s", msg);
	return -1;
}

static int
check_none(const void *m, char *why, size_t n)
{
	(void)m;
	(void)why;
	(void)n;
	return 0;
}

static int
check_available(const void *m, char *why, size_t n)
{
	const struct sbx_req_available *r = m;

	if (!slug_field_valid(r->project, sizeof(r->project)))
		return fail(why, n, "bad project field");
	return 0;
}

static int
check_release(const void *m, char *why, size_t n)
{
	const struct sbx_req_release *r = m;

	if (!slug_field_valid(r->agent, sizeof(r->agent)))
		return fail(why, n, "bad agent field");
	return 0;
}

static int
check_reset(const void *m, char *why, size_t n)
{
	const struct sbx_req_reset *r = m;
	static const char zero[SBX_SLUG_MAX];

	if (!slug_field_valid(r->agent, sizeof(r->agent)))
		return fail(why, n, "bad agent field");
	if (memcmp(r->to, zero, sizeof(zero)) != 0 &&
	    !slug_field_valid(r->to, sizeof(r->to)))
		return fail(why, n, "bad to field");
	return 0;
}

static int
check_snapshot(const void *m, char *why, size_t n)
{
	const struct sbx_req_snapshot *r = m;

	if (!slug_field_valid(r->agent, sizeof(r->agent)) ||
	    !slug_field_valid(r->name, sizeof(r->name)))
		return fail(why, n, "bad agent or name field");
	return 0;
}

static int
check_sandbox(const void *m, char *why, size_t n)
{
	const struct sbx_req_sandbox *r = m;
	static const char zero[SBX_SLUG_MAX];
	uint32_t i, j;

	if (!slug_field_valid(r->agent, sizeof(r->agent)) ||
	    !slug_field_valid(r->project, sizeof(r->project)))
		return fail(why, n, "bad agent or project field");
	if (r->nservices > SBX_MAX_SERVICES)
		return fail(why, n, "nservices out of range");
	if (r->bind_pid < 0)
		return fail(why, n, "bind_pid out of range");
	for (i = 0; i < SBX_MAX_SERVICES; i++) {
		if (i >= r->nservices) {
			if (memcmp(r->services[i], zero, sizeof(zero)) != 0)
				return fail(why, n, "bytes past nservices");
			continue;
		}
		if (!slug_field_valid(r->services[i], sizeof(r->services[i])))
			return fail(why, n, "bad service field");
		for (j = 0; j < i; j++)
			if (!strcmp(r->services[i], r->services[j]))
				return fail(why, n, "duplicate service");
	}
	return 0;
}

/*
 * Every request type: its message's exact size, the check of its body
 * (above), and what it means (handle.c). Adding an op is a row here, its
 * handler, and the broker's decoder (broker/wire.c) and the reply's
 * shape (answer.c); msg.h gives it a struct.
 */
static const struct {
	size_t		size;
	body_check	check;
	handler_fn	handle;
} table[SBX_REQ_MAX] = {
	[SBX_REQ_PING]	    = { sizeof(struct sbx_req_ping), check_none, handle_ping },
	[SBX_REQ_AVAILABLE] = { sizeof(struct sbx_req_available), check_available, handle_available },
	[SBX_REQ_SANDBOX]   = { sizeof(struct sbx_req_sandbox), check_sandbox, handle_sandbox },
	[SBX_REQ_RELEASE]   = { sizeof(struct sbx_req_release), check_release, handle_release },
	[SBX_REQ_STATUS]    = { sizeof(struct sbx_req_status), check_none, handle_status },
	[SBX_REQ_RESET]     = { sizeof(struct sbx_req_reset), check_reset, handle_reset },
	[SBX_REQ_SNAPSHOT]  = { sizeof(struct sbx_req_snapshot), check_snapshot, handle_snapshot },
};

static int
is_unix_stream(int fd)
{
	int v;
	socklen_t len = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &v, &len) == -1 ||
	    v != AF_UNIX)
		return 0;
	len = sizeof(v);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == 0 &&
	    v == SOCK_STREAM;
}

/* The listening socket answers SO_PEERCRED with its creator: root. */
static int
is_listening(int fd)
{
	int v = 1;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == -1 ||
	    v != 0;
}

static int
accepted_on(int fd, const char *socket_path)
{
	struct sockaddr_un sun;
	socklen_t len = sizeof(sun);

	memset(&sun, 0, sizeof(sun));
	if (getsockname(fd, (struct sockaddr *)&sun, &len) == -1 ||
	    len <= offsetof(struct sockaddr_un, sun_path))
		return 0;
	return strncmp(sun.sun_path, socket_path, sizeof(sun.sun_path)) == 0;
}

/*
 * One request per accepted connection: the socket is marked as it is
 * taken, and a marked one was taken before (answered, or in flight). The
 * mark is on the socket, not the descriptor: every copy the broker may
 * keep carries it.
 */
static int
take_once(int fd, char *why, size_t n)
{
	uint32_t mark = 0, used = DISPATCH_MARK;
	socklen_t len = sizeof(mark);

	if (getsockopt(fd, SOL_SOCKET, SO_MARK, &mark, &len) == -1 ||
	    len != sizeof(mark))
		return fail(why, n, "agent socket has no mark to read");
	if (mark != 0)
		return fail(why, n, "agent socket already carried a request");
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &used, sizeof(used)) == -1)
		return fail(why, n, "cannot mark the agent socket (not root?)");
	return 0;
}

/*
 * Nothing can come in any more, and nothing waits to be read. Bytes
 * queued on the socket may carry descriptors, which the socket's last
 * close releases here, in the loop, and a release can wait (a TCP socket
 * with SO_LINGER and unsent data, for its linger time). The broker's
 * child shut the input and read it empty (broker/child.c); we shut it
 * again, so that no send of the agent's gets in after our look.
 */
static int
input_sealed(int fd, char *why, size_t n)
{
	int queued = -1;

	if (shutdown(fd, SHUT_RD) == -1 || ioctl(fd, FIONREAD, &queued) == -1)
		return fail(why, n, "cannot shut the agent socket's input");
	if (queued != 0)
		return fail(why, n, "agent socket has unread input");
	return 0;
}

static int
check_fds(const struct fdpass_rx *rx, int want, const char *socket_path,
    uid_t *uid, char *why, size_t n)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (rx->truncated || rx->foreign)
		return fail(why, n, "truncated or foreign control data");
	if (rx->nfds != want)
		return fail(why, n, "wrong number of fds");
	if (!is_unix_stream(rx->fds[0]))
		return fail(why, n, "fd is not a unix stream socket");
	if (is_listening(rx->fds[0]))
		return fail(why, n, "agent fd is a listening socket");
	if (socket_path != NULL && !accepted_on(rx->fds[0], socket_path))
		return fail(why, n, "agent fd was not accepted on our socket");
	if (getsockopt(rx->fds[0], SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1
	    || len != sizeof(cred))
		return fail(why, n, "no peer credentials");
	if (input_sealed(rx->fds[0], why, n) == -1 ||
	    take_once(rx->fds[0], why, n) == -1)
		return -1;
	*uid = cred.uid;
	return 0;
}

int
dispatch_valid(const void *buf, size_t len, struct fdpass_rx *rx,
    const char *socket_path, uid_t *uid, char *why, size_t whylen,
    void (*release)(struct fdpass_rx *))
{
	struct sbx_msg_hdr hdr;
	uint32_t type;

	if (len < sizeof(hdr)) {
		fail(why, whylen, "short message");
		goto bad;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	type = hdr.type;
	if (hdr.magic != SBX_MSG_MAGIC || type == 0 || type >= SBX_REQ_MAX) {
		fail(why, whylen, "bad magic or type");
		goto bad;
	}
	if (len != table[type].size) {
		fail(why, whylen, "wrong size for type");
		goto bad;
	}
	if (table[type].check(buf, why, whylen) == -1 ||
	    check_fds(rx, SBX_REQ_FDS, socket_path, uid, why, whylen) == -1)
		goto bad;
	return (int)type;
bad:
	release(rx);
	return -1;
}

/*
 * A refused message's descriptors come from a broker we are about to
 * kill, and their last close can wait: a TCP socket with SO_LINGER and
 * unsent data for its linger time, a Unix socket for the descriptors
 * queued on it. So the last close is not ours. A child that holds copies
 * waits until we have closed ours, then exits, and a close in an exit
 * never lingers. It runs no code of ours but that wait: a fork per
 * refusal, and each refusal kills the broker (monitor.c). Without a
 * child the descriptors are kept: a leak bounded by the broker's
 * restarts, rather than a loop that may stop.
 */
void
dispatch_release_apart(struct fdpass_rx *rx)
{
	int p[2];
	pid_t pid;
	char c;

	if (rx->nfds == 0)
		return;
	if (pipe2(p, O_CLOEXEC) == -1) {
		log_warn("a refused message's %d descriptors are kept: pipe",
		    rx->nfds);
		return;
	}
	if ((pid = fork()) == -1) {
		log_warn("a refused message's %d descriptors are kept: fork",
		    rx->nfds);
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		close(p[1]);
		while (read(p[0], &c, 1) == -1 && errno == EINTR)
			;
		_exit(0);
	}
	close(p[0]);
	fdpass_close(rx);
	close(p[1]);
}

void
dispatch_handle(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *rq, struct sbx_reply r)
{
	uint32_t type = rq->hdr.type;
	struct sbx_ans a;

	/* dispatch_valid() said so; a caller that did not ask still gets
	 * one answer */
	if (type > 0 && type < SBX_REQ_MAX && table[type].handle != NULL) {
		table[type].handle(e, uid, rq, r);
		return;
	}
	answer_init(&a, (enum sbx_req_type)type, SBX_E_INTERNAL,
	    "unknown request type.");
	r.fn(r.ctx, &a);
}
