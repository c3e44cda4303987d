/*
 * child.c - the per-connection child: read one msgpack map under hard
 * limits, relay a fixed-form message to the monitor, wait for the fixed
 * answer, encode the msgpack reply, exit.
 *
 * Everything the agent sends stops here: the monitor sees only
 * struct sbx_req_*, built by wire_validate().
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child.h"
#include "fdpass.h"
#include "iox.h"
#include "log.h"
#include "msg.h"
#include "scfilter.h"
#include "wire.h"

#define STATUS_MAX_RECS		(1u << 20)
#define CHILD_AS_LIMIT		(256ul << 20)
#define REPLY_TIMEOUT_MS	5000
#define DRAIN_MS		500
#define DRAIN_MAX		(1u << 20)

static int
send_reply(int agent, const struct sbx_ans *a,
    const struct sbx_status_rec *recs, size_t nrecs)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int rc;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	wire_pack_answer(&pk, a, recs, nrecs);
	rc = write_all(agent, sb.data, sb.size, now_ms() + REPLY_TIMEOUT_MS);
	explicit_bzero(sb.data, sb.size);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/*
 * Closing a socket with unread input makes the kernel send a reset, which
 * can destroy our reply before the agent reads it. So after an early
 * error reply, read and drop what is still coming, briefly and boundedly.
 */
static void
linger_drain(int agent)
{
	int64_t deadline = now_ms() + DRAIN_MS;
	char sink[4096];
	size_t total = 0;
	ssize_t n;

	shutdown(agent, SHUT_WR);
	while (total < DRAIN_MAX && wait_readable(agent, deadline) > 0) {
		if ((n = read(agent, sink, sizeof(sink))) <= 0)
			break;
		total += (size_t)n;
	}
}

/* The audit line is the parent's: our exit status names the code. */
static void __attribute__((noreturn))
reply_error_exit(int agent, enum sbx_code code, const char *msg)
{
	struct sbx_ans a;

	memset(&a, 0, sizeof(a));
	a.code = code;
	strlcpy(a.message, msg, sizeof(a.message));
	if (send_reply(agent, &a, NULL, 0) == -1)
		log_debug("reply: %s", strerror(errno));
	else
		linger_drain(agent);
	_exit(CHILD_REFUSED + (int)code);
}

/* 0 with the request in *req, or exits after replying an error. */
static size_t
read_request(int agent, int timeout_ms, union sbx_req_any *req)
{
	struct wire_reader r;
	enum wire_status st = WIRE_MORE;
	int64_t deadline = now_ms() + timeout_ms;
	char err[WIRE_ERR_MAX], *space;
	size_t cap, len = 0, total = 0;
	ssize_t n;

	if (wire_reader_init(&r) == -1)
		reply_error_exit(agent, SBX_E_INTERNAL, "out of memory.");
	while (st == WIRE_MORE) {
		if ((space = wire_reader_space(&r, &cap)) == NULL)
			reply_error_exit(agent, SBX_E_BAD_REQUEST,
			    "the request is larger than 64 KiB.");
		/* Read first: most requests are there before the child is. */
		n = read(agent, space, cap);
		if (n == -1 && errno == EAGAIN) {
			if (wait_readable(agent, deadline) <= 0) {
				log_debug("request: no complete map within "
				    "%d ms", timeout_ms);
				reply_error_exit(agent, SBX_E_TIMEOUT,
				    "the request did not arrive in time.");
			}
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (total == 0)
				_exit(0);	/* connected and left */
			log_debug("request: truncated after %zu bytes", total);
			reply_error_exit(agent, SBX_E_BAD_REQUEST,
			    "the request ended before the map was complete.");
		}
		total += (size_t)n;
		st = wire_reader_feed(&r, (size_t)n, req, &len, err);
	}
	wire_reader_free(&r);
	if (st == WIRE_BAD) {
		log_debug("request: bad_request: %s", err);
		reply_error_exit(agent, SBX_E_BAD_REQUEST, err);
	}
	return len;
}

static int
answer_valid(const struct sbx_ans *a, uint32_t type)
{
	uint32_t i;

	if (a->magic != SBX_MSG_MAGIC || a->type != type ||
	    a->code >= SBX_CODE_MAX || a->nservices > SBX_MAX_SERVICES ||
	    memchr(a->message, '\0', sizeof(a->message)) == NULL ||
	    (type != SBX_REQ_STATUS && a->nstatus != 0) ||
	    a->nstatus > STATUS_MAX_RECS)
		return 0;
	for (i = 0; i < a->nservices; i++) {
		const struct sbx_conn *c = &a->services[i];

		if (!memchr(c->name, 0, sizeof(c->name)) ||
		    !memchr(c->socket, 0, sizeof(c->socket)) ||
		    !memchr(c->host, 0, sizeof(c->host)) ||
		    !memchr(c->user, 0, sizeof(c->user)) ||
		    !memchr(c->password, 0, sizeof(c->password)) ||
		    !memchr(c->database, 0, sizeof(c->database)))
			return 0;
	}
	return 1;
}

static int
recs_valid(const struct sbx_status_rec *r, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		if (!memchr(r[i].agent, 0, sizeof(r[i].agent)) ||
		    !memchr(r[i].project, 0, sizeof(r[i].project)) ||
		    r[i].nservices > SBX_MAX_SERVICES)
			return 0;
		for (j = 0; j < r[i].nservices; j++)
			if (!memchr(r[i].services[j], 0, SBX_SLUG_MAX))
				return 0;
	}
	return 1;
}

static void __attribute__((noreturn))
relay(int agent, const struct child_opts *o, const union sbx_req_any *req,
    size_t len)
{
	struct sbx_ans a;
	struct sbx_status_rec *recs = NULL;
	int64_t deadline;
	int pair[2], fds[SBX_REQ_FDS];

	/* Both ends non-blocking: the monitor only ever sends MSG_DONTWAIT. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0,
	    pair) == -1)
		reply_error_exit(agent, SBX_E_INTERNAL, "no answer channel.");
	fds[0] = agent;
	fds[1] = pair[1];
	if (send_fds(o->chan, req, len, fds, SBX_REQ_FDS) != (ssize_t)len) {
		log_warn("relay to monitor");
		reply_error_exit(agent, SBX_E_INTERNAL,
		    "the monitor is not reachable.");
	}
	close(pair[1]);
	deadline = now_ms() + o->answer_timeout_ms;
	if (read_full(pair[0], &a, sizeof(a), deadline) == -1 ||
	    !answer_valid(&a, req->hdr.type))
		reply_error_exit(agent, errno == ETIMEDOUT ? SBX_E_TIMEOUT :
		    SBX_E_INTERNAL, "the monitor gave no valid answer.");
	if (a.nstatus > 0) {
		if ((recs = calloc(a.nstatus, sizeof(*recs))) == NULL ||
		    read_full(pair[0], recs, a.nstatus * sizeof(*recs),
		    deadline) == -1 || !recs_valid(recs, a.nstatus))
			reply_error_exit(agent, SBX_E_INTERNAL,
			    "the monitor gave no valid status.");
	}
	if (send_reply(agent, &a, recs, a.nstatus) == -1)
		log_debug("reply: %s", strerror(errno));
	explicit_bzero(&a, sizeof(a));
	/* The agent sees EOF now, not after the kernel has torn down our
	 * address space: exit unmaps memory before it closes descriptors. */
	close(agent);
	_exit(0);
}

static void
limit_self(void)
{
#if !defined(__SANITIZE_ADDRESS__)
	/* A msgpack header may claim 2^32 elements; let that allocation
	 * fail here rather than succeed on an overcommitting host. */
	struct rlimit rl = { CHILD_AS_LIMIT, CHILD_AS_LIMIT };

	if (setrlimit(RLIMIT_AS, &rl) == -1)
		_exit(1);
#endif
}

/* Compiled once in the broker parent, installed by every child. */
static struct sc_prog child_filter;

int
child_prepare(void)
{
	return sc_compile_allow("child", &child_filter);
}

void
child_main(int agent, const struct child_opts *o)
{
	union sbx_req_any req;
	sigset_t none;
	size_t len;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);	/* SIGPIPE stays ignored */
	limit_self();
	/* The agent socket comes non-blocking from accept4 (broker.c). */
	if (sc_install(&child_filter) == -1) {
		log_warnx("child: cannot confine myself");
		_exit(1);
	}
	len = read_request(agent, o->request_timeout_ms, &req);
	relay(agent, o, &req, len);
}
