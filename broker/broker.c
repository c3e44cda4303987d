/*
 * broker.c - sbx-broker: the unprivileged front.
 * runs in: the broker (root until its drop, then broker user; unfiltered,
 *   then the broker allowlist), and each new child or spare until it confines
 *   itself (broker user, broker allowlist)
 *
 * Started by sbx-monitor only, as root, with the agent socket on fd 3 and
 * the monitor channel on fd 4. Before it touches a connection it drops to
 * broker_user, empties its capabilities, sets no_new_privs and loads the
 * broker seccomp filter. Then it accepts, and gives each connection a
 * child, a spare forked ahead while it was quiet (spare.c) or one forked
 * then, at most max_children at a time and max_connections_per_uid for
 * one uid (beyond either: busy; but while max_children is reached only
 * because children that handed their requests over have not exited yet,
 * new connections wait in the listen queue). Refusal lines, its own and
 * those its children report in their exit status, are limited per uid
 * (ratelim.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <getopt.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "busy.h"
#include "child.h"
#include "code.h"
#include "conntab.h"
#include "drop.h"
#include "iox.h"
#include "log.h"
#include "msg.h"
#include "ratelim.h"
#include "subrange.h"
#include "sig.h"
#include "spare.h"
#include "scfilter.h"

#define FD_LISTEN	3
#define FD_CHAN		4
_Static_assert(FD_LISTEN == SC_SPARE_FD, "a spare's channel takes the "
    "number of the listener, which a child closes");

/*
 * Refusal lines per uid: 10 at once, then one a second; what is dropped
 * is counted in one line 5 s after the first drop. One tenant's flood
 * then costs the log about one line a second, far below journald's
 * default limit (10000 lines in 30 s per service).
 */
#define RL_BURST	10
#define RL_REFILL_MS	1000
#define RL_WINDOW_MS	5000

/* Spares (spare.c) are forked once no connection has come for
 * SPARE_QUIET_MS and every child that served one is reaped
 * (spare_wait_ms); after one could not be made, SPARE_RETRY_MS later. */
#define SPARE_QUIET_MS	2
#define SPARE_RETRY_MS	1000

struct broker {
	int		sigfd;
	int		notice;		/* hand-over pids (child.c) */
	unsigned	max_children;
	unsigned	per_uid;
	int		stopping;
	struct conntab	tab;
	struct ratelim	rl;
	struct child_opts copts;
	struct spares	spares;
	size_t		want_spares;
	int64_t		last_accept_ms;	/* spares wait for a quiet moment */
	int64_t		spare_after_ms;	/* and a second after a failure */
	struct subuid_range *subuids;	/* from the monitor, fd 5 */
	size_t		nsubuids;
};

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: sbx-broker [-d] -u uid:gid [-r chroot] "
	    "[-n max_children] [-c max_per_uid] [-t request_timeout_s]\n"
	    "(started by sbx-monitor; not to be run by hand)\n");
	exit(2);
}

/* A number from the monitor's command line; anything odd is fatal. */
static long long
opt_num(const char *arg, long long max)
{
	const char *err;
	long long v = strtonum(arg, 1, max, &err);

	if (err != NULL)
		fatalx("option value %s is %s", arg, err);
	return v;
}

/* -u UID:GID, as the monitor resolved broker_user: no NSS in here. */
static void
opt_ids(const char *arg, uid_t *uid, gid_t *gid)
{
	char num[24];
	const char *colon = strchr(arg, ':');
	size_t n = colon == NULL ? 0 : (size_t)(colon - arg);

	if (n == 0 || n >= sizeof(num))
		fatalx("-u %s: expected UID:GID", arg);
	memcpy(num, arg, n);
	num[n] = '\0';
	*uid = (uid_t)opt_num(num, UINT32_MAX - 1);
	*gid = (gid_t)opt_num(colon + 1, UINT32_MAX - 1);
}

static int
opt_seconds(const char *arg)
{
	return (int)opt_num(arg, 86400) * 1000;	/* a day, in ms, fits an int */
}

static int
fd_is_socket(int fd, int type)
{
	int v;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &v, &len) == 0 && v == type;
}

#define ACCEPT_BATCH	16	/* connections taken per wake-up */

/*
 * The same key=value shape as the monitor's trail (sbx-monitor(8)); what
 * the request named is unknown or not trusted here, so it is "-". limit
 * names which one a busy hit.
 */
static void
audit_refusal(struct broker *b, uid_t uid, const char *code,
    const char *limit)
{
	if (!rl_allow(&b->rl, uid, now_ms()))
		return;
	log_info("audit event=refuse uid=%u agent=- project=- services=- "
	    "result=%s op=- by=broker%s%s", (unsigned)uid, code,
	    limit != NULL ? " limit=" : "", limit != NULL ? limit : "");
}

static void
audit_suppressed(uid_t uid, unsigned count, void *arg)
{
	(void)arg;
	log_info("audit event=suppressed uid=%u agent=- project=- services=- "
	    "result=refuse count=%u by=broker", (unsigned)uid, count);
}

/* Children that hand their request over say so, pid by pid: each
 * leaves its uid's share now, and the table when it is reaped. Read at
 * each reap, so the pipe never fills, and before any refusal. */
static void
take_notices(struct broker *b)
{
	pid_t v[64];
	ssize_t n;
	size_t i;

	while ((n = read(b->notice, v, sizeof(v))) > 0)
		for (i = 0; i < (size_t)n / sizeof(v[0]); i++)
			conntab_handed(&b->tab, v[i]);
}

/* A child that refused its agent says which code in its exit status:
 * the audit line is written here, where the per-uid limit lives. */
static void
reap(struct broker *b)
{
	pid_t pid;
	uid_t uid;
	int status, code;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		if (conntab_del(&b->tab, pid, &uid) == -1) {
			(void)spare_reaped(&b->spares, pid);
			continue;
		}
		if (!WIFEXITED(status))
			continue;
		code = WEXITSTATUS(status) - CHILD_REFUSED;
		if (code > 0 && code < SBX_CODE_MAX)
			audit_refusal(b, uid, sbx_code_name(code), NULL);
	}
	take_notices(b);
}

static void
on_signal(struct broker *b)
{
	struct signalfd_siginfo si;

	while (read(b->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			reap(b);
		else if (si.ssi_signo == SIGTERM || si.ssi_signo == SIGINT)
			b->stopping = 1;
	}
}

/* For audit lines only; -1 if the kernel will not say. */
static uid_t
peer_uid(int fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred))
		return (uid_t)-1;
	return cred.uid;
}

/* Answered here, without a child: this is the path a flood takes. */
static void
busy(struct broker *b, int fd, uid_t uid, const char *reply, size_t len,
    const char *limit)
{
	audit_refusal(b, uid, "busy", limit);
	if (send(fd, reply, len, MSG_DONTWAIT | MSG_NOSIGNAL) == -1)
		log_debug("busy reply: %s", strerror(errno));
	close(fd);
}

/* What a child does not keep of ours. */
static void
child_close(struct broker *b)
{
	close(FD_LISTEN);
	close(b->sigfd);
	close(b->notice);
	spares_close(&b->spares);	/* our copies of the spares' ends */
}

/* One connection: a child for it, or busy. false when none was waiting. */
static bool
on_accept(struct broker *b)
{
	enum admit admit;
	pid_t pid;
	uid_t uid;
	int fd;

	/* Non-blocking from the start: the child needs no fcntl calls. */
	fd = accept4(FD_LISTEN, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	b->last_accept_ms = now_ms();
	if (fd == -1) {
		if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
			log_warn("accept");
		return false;
	}
	uid = peer_uid(fd);
	/* A subordinate uid's connections count toward its range's owner:
	 * its 65536 uids share one place, not one each. */
	(void)subrange_owner(b->subuids, b->nsubuids, uid, &uid);
	/* A child that has handed its request over no longer counts for
	 * its uid, but holds its place in the table until reaped: reap
	 * before refusing anyone (and only then count again: the count
	 * walks the table). */
	if ((admit = conntab_admit(&b->tab, uid)) != ADMIT_OK) {
		reap(b);
		admit = conntab_admit(&b->tab, uid);
	}
	switch (admit) {
	case ADMIT_UID_FULL:
		busy(b, fd, uid, busy_uid_reply, sizeof(busy_uid_reply) - 1,
		    "connections_per_uid");
		return true;
	case ADMIT_FULL:
		busy(b, fd, uid, busy_all_reply, sizeof(busy_all_reply) - 1,
		    "children");
		return true;
	case ADMIT_OK:
		break;
	}
	if ((pid = spare_hand(&b->spares, fd)) == -1 &&
	    (pid = fork()) == -1) {
		log_warn("fork");
		close(fd);
		return false;
	}
	if (pid == 0) {
		child_close(b);
		child_confine();
		child_serve(fd, &b->copts);
	}
	conntab_add(&b->tab, pid, uid);	/* room: checked by admit */
	close(fd);
	return true;
}

/* One more spare: it waits for an agent socket, then serves it as any
 * child does (spare.c). */
static void
fork_spare(struct broker *b)
{
	int end;

	switch (spare_fork(&b->spares, &end)) {
	case 0:
		break;
	case -1:
		/* No descriptor or process to spare now: not again at
		 * once, or the loop would spin on it. */
		log_debug("spare: %s", strerror(errno));
		b->spare_after_ms = now_ms() + SPARE_RETRY_MS;
		return;
	default:
		return;
	}
	child_close(b);		/* the listener's number is free now */
	child_spare(end, &b->copts);
}

/* Until the next suppressed-lines report is due; -1: none is. */
static int
poll_timeout(struct broker *b)
{
	int64_t next = rl_next(&b->rl), now;

	if (next == -1)
		return -1;
	now = now_ms();
	return next <= now ? 0 : (int)(next - now);
}

/*
 * Fewer spares than wanted, and room for one within max_children: when
 * (in ms from now; -1: never) the next may be forked. Not in a burst: a
 * fork holds this loop for a few hundred microseconds, and a new spare
 * takes a core for as long to confine itself. A burst's connections all
 * come in its first millisecond or two and its requests are served for
 * several more, so a quiet SPARE_QUIET_MS is not enough: spares wait
 * until no child that handed its request over is left, since those exit
 * at a lower priority (child.c), once no request waits for a core. The
 * reap that takes the last one wakes this loop. Spares made in a burst's
 * tail cost eight requests at once 15-25 %; waiting 10 ms instead left
 * none for hits a few milliseconds apart (bench/README.md).
 */
static int64_t
spare_wait_ms(const struct broker *b)
{
	int64_t left;

	if (b->stopping || b->spares.n >= b->want_spares ||
	    b->tab.n + b->spares.n >= b->max_children ||
	    conntab_exiting(&b->tab) > 0)
		return -1;
	left = b->last_accept_ms + SPARE_QUIET_MS;
	if (b->spare_after_ms > left)
		left = b->spare_after_ms;
	left -= now_ms();
	return left > 0 ? left : 0;
}

static bool
spare_due(const struct broker *b)
{
	return spare_wait_ms(b) == 0;
}

/* poll's timeout: the next suppressed-lines report or spare. */
static int
serve_timeout(struct broker *b)
{
	int64_t spare = spare_wait_ms(b);
	int t = poll_timeout(b);

	return spare >= 0 && (t < 0 || spare < t) ? (int)spare : t;
}

/*
 * The subordinate uid ranges the monitor resolved (fd 5, a sealed
 * memfd; none when started otherwise). Read once, before the drop and
 * the filter, and checked: a table we cannot trust is not used.
 */
#define FD_SUBUIDS	5

static void
read_subuids(struct broker *b)
{
	struct stat st;
	ssize_t n;

	if (fcntl(FD_SUBUIDS, F_GETFD) == -1)
		return;
	if (fstat(FD_SUBUIDS, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size % (off_t)sizeof(*b->subuids) != 0 ||
	    (size_t)st.st_size > SUBUID_MAX_RANGES * sizeof(*b->subuids))
		fatalx("fd %d is not a table of subordinate uid ranges",
		    FD_SUBUIDS);
	b->nsubuids = (size_t)st.st_size / sizeof(*b->subuids);
	if (b->nsubuids > 0 &&
	    (b->subuids = calloc(b->nsubuids, sizeof(*b->subuids))) == NULL)
		fatal("subordinate uids");
	n = b->nsubuids > 0 ? pread(FD_SUBUIDS, b->subuids,
	    (size_t)st.st_size, 0) : 0;
	close(FD_SUBUIDS);
	if (n != st.st_size || !subrange_valid(b->subuids, b->nsubuids))
		fatalx("the subordinate uid ranges from the monitor are not "
		    "sound; refusing to serve");
}

/*
 * A table full of children that only exit (their requests are the
 * monitor's) frees at the next reap: new connections wait in the listen
 * queue until then rather than be told busy. One full of children that
 * still serve their agents is a real overload: accept, and refuse.
 */
static bool
accepting(struct broker *b)
{
	if (b->tab.n < b->max_children)
		return true;
	take_notices(b);
	return conntab_exiting(&b->tab) == 0;
}

static void
serve(struct broker *b)
{
	struct pollfd pfd[3];
	int n;

	while (!b->stopping) {
		pfd[0] = (struct pollfd){ .fd = b->sigfd, .events = POLLIN };
		pfd[1] = (struct pollfd){ .fd = FD_CHAN, .events = 0 };
		pfd[2] = (struct pollfd){ .fd = FD_LISTEN,
		    .events = accepting(b) ? POLLIN : 0 };
		if ((n = poll(pfd, 3, serve_timeout(b))) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		if (n == 0 && spare_due(b)) {
			take_notices(b);	/* who is only exiting now */
			if (spare_due(b))
				fork_spare(b);
			continue;
		}
		rl_tick(&b->rl, now_ms());
		if (pfd[0].revents)
			on_signal(b);
		if (pfd[1].revents & (POLLHUP | POLLERR)) {
			log_warnx("monitor went away; exiting");
			exit(1);
		}
		/* Under load several wait: take them in one wake-up. */
		for (n = 0; (pfd[2].revents & POLLIN) && n < ACCEPT_BATCH &&
		    accepting(b) && on_accept(b); n++)
			;
	}
}

/* SIGTERM: stop accepting, let the children in flight finish. */
static void
drain(struct broker *b)
{
	struct pollfd pfd = { .fd = b->sigfd, .events = POLLIN };

	close(FD_LISTEN);
	spares_close(&b->spares);
	while (b->tab.n > 0) {
		if (poll(&pfd, 1, 1000) == -1 && errno != EINTR)
			break;
		on_signal(b);
	}
	rl_flush(&b->rl);
}

int
main(int argc, char *argv[])
{
	struct broker b = { .max_children = 128,
	    .copts = { .chan = FD_CHAN, .request_timeout_ms = 5000 } };
	const char *ids = NULL, *root = NULL;
	pid_t monitor = getppid();
	uid_t uid = 0;
	gid_t gid = 0;
	int ch, fg = 0, notice[2];

	while ((ch = getopt(argc, argv, "c:dn:r:t:u:")) != -1) {
		switch (ch) {
		case 'c': b.per_uid = (unsigned)opt_num(optarg, 65536); break;
		case 'd': fg = 1; break;
		case 'n': b.max_children = (unsigned)opt_num(optarg, 65536); break;
		case 'r': root = optarg; break;
		case 't': b.copts.request_timeout_ms = opt_seconds(optarg); break;
		case 'u': ids = optarg; opt_ids(ids, &uid, &gid); break;
		default: usage();
		}
	}
	log_init("sbx-broker", fg ? LOG_TO_STDERR : LOG_TO_MONITOR);
	if (ids == NULL || b.copts.request_timeout_ms <= 0)
		usage();
	/* Without -c, as sbx.conf(5) has it: 16, or half of fewer. */
	if (b.per_uid == 0)
		b.per_uid = b.max_children >= 32 ? 16 :
		    (b.max_children + 1) / 2;
	if (b.per_uid > b.max_children)
		fatalx("-c %u is more than -n %u", b.per_uid, b.max_children);
	/* A quarter of max_children, at most SPARES_MAX, waits ahead. */
	b.want_spares = b.max_children / 4 < SPARES_MAX ?
	    b.max_children / 4 : SPARES_MAX;
	/* Allocated before the seccomp filter and kept: no growth later. */
	if (conntab_init(&b.tab, b.max_children, b.per_uid) == -1)
		fatal("connection table");
	/* Non-blocking both ways: a child never waits to give notice, and
	 * we never wait for one. Each write is one pid: atomic. */
	if (pipe2(notice, O_CLOEXEC | O_NONBLOCK) == -1)
		fatal("hand-over notices");
	b.notice = notice[0];
	b.copts.notice = notice[1];
	rl_init(&b.rl, RL_BURST, RL_REFILL_MS, RL_WINDOW_MS, audit_suppressed,
	    NULL);
	if (!fd_is_socket(FD_LISTEN, SOCK_STREAM) ||
	    !fd_is_socket(FD_CHAN, SOCK_SEQPACKET))
		fatalx("fd %d and %d must be the agent socket and the monitor "
		    "channel: sbx-broker is started by sbx-monitor", FD_LISTEN,
		    FD_CHAN);
	if ((b.sigfd = signals_to_fd()) == -1)
		fatal("signals");
	read_subuids(&b);
	if (drop_to_ids(uid, gid, root) == -1)
		fatalx("cannot drop privileges to %s; refusing to serve", ids);
	/* Die with the monitor (set after the drop, which clears it): a
	 * broker that outlived it would still hold the agent socket, and
	 * the next monitor would find it served. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != monitor)
		fatalx("the monitor is gone; refusing to serve");
	if (child_prepare() == -1)
		fatalx("cannot prepare the children (their reader and seccomp filter); refusing to serve");
	if (sc_load_allow("broker") == -1)
		fatalx("cannot load the broker seccomp filter; refusing to serve");
	/* libseccomp's free chunks would otherwise be consolidated again,
	 * page by copy-on-write page, by every child's first large malloc. */
	malloc_trim(0);
	log_info("serving as %s, at most %u connections, %u per uid", ids,
	    b.max_children, b.per_uid);
	serve(&b);
	drain(&b);
	return 0;
}
