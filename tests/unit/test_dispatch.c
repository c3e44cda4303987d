/*
 * test_dispatch.c - the monitor's validation of every broker message
 * (dispatch_check), fed the way the monitor feeds it: a real message over
 * a real SOCK_SEQPACKET pair with SCM_RIGHTS (send_fds / recv_fds), read
 * into a buffer one byte larger than union sbx_req_any.
 *
 * The agent socket is a connection accepted on a real listening AF_UNIX
 * socket at a temporary path; the answer socket is a SOCK_STREAM pair.
 * After every rejection no received descriptor may stay open: the tests
 * count /proc/self/fd.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dispatch.h"
#include "fdpass.h"
#include "msg.h"

static char dir[64];
static char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int lsock = -1;		/* the monitor's listening agent socket */
static int agent_client = -1;	/* the agent's end */
static int agent = -1;		/* accepted: what the broker relays */
static int ans[2] = { -1, -1 };	/* [0] the child keeps, [1] is relayed */
static int chan[2] = { -1, -1 };	/* broker channel: [0] child, [1] monitor */

static void
closep(int *fd)
{
	if (*fd != -1)
		close(*fd);
	*fd = -1;
}

static int
listen_at(const char *p)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, p, sizeof(sun.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(fd, -1);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0,
	    "bind %s: %s", p, strerror(errno));
	cr_assert_eq(listen(fd, 8), 0);
	return fd;
}

static int
connect_to(const char *p)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	strlcpy(sun.sun_path, p, sizeof(sun.sun_path));
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(fd, -1);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sun, sizeof(sun)), 0,
	    "connect %s: %s", p, strerror(errno));
	return fd;
}

static void
setup(void)
{
	strlcpy(dir, "/tmp/sbx-dispatch-XXXXXX", sizeof(dir));
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sock", dir);
	lsock = listen_at(path);
	agent_client = connect_to(path);
	agent = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_neq(agent, -1);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ans), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0,
	    chan), 0);
}

static void
teardown(void)
{
	char other[sizeof(path) + 8];

	snprintf(other, sizeof(other), "%s/sock2", dir);
	unlink(other);	/* agent_fd_accepted_elsewhere, if it failed early */
	closep(&lsock);
	closep(&agent_client);
	closep(&agent);
	closep(&ans[0]);
	closep(&ans[1]);
	closep(&chan[0]);
	closep(&chan[1]);
	unlink(path);
	rmdir(dir);
}

TestSuite(dispatch, .init = setup, .fini = teardown);

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)) != NULL)
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;	/* the directory's own fd */
}

static int
fd_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1;
}

/* ---- messages ---------------------------------------------------------- */

static size_t
msg_init(union sbx_req_any *m, uint32_t type)
{
	memset(m, 0, sizeof(*m));
	m->hdr.magic = SBX_MSG_MAGIC;
	m->hdr.type = type;
	switch (type) {
	case SBX_REQ_PING:
		return sizeof(struct sbx_req_ping);
	case SBX_REQ_AVAILABLE:
		strcpy(m->available.project, "roboco-api");
		return sizeof(struct sbx_req_available);
	case SBX_REQ_SANDBOX:
		strcpy(m->sandbox.agent, "dev-1");
		strcpy(m->sandbox.project, "roboco-api");
		m->sandbox.nservices = 2;
		strcpy(m->sandbox.services[0], "postgres");
		strcpy(m->sandbox.services[1], "redis");
		return sizeof(struct sbx_req_sandbox);
	case SBX_REQ_RELEASE:
		strcpy(m->release.agent, "dev-1");
		return sizeof(struct sbx_req_release);
	case SBX_REQ_STATUS:
		return sizeof(struct sbx_req_status);
	default:
		return sizeof(struct sbx_msg_hdr);
	}
}

struct result {
	int		rc;
	uid_t		uid;
	struct fdpass_rx rx;
	int		fds[FDPASS_MAX];	/* as received, before dispatch */
	int		nfds;
	char		why[128];
};

/*
 * Send buf with fds over the broker channel, receive it the way
 * on_broker_message() does, and run dispatch_check on it.
 */
static void
relay(const void *buf, size_t len, const int *fds, int nfds,
    struct result *r)
{
	union sbx_req_any rq;
	unsigned char raw[sizeof(rq) + 1];
	ssize_t n;
	int i;

	memset(r, 0, sizeof(*r));
	r->uid = (uid_t)-2;
	cr_assert_eq(send_fds(chan[0], buf, len, fds, nfds), (ssize_t)len,
	    "send_fds: %s", strerror(errno));
	n = recv_fds(chan[1], raw, sizeof(raw), &r->rx);
	cr_assert_gt(n, 0, "recv_fds: %s", strerror(errno));
	if ((size_t)n > sizeof(rq))
		r->rx.truncated = 1;
	memcpy(&rq, raw, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
	r->nfds = r->rx.nfds;
	for (i = 0; i < r->rx.nfds; i++)
		r->fds[i] = r->rx.fds[i];
	r->rc = dispatch_check(&rq, (size_t)n, &r->rx, path, &r->uid, r->why,
	    sizeof(r->why));
}

/* The usual descriptors: the accepted agent socket, the answer socket. */
static void
relay_std(const void *buf, size_t len, struct result *r)
{
	int fds[2] = { agent, ans[1] };

	relay(buf, len, fds, 2, r);
}

static void
expect_rejected(const struct result *r, const char *what)
{
	int i;

	cr_assert_eq(r->rc, -1, "%s: accepted as type %d, uid %u", what, r->rc,
	    (unsigned)r->uid);
	cr_assert_neq(r->why[0], '\0', "%s: rejected without a reason", what);
	cr_assert_eq(r->uid, (uid_t)-2, "%s: uid set on rejection", what);
	for (i = 0; i < r->nfds; i++)
		cr_assert_not(fd_open(r->fds[i]),
		    "%s: received fd %d still open after rejection", what,
		    r->fds[i]);
}

/* Send, reject, and no fd left behind. */
static void
expect_rejected_std(const void *buf, size_t len, const char *what)
{
	struct result r;
	int before = count_fds();

	relay_std(buf, len, &r);
	expect_rejected(&r, what);
	cr_assert_eq(r.nfds, 2, "%s: the fds did not arrive", what);
	cr_assert_eq(count_fds(), before, "%s: fd leak", what);
}

/* ---- valid of each type ------------------------------------------------ */

static void
expect_valid(uint32_t type)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, type);
	struct result r;
	int before = count_fds();
	char c = 0;

	relay_std(&m, len, &r);
	cr_assert_eq(r.rc, (int)type, "type %u rejected: %s", type, r.why);
	cr_assert_eq(r.uid, getuid());
	cr_assert_eq(r.nfds, 2);
	cr_assert_not(fd_open(r.fds[0]), "the agent fd must be closed");
	cr_assert_eq(r.rx.fds[0], -1);
	cr_assert(fd_open(r.rx.fds[1]), "the answer fd must stay open");
	cr_assert_eq(r.rx.fds[1], r.fds[1]);
	cr_assert_eq(count_fds(), before + 1, "only the answer fd is kept");
	/* and it is the answer socket, not some other one */
	cr_assert_eq(write(r.rx.fds[1], "!", 1), 1);
	cr_assert_eq(read(ans[0], &c, 1), 1);
	cr_assert_eq(c, '!');
	close(r.rx.fds[1]);
	cr_assert_eq(count_fds(), before);
}

Test(dispatch, valid_ping)
{
	expect_valid(SBX_REQ_PING);
}

Test(dispatch, valid_available)
{
	expect_valid(SBX_REQ_AVAILABLE);
}

Test(dispatch, valid_sandbox)
{
	expect_valid(SBX_REQ_SANDBOX);
}

Test(dispatch, valid_release)
{
	expect_valid(SBX_REQ_RELEASE);
}

Test(dispatch, valid_status)
{
	expect_valid(SBX_REQ_STATUS);
}

Test(dispatch, valid_sandbox_sixteen_services)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);
	struct result r;
	int i;

	m.sandbox.nservices = SBX_MAX_SERVICES;
	memset(m.sandbox.services, 0, sizeof(m.sandbox.services));
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		snprintf(m.sandbox.services[i], SBX_SLUG_MAX, "svc-%d", i);
	memset(m.sandbox.agent, 0, SBX_SLUG_MAX);
	strcpy(m.sandbox.agent, "a");	/* shortest */
	memset(m.sandbox.project, 'p', SBX_SLUG_MAX - 1);	/* longest */
	relay_std(&m, len, &r);
	cr_assert_eq(r.rc, SBX_REQ_SANDBOX, "%s", r.why);
	close(r.rx.fds[1]);
}

/* The uid is the agent's (SO_PEERCRED of the accepted socket), not the
 * uid of whoever relays the message. */
Test(dispatch, uid_is_the_connecting_agents)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int fds[2], client, conn, status;
	pid_t pid;

	if (getuid() != 0)
		cr_skip_test("needs root to connect as another uid");
	cr_assert_eq(chmod(dir, 0755), 0);
	cr_assert_eq(chmod(path, 0777), 0);
	client = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(client, -1);
	if ((pid = fork()) == 0) {
		struct sockaddr_un sun;

		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
		if (setresgid(4321, 4321, 4321) == -1 ||
		    setresuid(4321, 4321, 4321) == -1)
			_exit(2);
		_exit(connect(client, (struct sockaddr *)&sun,
		    sizeof(sun)) == 0 ? 0 : 3);
	}
	cr_assert_neq(pid, -1);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "child could not connect as uid 4321 (status %#x)", status);
	conn = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_neq(conn, -1);
	fds[0] = conn;
	fds[1] = ans[1];
	relay(&m, len, fds, 2, &r);
	cr_assert_eq(r.rc, SBX_REQ_PING, "%s", r.why);
	cr_assert_eq(r.uid, 4321);
	close(r.rx.fds[1]);
	close(conn);
	close(client);
}

/* ---- size, magic, type ------------------------------------------------- */

Test(dispatch, one_byte_short)
{
	union sbx_req_any m;
	uint32_t t;

	for (t = SBX_REQ_PING; t < SBX_REQ_MAX; t++) {
		size_t len = msg_init(&m, t);

		expect_rejected_std(&m, len - 1, "one byte short");
	}
}

Test(dispatch, one_byte_long)
{
	union sbx_req_any m[2];
	uint32_t t;

	for (t = SBX_REQ_PING; t < SBX_REQ_MAX; t++) {
		size_t len = msg_init(&m[0], t);

		memset(&m[1], 0, sizeof(m[1]));
		expect_rejected_std(&m, len + 1, "one byte long");
	}
}

Test(dispatch, oversized_beyond_the_union)
{
	static unsigned char big[8192];
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);
	struct result r;
	int before = count_fds();

	memcpy(big, &m, len);
	relay_std(big, sizeof(big), &r);
	expect_rejected(&r, "8 KiB message");
	cr_assert(r.rx.truncated, "MSG_TRUNC or the size seen");
	cr_assert_eq(count_fds(), before);
	/* exactly one past the union too */
	memset(big, 0, sizeof(big));
	memcpy(big, &m, len);
	expect_rejected_std(big, sizeof(union sbx_req_any) + 1, "union + 1");
}

Test(dispatch, shorter_than_a_header)
{
	union sbx_req_any m;

	msg_init(&m, SBX_REQ_PING);
	expect_rejected_std(&m, 4, "4 bytes");
	expect_rejected_std(&m, 1, "1 byte");
}

Test(dispatch, bad_magic)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);

	m.hdr.magic = 0x31786273u;	/* "sbx1" byte-swapped */
	expect_rejected_std(&m, len, "swapped magic");
	m.hdr.magic = 0;
	expect_rejected_std(&m, len, "zero magic");
	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.hdr.magic ^= 1;
	expect_rejected_std(&m, len, "magic off by one bit");
}

Test(dispatch, type_zero)
{
	union sbx_req_any m;

	msg_init(&m, 0);
	expect_rejected_std(&m, sizeof(struct sbx_msg_hdr), "type 0");
}

Test(dispatch, type_max)
{
	union sbx_req_any m;

	msg_init(&m, SBX_REQ_MAX);
	expect_rejected_std(&m, sizeof(struct sbx_msg_hdr), "type SBX_REQ_MAX");
	expect_rejected_std(&m, sizeof(m), "type SBX_REQ_MAX, union size");
}

Test(dispatch, type_999)
{
	union sbx_req_any m;

	msg_init(&m, 999);
	expect_rejected_std(&m, sizeof(struct sbx_msg_hdr), "type 999");
	msg_init(&m, UINT32_MAX);
	expect_rejected_std(&m, sizeof(struct sbx_msg_hdr), "type 2^32-1");
}

/* A message of one type with the size of another. */
Test(dispatch, size_of_another_type)
{
	union sbx_req_any m;

	msg_init(&m, SBX_REQ_PING);
	expect_rejected_std(&m, sizeof(struct sbx_req_release), "ping, release size");
	msg_init(&m, SBX_REQ_RELEASE);
	expect_rejected_std(&m, sizeof(struct sbx_req_available) + 1,
	    "release, odd size");
	msg_init(&m, SBX_REQ_AVAILABLE);
	expect_rejected_std(&m, sizeof(struct sbx_req_sandbox),
	    "available, sandbox size");
}

/* ---- string fields ----------------------------------------------------- */

Test(dispatch, missing_nul_in_fields)
{
	union sbx_req_any m;
	size_t len;

	len = msg_init(&m, SBX_REQ_AVAILABLE);
	memset(m.available.project, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "available.project without NUL");

	len = msg_init(&m, SBX_REQ_RELEASE);
	memset(m.release.agent, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "release.agent without NUL");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	memset(m.sandbox.agent, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "sandbox.agent without NUL");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	memset(m.sandbox.project, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "sandbox.project without NUL");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	memset(m.sandbox.services[1], 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "sandbox.services[1] without NUL");
}

Test(dispatch, bytes_after_the_nul)
{
	union sbx_req_any m;
	size_t len;

	len = msg_init(&m, SBX_REQ_AVAILABLE);
	m.available.project[SBX_SLUG_MAX - 1] = 'x';
	expect_rejected_std(&m, len, "available.project tail");

	len = msg_init(&m, SBX_REQ_RELEASE);
	m.release.agent[6] = 'x';		/* "dev-1\0x" */
	expect_rejected_std(&m, len, "release.agent tail");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.agent[6] = 'x';
	expect_rejected_std(&m, len, "sandbox.agent tail");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.project[40] = '\x01';
	expect_rejected_std(&m, len, "sandbox.project tail");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.services[0][9] = 'x';	/* "postgres\0x" */
	expect_rejected_std(&m, len, "sandbox.services[0] tail");
}

Test(dispatch, invalid_slug)
{
	static const char *const bad[] = { "Dev-1", "-dev", "", ".x", "a b",
	    "a/b", "caf\xc3\xa9" };
	union sbx_req_any m;
	size_t i, len;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		len = msg_init(&m, SBX_REQ_AVAILABLE);
		memset(m.available.project, 0, SBX_SLUG_MAX);
		strcpy(m.available.project, bad[i]);
		expect_rejected_std(&m, len, bad[i]);

		len = msg_init(&m, SBX_REQ_RELEASE);
		memset(m.release.agent, 0, SBX_SLUG_MAX);
		strcpy(m.release.agent, bad[i]);
		expect_rejected_std(&m, len, bad[i]);

		len = msg_init(&m, SBX_REQ_SANDBOX);
		memset(m.sandbox.agent, 0, SBX_SLUG_MAX);
		strcpy(m.sandbox.agent, bad[i]);
		expect_rejected_std(&m, len, bad[i]);

		len = msg_init(&m, SBX_REQ_SANDBOX);
		memset(m.sandbox.project, 0, SBX_SLUG_MAX);
		strcpy(m.sandbox.project, bad[i]);
		expect_rejected_std(&m, len, bad[i]);

		len = msg_init(&m, SBX_REQ_SANDBOX);
		memset(m.sandbox.services[1], 0, SBX_SLUG_MAX);
		strcpy(m.sandbox.services[1], bad[i]);
		expect_rejected_std(&m, len, bad[i]);
	}
}

Test(dispatch, nservices_17)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);

	m.sandbox.nservices = SBX_MAX_SERVICES + 1;
	expect_rejected_std(&m, len, "nservices 17");
	m.sandbox.nservices = UINT32_MAX;
	expect_rejected_std(&m, len, "nservices 2^32-1");
}

Test(dispatch, duplicate_service)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);

	strcpy(m.sandbox.services[1], "postgres");
	expect_rejected_std(&m, len, "postgres twice");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.nservices = 3;
	strcpy(m.sandbox.services[2], "redis");
	expect_rejected_std(&m, len, "redis at 1 and 2");
}

Test(dispatch, bytes_in_unused_service_slots)
{
	union sbx_req_any m;
	size_t len;

	len = msg_init(&m, SBX_REQ_SANDBOX);
	strcpy(m.sandbox.services[2], "minio");	/* nservices is 2 */
	expect_rejected_std(&m, len, "a name in slot 2");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.services[SBX_MAX_SERVICES - 1][SBX_SLUG_MAX - 1] = 1;
	expect_rejected_std(&m, len, "last byte of the last slot");

	len = msg_init(&m, SBX_REQ_SANDBOX);
	m.sandbox.nservices = 0;	/* every slot unused */
	expect_rejected_std(&m, len, "nservices 0 with names present");
}

Test(dispatch, empty_service_name_in_used_slot)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);

	m.sandbox.nservices = 3;	/* slot 2 is all zero */
	expect_rejected_std(&m, len, "empty name in a used slot");
}

/* ---- descriptors ------------------------------------------------------- */

static void
expect_rejected_fds(const int *fds, int nfds, const char *what)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int before = count_fds();

	relay(&m, len, fds, nfds, &r);
	expect_rejected(&r, what);
	cr_assert_eq(r.nfds, nfds > FDPASS_MAX ? FDPASS_MAX : nfds,
	    "%s: %d fds arrived", what, r.nfds);
	cr_assert_eq(count_fds(), before, "%s: fd leak", what);
}

Test(dispatch, zero_fds)
{
	expect_rejected_fds(NULL, 0, "no fds");
}

Test(dispatch, one_fd)
{
	int fds[1] = { agent };

	expect_rejected_fds(fds, 1, "agent fd only");
	fds[0] = ans[1];
	expect_rejected_fds(fds, 1, "answer fd only");
}

Test(dispatch, three_fds)
{
	int extra = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fds[3] = { agent, ans[1], extra };

	cr_assert_neq(extra, -1);
	expect_rejected_fds(fds, 3, "an extra third fd");
	close(extra);
}

/* More fds than the receive buffer holds: the kernel drops the rest and
 * flags MSG_CTRUNC; what did arrive must be closed. */
Test(dispatch, five_fds)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * 5)];
	} cm;
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	int fds[5] = { agent, ans[1], agent, ans[1], agent };
	struct iovec iov = { .iov_base = &m, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1,
	    .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	struct cmsghdr *c;
	union sbx_req_any rq;
	unsigned char raw[sizeof(rq) + 1];
	struct fdpass_rx rx;
	uid_t uid = (uid_t)-2;
	char why[128] = "";
	int before = count_fds(), i, ngot, got[FDPASS_MAX];
	ssize_t n;

	memset(&cm, 0, sizeof(cm));
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(c), fds, sizeof(fds));
	cr_assert_eq(sendmsg(chan[0], &msg, 0), (ssize_t)len);
	n = recv_fds(chan[1], raw, sizeof(raw), &rx);
	cr_assert_eq(n, (ssize_t)len);
	cr_assert(rx.truncated, "MSG_CTRUNC must be seen");
	cr_assert_eq(rx.nfds, FDPASS_MAX, "as many as the buffer holds");
	for (ngot = 0; ngot < rx.nfds; ngot++)
		got[ngot] = rx.fds[ngot];
	memcpy(&rq, raw, len);
	cr_assert_eq(dispatch_check(&rq, len, &rx, path, &uid, why,
	    sizeof(why)), -1);
	cr_assert_neq(why[0], '\0');
	for (i = 0; i < ngot; i++)
		cr_assert_not(fd_open(got[i]), "fd %d left open", got[i]);
	cr_assert_eq(count_fds(), before, "fd leak after MSG_CTRUNC");
}

Test(dispatch, agent_fd_is_a_pipe)
{
	int p[2], fds[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = p[0];
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "pipe as agent fd");
	fds[0] = agent;
	fds[1] = p[1];
	expect_rejected_fds(fds, 2, "pipe as answer fd");
	close(p[0]);
	close(p[1]);
}

Test(dispatch, agent_fd_is_a_regular_file)
{
	int f = open("/dev/null", O_RDWR | O_CLOEXEC), fds[2];

	cr_assert_neq(f, -1);
	fds[0] = f;
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "/dev/null as agent fd");
	close(f);
}

/* A socketpair is a unix stream socket with a peer, but it was never
 * accepted on our path: the broker could make one with any uid behind it. */
Test(dispatch, agent_fd_from_a_socketpair)
{
	int sp[2], fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp), 0);
	fds[0] = sp[0];
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "socketpair end as agent fd");
	close(sp[0]);
	close(sp[1]);
}

/* The agent's own end (connected, never accepted) is not ours either. */
Test(dispatch, agent_fd_is_the_client_end)
{
	int fds[2] = { agent_client, ans[1] };

	expect_rejected_fds(fds, 2, "client end as agent fd");
}

/* Accepted on a socket at another path. */
Test(dispatch, agent_fd_accepted_elsewhere)
{
	char other[sizeof(path)];
	int l, c, a, fds[2];

	snprintf(other, sizeof(other), "%s/sock2", dir);
	l = listen_at(other);
	c = connect_to(other);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_neq(a, -1);
	fds[0] = a;
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "accepted on <path>2");
	close(a);
	close(c);
	close(l);
	unlink(other);
}

/*
 * The listening socket itself: it is a unix stream socket, getsockname
 * gives our path, and Linux answers SO_PEERCRED on it with the
 * credentials of whoever called listen() - the monitor, uid 0. The
 * broker holds this fd (it accepts on it), so it must not pass for an
 * agent's connection.
 */
Test(dispatch, agent_fd_is_the_listening_socket)
{
	int fds[2] = { lsock, ans[1] };

	expect_rejected_fds(fds, 2, "listening socket as agent fd");
}

/* Found by fuzz_dispatch: a listening socket as the answer fd only loses
 * the broker its own answer, but a child never sends one: refused. */
Test(dispatch, answer_fd_is_the_listening_socket)
{
	int fds[2] = { agent, lsock };

	expect_rejected_fds(fds, 2, "listening socket as answer fd");
}

Test(dispatch, agent_fd_is_sock_dgram)
{
	int d[2], fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, d), 0);
	fds[0] = d[0];
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "SOCK_DGRAM as agent fd");
	fds[0] = agent;
	fds[1] = d[0];
	expect_rejected_fds(fds, 2, "SOCK_DGRAM as answer fd");
	close(d[0]);
	close(d[1]);
}

Test(dispatch, sock_seqpacket_and_inet_are_rejected)
{
	int s[2], inet, fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s),
	    0);
	fds[0] = agent;
	fds[1] = s[0];
	expect_rejected_fds(fds, 2, "SOCK_SEQPACKET as answer fd");
	inet = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(inet, -1);
	fds[1] = inet;
	expect_rejected_fds(fds, 2, "AF_INET as answer fd");
	fds[0] = inet;
	fds[1] = ans[1];
	expect_rejected_fds(fds, 2, "AF_INET as agent fd");
	close(inet);
	close(s[0]);
	close(s[1]);
}

Test(dispatch, fds_in_the_wrong_order)
{
	int fds[2] = { ans[1], agent };

	expect_rejected_fds(fds, 2, "answer first, agent second");
}

/* Credentials or other control data besides SCM_RIGHTS: rejected. */
Test(dispatch, foreign_control_data)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int on = 1, before;

	cr_assert_eq(setsockopt(chan[1], SOL_SOCKET, SO_PASSCRED, &on,
	    sizeof(on)), 0);
	before = count_fds();
	relay_std(&m, len, &r);
	cr_assert(r.rx.foreign || r.rx.truncated, "SCM_CREDENTIALS not seen");
	expect_rejected(&r, "with SCM_CREDENTIALS");
	cr_assert_eq(count_fds(), before);
}

/* A body failure closes the fds just like an fd failure does. */
Test(dispatch, rejection_after_good_fds_closes_both)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);
	struct result r;
	int before = count_fds();

	m.sandbox.nservices = 99;
	relay_std(&m, len, &r);
	expect_rejected(&r, "nservices 99");
	cr_assert_eq(r.rx.nfds, 0, "rx left with fds after closing them");
	cr_assert_eq(count_fds(), before);
}
