/*
 * fuzz_dispatch.c - libFuzzer harness for the monitor's validation of
 * broker messages (privsep/dispatch.c, dispatch_check).
 *
 * Input: byte 0 is how many descriptors ride along (0..5, more than
 * FDPASS_MAX arrives as MSG_CTRUNC), the next bytes pick each one's kind
 * from a fixed set made once at start-up, the rest is the message. Each
 * run sends it over a real SOCK_SEQPACKET pair with SCM_RIGHTS
 * and receives it exactly as on_broker_message() in privsep/monitor.c
 * does, into a buffer one byte larger than the largest request.
 *
 * What must hold, whatever the bytes:
 *  - a rejection has a reason, leaves *uid alone and closes every fd the
 *    kernel installed;
 *  - an acceptance means: the size of its type, a body that passes the
 *    checks rewritten here independently, exactly two fds of which the
 *    first is the connection accepted on our agent socket (and is now
 *    closed), the second a Unix stream socket (ours to close), and the
 *    uid our own;
 *  - no descriptor leaks either way.
 */
#include <assert.h>
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

enum kind {
	K_AGENT,	/* accepted on our agent socket: the only good first fd */
	K_ANSWER,	/* one end of a stream socketpair: the good second fd */
	K_LISTEN,	/* our listening socket itself */
	K_ELSEWHERE,	/* accepted on another path */
	K_CLIENT,	/* the agent's own end: connected, unnamed */
	K_DGRAM,
	K_SEQPACKET,
	K_PIPE,
	K_DEVNULL,
	K_INET,
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
 * getsockname still reports the bound path, which is all dispatch_check
 * looks at, and nothing is left behind when the fuzzer is killed.
 */
static void
make_kinds(void)
{
	char dir[] = "/tmp/fuzz-dispatch.XXXXXX", other[sizeof(path)];
	int pair[2], pipefd[2], lother, cother;

	if (mkdtemp(dir) == NULL)
		die("mkdtemp");
	snprintf(path, sizeof(path), "%s/sbx.sock", dir);
	snprintf(other, sizeof(other), "%s/other.sock", dir);
	kfd[K_LISTEN] = listen_at(path);
	kfd[K_AGENT] = accepted(kfd[K_LISTEN], path, &kfd[K_CLIENT]);
	lother = listen_at(other);
	kfd[K_ELSEWHERE] = accepted(lother, other, &cother);
	unlink(path);
	unlink(other);
	rmdir(dir);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == -1 ||
	    pipe2(pipefd, O_CLOEXEC) == -1)
		die("socketpair");
	kfd[K_ANSWER] = pair[1];
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

/*
 * What dispatch_check lets through as the answer socket: a connected Unix
 * stream socket. (A listening one passed until this harness found it;
 * harmless, since send() to it fails, but now refused.)
 */
static int
unix_stream(enum kind k)
{
	return k == K_AGENT || k == K_ANSWER || k == K_ELSEWHERE ||
	    k == K_CLIENT;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	union sbx_req_any rq;
	unsigned char raw[sizeof(rq) + 1];
	struct fdpass_rx rx;
	enum kind kinds[MAX_SEND];
	int fds[MAX_SEND], got[FDPASS_MAX], ngot, nfds, i, type, before;
	char why[128];
	uid_t uid = (uid_t)-2;
	ssize_t n;

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
	if (size > sizeof(raw) + 64)
		return 0;	/* longer only means truncated: seen already */

	before = next_fd();
	send_any(chan[0], data, size, fds, nfds);
	/* on_broker_message(), line for line */
	if ((n = recv_fds(chan[1], raw, sizeof(raw), &rx)) == -1)
		die("recv_fds");
	if (n == 0) {
		fdpass_close(&rx);
		goto out;
	}
	if ((size_t)n > sizeof(rq))
		rx.truncated = 1;
	memcpy(&rq, raw, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
	ngot = rx.nfds;
	memcpy(got, rx.fds, sizeof(got));
	memset(why, 0, sizeof(why));
	type = dispatch_check(&rq, (size_t)n, &rx, path, &uid, why, sizeof(why));

	if (type == -1) {
		assert(why[0] != '\0');
		assert(uid == (uid_t)-2);
		for (i = 0; i < ngot; i++)
			assert(!is_open(got[i]));
		goto out;
	}
	assert(type > 0 && type < SBX_REQ_MAX && type == (int)rq.hdr.type);
	assert((size_t)n == size && nfds == 2 && ngot == 2);
	check_body(&rq, (size_t)n);
	assert(kinds[0] == K_AGENT && unix_stream(kinds[1]));
	assert(rx.fds[0] == -1 && !is_open(got[0]));
	assert(rx.fds[1] == got[1] && is_open(got[1]));
	assert(uid == geteuid());
	close(rx.fds[1]);
out:
	if (next_fd() != before) {
		fprintf(stderr, "descriptor leak: next fd %d, was %d\n",
		    next_fd(), before);
		abort();
	}
	return 0;
}
