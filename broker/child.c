/*
 * child.c - the broker's per-connection child: read one msgpack map under
 * hard limits, hand a fixed-form message and the agent's socket to the
 * monitor, exit.
 * runs in: the broker's children and spares (broker user, no capabilities,
 *   the broker allowlist and the child's stacked on it), and child_prepare in
 *   the broker (broker user, before its allowlist)
 *
 * The monitor answers the agent itself; this process never sees an
 * answer, nor a password.
 *
 * Everything the agent sends stops here: the monitor sees only
 * struct sbx_req_*, built by wire_validate().
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "child.h"
#include "fdpass.h"
#include "iox.h"
#include "log.h"
#include "msg.h"
#include "pack.h"
#include "scfilter.h"
#include "spare.h"
#include "wire.h"

#define CHILD_AS_LIMIT		(256ul << 20)
#define REPLY_TIMEOUT_MS	5000
#define DRAIN_MS		500
#define DRAIN_MAX		(1u << 20)

/* An error reply of our own: the request never reached the monitor. */
static int
send_error(int agent, enum sbx_code code, const char *msg)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	int rc;

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	pack_error(&pk, code, msg);
	rc = sb.data == NULL ? -1 :
	    write_all(agent, sb.data, sb.size, now_ms() + REPLY_TIMEOUT_MS);
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
	if (send_error(agent, code, msg) == -1)
		log_debug("reply: %s", strerror(errno));
	else
		linger_drain(agent);
	_exit(CHILD_REFUSED + (int)code);
}

/*
 * Made once in the broker parent, before its filter: each child starts
 * from its own copy and allocates nothing for a request of up to 8 KiB
 * (a child's malloc sorted the parent's free chunks, a copy-on-write
 * fault per page touched, a dozen per child: bench/README.md).
 */
static struct wire_reader child_reader;

/* 0 with the request in *req, or exits after replying an error. */
static size_t
read_request(int agent, int timeout_ms, union sbx_req_any *req)
{
	struct wire_reader *r = &child_reader;
	enum wire_status st = WIRE_MORE;
	int64_t deadline = now_ms() + timeout_ms;
	char err[WIRE_ERR_MAX], *space;
	size_t cap, len = 0, total = 0;
	ssize_t n;

	while (st == WIRE_MORE) {
		if ((space = wire_reader_space(r, &cap)) == NULL)
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
		st = wire_reader_feed(r, (size_t)n, req, &len, err);
	}
	if (st == WIRE_BAD) {
		log_debug("request: bad_request: %s", err);
		reply_error_exit(agent, SBX_E_BAD_REQUEST, err);
	}
	return len;
}

/*
 * Nothing more comes in, and nothing is left in, before the socket goes
 * to the monitor. Bytes queued behind the request may carry descriptors
 * (SCM_RIGHTS), and whoever drops the socket's last reference releases
 * them, which can wait: a TCP socket with SO_LINGER and unsent data
 * waits out its linger time in close. That must be this process, never
 * the monitor's loop. SHUT_RD makes every later send of the agent fail
 * (EPIPE); the reads take what was queued before it, and the kernel
 * closes any descriptor in it here. The monitor checks both (dispatch.c).
 */
static void
seal_input(int agent)
{
	char sink[4096];
	ssize_t n;

	if (shutdown(agent, SHUT_RD) == -1)
		reply_error_exit(agent, SBX_E_INTERNAL,
		    "the broker could not close the connection's input.");
	do
		n = read(agent, sink, sizeof(sink));
	while (n > 0 || (n == -1 && errno == EINTR));
}

/*
 * The request and the agent's socket go to the monitor; our part ends
 * there. A monitor that is gone gets the agent an error from us.
 */
static void __attribute__((noreturn))
hand_over(int agent, const struct child_opts *o, const union sbx_req_any *req,
    size_t len)
{
	pid_t me = getpid();

	/* Before the monitor can answer: our agent may connect again at
	 * once, and this place is no longer its (conntab.c). A full pipe
	 * drops the notice: then we count until reaped, as before. */
	if (write(o->notice, &me, sizeof(me)) != (ssize_t)sizeof(me))
		log_debug("hand-over notice: %s", strerror(errno));
	if (send_fds(o->chan, req, len, &agent, SBX_REQ_FDS) != (ssize_t)len) {
		log_warn("hand-over to the monitor");
		reply_error_exit(agent, SBX_E_INTERNAL,
		    "the monitor is not reachable.");
	}
	/* Our teardown (our pages and page tables: a few hundred
	 * microseconds on a slow host) is no one's wait: the requests still
	 * being served get the cores first (bench/README.md). */
	(void)setpriority(PRIO_PROCESS, 0, SC_EXIT_NICE);
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
	if (wire_reader_init(&child_reader) == -1)
		return -1;
	return sc_compile_allow("child", &child_filter);
}

/*
 * A spare takes, while it waits, the page faults its request would take:
 * fork copies no page table of the binary's segments but written ones, so a
 * child faults each page of them in as it runs, and copies on write each
 * page of its stack and reader it writes. Seven faults a request,
 * measured (perf record -e page-faults), none after; on a paravirtualised
 * host each costs tens of microseconds (bench/README.md). Best effort:
 * before Linux 5.14 (no MADV_POPULATE_*) they come with the request.
 */
#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ	22
#define MADV_POPULATE_WRITE	23
#endif
#define PREFAULT_STACK		(16u << 10)
#define PREFAULT_READER		(8u << 10)
#define STACK_STEP		4096u	/* no page is smaller */

/* madvise wants page-aligned ranges: the kernel's page size, from the
 * auxiliary vector (no syscall). */
static void
populate(const void *p, size_t len, int advice)
{
	uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(pg - 1);
	uintptr_t e = ((uintptr_t)p + len + pg - 1) & ~(pg - 1);

	(void)madvise((void *)a, e - a, advice);
}

static void __attribute__((noinline))
touch_stack(void)
{
	volatile char pages[PREFAULT_STACK];
	size_t i;

	for (i = 0; i < sizeof(pages); i += STACK_STEP)
		pages[i] = 0;
}

/* Each loaded segment of the binary; the executable comes first. */
static int
populate_segments(struct dl_phdr_info *info, size_t size, void *arg)
{
	const ElfW(Phdr) *ph;
	int i;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD)
			populate((const void *)(info->dlpi_addr + ph->p_vaddr),
			    ph->p_memsz, MADV_POPULATE_READ);
	}
	return 1;
}

static void
child_prefault(void)
{
	struct wire_reader *r = &child_reader;
	msgpack_zone *z = r->up.z;
	size_t cap;
	char *space;

	(void)dl_iterate_phdr(populate_segments, NULL);
	populate(r, sizeof(*r), MADV_POPULATE_WRITE);
	(void)now_ms();		/* the vDSO's data page */
	if ((space = wire_reader_space(r, &cap)) != NULL)
		populate(space, cap < PREFAULT_READER ? cap : PREFAULT_READER,
		    MADV_POPULATE_WRITE);
	if (z != NULL && z->chunk_list.ptr != NULL)
		populate(z->chunk_list.ptr, z->chunk_list.free,
		    MADV_POPULATE_WRITE);
	touch_stack();
}

/*
 * Before the agent's socket is ours: a spare does this while it waits
 * (broker.c), so that the kernel's work on a new filter (a few hundred
 * microseconds on a paravirtualised host: bench/README.md) is not on
 * any request's path.
 */
void
child_confine(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);	/* SIGPIPE stays ignored */
	limit_self();
	if (sc_install(&child_filter) == -1) {
		log_warnx("child: cannot confine myself");
		_exit(1);
	}
}

void
child_serve(int agent, const struct child_opts *o)
{
	union sbx_req_any req;
	size_t len;

	/* The agent socket comes non-blocking from accept4 (broker.c). */
	len = read_request(agent, o->request_timeout_ms, &req);
	seal_input(agent);
	hand_over(agent, o, &req, len);
}

void
child_spare(int end, const struct child_opts *o)
{
	int agent;

	/* The one descriptor the filters let recvmsg read (scfilter.c): a
	 * confined spare can take no descriptor from its agent. */
	if (end != SC_SPARE_FD) {
		if (fcntl(end, F_DUPFD_CLOEXEC, SC_SPARE_FD) != SC_SPARE_FD)
			_exit(1);
		close(end);
	}
	child_prefault();
	child_confine();
	if ((agent = spare_wait(SC_SPARE_FD)) == -1)
		_exit(0);
	child_serve(agent, o);
}
