/*
 * monitor.c - sbx-monitor: the privileged half, root and unfiltered.
 * runs in: the monitor (root, unfiltered)
 *
 * At start it has workers read the config, the projects and what the last
 * monitor left (config_take.c, reload.c, adopt.c) and bind the agent
 * socket (bind.c), and starts the broker; then it lives in one poll loop:
 * broker messages in, worker results in, answers out, written to the
 * agents' sockets by the monitor itself (answer.c packs them). It never
 * parses msgpack or a file of its config, never reads from an agent's
 * socket or the broker's log, and never waits on the runtime.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <libgen.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "adopt.h"
#include "answer.h"
#include "audit.h"
#include "bind.h"
#include "cache.h"
#include "config.h"
#include "config_take.h"
#include "dispatch.h"
#include "handle.h"
#include "iox.h"
#include "log.h"
#include "metrics.h"
#include "notify.h"
#include "project.h"
#include "record.h"
#include "reload.h"
#include "rt_start.h"
#include "rtname.h"
#include "runtime.h"
#include "sig.h"
#include "subuid.h"
#include "supervise.h"

#define MAX_POLL	1024
#define REPLY_TIMEOUT_MS 10000
#define TICK_MS		1000
#define WARM_QUIET_MS	20	/* see loop() */

struct outq {
	TAILQ_ENTRY(outq) entry;
	int		 fd;
	char		*buf;
	size_t		 len, off;
	int64_t		 deadline;
};

/*
 * Descriptors the budget keeps free beyond those counted: syslog's
 * socket, a hit's liveness connect, the two ends of a worker's pipe
 * before it closes one, /proc reads, a sandbox's socket directory being
 * made, a metrics file being written.
 */
#define FD_SPARE	8

struct monitor {
	struct sbx_config	cfg;
	struct project_table	projects;
	struct cache		cache;
	struct worker_pool	pool;
	struct rt_cli		rt;
	int64_t			metrics_at;	/* next metrics_file write */
	struct broker_proc	broker;
	bool			syslog;		/* lines go to a logger */
	pid_t			logger;		/* syslog's writer (JOB_LOG) */
	unsigned long		log_lost;	/* dropped lines, said */
	struct handler_env	env;
	struct subuid_table	subuids;
	int			listen_fd;
	int			sigfd;
	int			lease_ep;	/* leases' pidfds (lease.c) */
	/* Agents' sockets held (a request waiting, or its reply being
	 * written), and how many the descriptor budget allows: past it the
	 * broker channel is not read (fd_budget()). */
	unsigned		nagents, max_agents;
	int			stopping;
	/* SIGHUP: a reload runs in a worker; another is wanted after it. */
	bool			reloading, reload_wanted;
	TAILQ_HEAD(, outq)	outq;
};

/* One agent's socket waiting for its answer. */
struct pending {
	struct monitor	*m;
	int		 fd;
};

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: sbx-monitor [-dt] [-f config]\n"
	    "       sbx-monitor --purge [-f config]\n");
	exit(2);
}

/*
 * The connection's one request is answered (or never will be): shut the
 * socket down, so that the agent sees EOF now and any copy of it the
 * broker may still hold is dead, and let it go.
 */
static void
agent_done(struct monitor *m, int fd)
{
	shutdown(fd, SHUT_RDWR);
	close(fd);
	m->nagents--;
}

static void
outq_free(struct monitor *m, struct outq *q)
{
	TAILQ_REMOVE(&m->outq, q, entry);
	agent_done(m, q->fd);
	explicit_bzero(q->buf, q->len);
	free(q->buf);
	free(q);
}

/* Write what the socket takes now; queue the rest for POLLOUT. */
static void
send_buf(struct monitor *m, int fd, char *buf, size_t len)
{
	struct outq *q;
	ssize_t n;
	size_t off = 0;

	while (off < len) {
		n = send(fd, buf + off, len - off, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		break;
	}
	if (off == len || (errno != EAGAIN && errno != EWOULDBLOCK) ||
	    (q = calloc(1, sizeof(*q))) == NULL) {
		agent_done(m, fd);
		explicit_bzero(buf, len);
		free(buf);
		return;
	}
	q->fd = fd;
	q->buf = buf;
	q->len = len;
	q->off = off;
	q->deadline = now_ms() + REPLY_TIMEOUT_MS;
	TAILQ_INSERT_TAIL(&m->outq, q, entry);
}

/* A status answer's sandboxes, then the msgpack; NULL: no memory. */
static char *
pack_for(struct monitor *m, const struct sbx_ans *a, size_t *len)
{
	struct sbx_status_rec *recs = NULL;
	size_t n = 0;
	char *buf;

	if (a->type == SBX_REQ_STATUS && a->code == SBX_OK && a->nstatus > 0) {
		if ((recs = calloc(a->nstatus, sizeof(*recs))) == NULL)
			return NULL;
		n = cache_status_of(&m->cache, a->status_all ? NULL :
		    &(uid_t){ a->status_uid }, recs, a->nstatus);
	}
	if (answer_pack(a, recs, n, &buf, len) == -1)
		buf = NULL;
	free(recs);
	return buf;
}

/* The answer goes to the agent, from here: nobody relays it. */
static void
reply_to_agent(void *ctx, const struct sbx_ans *a)
{
	struct pending *p = ctx;
	struct monitor *m = p->m;
	struct sbx_ans oom;
	size_t len;
	char *buf;

	if ((buf = pack_for(m, a, &len)) == NULL) {
		log_warnx("%s answer: out of memory", sbx_req_name((int)a->type));
		answer_init(&oom, (enum sbx_req_type)a->type, SBX_E_INTERNAL,
		    "the monitor is out of memory.");
		a = &oom;
		buf = pack_for(m, a, &len);
	}
	metrics_answer((enum sbx_req_type)a->type, (enum sbx_code)a->code);
	if (buf != NULL)
		send_buf(m, p->fd, buf, len);
	else
		agent_done(m, p->fd);
	free(p);
}

static void
on_broker_message(struct monitor *m)
{
	union sbx_req_any rq;
	unsigned char raw[sizeof(rq) + 1];
	struct fdpass_rx rx;
	struct pending *p;
	char why[128];
	ssize_t n;
	uid_t uid;
	int type;

	/* Past the budget a message's descriptor would not fit (MSG_CTRUNC,
	 * which is a hostile broker's mark): it waits in the channel. A
	 * broker reaped in this same wake-up (on_signal) left none. */
	while (m->broker.chan != -1 && m->nagents < m->max_agents) {
		n = recv_fds(m->broker.chan, raw, sizeof(raw), &rx);
		if (n == -1) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("broker channel");
			return;
		}
		if (n == 0) {
			fdpass_close(&rx);
			return;		/* EOF: SIGCHLD tells the rest */
		}
		if ((size_t)n > sizeof(rq))
			rx.truncated = 1;
		memcpy(&rq, raw, (size_t)n < sizeof(rq) ? (size_t)n : sizeof(rq));
		type = dispatch_valid(&rq, (size_t)n, &rx, m->cfg.socket, &uid,
		    why, sizeof(why), dispatch_release_apart);
		if (type == -1) {
			broker_kill(&m->broker, why);
			return;
		}
		m->nagents++;
		if ((p = calloc(1, sizeof(*p))) == NULL) {
			agent_done(m, rx.fds[0]);
			continue;
		}
		p->m = m;
		p->fd = rx.fds[0];
		dispatch_handle(&m->env, uid, &rq,
		    (struct sbx_reply){ reply_to_agent, p });
	}
}

static void
reap_children(struct monitor *m)
{
	int status;
	pid_t pid;

	while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
		if (pid == m->broker.pid)
			broker_died(&m->broker, now_ms(), m->stopping);
		else if (pid == m->logger)
			m->logger = 0;	/* tick() starts another */
		else if (pid == m->broker.logger)
			m->broker.logger = 0;	/* and another of these */
}

/* cache_revoke()'s question: what may sb keep under the new policies? */
static size_t
still_allowed(void *arg, const struct sbx_sandbox *sb,
    char (*out)[SBX_SLUG_MAX])
{
	const struct project *p = project_find(arg, sb->project);
	size_t i, n = 0;

	if (p == NULL || !p->valid || !project_allows(p, sb->key.uid))
		return 0;
	for (i = 0; i < sb->nservices; i++)
		if (project_offers(p, sb->svc[i].conn.name))
			strlcpy(out[n++], sb->svc[i].conn.name, SBX_SLUG_MAX);
	return n;
}

/* Ranges read (at start or by a reload), or NULL and why not: then the
 * ranges read before stay. */
static void
subuids_take(struct monitor *m, const struct subuid_table *read,
    const char *err)
{
	struct subuid_table t;

	if (read == NULL) {
		log_warnx("subordinate uids: %s; keeping the %zu ranges read "
		    "before", err, m->subuids.n);
		return;
	}
	t = *read;
	subuid_free(&m->subuids);
	m->subuids = t;
	/* The broker gets them at its next start (it has no NSS). */
	m->broker.subuids = t.v;
	m->broker.nsubuids = t.n;
	log_info("subordinate uids: %zu ranges from %s (%s)%s", t.n,
	    m->cfg.subuid_file, m->cfg.subuid == SUBUID_REFUSE ?
	    "refused" : "counted toward their owners",
	    t.skipped ? ", some lines skipped" : "");
}

/*
 * The start's reload, waited for: without the policies every sandbox's
 * project would seem gone and adoption would discard them all; without
 * the ranges, subordinate uids would pass as owners of their own (and
 * subuid = refuse would serve them). Either missing: no start.
 */
static void
start_take(void *arg, struct project_table *projects,
    struct subuid_table *subuids, const char *err)
{
	struct monitor *m = arg;

	if (projects == NULL)
		fatalx("the projects in %s cannot be read: not starting, so "
		    "that no sandbox is discarded", m->cfg.projects);
	m->projects = *projects;
	if (subuids == NULL)
		fatalx("subordinate uids: %s: not starting, so that none is "
		    "taken for an owner", err != NULL ? err : "not read");
	subuids_take(m, subuids, NULL);
}

static void reload_start(struct monitor *);

/* A SIGHUP's reload is back from its worker (reload.c checked it). */
static void
reload_take(void *arg, struct project_table *projects,
    struct subuid_table *subuids, const char *err)
{
	struct monitor *m = arg;
	size_t n;

	m->reloading = false;
	if (projects != NULL) {
		projects_free(&m->projects);
		m->projects = *projects;
		n = cache_revoke(&m->cache, still_allowed, &m->projects);
		warm_projects(&m->rt, &m->projects);
		log_info("reloaded %zu project policies; %zu sandboxes lose "
		    "services, %zu busy ones are checked when idle",
		    m->projects.n, n, m->cache.revoke_busy);
	} else
		log_warnx("reload: the project policies were not read again; "
		    "keeping the %zu read before", m->projects.n);
	if (subuids != NULL || err != NULL)
		subuids_take(m, subuids, err);
	notify_reloaded(m->cache.count);
	if (m->reload_wanted)
		reload_start(m);
}

/* In a worker, as soon as one is free (tick() tries again). */
static void
reload_start(struct monitor *m)
{
	m->reload_wanted = true;
	if (m->reloading || m->stopping)
		return;
	if (reload_spawn(&m->pool, &m->cfg, reload_take, m) == -1)
		return;
	m->reloading = true;
	m->reload_wanted = false;
}

/* An adopted sandbox's owner, as handle.c finds a request's. */
static uid_t
owner_of(void *arg, uid_t uid)
{
	struct monitor *m = arg;
	uid_t owner = uid;

	if (m->cfg.subuid == SUBUID_COUNT)
		subuid_owner(&m->subuids, uid, &owner);
	return owner;
}

static void
on_signal(struct monitor *m)
{
	struct signalfd_siginfo si;

	while (read(m->sigfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		switch (si.ssi_signo) {
		case SIGCHLD:
			reap_children(m);
			break;
		case SIGHUP:
			/* User and group names resolve through NSS, which
			 * may be slow: not here (reload.c). */
			notify_reloading();
			reload_start(m);
			break;
		case SIGTERM:
		case SIGINT:
			if (!m->stopping) {
				log_info("stopping: finishing requests in flight");
				notify_stopping();
			}
			m->stopping = 1;
			if (m->broker.pid > 0)
				kill(m->broker.pid, SIGTERM);
			break;
		default:
			break;
		}
	}
}

static void
on_outq(struct monitor *m, int fd)
{
	struct outq *q, *next;
	ssize_t n;

	TAILQ_FOREACH_SAFE(q, &m->outq, entry, next) {
		if (q->fd != fd)
			continue;
		n = send(fd, q->buf + q->off, q->len - q->off,
		    MSG_DONTWAIT | MSG_NOSIGNAL);
		if (n > 0)
			q->off += (size_t)n;
		if (q->off == q->len ||
		    (n == -1 && errno != EAGAIN && errno != EINTR))
			outq_free(m, q);
		return;
	}
}

static size_t
open_fds(void)
{
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	if ((dir = opendir("/proc/self/fd")) == NULL)
		return 0;
	while ((d = readdir(dir)) != NULL)
		n += d->d_name[0] != '.';
	closedir(dir);
	return n - 1;	/* the directory's own */
}

#define METRICS_EVERY_MS	5000

static void
write_metrics(struct monitor *m, int64_t now)
{
	static struct metrics_snap g;	/* 16 KB: not on the stack */
	struct rlimit rl;
	size_t i;

	if (m->cfg.metrics_file[0] == '\0' || now < m->metrics_at)
		return;
	m->metrics_at = now + METRICS_EVERY_MS;
	memset(&g, 0, sizeof(g));
	g.sandboxes = m->cache.count;
	g.fds_open = open_fds();
	g.uid_ranges = m->rt.idmap.inuse;
	g.uid_ranges_max = m->rt.idmap.nslots;
	for (i = 0; i < m->cfg.nservices; i++)
		g.svc[i].warm = warm_ready(&m->rt, i);
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		g.fds_limit = (uint64_t)rl.rlim_cur;
	metrics_write(&m->pool, &m->cfg, &g);
}

/*
 * To syslog, the loop's lines go through a pipe that never makes it wait,
 * to a logger that does (privsep/worker/logger.c): what the pipe does not take is
 * counted, and the count is said once it takes lines again.
 */
/* A sandbox took a lease: its pidfd is watched, its record says it. */
static void
leased(void *arg, struct sbx_sandbox *sb)
{
	struct monitor *m = arg;
	struct epoll_event ev = { .events = EPOLLIN,
	    .data.fd = sb->lease.pidfd };

	if (epoll_ctl(m->lease_ep, EPOLL_CTL_ADD, sb->lease.pidfd, &ev) == -1)
		log_warn("uid=%u agent=%s: cannot watch process %d",
		    (unsigned)sb->key.uid, sb->key.agent, (int)sb->lease.pid);
	record_lease(&m->cfg, sb);
}

/* Processes that sandboxes were bound to have exited: those sandboxes
 * go, as a release would have them go. */
static void
leases_ended(struct monitor *m)
{
	struct epoll_event ev[32];
	struct sbx_sandbox *sb;
	pid_t pid;
	int i, n;

	n = epoll_wait(m->lease_ep, ev, 32, 0);
	for (i = 0; i < n; i++) {
		if ((sb = cache_find_lease(&m->cache, ev[i].data.fd)) == NULL)
			continue;
		pid = sb->lease.pid;
		close(sb->lease.pidfd);	/* and out of the epoll set */
		sb->lease.pidfd = -1;
		audit_sandbox(AUDIT_RELEASE, sb, SBX_OK,
		    "reason=bind_pid_exited pid=%d", (int)pid);
		cache_release(&m->cache, sb->key.uid, owner_of(m, sb->key.uid),
		    sb->key.agent, (struct sbx_reply){ NULL, NULL });
	}
}

static void
logger_start(struct monitor *m)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) == -1 || set_nonblock(p[1]) == -1)
		fatal("the logger's pipe");
	if ((m->logger = worker_spawn_long(JOB_LOG, p[0])) == -1) {
		m->logger = 0;
		close(p[0]);
		close(p[1]);
		return;		/* tried again at the next tick */
	}
	close(p[0]);
	log_relay(p[1]);
}

static void
logger_tick(struct monitor *m)
{
	unsigned long lost = log_dropped();

	if (!m->syslog)
		return;
	if (m->logger == 0 && !m->stopping)
		logger_start(m);
	if (lost != m->log_lost) {
		m->log_lost = lost;
		log_warnx("%lu log lines could not be written without waiting "
		    "and were dropped (in all)", lost);
	}
}

static void
tick(struct monitor *m, int64_t now)
{
	struct outq *q, *next;

	workers_expire(&m->pool, now);
	TAILQ_FOREACH_SAFE(q, &m->outq, entry, next)
		if (q->deadline <= now)
			outq_free(m, q);
	if (!m->stopping)
		cache_expire(&m->cache);
	/* What the last reload found busy meets its policy once idle. */
	if (!m->stopping && m->cache.revoke_busy > 0)
		cache_revoke(&m->cache, still_allowed, &m->projects);
	cache_retry(&m->cache);
	if (!m->stopping)
		warm_work(&m->rt, m->cache.nprovisions);
	if (m->reload_wanted && !m->reloading)
		reload_start(m);	/* no worker was free at SIGHUP */
	notify_tick(now, m->cache.count);
	audit_tick(now);
	write_metrics(m, now);
	logger_tick(m);
	broker_logger(&m->broker);
	if (!m->stopping && m->broker.pid == 0 && m->broker.restart_at != 0 &&
	    now >= m->broker.restart_at &&
	    broker_start(&m->broker, &m->cfg, m->listen_fd, now) == -1) {
		log_warn("restarting the broker");
		m->broker.restart_at = now + 1000;
	}
}

static int
done(struct monitor *m)
{
	return m->stopping && m->broker.pid == 0 && m->pool.n == 0 &&
	    TAILQ_EMPTY(&m->outq) && cache_busy(&m->cache) == 0;
}

/* Did a worker's pipe say something (a result, or its end)? */
static bool
workers_done(const struct pollfd *pfd, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (pfd[i].revents)
			return true;
	return false;
}

static void
loop(struct monitor *m)
{
	struct pollfd pfd[MAX_POLL];
	struct outq *q;
	size_t n, nw, i;
	int64_t now, next_tick = now_ms() + TICK_MS, wait, due;
	int64_t warm_at = 0;

	while (!done(m)) {
		n = 0;
		pfd[n++] = (struct pollfd){ .fd = m->sigfd, .events = POLLIN };
		pfd[n++] = (struct pollfd){ .fd = m->broker.chan,
		    .events = m->nagents < m->max_agents ? POLLIN : 0 };
		pfd[n++] = (struct pollfd){ .fd = m->lease_ep, .events = POLLIN };
		nw = workers_pollfds(&m->pool, pfd + n, MAX_POLL / 2);
		n += nw;
		TAILQ_FOREACH(q, &m->outq, entry) {
			if (n == MAX_POLL)
				break;
			pfd[n++] = (struct pollfd){ .fd = q->fd,
			    .events = POLLOUT };
		}
		now = now_ms();
		due = workers_next_deadline(&m->pool);
		wait = (due < next_tick ? due : next_tick) - now;
		if (warm_at != 0 && warm_at - now < wait)
			wait = warm_at - now;
		if (wait < 0)
			wait = 0;
		if (poll(pfd, n, (int)wait) == -1 && errno != EINTR)
			fatal("poll");
		if (pfd[0].revents)
			on_signal(m);
		if (pfd[1].revents & POLLIN)
			on_broker_message(m);
		if (pfd[2].revents & POLLIN)
			leases_ended(m);
		workers_events(&m->pool, pfd + 3, nw);
		cache_retry(&m->cache);	/* a worker may be free now */
		/* Renames and refills of the warm pool fork the monitor:
		 * not in a burst of requests, but once the broker has been
		 * quiet for WARM_QUIET_MS (and at every tick). */
		now = now_ms();
		if (pfd[1].revents & POLLIN)
			warm_at = now + WARM_QUIET_MS;
		else if (warm_at == 0 && workers_done(pfd + 3, nw))
			warm_at = now;	/* a worker may be free now */
		if (warm_at != 0 && now >= warm_at) {
			warm_at = 0;
			if (!m->stopping)
				warm_work(&m->rt, m->cache.nprovisions);
		}
		for (i = 3 + nw; i < n; i++)
			if (pfd[i].revents)
				on_outq(m, pfd[i].fd);
		if ((now = now_ms()) >= next_tick || due <= now) {
			tick(m, now);
			next_tick = now + TICK_MS;
		}
	}
}

/* sbx-broker and sbx-worker are installed beside the monitor. */
static void
beside_self(const char *name, char *out, size_t cap)
{
	char self[PATH_MAX];
	ssize_t n;

	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0)
		fatal("readlink /proc/self/exe");
	self[n] = '\0';
	if (snprintf(out, cap, "%s/%s", dirname(self), name) >= (int)cap)
		fatalx("%s: the path of %s is too long", self, name);
	if (access(out, X_OK) == -1)
		fatal("%s", out);
}

/*
 * RLIMIT_NOFILE: the soft limit up to the hard one, or to max_open_files
 * (raising the hard limit too if root may). Every ready service holds a
 * pidfd, every worker a pipe, every waiting request its agent's socket:
 * the default 1024 would cap the host at about 500 sandboxes.
 */
static void
raise_nofile(const struct sbx_config *cfg)
{
	struct rlimit was, rl;

	if (getrlimit(RLIMIT_NOFILE, &was) == -1)
		fatal("getrlimit");
	rl = was;
	rl.rlim_cur = cfg->max_open_files ? cfg->max_open_files : was.rlim_max;
	if (rl.rlim_cur > rl.rlim_max)
		rl.rlim_max = rl.rlim_cur;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1) {
		rl.rlim_max = was.rlim_max;	/* past fs.nr_open */
		if (rl.rlim_cur > rl.rlim_max)
			rl.rlim_cur = rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
			log_warn("setrlimit RLIMIT_NOFILE");
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	log_info("RLIMIT_NOFILE %llu (hard %llu; was %llu, wanted %s%u)",
	    (unsigned long long)rl.rlim_cur, (unsigned long long)rl.rlim_max,
	    (unsigned long long)was.rlim_cur,
	    cfg->max_open_files ? "" : "the hard limit, ",
	    cfg->max_open_files ? cfg->max_open_files :
	    (unsigned)(was.rlim_max > UINT_MAX ? UINT_MAX : was.rlim_max));
}

static unsigned
min_u(unsigned a, unsigned b)
{
	return a < b ? a : b;
}

/* Agents' sockets held beyond max_requests waiting ones: replies still
 * being written (a large status; a sandbox's fits a socket's buffer). */
#define AGENT_SLACK	32

/* Warm containers' pidfds: the services' pools and the projects'. */
static unsigned
warm_total(const struct monitor *m)
{
	unsigned n = m->rt.warm.project_cap;
	size_t i;

	for (i = 0; i < m->cfg.nservices; i++)
		n += m->cfg.services[i].warm;
	return n;
}

/*
 * The descriptor budget, once the broker runs: what is open now, the
 * spare, two per worker (its result pipe and its pidfd), one per agent's socket held (max_requests
 * waiting, a few more being written), one per warm container's pidfd,
 * and the rest for services' pidfds (cache max_fds), so that whatever
 * the sandboxes hold, a release, an expiry and a teardown find a worker
 * pipe, and a broker message's descriptor always fits (the channel is
 * not read past max_agents). A small limit shrinks the worker and
 * request shares to a quarter of what is left each, and says so.
 */
static void
fd_budget(struct monitor *m)
{
	struct sbx_config *c = &m->cfg;
	struct cache_limits *l = &m->cache.lim;
	struct rlimit rl;
	unsigned held = (unsigned)open_fds(), left, svc, share, reserve;
	unsigned warm = warm_total(m);

	/* Adopted services' pidfds are open now: they are the services'. */
	if (held > m->cache.nfds)
		held -= (unsigned)m->cache.nfds;
	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		fatal("getrlimit");
	if (rl.rlim_cur > UINT_MAX / 2)
		rl.rlim_cur = UINT_MAX / 2;
	svc = c->nservices ? (unsigned)c->nservices : 1;
	if (rl.rlim_cur < held + FD_SPARE + 2 * 3 + 2 + warm + svc)
		fatalx("RLIMIT_NOFILE %llu leaves no descriptors for one "
		    "sandbox (%u are open, %u warm containers)",
		    (unsigned long long)rl.rlim_cur, held, warm);
	left = (unsigned)rl.rlim_cur - held - FD_SPARE - warm;
	/* Workers no provision may take: one for a teardown, and with a
	 * warm pool one more to start its containers (config.c). */
	reserve = warm > 0 ? 2 : 1;
	c->max_workers = min_u(c->max_workers, left / 4 > reserve ? left / 4 :
	    reserve + 1);
	c->max_provisions = min_u(c->max_provisions, c->max_workers - reserve);
	share = left / 4 > 2 ? left / 4 : 2;
	c->max_requests = min_u(c->max_requests, share - share / 4);
	m->max_agents = min_u(share, c->max_requests + AGENT_SLACK);
	m->pool.max = c->max_workers;
	l->max_provisions = c->max_provisions;
	l->max_provisions_per_uid = min_u(c->max_provisions_per_uid,
	    c->max_provisions);
	/* A request waits its uid's turn as long as a provision may take. */
	l->max_wait_ms = ((int64_t)c->runtime_timeout * 3 + 10) * 1000;
	l->max_requests = c->max_requests;
	l->max_requests_per_uid = min_u(c->max_requests_per_uid,
	    c->max_requests);
	l->max_fds = left - 2 * c->max_workers - m->max_agents;
	log_info("descriptors: %llu: %u open, %u spare, %u for workers, %u "
	    "for requests, %u for replies, %u for warm containers, %u for "
	    "services (%u sandboxes of %u services)",
	    (unsigned long long)rl.rlim_cur, held, FD_SPARE, 2 * c->max_workers,
	    c->max_requests, m->max_agents - c->max_requests, warm,
	    l->max_fds, l->max_fds / svc, svc);
}

static unsigned
status_warm(const void *rt, size_t i)
{
	return warm_ready(rt, i);
}

static void
setup(struct monitor *m, const char *path, int fg)
{
	char err[512];

	if (geteuid() != 0)
		fatalx("must be started as root");
	if (config_read(path, &m->cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* First: a second monitor touches nothing, not even its socket. */
	if (runtime_lock_host(&m->cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	beside_self("sbx-broker", m->broker.path, sizeof(m->broker.path));
	/* On the journal the broker's lines go through its log worker too,
	 * so that they carry their priority (its environment is empty: it
	 * cannot tell the journal from a terminal). */
	m->broker.foreground = fg && !log_to_journal();
	m->broker.chan = -1;
	m->broker.log_r = m->broker.log_w = -1;
	workers_init(&m->pool, m->cfg.max_workers, &m->cfg);
	if ((m->listen_fd = bind_agent_socket(&m->cfg, err,
	    sizeof(err))) == -1)
		fatalx("%s", err);
	raise_nofile(&m->cfg);	/* after the refusals: one line on stderr */
	if ((m->sigfd = signals_to_fd()) == -1)
		fatal("signals");
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("PR_SET_CHILD_SUBREAPER");
	if (record_open_dir(&m->cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	reload_wait(&m->cfg, start_take, m);
	m->rt = (struct rt_cli){ .cfg = &m->cfg, .pool = &m->pool,
	    .projects = &m->projects };
	TAILQ_INIT(&m->rt.held);
	if (idmap_init(&m->rt.idmap, m->cfg.userns_base, m->cfg.userns_slots,
	    (unsigned)m->cfg.nservices) == -1 ||
	    warm_init(&m->rt, &m->projects) == -1)
		fatal("uid ranges");
	cache_init(&m->cache, (struct sbx_runtime){ &rt_cli_ops, &m->rt },
	    (struct cache_limits){ .max_per_uid = m->cfg.max_sandboxes_per_uid,
	    .idle_ttl_ms = (int64_t)m->cfg.idle_ttl * 1000,
	    .max_sandboxes = m->cfg.max_sandboxes,
	    .max_waiters = m->cfg.max_waiters }, now_ms);	/* + fd_budget() */
	m->rt.cache = &m->cache;
	m->cache.owner_of = owner_of;
	m->cache.owner_arg = m;
	m->cache.leased = leased;
	if ((m->lease_ep = epoll_create1(EPOLL_CLOEXEC)) == -1)
		fatal("epoll_create1");
	if (adopt_sandboxes(&m->cfg, &m->projects, &m->cache, &m->rt) == -1)
		fatalx("cannot list the runtime's containers (%s ps): which "
		    "sandboxes and uid ranges are in use is unknown", m->cfg.runtime);
	if (!m->cfg.enabled && m->cache.count > 0)
		log_info("enabled = no: nothing new is provisioned; %zu adopted "
		    "sandboxes are left up until released or idle", m->cache.count);
	m->env = (struct handler_env){ .cfg = &m->cfg,
	    .projects = &m->projects, .cache = &m->cache,
	    .subuids = &m->subuids, .warm_ready = status_warm,
	    .warm_arg = &m->rt };
	TAILQ_INIT(&m->outq);
}

/*
 * Without -d: into the background once every refusal has been said on
 * stderr (config, root, host lock, state_dir, socket, adoption), before
 * the broker and any worker start, so that they are the daemon's
 * children. daemon(3): the parent exits 0; the daemon is a session of
 * its own with /dev/null for stdio, and logs to syslog from here on.
 */
static void
daemonize(void)
{
	/* Where the daemon's lines will go, asked while stderr is still the
	 * caller's: with no syslog daemon, log_init says so there, once. */
	log_init("sbx-monitor", LOG_TO_SYSLOG);
	if (log_foreground())
		log_warnx("in the background, stderr is /dev/null: start a "
		    "syslog daemon, or run sbx-monitor -d, to keep the log");
	if (daemon(1, 0) == -1)
		fatal("cannot go into the background");
	log_init("sbx-monitor", LOG_TO_SYSLOG);
	/* Not inherited across fork: the daemon asks again. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == -1)
		log_warn("PR_SET_CHILD_SUBREAPER");
	runtime_lock_moved();
}

/* sbx-monitor --purge: the config, then runtime_purge's worker. */
static int
purge(const char *path)
{
	static struct sbx_config cfg;	/* large: not on the stack */
	static struct worker_pool pool;
	char err[512];

	if (geteuid() != 0)
		fatalx("must be run as root");
	if (config_read(path, &cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	workers_init(&pool, 1, &cfg);
	return runtime_purge(&cfg);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "purge", no_argument, NULL, 'P' },
		{ NULL, 0, NULL, 0 }
	};
	static struct monitor m;
	const char *path = "/etc/sbx/sbx.conf";
	char worker[PATH_MAX], err[512];
	int ch, fg = 0, test = 0, purging = 0;

	while ((ch = getopt_long(argc, argv, "df:t", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd': fg = 1; break;
		case 'f': path = optarg; break;
		case 't': test = 1; break;
		case 'P': purging = 1; break;
		default: usage();
		}
	}
	if (optind != argc || (purging && (fg || test)))
		usage();
	/* Errors before the loop go to stderr, whatever the mode. */
	log_init("sbx-monitor", 1);
	/* First: every file of root's is read by a worker, never here. */
	beside_self("sbx-worker", worker, sizeof(worker));
	if (workers_open(worker, err, sizeof(err)) == -1)
		fatalx("%s", err);
	if (test)
		return config_test(path);
	if (purging)
		return purge(path);
	setup(&m, path, fg);
	if (!fg)
		daemonize();
	if ((m.syslog = !log_foreground()))
		logger_start(&m);
	if (broker_start(&m.broker, &m.cfg, m.listen_fd, now_ms()) == -1)
		fatal("starting the broker");
	fd_budget(&m);
	/* What docker cannot do as podman does: said once, at every start
	 * (sbx-monitor(8), RUNTIMES). */
	if (rt_is_docker(&m.cfg))
		log_warnx("runtime %s is docker: containers get no user "
		    "namespace of their own (they run as their image's USER, "
		    "the same host uid in every sandbox; userns_base and "
		    "userns_slots give only the readiness probers their "
		    "uids), and tcp services sit on "
		    "docker's bridge, whose addresses the host and other "
		    "containers there can reach (only 127.0.0.1 is published), "
		    "with no packet-filter rule keeping other uids off "
		    "their ports",
		    m.cfg.runtime);
	log_info("serving %s (%s), %zu services, %zu projects",
	    m.cfg.socket, m.cfg.enabled ? "enabled" : "disabled",
	    m.cfg.nservices, m.projects.n);
	notify_ready(m.cache.count, m.cache.count);
	loop(&m);
	warm_unrecord(&m.rt);
	log_info("stopped");
	return 0;
}
