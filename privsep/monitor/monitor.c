/*
 * monitor.c - sbx-monitor: the privileged half, root and unfiltered; its
 * main and its loop.
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * At start (start.c) it has workers read the config, the projects and
 * what the last monitor left (config_take.c, reload.c, adopt.c) and bind
 * the agent socket (bind.c), and starts the broker; then it lives in one
 * poll loop: broker messages in, worker results in, answers out, written
 * to the agents' sockets by the monitor itself (answer.c packs them). It never
 * parses msgpack or a file of its config, never reads from an agent's
 * socket or the broker's log, and never waits on the runtime.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#include "cache_revoke.h"
#include "cache_status.h"
#include "claims.h"
#include "code.h"
#include "config.h"
#include "config_take.h"
#include "dispatch.h"
#include "handle.h"
#include "iox.h"
#include "log.h"
#include "metrics.h"
#include "monitor.h"
#include "notify.h"
#include "project.h"
#include "record.h"
#include "reload.h"
#include "rt_start.h"
#include "rtname.h"
#include "runtime.h"
#include "sig.h"
#include "start.h"
#include "subuid.h"
#include "spawner.h"
#include "supervise.h"

#define MAX_POLL	1024
#define REPLY_TIMEOUT_MS 10000
#define TICK_MS		1000
#define WARM_QUIET_MS	20	/* see loop() */

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
		if (pid == spawner_pid())
			fatalx("the spawner died: no worker or broker can "
			    "start");
		else if (pid == m->broker.pid)
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
		warm_metrics(&m->rt, i, &g.svc[i]);
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
	    broker_start(&m->broker, m->listen_fd, now) == -1) {
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
		/* Last: the claims this pass made share one job. */
		claims_send(&m->rt);
	}
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
		return monitor_purge(path);
	monitor_setup(&m, path, fg, &(const struct monitor_hooks){
	    .start_take = start_take, .owner_of = owner_of,
	    .leased = leased });
	if (!fg)
		monitor_daemonize();
	monitor_confine(&m);
	if ((m.syslog = !log_foreground()))
		logger_start(&m);
	if (broker_start(&m.broker, m.listen_fd, now_ms()) == -1)
		fatal("starting the broker");
	monitor_fd_budget(&m);
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
	spawner_stop();
	log_info("stopped");
	return 0;
}
