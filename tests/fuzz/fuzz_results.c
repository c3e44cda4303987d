/*
 * fuzz_results.c - libFuzzer harness for the monitor's checks of what
 * its workers send back (privsep/monitor/results.c, config_take.c,
 * reload.c, adopt_check.c, bind.c, shared/record_fmt.c) and for its
 * audit lines (audit.c): a subverted worker may write any bytes, and
 * each check must refuse or take them without reading past them or
 * trusting a count inside them; a tenant chooses the names an audit
 * line carries.
 * runs in: the fuzz_results harness (libFuzzer, as root)
 *
 * Input: byte 0 picks the check, the rest is the worker's bytes. A check
 * of a fixed-size struct gets a heap copy of exactly that size (the bytes
 * given, zeros after): ASan sees any read past it. A check of a (result,
 * length) pair gets the bytes as they are, a buffer of their own size.
 * The config and the sandbox they are checked against are the monitor's
 * own, made once: postgres (tcp) and redis (unix).
 *
 * The answers of jobs waited for at start go through the monitor's own
 * reading of them, the worker being fuzz_worker (jobpool_stub.c):
 * config_read maps JOB_CONFIG's memfd, bind_agent_socket receives
 * JOB_BIND's answer and descriptors on a SOCK_SEQPACKET pair
 * (bind_result_take), adopt_answer_take maps JOB_ADOPT's memfd. The
 * large answers are a sound one with the input's edits laid over it, so
 * that short inputs reach past the head.
 *
 * What must hold, whatever the bytes: no crash, no read out of bounds,
 * no undefined behaviour, no descriptor left open, and a few invariants
 * of an acceptance, rewritten here apart from the checks (see check_*).
 */
#include <assert.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

#include "adopt_check.h"
#include "code.h"
#include "spawn_check.h"
#include "audit.h"
#include "bind.h"
#include "cache.h"
#include "config.h"
#include "config_take.h"
#include "job.h"
#include "jobpool_stub.h"
#include "log.h"
#include "record_fmt.h"
#include "reload.h"
#include "results.h"
#include "slug.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct sbx_config cfg;
static struct sbx_svc svc[2];
static struct sbx_sandbox sb;

static void
setup(void)
{
	static int done;

	if (done++)
		return;
	cfg.nservices = 2;
	strcpy(cfg.services[0].name, "postgres");
	cfg.services[0].transport = TRANSPORT_TCP;
	strcpy(cfg.services[1].name, "redis");
	cfg.services[1].transport = TRANSPORT_UNIX;
	strcpy(svc[0].conn.name, "postgres");
	strcpy(svc[1].conn.name, "redis");
	sb.nservices = 2;
	sb.svc = svc;
}

/* The bytes as a struct of size n: a copy of exactly n bytes. */
static void *
as_struct(const uint8_t *data, size_t size, size_t n)
{
	void *p = calloc(1, n);

	assert(p != NULL);
	memcpy(p, data, size < n ? size : n);
	return p;
}

static int
ends(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void
check_outcome(const uint8_t *data, size_t size)
{
	struct job_outcome *o = as_struct(data, size, sizeof(*o));

	if (outcome_valid(o, &cfg, &sb)) {
		assert(o->code < SBX_CODE_MAX);
		assert(ends(o->message, sizeof(o->message)));
		if (o->code == SBX_OK)
			assert(o->svc[0].pid > 0 && o->svc[0].port > 0 &&
			    o->svc[0].port <= 65535 && o->svc[1].pid > 0);
	}
	free(o);
}

static void
check_warm(const uint8_t *data, size_t size)
{
	struct warm_started *r = as_struct(data, size, sizeof(*r));

	if (warm_started_valid(r, &cfg.services[0]))
		assert(r->code < SBX_CODE_MAX);
	(void)warm_started_valid(r, &cfg.services[1]);
	free(r);
}

static void
check_data(const uint8_t *data, size_t size)
{
	struct data_result *r = as_struct(data, size, sizeof(*r));

	if (data_result_valid(r))
		assert(ends(r->message, sizeof(r->message)));
	free(r);
}

/* A (result, length) check: the bytes in a buffer of their own size. */
static void
check_raw(bool (*valid)(const void *, size_t), const uint8_t *data,
    size_t size)
{
	void *p = size > 0 ? malloc(size) : NULL;

	if (p != NULL)
		memcpy(p, data, size);
	if (valid(p, size) && valid != login_result_valid)
		assert(size == sizeof(struct job_outcome));
	free(p);
}

/* A JOB_CLAIM's answer: data[0] the batch's size (past CLAIM_BATCH
 * too), then the answer, in a buffer of its own size. What passes is
 * of the exact size, for exactly that batch, with a known code for each
 * claim and none past it. */
static void
check_claims(const uint8_t *data, size_t size)
{
	struct claim_results r;
	size_t n, i;
	void *p;

	if (size < 1)
		return;
	n = data[0] % (CLAIM_BATCH + 2);
	data++;
	size--;
	p = size > 0 ? malloc(size) : NULL;
	if (p != NULL)
		memcpy(p, data, size);
	if (claims_result_valid(p, size, n, &r)) {
		assert(size == sizeof(r) && r.n == n && n <= CLAIM_BATCH);
		for (i = 0; i < CLAIM_BATCH; i++)
			assert(i < n ? r.code[i] < SBX_CODE_MAX :
			    r.code[i] == 0);
	}
	free(p);
}

static void
check_record(const uint8_t *data, size_t size)
{
	size_t n = record_size(SBX_MAX_SERVICES);
	struct record *r = as_struct(data, size, n);

	if (record_valid(r))
		assert(r->nservices <= SBX_MAX_SERVICES);
	free(r);
}

static void
check_adopt(const uint8_t *data, size_t size, int gone)
{
	if (gone) {
		struct adopt_gone *g = as_struct(data, size, sizeof(*g));

		(void)adopt_gone_valid(g);
		free(g);
	} else {
		struct adopt_found *a = as_struct(data, size, sizeof(*a));

		if (adopt_found_valid(a))
			assert(ends(a->file, sizeof(a->file)));
		free(a);
	}
}

static void
check_config(const uint8_t *data, size_t size)
{
	struct sbx_config *c = as_struct(data, size, sizeof(*c));

	if (config_valid(c))
		assert(c->nservices <= SBX_MAX_SERVICES);
	free(c);
}

static void
check_reload(const uint8_t *data, size_t size)
{
	struct reload_result *r = as_struct(data, size, sizeof(*r));

	if (reload_result_valid(&cfg, r))
		assert(r->nprojects <= RELOAD_MAX_PROJECTS &&
		    r->nranges <= SUBUID_MAX_RANGES);
	free(r);
}

/* ---- what the monitor reads at start, and its audit lines ------------- */

static int		log_rd = -1;	/* the log relay's read end */
static struct sbx_config good;		/* one config_valid takes */

/* Lines go to a pipe (log_relay), read back by check_audit and thrown
 * away after every input: nothing is written to stderr per input. */
static void
log_drain(void)
{
	char buf[4096];

	while (read(log_rd, buf, sizeof(buf)) > 0)
		;
}

static void
config_good(struct sbx_config *c)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	strcpy(c->socket, "/run/sbx/sbx.sock");
	c->socket_mode = 0660;
	strcpy(c->broker_user, "sbx-broker");
	strcpy(c->projects, "/etc/sbx/projects");
	strcpy(c->runtime, "/usr/bin/podman");
	strcpy(c->state_dir, "/var/lib/sbx");
	strcpy(c->run_dir, "/run/sbx/u");
	strcpy(c->subuid_file, "/etc/subuid");
	c->max_children = c->max_workers = 8;
	c->runtime_timeout = 30;
	c->userns_base = 1 << 20;
	c->userns_slots = 64;
	c->nservices = 2;
	strcpy(c->services[0].name, "postgres");
	strcpy(c->services[0].image, "postgres:16");
	c->services[0].port = 5432;
	c->services[0].probe = PROBE_POSTGRES;
	c->services[0].transport = TRANSPORT_TCP;
	c->services[0].ready_timeout = 30;
	c->services[0].nenv = 1;
	strcpy(c->services[0].env[0], "POSTGRES_PASSWORD={password}");
	strcpy(c->services[1].name, "redis");
	strcpy(c->services[1].image, "redis:7");
	c->services[1].port = 6379;
	c->services[1].probe = PROBE_REDIS;
	c->services[1].transport = TRANSPORT_UNIX;
	c->services[1].ready_timeout = 30;
	c->services[1].warm = 2;
	/* config_parse.c's defaults, fixed pools (config_valid asks them) */
	for (i = 0; i < c->nservices; i++) {
		c->services[i].warm_max = c->services[i].warm;
		c->services[i].warm_idle = 300;
		c->services[i].warm_mib = 64;
	}
}

/* Which descriptors below FD_SCAN are open: none may be left behind. */
#define FD_SCAN	64

static void
fds_open(bool *open)
{
	int i;

	for (i = 0; i < FD_SCAN; i++)
		open[i] = fcntl(i, F_GETFD) != -1;
}

static void
fds_same(const bool *before, int except)
{
	int i;

	for (i = 0; i < FD_SCAN; i++)
		if (i != except)
			assert(before[i] == (fcntl(i, F_GETFD) != -1));
}

static uint32_t
le(const uint8_t *p, size_t n)
{
	uint32_t v = 0;

	while (n-- > 0)
		v = v << 8 | p[n];
	return v;
}

/*
 * The input's edits laid over a sound answer of n bytes. Each edit: an
 * anchor byte (one of the answer's fields, modulo nanchor), a 2-byte
 * offset from it, a length byte, and that many bytes; cut at the end.
 */
static void
edit(uint8_t *buf, size_t n, const size_t *anchor, size_t nanchor,
    const uint8_t *data, size_t size)
{
	size_t at, len;

	while (size >= 4 && n > 0) {
		at = (anchor[data[0] % nanchor] + le(data + 1, 2)) % n;
		len = data[3];
		data += 4;
		size -= 4;
		if (len > size)
			len = size;
		memcpy(buf + at, data, len < n - at ? len : n - at);
		data += len;
		size -= len;
	}
}

/* The answer's size as sent: exact, short or long by k (mode 1, 2). */
static size_t
resize(size_t n, unsigned mode, size_t k)
{
	if (mode == 1)
		return k < n ? n - k : 0;
	if (mode == 2)
		return n + k;
	return n;
}

/* A memfd holding n bytes of buf, zeros past the end of buf's m. */
static int
memfd_of(const void *buf, size_t m, size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	assert(fd != -1);
	assert(ftruncate(fd, (off_t)n) == 0);
	assert(pwrite(fd, buf, m < n ? m : n, 0) == (ssize_t)(m < n ? m : n));
	return fd;
}

/* ---- config_read: JOB_CONFIG's answer in its memfd ---------------------- */

static struct config_result *cr_answer;
static size_t	cr_size;		/* bytes the worker writes */
static int	cr_fails;

static int
config_worker(enum job_type type, int fd)
{
	size_t m = cr_size < sizeof(*cr_answer) ? cr_size :
	    sizeof(*cr_answer);

	assert(type == JOB_CONFIG);
	assert(ftruncate(fd, (off_t)cr_size) == 0);
	assert(pwrite(fd, cr_answer, m, 0) == (ssize_t)m);
	return cr_fails ? -1 : 0;
}

/*
 * Input: a mode byte (bit 0: the worker fails after writing; bits 1-2:
 * the size, exact, short or long by k), k (2 bytes), then edits over a
 * sound answer.
 */
static void
check_config_read(const uint8_t *data, size_t size)
{
	static const size_t anchor[] = {
		offsetof(struct config_result, magic),
		offsetof(struct config_result, ok),
		offsetof(struct config_result, proc_hidden),
		offsetof(struct config_result, err),
		offsetof(struct config_result, cfg.socket),
		offsetof(struct config_result, cfg.socket_mode),
		offsetof(struct config_result, cfg.runtime),
		offsetof(struct config_result, cfg.nruntime_args),
		offsetof(struct config_result, cfg.state_dir),
		offsetof(struct config_result, cfg.run_dir),
		offsetof(struct config_result, cfg.max_children),
		offsetof(struct config_result, cfg.userns_base),
		offsetof(struct config_result, cfg.subuid),
		offsetof(struct config_result, cfg.nservices),
		offsetof(struct config_result, cfg.services[0]),
		offsetof(struct config_result, cfg.services[0].port),
		offsetof(struct config_result, cfg.services[0].nenv),
		offsetof(struct config_result, cfg.services[0].transport),
		offsetof(struct config_result, cfg.services[1]),
		offsetof(struct config_result, cfg.services[2]),
	};
	static struct sbx_config *out;
	bool fds[FD_SCAN];
	char err[512];
	int rc;

	if (size < 3)
		return;
	/* 245 KB each: kept, not allocated per input */
	if (cr_answer == NULL) {
		cr_answer = malloc(sizeof(*cr_answer));
		out = malloc(sizeof(*out));
		assert(cr_answer != NULL && out != NULL);
	}
	memset(cr_answer, 0, sizeof(*cr_answer));
	memset(out, 0, sizeof(*out));
	cr_answer->magic = CONFIG_MAGIC;
	cr_answer->ok = 1;
	cr_answer->proc_hidden = 1;
	cr_answer->cfg = good;
	edit((uint8_t *)cr_answer, sizeof(*cr_answer), anchor,
	    sizeof(anchor) / sizeof(anchor[0]), data + 3, size - 3);
	cr_fails = data[0] & 1;
	cr_size = resize(sizeof(*cr_answer), (data[0] >> 1) & 3,
	    le(data + 1, 2) + 1);
	fuzz_worker = config_worker;
	fds_open(fds);
	memset(err, 'x', sizeof(err));
	rc = config_read("/etc/sbx/sbx.conf", out, err, sizeof(err));
	fds_same(fds, -1);
	assert(memchr(err, '\0', sizeof(err)) != NULL);
	if (rc == 0) {
		assert(!cr_fails && cr_size == sizeof(*cr_answer) &&
		    cr_answer->magic == CONFIG_MAGIC && cr_answer->ok);
		assert(memcmp(out, &cr_answer->cfg, sizeof(*out)) == 0);
		assert(ends(out->socket, sizeof(out->socket)) &&
		    out->socket[0] == '/' &&
		    out->nservices <= SBX_MAX_SERVICES);
	} else	/* said: the worker's own sentence, when it has one */
		assert(rc == -1 && (err[0] != '\0' || (!cr_answer->ok &&
		    cr_answer->err[0] == '\0')));
	fuzz_worker = NULL;
}

/* ---- bind_result_take: JOB_BIND's answer and descriptor ---------------- */

/* Descriptors a worker may hand over, made once. */
enum {
	K_GOOD,		/* a stream socket listening at bind_path[0] */
	K_ELSEWHERE,	/* the same at bind_path[1] */
	K_NOLISTEN,	/* bound at bind_path[2], not listening */
	K_SEQPACKET,	/* listening at bind_path[3] */
	K_DGRAM,	/* bound at bind_path[4] */
	K_ABSTRACT,	/* listening at bind_path[0]'s name, abstract */
	K_UNBOUND,	/* a stream socket never bound (none listens so) */
	K_PAIR,		/* a socketpair's end */
	K_PIPE,
	K_DEVNULL,
	K_TCP,		/* listening on 127.0.0.1 */
	K_MAX
};
#define NPATHS	5

static char	bind_path[NPATHS][64];
static int	kind_fd[K_MAX];
static ino_t	kind_ino[K_MAX];

static int
unix_at(int type, const char *path, bool abstract, bool listening)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	assert(fd != -1);
	if (path != NULL) {
		strlcpy(sun.sun_path + abstract, path,
		    sizeof(sun.sun_path) - 1);
		if (!abstract)
			unlink(path);
		assert(bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0);
	}
	if (listening)
		assert(listen(fd, 4) == 0);
	return fd;
}

static char	bind_dir[] = "/tmp/sbx-fuzz-bind.XXXXXX";

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
	(void)nftw(bind_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

static void
bind_fixtures(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct stat st;
	int p[2], i;

	assert(mkdtemp(bind_dir) != NULL);
	atexit(rm_fixtures);
	for (i = 0; i < NPATHS; i++)
		snprintf(bind_path[i], sizeof(bind_path[i]), "%s/%c.sock",
		    bind_dir, 'a' + i);
	kind_fd[K_GOOD] = unix_at(SOCK_STREAM, bind_path[0], false, true);
	kind_fd[K_ELSEWHERE] = unix_at(SOCK_STREAM, bind_path[1], false,
	    true);
	kind_fd[K_NOLISTEN] = unix_at(SOCK_STREAM, bind_path[2], false,
	    false);
	kind_fd[K_SEQPACKET] = unix_at(SOCK_SEQPACKET, bind_path[3], false,
	    true);
	kind_fd[K_DGRAM] = unix_at(SOCK_DGRAM, bind_path[4], false, false);
	kind_fd[K_ABSTRACT] = unix_at(SOCK_STREAM, bind_path[0], true, true);
	kind_fd[K_UNBOUND] = unix_at(SOCK_STREAM, NULL, false, false);
	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0);
	kind_fd[K_PAIR] = p[0];
	assert(pipe2(p, O_CLOEXEC) == 0);
	kind_fd[K_PIPE] = p[0];
	kind_fd[K_DEVNULL] = open("/dev/null", O_RDWR | O_CLOEXEC);
	kind_fd[K_TCP] = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert(bind(kind_fd[K_TCP], (struct sockaddr *)&sin,
	    sizeof(sin)) == 0 && listen(kind_fd[K_TCP], 4) == 0);
	for (i = 0; i < K_MAX; i++) {
		assert(fstat(kind_fd[i], &st) == 0);
		kind_ino[i] = st.st_ino;
	}
}

static struct {
	const uint8_t	*msg;
	size_t		 len;
	int		 fds[8];
	int		 nfds;
	int		 fails;
} bw;

/* JOB_BIND's worker: its answer and descriptors in one message, up to 7
 * of them (FDPASS_MAX is 4: past it, MSG_CTRUNC). */
static int
bind_worker(enum job_type type, int sock)
{
	union {
		struct cmsghdr	hdr;
		char		buf[CMSG_SPACE(sizeof(int) * 8)];
	} cb;
	struct iovec iov = { .iov_base = (void *)(uintptr_t)bw.msg,
	    .iov_len = bw.len };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *c;

	assert(type == JOB_BIND);
	if (bw.nfds > 0) {
		memset(&cb, 0, sizeof(cb));
		m.msg_control = cb.buf;
		m.msg_controllen = CMSG_SPACE(sizeof(int) * (size_t)bw.nfds);
		c = CMSG_FIRSTHDR(&m);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)bw.nfds);
		memcpy(CMSG_DATA(c), bw.fds, sizeof(int) * (size_t)bw.nfds);
	}
	(void)sendmsg(sock, &m, MSG_NOSIGNAL);
	return bw.fails ? -1 : 0;
}

/*
 * Input: a mode byte (bit 0: the worker fails after sending; bits 1-2:
 * the answer as given, or padded with zeros to exactly its size, one
 * short, one long), the path sbx.conf names (one of bind_path), the
 * number of descriptors (0-7) and one kind byte each, then the answer.
 * Taken must be exactly: an answer of its size whose sentence is empty,
 * and one descriptor, a stream socket listening at the path named.
 */
static void
check_bind(const uint8_t *data, size_t size)
{
	static struct sbx_config c;
	uint8_t *msg;
	bool fds[FD_SCAN], want;
	struct stat st;
	char err[512];
	unsigned mode, path;
	size_t n, i;
	int rc, k = -1;

	if (size < 3)
		return;
	mode = (data[0] >> 1) & 3;
	bw.fails = data[0] & 1;
	path = data[1] % NPATHS;
	bw.nfds = data[2] % 8;
	data += 3;
	size -= 3;
	if (size < (size_t)bw.nfds)
		return;
	for (i = 0; i < (size_t)bw.nfds; i++)
		bw.fds[i] = kind_fd[(k = data[i] % K_MAX)];
	data += bw.nfds;
	size -= (size_t)bw.nfds;
	n = mode == 0 ? size : mode == 1 ? sizeof(struct bind_result) :
	    mode == 2 ? sizeof(struct bind_result) - 1 :
	    sizeof(struct bind_result) + 1;
	msg = calloc(1, n + 1);
	assert(msg != NULL);
	memcpy(msg, data, size < n ? size : n);
	bw.msg = msg;
	bw.len = n;
	want = !bw.fails && n == sizeof(struct bind_result) &&
	    msg[0] == '\0' && bw.nfds == 1 &&
	    ((k == K_GOOD && path == 0) || (k == K_ELSEWHERE && path == 1));

	strlcpy(c.socket, bind_path[path], sizeof(c.socket));
	fuzz_worker = bind_worker;
	fds_open(fds);
	memset(err, 'x', sizeof(err));
	rc = bind_agent_socket(&c, err, sizeof(err));
	fds_same(fds, rc);
	if (rc >= 0) {
		assert(want);
		assert(fstat(rc, &st) == 0 && st.st_ino == kind_ino[k]);
		assert(fcntl(rc, F_GETFL) & O_NONBLOCK);
		close(rc);
		(void)fcntl(kind_fd[k], F_SETFL, 0);
	} else {
		assert(!want && rc == -1);
		assert(memchr(err, '\0', sizeof(err)) != NULL && err[0] != '\0');
		/* A sentence alone, of the answer's size, is said as is. */
		if (!bw.fails && n == sizeof(struct bind_result) &&
		    memchr(msg, '\0', n) != NULL && msg[0] != '\0' &&
		    bw.nfds == 0)
			assert(strcmp(err, (const char *)msg) == 0);
	}
	fuzz_worker = NULL;
	free(msg);
}

/* ---- adopt_answer_take: JOB_ADOPT's answer in its memfd ----------------- */

static void
found_good(struct adopt_found *a, unsigned i)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->file, sizeof(a->file), "1000-agent-%u", i);
	a->r.magic = RECORD_MAGIC;
	a->r.version = RECORD_VERSION;
	a->r.uid = 1000;
	a->r.nservices = 1;
	a->r.idmap = 3 + i;
	snprintf(a->r.agent, SBX_SLUG_MAX, "agent-%u", i);
	strlcpy(a->r.project, "demo", SBX_SLUG_MAX);
	strlcpy(a->r.svc[0].conn.name, "redis", SBX_SLUG_MAX);
	strlcpy(a->r.svc[0].conn.password, "0123456789abcdef",
	    SBX_SECRET_MAX);
	a->pid[0] = 4242;
	a->why = ADOPT_WHOLE;
}

static void
gone_good(struct adopt_gone *g, unsigned i)
{
	memset(g, 0, sizeof(*g));
	g->why = ADOPT_NO_RECORD;
	g->g.key.uid = 1000;
	snprintf(g->g.key.agent, SBX_SLUG_MAX, "a%u", i);
	snprintf(g->container, sizeof(g->container), "sbx-1000-a%u-redis", i);
}

/* A container's name as a runtime gives it: [A-Za-z0-9_.-]. */
static bool
runtime_name(const char *s)
{
	for (; *s != '\0'; s++)
		if (!(*s >= 'a' && *s <= 'z') && !(*s >= 'A' && *s <= 'Z') &&
		    !(*s >= '0' && *s <= '9') && strchr("_.-", *s) == NULL)
			return false;
	return true;
}

/*
 * Input: a mode byte (bits 0-1: records, 2-3: orphans in the sound
 * answer; bit 4: the bytes as given, no sound answer; bits 5-6: its
 * size, exact, short or long by k), k (2 bytes), then edits.
 */
static void
check_adopt_answer(const uint8_t *data, size_t size)
{
	const struct adopt_head *h;
	struct adopt_head *head;
	struct adopt_found *f;
	struct adopt_gone *g;
	size_t anchor[16], na = 0, n, sent, len = 0, i;
	unsigned nf, ng;
	uint8_t *buf;
	bool fds[FD_SCAN];
	int fd;

	if (size < 3)
		return;
	nf = data[0] & 3;
	ng = (data[0] >> 2) & 3;
	if (data[0] & 0x10) {
		n = size - 3;
		buf = malloc(n + 1);
		assert(buf != NULL);
		memcpy(buf, data + 3, n);
		sent = n;
	} else {
		n = sizeof(*head) + nf * sizeof(*f) + ng * sizeof(*g);
		buf = calloc(1, n);
		assert(buf != NULL);
		head = (struct adopt_head *)(void *)buf;
		f = (struct adopt_found *)(void *)(head + 1);
		g = (struct adopt_gone *)(void *)(f + nf);
		*head = (struct adopt_head){ ADOPT_MAGIC, nf, ng, 1 };
		anchor[na++] = 0;
		anchor[na++] = offsetof(struct adopt_head, nfound);
		anchor[na++] = offsetof(struct adopt_head, ngone);
		for (i = 0; i < nf; i++) {
			found_good(&f[i], (unsigned)i);
			anchor[na++] = (size_t)((uint8_t *)&f[i] - buf);
			anchor[na++] = (size_t)((uint8_t *)&f[i].r - buf);
		}
		for (i = 0; i < ng; i++) {
			gone_good(&g[i], (unsigned)i);
			anchor[na++] = (size_t)((uint8_t *)&g[i] - buf);
			anchor[na++] = (size_t)((uint8_t *)g[i].container -
			    buf);
		}
		edit(buf, n, anchor, na, data + 3, size - 3);
		sent = resize(n, (data[0] >> 5) & 3, le(data + 1, 2) + 1);
	}
	fd = memfd_of(buf, n, sent);
	fds_open(fds);
	h = adopt_answer_take(fd, &len);
	fds_same(fds, -1);
	close(fd);
	if (h != NULL) {
		assert(sent >= sizeof(*h) && len == sent);
		assert(h->magic == ADOPT_MAGIC && h->nfound <= ADOPT_MAX &&
		    h->ngone <= ADOPT_MAX);
		assert(len == sizeof(*h) + h->nfound * sizeof(*f) +
		    h->ngone * sizeof(*g));
		f = (struct adopt_found *)(uintptr_t)(h + 1);
		g = (struct adopt_gone *)(void *)(f + h->nfound);
		for (i = 0; i < h->nfound; i++)
			assert(ends(f[i].file, sizeof(f[i].file)) &&
			    f[i].file[0] != '.' && f[i].file[0] != '\0' &&
			    strchr(f[i].file, '/') == NULL &&
			    f[i].r.nservices <= SBX_MAX_SERVICES &&
			    f[i].why < ADOPT_NO_RECORD);
		/* The container's name goes into an audit line as it is. */
		for (i = 0; i < h->ngone; i++)
			assert(ends(g[i].container, sizeof(g[i].container)) &&
			    runtime_name(g[i].container) &&
			    ends(g[i].g.key.agent, SBX_SLUG_MAX) &&
			    g[i].why >= ADOPT_NO_RECORD &&
			    g[i].why < ADOPT_NWHY);
		munmap((void *)(uintptr_t)h, len);
	}
	free(buf);
}

/* ---- audit.c: a line of tenant-chosen names ----------------------------- */

/* What put_slug writes of a field: '-', or its bytes, '?' outside the
 * slug alphabet. */
static void
slug_as_written(char *out, const char *s, size_t max)
{
	size_t i;

	if (s == NULL || s[0] == '\0') {
		strcpy(out, "-");
		return;
	}
	for (i = 0; i < max && s[i] != '\0'; i++)
		out[i] = strchr(SLUG_BYTES, s[i]) != NULL ? s[i] : '?';
	out[i] = '\0';
}

/*
 * The one audit line logged, its "<PRI>PID " cut; false if none. Lines
 * are whole and of printable ASCII alone; a refusal may come after the
 * "suppressed" line of a uid the rate limit forgot (ratelim.c).
 */
static bool
audit_line(char *line, size_t cap)
{
	char buf[8192], *at, *nl, *c;
	ssize_t n = read(log_rd, buf, sizeof(buf) - 1);
	bool found = false;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	assert(buf[n - 1] == '\n');
	for (at = buf; *at != '\0'; at = nl + 1) {
		nl = strchr(at, '\n');
		*nl = '\0';
		for (c = at; *c != '\0'; c++)
			assert(*c >= 0x20 && *c <= 0x7e);
		assert(at[0] == '<' && (c = strchr(at, ' ')) != NULL);
		if (strncmp(c + 1, "audit event=suppressed ", 23) == 0)
			continue;
		assert(!found);
		found = true;
		strlcpy(line, c + 1, cap);
	}
	return found;
}

/*
 * Input: the function (audit, audit_sandbox, audit_refuse; modulo 3,
 * and the refused op above), the event, the code, the uid (4 bytes), the number of services, then the
 * agent's and the project's fields (64 bytes each, not always ended),
 * the services' (64 each), and the rest: the container named at the end
 * as adopt.c's orphans() names it. Every value must come out as
 * slug_as_written writes it, in its place.
 */
static void
check_audit(const uint8_t *data, size_t size)
{
	char agent[SBX_SLUG_MAX], project[SBX_SLUG_MAX];
	char (*svcs)[SBX_SLUG_MAX];
	char container[SBX_SLUG_MAX * 3], expect[SBX_SLUG_MAX * 24];
	char line[4096], *p;
	struct sbx_svc *sv;
	struct sbx_sandbox box;
	enum audit_event ev;
	enum sbx_code code;
	enum sbx_req_type op;
	unsigned fn, nsv, i;
	uid_t uid;
	size_t m;

	if (size < 8)
		return;
	fn = data[0] % 3;
	op = (enum sbx_req_type)(data[0] / 3 % SBX_REQ_MAX);
	ev = (enum audit_event)(data[1] % (AUDIT_SNAPSHOT + 1));
	code = (enum sbx_code)(data[2] % SBX_CODE_MAX);
	uid = (uid_t)le(data + 3, 4);
	nsv = fn == 0 ? data[7] % (SBX_MAX_SERVICES + 1) : data[7];
	data += 8;
	size -= 8;
	memset(agent, 0, sizeof(agent));
	memset(project, 0, sizeof(project));
	m = size < SBX_SLUG_MAX ? size : SBX_SLUG_MAX;
	memcpy(agent, data, m);
	data += m;
	size -= m;
	m = size < SBX_SLUG_MAX ? size : SBX_SLUG_MAX;
	memcpy(project, data, m);
	data += m;
	size -= m;
	svcs = calloc(nsv > SBX_MAX_SERVICES ? nsv : SBX_MAX_SERVICES,
	    SBX_SLUG_MAX);
	sv = calloc(nsv + 1, sizeof(*sv));
	assert(svcs != NULL && sv != NULL);
	for (i = 0; i < nsv && size > 0; i++) {
		m = size < SBX_SLUG_MAX ? size : SBX_SLUG_MAX;
		memcpy(svcs[i], data, m);
		data += m;
		size -= m;
	}
	m = size < sizeof(container) - 1 ? size : sizeof(container) - 1;
	memcpy(container, data, m);
	container[m] = '\0';
	log_drain();

	switch (fn) {
	case 0:
		audit(ev, uid, agent, project, svcs, nsv, code,
		    "reason=%s container=%s", "no_record", container);
		break;
	case 1:
		/* A sandbox's names are NUL-terminated: checked slugs. */
		memset(&box, 0, sizeof(box));
		box.key.uid = uid;
		memcpy(box.key.agent, agent, SBX_SLUG_MAX - 1);
		memcpy(box.project, project, SBX_SLUG_MAX - 1);
		box.nservices = nsv;
		box.svc = sv;
		for (i = 0; i < nsv; i++)
			memcpy(sv[i].conn.name, svcs[i], SBX_SLUG_MAX - 1);
		audit_sandbox(ev, &box, code, "idle_s=%lld", (long long)uid);
		break;
	default:
		audit_refuse(op, uid, agent, project, svcs, nsv, code);
		ev = AUDIT_REFUSE;
		break;
	}

	if (!audit_line(line, sizeof(line))) {
		assert(fn == 2);	/* over its rate: counted, not said */
		goto out;
	}
	if (fn == 1) {
		nsv = nsv < SBX_MAX_SERVICES ? nsv : SBX_MAX_SERVICES;
		agent[SBX_SLUG_MAX - 1] = project[SBX_SLUG_MAX - 1] = '\0';
		for (i = 0; i < nsv; i++)
			svcs[i][SBX_SLUG_MAX - 1] = '\0';
	}
	if (fn == 2 && nsv > SBX_MAX_SERVICES)
		nsv = SBX_MAX_SERVICES;
	p = line;
#define	EXPECT(s)	do {						\
	size_t l_ = strlen(s);						\
	assert(strncmp(p, (s), l_) == 0);				\
	p += l_;							\
} while (0)
	EXPECT("audit event=");
	p += strcspn(p, " ");
	snprintf(expect, sizeof(expect), " uid=%u agent=", (unsigned)uid);
	EXPECT(expect);
	slug_as_written(expect, agent, SBX_SLUG_MAX);
	EXPECT(expect);
	EXPECT(" project=");
	slug_as_written(expect, project, SBX_SLUG_MAX);
	EXPECT(expect);
	EXPECT(" services=");
	if (nsv == 0)
		EXPECT("-");
	for (i = 0; i < nsv; i++) {
		if (i > 0)
			EXPECT(",");
		slug_as_written(expect, svcs[i], SBX_SLUG_MAX);
		EXPECT(expect);
	}
	EXPECT(" result=");
	EXPECT(sbx_code_name(code));
	EXPECT(" ");
#undef EXPECT
out:
	free(svcs);
	free(sv);
}

static void
setup_start(void)
{
	static int done;
	int p[2];

	if (done++)
		return;
	config_good(&good);
	assert(config_valid(&good));
	assert(pipe2(p, O_NONBLOCK | O_CLOEXEC) == 0);
	log_relay(p[1]);
	log_rd = p[0];
	bind_fixtures();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t which;

	setup();
	setup_start();
	if (size < 1)
		return 0;
	which = data[0];
	data++;
	size--;
	switch (which % 16) {
	case 0:	check_outcome(data, size); break;
	case 1:	check_warm(data, size); break;
	case 2:	check_data(data, size); break;
	case 3:	check_raw(login_result_valid, data, size); break;
	case 4:	check_claims(data, size); break;
	case 5:	check_raw(teardown_result_valid, data, size); break;
	case 6:	check_record(data, size); break;
	case 7:	check_adopt(data, size, 0); break;
	case 8:	check_adopt(data, size, 1); break;
	case 9:	check_config(data, size); break;
	case 10: check_reload(data, size); break;
	case 11: check_config_read(data, size); break;
	case 12: check_bind(data, size); break;
	case 13: check_adopt_answer(data, size); break;
	case 15: check_spawn(data, size); break;
	default: check_audit(data, size); break;
	}
	log_drain();
	return 0;
}
