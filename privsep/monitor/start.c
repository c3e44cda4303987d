/*
 * start.c - sbx-monitor's start, before its loop: the config, the host's
 * lock, the agent socket, the records, adoption, the descriptor budget,
 * the background; and --purge.
 * runs in: the monitor at start (root, unfiltered)
 */
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include "adopt.h"
#include "bind.h"
#include "cache.h"
#include "config_take.h"
#include "handle.h"
#include "iox.h"
#include "log.h"
#include "monitor.h"
#include "record.h"
#include "reload.h"
#include "rt_start.h"
#include "runtime.h"
#include "scfilter.h"
#include "sig.h"
#include "spawner.h"
#include "start.h"
#include "warm.h"

/* sbx-broker and sbx-worker are installed beside the monitor. */
void
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

/* Descriptors open now. */
size_t
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
		n += m->cfg.services[i].warm_max;	/* a pool may grow to it */
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
void
monitor_fd_budget(struct monitor *m)
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
	 * warm pool one more to start its containers (config_parse.c). */
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

void
monitor_setup(struct monitor *m, const char *path, int fg,
    const struct monitor_hooks *h)
{
	char err[512];

	if (geteuid() != 0)
		fatalx("must be started as root");
	if (config_read(path, &m->cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	/* First: a second monitor touches nothing, not even its socket. */
	if (runtime_lock_host(&m->cfg, err, sizeof(err)) == -1)
		fatalx("%s", err);
	beside_self("sbx-broker", m->broker.exe.path,
	    sizeof(m->broker.exe.path));
	m->broker.exe.cfg = &m->cfg;
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
	reload_wait(&m->cfg, h->start_take, m);
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
	    .max_waiters = m->cfg.max_waiters }, now_ms);	/* + monitor_fd_budget() */
	m->rt.cache = &m->cache;
	m->cache.owner_of = h->owner_of;
	m->cache.owner_arg = m;
	m->cache.leased = h->leased;
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
void
monitor_daemonize(void)
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

/*
 * Before the broker's first message, and once the background is set:
 * the spawner is forked, which keeps the exec the monitor gives up, and
 * the monitor's own allowlist (policy/seccomp/monitor.list) is loaded.
 * A monitor that cannot be confined does not serve.
 */
void
monitor_confine(struct monitor *m)
{
	if (spawner_start(workers_exe(), &m->broker.exe) == -1)
		fatal("cannot start the spawner");
	if (sc_load_allow("monitor") == -1)
		fatalx("cannot load the monitor's seccomp filter");
}

/* sbx-monitor --purge: the config, then runtime_purge's worker. */
int
monitor_purge(const char *path)
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
