/*
 * test_dispatch.c - the monitor's validation of every broker message
 * (dispatch_valid), fed the way the monitor feeds it: a real message over
 * a real SOCK_SEQPACKET pair with SCM_RIGHTS (send_fds / recv_fds), read
 * into a buffer one byte larger than union sbx_req_any.
 *
 * The one fd is a connection accepted on a real listening AF_UNIX socket
 * at a temporary path: the agent's, on which the monitor answers. After
 * every rejection no received descriptor may stay open: the tests count
 * /proc/self/fd. An accepted socket is marked (SO_MARK) and carries no
 * second request, so a test that needs more than one acceptance takes a
 * fresh connection for each (fresh_agent); marking needs CAP_NET_ADMIN,
 * so every test that expects an acceptance is skipped unless root.
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "dispatch.h"
#include "fdpass.h"
#include "iox.h"
#include "msg.h"

static char dir[64];
static char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
static int lsock = -1;		/* the monitor's listening agent socket */
static int agent_client = -1;	/* the agent's end */
static int agent = -1;		/* accepted: what the broker relays */
static int pair[2] = { -1, -1 };	/* a stream socketpair: not an agent's */
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

/*
 * A new agent connection in place of the last one, whose socket may have
 * carried its one request already.
 */
static void
fresh_agent(void)
{
	closep(&agent_client);
	closep(&agent);
	agent_client = connect_to(path);
	agent = accept4(lsock, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_neq(agent, -1);
}

static void
setup(void)
{
	strlcpy(dir, "/tmp/sbx-dispatch-XXXXXX", sizeof(dir));
	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/sock", dir);
	lsock = listen_at(path);
	fresh_agent();
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair),
	    0);
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
	closep(&pair[0]);
	closep(&pair[1]);
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

static uint32_t
mark_of(int fd)
{
	uint32_t mark = 0;
	socklen_t len = sizeof(mark);

	cr_assert_eq(getsockopt(fd, SOL_SOCKET, SO_MARK, &mark, &len), 0,
	    "SO_MARK: %s", strerror(errno));
	return mark;
}

/* A skipped test never reaches .fini: the temporary directory goes now. */
static void
skip(const char *why)
{
	teardown();
	cr_skip_test("%s", why);
}

/* dispatch_valid marks what it accepts, and setting SO_MARK takes root. */
static void
need_root(void)
{
	if (geteuid() != 0)
		skip("setting SO_MARK needs root (CAP_NET_ADMIN)");
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
	case SBX_REQ_RESET:
		strcpy(m->reset.agent, "dev-1");
		strcpy(m->reset.to, "clean");
		return sizeof(struct sbx_req_reset);
	case SBX_REQ_SNAPSHOT:
		strcpy(m->snapshot.agent, "dev-1");
		strcpy(m->snapshot.name, "clean");
		return sizeof(struct sbx_req_snapshot);
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

/* What the broker child does: buf with fds into the broker channel. */
static void
send_msg(const void *buf, size_t len, const int *fds, int nfds)
{
	cr_assert_eq(send_fds(chan[0], buf, len, fds, nfds), (ssize_t)len,
	    "send_fds: %s", strerror(errno));
}

/* Receive the next message the way on_broker_message() does, and run
 * dispatch_valid on it. */
static void
receive(struct result *r)
{
	union sbx_req_any rq;
	unsigned char raw[sizeof(rq) + 1];
	ssize_t n;
	int i;

	memset(r, 0, sizeof(*r));
	r->uid = (uid_t)-2;
	n = recv_fds(chan[1], raw, sizeof(raw), &r->rx);
	cr_assert_gt(n, 0, "recv_fds: %s", strerror(errno));
	if ((size_t)n > sizeof(rq))
		r->rx.truncated = 1;
	memcpy(&rq, raw, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
	r->nfds = r->rx.nfds;
	for (i = 0; i < r->rx.nfds; i++)
		r->fds[i] = r->rx.fds[i];
	r->rc = dispatch_valid(&rq, (size_t)n, &r->rx, path, &r->uid, r->why,
	    sizeof(r->why), fdpass_close);
}

static void
relay(const void *buf, size_t len, const int *fds, int nfds,
    struct result *r)
{
	send_msg(buf, len, fds, nfds);
	receive(r);
}

/* The usual descriptor: the accepted agent socket. */
static void
relay_std(const void *buf, size_t len, struct result *r)
{
	int fds[1] = { agent };

	relay(buf, len, fds, 1, r);
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
	cr_assert_eq(r.nfds, 1, "%s: the fd did not arrive", what);
	cr_assert_eq(count_fds(), before, "%s: fd leak", what);
}

/* A message of type whose slug field at off (offsetof in the union) is
 * bad, the rest of the field zero: refused. */
static void
expect_slug_rejected(uint32_t type, size_t off, const char *bad)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, type);
	char *field = (char *)&m + off;

	memset(field, 0, SBX_SLUG_MAX);
	strcpy(field, bad);
	expect_rejected_std(&m, len, bad);
}

#define SLUG_AT(f)	offsetof(union sbx_req_any, f)

/* ---- valid of each type ------------------------------------------------ */

/* The monitor answers on the fd it kept: the agent reads it. */
static void
expect_agents(int fd, int client)
{
	char c = 0;

	cr_assert_eq(write(fd, "!", 1), 1);
	cr_assert_eq(read(client, &c, 1), 1);
	cr_assert_eq(c, '!');
}

static void
expect_valid_msg(const union sbx_req_any *m, size_t len)
{
	uint32_t type = m->hdr.type;
	struct result r;
	int before = count_fds();

	need_root();
	cr_assert_eq(mark_of(agent), 0, "the fixture's socket is fresh");
	relay_std(m, len, &r);
	cr_assert_eq(r.rc, (int)type, "type %u rejected: %s", type, r.why);
	cr_assert_eq(r.uid, getuid());
	cr_assert_eq(r.nfds, 1);
	cr_assert_eq(r.rx.nfds, 1);
	cr_assert_eq(r.rx.fds[0], r.fds[0], "the agent fd is the caller's");
	cr_assert(fd_open(r.rx.fds[0]), "the agent fd must stay open");
	cr_assert_eq(count_fds(), before + 1, "only the agent fd is kept");
	/* taken: the mark is on the socket, so the broker's copy has it too */
	cr_assert_eq(mark_of(r.rx.fds[0]), DISPATCH_MARK);
	cr_assert_eq(mark_of(agent), DISPATCH_MARK);
	/* and it is the agent's connection, not some other socket */
	expect_agents(r.rx.fds[0], agent_client);
	close(r.rx.fds[0]);
	cr_assert_eq(count_fds(), before);
}

static void
expect_valid(uint32_t type)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, type);

	expect_valid_msg(&m, len);
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

Test(dispatch, valid_reset)
{
	expect_valid(SBX_REQ_RESET);
}

Test(dispatch, valid_reset_to_nothing)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_RESET);

	memset(m.reset.to, 0, SBX_SLUG_MAX);	/* the hand-out state */
	expect_valid_msg(&m, len);
}

Test(dispatch, valid_snapshot)
{
	expect_valid(SBX_REQ_SNAPSHOT);
}

Test(dispatch, reset_and_snapshot_hostile_fields)
{
	static const char *const bad[] = { "Dev-1", "-dev", ".x", "a b",
	    "a/b", "caf\xc3\xa9" };
	union sbx_req_any m;
	size_t i, len;

	len = msg_init(&m, SBX_REQ_RESET);
	memset(m.reset.to, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "reset.to without NUL");
	len = msg_init(&m, SBX_REQ_RESET);
	m.reset.to[7] = 'x';			/* "clean\0\0x" */
	expect_rejected_std(&m, len, "reset.to tail");
	len = msg_init(&m, SBX_REQ_RESET);
	memset(m.reset.to, 0, SBX_SLUG_MAX);
	m.reset.to[3] = 'x';			/* "" with bytes after */
	expect_rejected_std(&m, len, "an empty reset.to's tail");
	len = msg_init(&m, SBX_REQ_SNAPSHOT);
	memset(m.snapshot.name, 0, SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "an empty snapshot.name");
	len = msg_init(&m, SBX_REQ_SNAPSHOT);
	memset(m.snapshot.agent, 'a', SBX_SLUG_MAX);
	expect_rejected_std(&m, len, "snapshot.agent without NUL");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_slug_rejected(SBX_REQ_RESET, SLUG_AT(reset.to), bad[i]);
		expect_slug_rejected(SBX_REQ_RESET, SLUG_AT(reset.agent),
		    bad[i]);
		expect_slug_rejected(SBX_REQ_SNAPSHOT, SLUG_AT(snapshot.name),
		    bad[i]);
	}
}

Test(dispatch, valid_sandbox_sixteen_services)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);
	struct result r;
	int i;

	need_root();
	m.sandbox.nservices = SBX_MAX_SERVICES;
	memset(m.sandbox.services, 0, sizeof(m.sandbox.services));
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		snprintf(m.sandbox.services[i], SBX_SLUG_MAX, "svc-%d", i);
	memset(m.sandbox.agent, 0, SBX_SLUG_MAX);
	strcpy(m.sandbox.agent, "a");	/* shortest */
	memset(m.sandbox.project, 'p', SBX_SLUG_MAX - 1);	/* longest */
	relay_std(&m, len, &r);
	cr_assert_eq(r.rc, SBX_REQ_SANDBOX, "%s", r.why);
	close(r.rx.fds[0]);
}

/* A subverted broker's bind_pid below 0 is refused, the broker with it. */
Test(dispatch, negative_bind_pid_rejected)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_SANDBOX);

	need_root();
	m.sandbox.bind_pid = -1;
	expect_rejected_std(&m, len, "bind_pid -1");
	m.sandbox.bind_pid = INT32_MIN;
	expect_rejected_std(&m, len, "bind_pid INT32_MIN");
}

/* The uid is the agent's (SO_PEERCRED of the accepted socket), not the
 * uid of whoever relays the message. */
Test(dispatch, uid_is_the_connecting_agents)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int client, conn, status;
	pid_t pid;

	if (getuid() != 0)
		skip("needs root to connect as another uid");
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
	relay(&m, len, &conn, 1, &r);
	cr_assert_eq(r.rc, SBX_REQ_PING, "%s", r.why);
	cr_assert_eq(r.uid, 4321);
	expect_agents(r.rx.fds[0], client);
	close(r.rx.fds[0]);
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

struct kept {
	struct sbx_ans	a;
	unsigned	n;		/* answers that came: exactly one */
};

static void
keep_answer(void *ctx, const struct sbx_ans *a)
{
	struct kept *k = ctx;

	k->a = *a;
	k->n++;
}

/* A caller that skipped dispatch_valid() still gets one answer, and no
 * handler runs (the stubs abort). */
Test(dispatch, handle_answers_an_unknown_type_with_an_error)
{
	union sbx_req_any m;
	struct kept k;
	uint32_t types[] = { 0, SBX_REQ_MAX, 999, UINT32_MAX };
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		memset(&k, 0, sizeof(k));
		msg_init(&m, types[i]);
		dispatch_handle(NULL, 1000, &m,
		    (struct sbx_reply){ keep_answer, &k });
		cr_assert_eq(k.n, 1, "type %u: one answer", types[i]);
		cr_assert_eq(k.a.type, types[i]);
		cr_assert_eq(k.a.code, SBX_E_INTERNAL);
		cr_assert_str_eq(k.a.message, "unknown request type.");
	}
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
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		expect_slug_rejected(SBX_REQ_AVAILABLE,
		    SLUG_AT(available.project), bad[i]);
		expect_slug_rejected(SBX_REQ_RELEASE, SLUG_AT(release.agent),
		    bad[i]);
		expect_slug_rejected(SBX_REQ_SANDBOX, SLUG_AT(sandbox.agent),
		    bad[i]);
		expect_slug_rejected(SBX_REQ_SANDBOX, SLUG_AT(sandbox.project),
		    bad[i]);
		expect_slug_rejected(SBX_REQ_SANDBOX,
		    SLUG_AT(sandbox.services[1]), bad[i]);
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

/*
 * Send a ping with fds: rejected, for the reason why if that is not NULL,
 * and every fd that arrived closed.
 */
static void
expect_rejected_fds(const int *fds, int nfds, const char *why,
    const char *what)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int before = count_fds();

	relay(&m, len, fds, nfds, &r);
	expect_rejected(&r, what);
	cr_assert_eq(r.nfds, nfds > FDPASS_MAX ? FDPASS_MAX : nfds,
	    "%s: %d fds arrived", what, r.nfds);
	if (why != NULL)
		cr_assert_str_eq(r.why, why, "%s", what);
	cr_assert_eq(count_fds(), before, "%s: fd leak", what);
}

#define WRONG_NUMBER	"wrong number of fds"
#define NOT_STREAM	"fd is not a unix stream socket"
#define NOT_OURS	"agent fd was not accepted on our socket"
#define TAKEN		"agent socket already carried a request"

Test(dispatch, zero_fds)
{
	expect_rejected_fds(NULL, 0, WRONG_NUMBER, "no fds");
}

/* The old shape (agent, answer socket) and every other pair. */
Test(dispatch, two_fds)
{
	int fds[2] = { agent, pair[1] };

	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and a socketpair end");
	fds[0] = pair[1];
	fds[1] = agent;
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "a socketpair end, agent");
	fds[0] = agent;
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "the agent fd twice");
}

Test(dispatch, three_fds)
{
	int extra = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int fds[3] = { agent, pair[1], extra };

	cr_assert_neq(extra, -1);
	expect_rejected_fds(fds, 3, WRONG_NUMBER, "two extra fds");
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
	int fds[5] = { agent, pair[1], agent, pair[1], agent };
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
	cr_assert_eq(dispatch_valid(&rq, len, &rx, path, &uid, why,
	    sizeof(why), fdpass_close), -1);
	cr_assert_neq(why[0], '\0');
	cr_assert_eq(uid, (uid_t)-2);
	for (i = 0; i < ngot; i++)
		cr_assert_not(fd_open(got[i]), "fd %d left open", got[i]);
	cr_assert_eq(count_fds(), before, "fd leak after MSG_CTRUNC");
}

Test(dispatch, agent_fd_is_a_pipe)
{
	int p[2], fds[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fds[0] = p[0];
	expect_rejected_fds(fds, 1, NOT_STREAM, "pipe as agent fd");
	fds[0] = agent;
	fds[1] = p[1];
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and a pipe");
	close(p[0]);
	close(p[1]);
}

Test(dispatch, agent_fd_is_a_regular_file)
{
	int f = open("/dev/null", O_RDWR | O_CLOEXEC);

	cr_assert_neq(f, -1);
	expect_rejected_fds(&f, 1, NOT_STREAM, "/dev/null as agent fd");
	close(f);
}

/* A socketpair is a unix stream socket with a peer, but it was never
 * accepted on our path: the broker could make one with any uid behind it. */
Test(dispatch, agent_fd_from_a_socketpair)
{
	expect_rejected_fds(&pair[1], 1, NOT_OURS, "socketpair end as agent fd");
}

/* The agent's own end (connected, never accepted) is not ours either. */
Test(dispatch, agent_fd_is_the_client_end)
{
	expect_rejected_fds(&agent_client, 1, NOT_OURS,
	    "client end as agent fd");
}

/* Accepted on a socket at another path. */
Test(dispatch, agent_fd_accepted_elsewhere)
{
	char other[sizeof(path)];
	int l, c, a;

	snprintf(other, sizeof(other), "%s/sock2", dir);
	l = listen_at(other);
	c = connect_to(other);
	a = accept4(l, NULL, NULL, SOCK_CLOEXEC);
	cr_assert_neq(a, -1);
	expect_rejected_fds(&a, 1, NOT_OURS, "accepted on <path>2");
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
	expect_rejected_fds(&lsock, 1, "agent fd is a listening socket",
	    "listening socket as agent fd");
}

/* Found by fuzz_dispatch as the second (answer) fd of the old two-fd
 * message; a second fd of any kind is now one too many. */
Test(dispatch, agent_and_the_listening_socket)
{
	int fds[2] = { agent, lsock };

	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and listening socket");
}

Test(dispatch, agent_fd_is_sock_dgram)
{
	int d[2], fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, d), 0);
	fds[0] = d[0];
	expect_rejected_fds(fds, 1, NOT_STREAM, "SOCK_DGRAM as agent fd");
	fds[0] = agent;
	fds[1] = d[0];
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and SOCK_DGRAM");
	close(d[0]);
	close(d[1]);
}

Test(dispatch, sock_seqpacket_and_inet_are_rejected)
{
	int s[2], inet, fds[2];

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, s),
	    0);
	fds[0] = s[0];
	expect_rejected_fds(fds, 1, NOT_STREAM, "SOCK_SEQPACKET as agent fd");
	fds[0] = agent;
	fds[1] = s[0];
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and SOCK_SEQPACKET");
	inet = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	cr_assert_neq(inet, -1);
	fds[1] = inet;
	expect_rejected_fds(fds, 2, WRONG_NUMBER, "agent and AF_INET");
	fds[0] = inet;
	expect_rejected_fds(fds, 1, NOT_STREAM, "AF_INET as agent fd");
	close(inet);
	close(s[0]);
	close(s[1]);
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

/* A body failure closes the fd just like an fd failure does. */
Test(dispatch, rejection_after_a_good_fd_closes_it)
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

/* ---- one request per connection ---------------------------------------- */

/*
 * A broker that kept a copy of an accepted socket sends it again once the
 * monitor has answered and closed its own: the socket is marked, refused.
 */
Test(dispatch, replay_after_the_answer)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_RELEASE);
	struct result r;
	int copy, before;

	need_root();
	copy = fcntl(agent, F_DUPFD_CLOEXEC, 0);
	cr_assert_neq(copy, -1);
	relay_std(&m, len, &r);
	cr_assert_eq(r.rc, SBX_REQ_RELEASE, "%s", r.why);
	expect_agents(r.rx.fds[0], agent_client);
	cr_assert_eq(shutdown(r.rx.fds[0], SHUT_RDWR), 0);
	close(r.rx.fds[0]);

	before = count_fds();
	relay(&m, len, &copy, 1, &r);
	expect_rejected(&r, "the same socket again");
	cr_assert_str_eq(r.why, TAKEN);
	cr_assert_eq(r.nfds, 1);
	cr_assert_eq(count_fds(), before, "fd leak");
	/* as a ping too, through the fixture's own fd */
	expect_rejected_fds(&agent, 1, TAKEN, "a ping on the same socket");
	cr_assert_eq(mark_of(copy), DISPATCH_MARK);
	close(copy);
}

/*
 * Two requests in the channel at once, each with a copy of one socket:
 * the first is taken, the second refused, and its rejection (which
 * closes only what it received) leaves the first one's fd answerable.
 */
Test(dispatch, two_in_flight_on_one_socket)
{
	union sbx_req_any m1, m2;
	size_t len1 = msg_init(&m1, SBX_REQ_AVAILABLE);
	size_t len2 = msg_init(&m2, SBX_REQ_STATUS);
	struct result r1, r2;
	int copy, before;

	need_root();
	copy = fcntl(agent, F_DUPFD_CLOEXEC, 0);
	cr_assert_neq(copy, -1);
	before = count_fds();
	send_msg(&m1, len1, &agent, 1);
	send_msg(&m2, len2, &copy, 1);
	receive(&r1);
	receive(&r2);
	cr_assert_eq(r1.rc, SBX_REQ_AVAILABLE, "%s", r1.why);
	expect_rejected(&r2, "the second of two in flight");
	cr_assert_str_eq(r2.why, TAKEN);
	cr_assert_neq(r1.rx.fds[0], r2.fds[0]);
	cr_assert_eq(count_fds(), before + 1, "only the first one's fd kept");
	expect_agents(r1.rx.fds[0], agent_client);
	close(r1.rx.fds[0]);
	cr_assert_eq(count_fds(), before);
	close(copy);
}

/* The mark is per socket: after one is taken, a new connection is fresh,
 * and the old one stays refused. */
Test(dispatch, a_new_connection_is_fresh)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int old, old_client, i;

	need_root();
	for (i = 0; i < 3; i++) {
		relay_std(&m, len, &r);
		cr_assert_eq(r.rc, SBX_REQ_PING, "connection %d: %s", i, r.why);
		expect_agents(r.rx.fds[0], agent_client);
		close(r.rx.fds[0]);
		old = agent;	/* kept, as a hoarding broker would */
		old_client = agent_client;
		agent = agent_client = -1;
		fresh_agent();
		cr_assert_eq(mark_of(agent), 0);
		expect_rejected_fds(&old, 1, TAKEN, "the previous connection");
		close(old);
		close(old_client);
	}
}

/* Any mark refuses a socket, not only ours: the monitor sets none but
 * DISPATCH_MARK on agent sockets, so another one is not fresh either. */
Test(dispatch, a_socket_marked_otherwise)
{
	uint32_t mark = 1;

	need_root();
	cr_assert_eq(setsockopt(agent, SOL_SOCKET, SO_MARK, &mark,
	    sizeof(mark)), 0, "SO_MARK: %s", strerror(errno));
	expect_rejected_fds(&agent, 1, TAKEN, "SO_MARK 1");
	cr_assert_eq(mark_of(agent), 1, "the refusal changed the mark");
}

/* ---- nothing queued on the agent's socket ------------------------------ */

/*
 * Bytes the agent sent that nobody read: the broker's child must have
 * read its socket empty before the hand-over, since what is queued may
 * carry descriptors that the monitor's last close would release.
 */
Test(dispatch, an_agent_socket_with_unread_input)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;
	int before = count_fds();

	cr_assert_eq(write(agent_client, "x", 1), 1);
	relay_std(&m, len, &r);
	expect_rejected(&r, "unread input");
	cr_assert_str_eq(r.why, "agent socket has unread input");
	cr_assert_eq(mark_of(agent), 0, "not taken");
	cr_assert_eq(count_fds(), before, "fd leak");
}

/* Once taken, the agent can send nothing more: the input is shut. */
Test(dispatch, an_accepted_agent_can_send_no_more)
{
	union sbx_req_any m;
	size_t len = msg_init(&m, SBX_REQ_PING);
	struct result r;

	need_root();
	relay_std(&m, len, &r);
	cr_assert_eq(r.rc, SBX_REQ_PING, "%s", r.why);
	cr_assert_eq(send(agent_client, "x", 1, MSG_NOSIGNAL), -1);
	cr_assert_eq(errno, EPIPE, "%s", strerror(errno));
	expect_agents(r.rx.fds[0], agent_client);
	close(r.rx.fds[0]);
}

/*
 * A TCP connection to a listener that neither accepts nor reads, its
 * send buffer full, with SO_LINGER: its last close waits for the linger
 * time. *lst is the listener, to be closed after (that ends the wait).
 */
static int
lingering_tcp(int seconds, int *lst)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct linger lg = { 1, seconds };
	socklen_t sl = sizeof(sin);
	char buf[65536];
	int fd;

	memset(buf, 'x', sizeof(buf));
	cr_assert_neq(*lst = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), -1);
	cr_assert_eq(bind(*lst, (struct sockaddr *)&sin, sizeof(sin)), 0);
	cr_assert_eq(listen(*lst, 1), 0);
	cr_assert_eq(getsockname(*lst, (struct sockaddr *)&sin, &sl), 0);
	cr_assert_neq(fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), -1);
	cr_assert_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	while (send(fd, buf, sizeof(buf), MSG_DONTWAIT | MSG_NOSIGNAL) > 0)
		;
	cr_assert_eq(setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)),
	    0);
	return fd;
}

/*
 * A refused message's descriptors leave the monitor without a close that
 * waits: the last close is a child's, in its exit. The fixture proves
 * itself first: closed here, such a socket takes its linger time.
 */
Test(dispatch, a_refused_descriptor_is_released_apart, .timeout = 30)
{
	struct fdpass_rx rx = { .nfds = 1 };
	int64_t t0;
	int lst, fd;

	fd = lingering_tcp(2, &lst);
	t0 = now_ms();
	close(fd);
	cr_assert_geq(now_ms() - t0, 1500, "a close here waits (%lld ms)",
	    (long long)(now_ms() - t0));
	close(lst);

	rx.fds[0] = lingering_tcp(2, &lst);
	fd = rx.fds[0];
	t0 = now_ms();
	dispatch_release_apart(&rx);
	cr_assert_lt(now_ms() - t0, 1000, "released apart it does not "
	    "(%lld ms)", (long long)(now_ms() - t0));
	cr_assert_eq(rx.nfds, 0);
	cr_assert_not(fd_open(fd), "and it is closed here");
	close(lst);
	while (waitpid(-1, NULL, 0) > 0)
		;
}
