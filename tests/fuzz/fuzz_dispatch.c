/*
 * fuzz_dispatch.c - libFuzzer harness for the monitor's validation of
 * broker messages (privsep/monitor/dispatch.c, dispatch_valid).
 *
 * Input: byte 0 is how many descriptors ride along (0..5, more than
 * FDPASS_MAX arrives as MSG_CTRUNC), the next bytes pick each one's kind
 * from a fixed set made once at start-up, the rest is the message. Each
 * run sends it over a real SOCK_SEQPACKET pair with SCM_RIGHTS
 * and receives it exactly as on_broker_message() in privsep/monitor/monitor.c
 * does, into a buffer one byte larger than the largest request.
 *
 * What must hold, whatever the bytes:
 *  - a rejection has a reason, leaves *uid alone, closes every fd the
 *    kernel installed and leaves the agent socket unmarked;
 *  - an acceptance means: the size of its type, a body that passes the
 *    checks rewritten here independently, exactly one fd, the fresh
 *    connection accepted on our agent socket, kept open (ours to answer
 *    on and close) and now marked DISPATCH_MARK, and the uid our own;
 *  - the same message sent again after an acceptance is refused: the
 *    socket has carried its request;
 *  - no descriptor leaks either way.
 *
 * Marking needs root (CAP_NET_ADMIN): run as anyone else, nothing is
 * accepted and only the refusals are fuzzed.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "dispatch.h"
#include "fdpass.h"
#include "msg.h"

int LLVMFuzzerInitialize(int *, char ***);
int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* In this order: the seeds (gen_corpus.py) name kinds by number. */
enum kind {
	K_AGENT,	/* accepted on our agent socket: the only good fd */
	K_PAIR,		/* one end of a stream socketpair (was the answer fd) */
	K_LISTEN,	/* our listening socket itself */
	K_ELSEWHERE,	/* accepted on another path */
	K_CLIENT,	/* the agent's own end: connected, unnamed */
	K_DGRAM,
	K_SEQPACKET,
	K_PIPE,
	K_DEVNULL,
	K_INET,
	K_TAKEN,	/* accepted on our agent socket, already marked */
	K_NKINDS
};
#define MAX_SEND	5	/* one more than FDPASS_MAX */

static int kfd[K_NKINDS];
static int chan[2];		/* [0] the broker child, [1] the monitor */
static char path[sizeof(((struct sockaddr_un *)0)->sun_path)];

static void __attribute__((noreturn))
die(const char *what)
{
	perror(what);
	abort();
}

/* What dispatch_valid leaves on a socket it took; 0 for a fresh one. */
static uint32_t
mark_of(int fd)
{
	uint32_t mark;
	socklen_t len = sizeof(mark);

	if (getsockopt(fd, SOL_SOCKET, SO_MARK, &mark, &len) == -1)
		die("SO_MARK");
	return mark;
}

static int
set_mark(int fd, uint32_t mark)
{
	return setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark));
}

static int
listen_at(const char *p)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	strlcpy(sun.sun_path, p, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 4) == -1)
		die(p);
	return fd;
}

/* connect to p, accept; *client gets the connecting end. */
static int
accepted(int lfd, const char *p, int *client)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	strlcpy(sun.sun_path, p, sizeof(sun.sun_path));
	if ((*client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(*client, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    (fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
		die("accept");
	return fd;
}

/*
 * The sockets are bound in a temporary directory that is removed at once:
 * getsockname still reports the bound path, which is all dispatch_valid
 * looks at, and nothing is left behind when the fuzzer is killed.
 */
static void
make_kinds(void)
{
	char dir[] = "/tmp/fuzz-dispatch.XXXXXX", other[sizeof(path)];
	int pair[2], pipefd[2], lother, cother, ctaken;

	if (mkdtemp(dir) == NULL)
		die("mkdtemp");
	snprintf(path, sizeof(path), "%s/sbx.sock", dir);
	snprintf(other, sizeof(other), "%s/other.sock", dir);
	kfd[K_LISTEN] = listen_at(path);
	kfd[K_AGENT] = accepted(kfd[K_LISTEN], path, &kfd[K_CLIENT]);
	kfd[K_TAKEN] = accepted(kfd[K_LISTEN], path, &ctaken);
	if (set_mark(kfd[K_TAKEN], DISPATCH_MARK) == -1)
		fprintf(stderr, "fuzz_dispatch: SO_MARK: %s: not root, so "
		    "nothing can be accepted; only refusals are fuzzed\n",
		    strerror(errno));
	lother = listen_at(other);
	kfd[K_ELSEWHERE] = accepted(lother, other, &cother);
	unlink(path);
	unlink(other);
	rmdir(dir);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == -1 ||
	    pipe2(pipefd, O_CLOEXEC) == -1)
		die("socketpair");
	kfd[K_PAIR] = pair[1];
	kfd[K_PIPE] = pipefd[0];
	kfd[K_DGRAM] = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	kfd[K_SEQPACKET] = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	kfd[K_DEVNULL] = open("/dev/null", O_RDWR | O_CLOEXEC);
	kfd[K_INET] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (kfd[K_DGRAM] == -1 || kfd[K_SEQPACKET] == -1 ||
	    kfd[K_DEVNULL] == -1 || kfd[K_INET] == -1)
		die("fd kinds");
	/* the broker channel is SOCK_SEQPACKET, as the monitor makes it */
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) == -1)
		die("channel");
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	make_kinds();
	return 0;
}

/* The body checks of dispatch.c, written out again from msg.h. */
static int
field_ok(const char *f)
{
	static const char head[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	size_t len = strnlen(f, SBX_SLUG_MAX), i;

	if (len == 0 || len == SBX_SLUG_MAX || strchr(head, f[0]) == NULL ||
	    strspn(f, "abcdefghijklmnopqrstuvwxyz0123456789._-") != len)
		return 0;
	for (i = len; i < SBX_SLUG_MAX; i++)
		if (f[i] != '\0')
			return 0;
	return 1;
}

static void
check_body(const union sbx_req_any *rq, size_t len)
{
	static const char zero[SBX_SLUG_MAX];
	const struct sbx_req_sandbox *s = &rq->sandbox;
	uint32_t i, j;

	assert(rq->hdr.magic == SBX_MSG_MAGIC);
	switch (rq->hdr.type) {
	case SBX_REQ_PING:
	case SBX_REQ_STATUS:
		assert(len == sizeof(struct sbx_msg_hdr));
		break;
	case SBX_REQ_AVAILABLE:
		assert(len == sizeof(rq->available));
		assert(field_ok(rq->available.project));
		break;
	case SBX_REQ_RELEASE:
		assert(len == sizeof(rq->release));
		assert(field_ok(rq->release.agent));
		break;
	case SBX_REQ_RESET:
		assert(len == sizeof(rq->reset));
		assert(field_ok(rq->reset.agent));
		assert(!memcmp(rq->reset.to, zero, SBX_SLUG_MAX) ||
		    field_ok(rq->reset.to));
		break;
	case SBX_REQ_SNAPSHOT:
		assert(len == sizeof(rq->snapshot));
		assert(field_ok(rq->snapshot.agent) &&
		    field_ok(rq->snapshot.name));
		break;
	case SBX_REQ_SANDBOX:
		assert(len == sizeof(*s));
		assert(field_ok(s->agent) && field_ok(s->project));
		assert(s->nservices <= SBX_MAX_SERVICES);
		for (i = 0; i < SBX_MAX_SERVICES; i++) {
			if (i >= s->nservices) {
				assert(!memcmp(s->services[i], zero, SBX_SLUG_MAX));
				continue;
			}
			assert(field_ok(s->services[i]));
			for (j = 0; j < i; j++)
				assert(strcmp(s->services[i], s->services[j]));
		}
		break;
	default:
		assert(!"accepted an unknown type");
	}
}

static int
is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/*
 * send_fds() of shared/fdpass.c refuses more than FDPASS_MAX; a hostile
 * child need not use it, so the harness sends with its own sendmsg.
 */
static void
send_any(int sock, const void *buf, size_t len, const int *fds, int nfds)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * MAX_SEND)];
	} cm;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf,
	    .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	if (nfds > 0) {
		memset(&cm, 0, sizeof(cm));
		msg.msg_control = cm.buf;
		msg.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)nfds);
		c = CMSG_FIRSTHDR(&msg);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)nfds);
		memcpy(CMSG_DATA(c), fds, sizeof(int) * (size_t)nfds);
	}
	if (sendmsg(sock, &msg, 0) != (ssize_t)len)
		die("sendmsg");
}

/* The lowest free descriptor number: a leak shows up as a change. */
static int
next_fd(void)
{
	int fd;

	if ((fd = fcntl(kfd[K_DEVNULL], F_DUPFD, 0)) == -1)
		die("dup");
	close(fd);
	return fd;
}

/* One message as the monitor saw it. */
struct run {
	union sbx_req_any rq;
	struct fdpass_rx rx;
	ssize_t		n;
	int		got[FDPASS_MAX];	/* as installed, before the check */
	int		ngot;
	uid_t		uid;
	char		why[128];
};

/*
 * Send the message with its fds and receive it exactly as
 * on_broker_message() in privsep/monitor/monitor.c does; then dispatch_valid it.
 * Returns its verdict, or 0 for an empty message (which the monitor
 * takes for EOF and never checks); a refusal is checked here, an
 * acceptance by the caller.
 */
static int
dispatch(const uint8_t *data, size_t size, const int *fds, int nfds,
    struct run *r)
{
	unsigned char raw[sizeof(r->rq) + 1];
	uint32_t mark = mark_of(kfd[K_AGENT]);
	int type, i;

	memset(r, 0, sizeof(*r));
	r->uid = (uid_t)-2;
	send_any(chan[0], data, size, fds, nfds);
	if ((r->n = recv_fds(chan[1], raw, sizeof(raw), &r->rx)) == -1)
		die("recv_fds");
	if (r->n == 0) {
		fdpass_close(&r->rx);
		return 0;
	}
	if ((size_t)r->n > sizeof(r->rq))
		r->rx.truncated = 1;
	memcpy(&r->rq, raw, (size_t)r->n < sizeof(r->rq) ? (size_t)r->n :
	    sizeof(r->rq));
	r->ngot = r->rx.nfds;
	memcpy(r->got, r->rx.fds, sizeof(r->got));
	type = dispatch_valid(&r->rq, (size_t)r->n, &r->rx, path, &r->uid,
	    r->why, sizeof(r->why), fdpass_close);
	if (type != -1)
		return type;
	assert(r->why[0] != '\0');
	assert(r->uid == (uid_t)-2);
	for (i = 0; i < r->ngot; i++)
		assert(!is_open(r->got[i]));
	/* a refused message has not used up the agent's one request */
	assert(mark_of(kfd[K_AGENT]) == mark);
	return -1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct run r, again;
	enum kind kinds[MAX_SEND];
	int fds[MAX_SEND], nfds, i, type, before;

	if (size < 1)
		return 0;
	nfds = data[0] % (MAX_SEND + 1);
	if (size < 1 + (size_t)nfds)
		return 0;
	for (i = 0; i < nfds; i++) {
		kinds[i] = (enum kind)(data[1 + i] % K_NKINDS);
		fds[i] = kfd[kinds[i]];
	}
	data += 1 + nfds;
	size -= 1 + (size_t)nfds;
	if (size > sizeof(r.rq) + 1 + 64)
		return 0;	/* longer only means truncated: seen already */

	before = next_fd();
	if ((type = dispatch(data, size, fds, nfds, &r)) <= 0)
		goto out;
	assert(type < SBX_REQ_MAX && type == (int)r.rq.hdr.type);
	assert((size_t)r.n == size && nfds == 1 && r.ngot == 1);
	check_body(&r.rq, (size_t)r.n);
	assert(kinds[0] == K_AGENT);
	assert(r.rx.nfds == 1 && r.rx.fds[0] == r.got[0] && is_open(r.got[0]));
	assert(mark_of(r.got[0]) == DISPATCH_MARK);
	assert(mark_of(kfd[K_AGENT]) == DISPATCH_MARK);	/* the same socket */
	assert(r.uid == geteuid());

	/* The broker kept its copy and sends the same again while the first
	 * is in flight: refused. */
	assert(dispatch(data, size, fds, nfds, &again) == -1);
	assert(!strcmp(again.why, "agent socket already carried a request"));

	/* The monitor answers and closes; the next input gets the agent
	 * socket fresh, as from a new connection (the path is gone). */
	close(r.rx.fds[0]);
	if (set_mark(kfd[K_AGENT], 0) == -1)
		die("SO_MARK 0");
out:
	if (next_fd() != before) {
		fprintf(stderr, "descriptor leak: next fd %d, was %d\n",
		    next_fd(), before);
		abort();
	}
	return 0;
}
