/*
 * warm.c - warm containers: started ahead, confined as a sandbox's, each
 * with a password of its own that nobody has seen, so that a miss is a
 * claim (runtime.c, rt_claim) with no runtime call before the reply.
 * Its jobs run in sbx-worker (privsep/worker/provision.c).
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 *
 * A warm container is named sbx-pool-<service>-<slot> and labelled
 * sbx.pool=<service>; its slot is a uid range of its own (idmap.c); its
 * socket directory is run_dir/.pool/<service>-<slot> (root only) and its
 * record state_dir/sandboxes/pool-<service>-<slot> (record.c), so that a
 * restart adopts it. A claimed one is renamed sbx-<uid>-<agent>-<service>-
 * w<slot> after the reply and is torn down like any sandbox's; it never
 * comes back. The pools are refilled from the loop within what tenants'
 * provisions leave: they never take the workers a tenant's provision or
 * teardown may need.
 *
 * Each service's pool holds its section's warm; a project whose file says
 * warm has a pool of each service of its set besides (warm.h), started
 * with the project's seed and labelled sbx.project. Those have no record:
 * their seed may change while no monitor runs, so a restart removes them
 * (adoption: no record) and starts them anew.
 *
 * With warm_max above warm, a pool follows its new agents: each request
 * is noted on the pool it would take from, and its target is the recent
 * peak of that demand between warm and warm_max (demand.c), all pools'
 * within warm_memory. A pool above its target loses a few ready members
 * at a time, by the same removal as a dead one's, when no tenant needs
 * the worker.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iox.h"
#include "liveness.h"
#include "log.h"
#include "record.h"
#include "results.h"
#include "rtname.h"
#include "runtime.h"
#include "secret.h"
#include "service.h"
#include "sockdir.h"

#define WARM_STARTS	2		/* at once, all services */
#define RETRY_MIN_MS	2000		/* after a failed start */
#define RETRY_MAX_MS	300000
#define WARM_SHRINK	2		/* removals a pass starts, pools above target */

/* A service's own pool, or a project's (no project: unused). */
static bool
pool_used(const struct rt_cli *rt, const struct warm_pool *p)
{
	return p < rt->warm.pool + rt->cfg->nservices || p->project[0] != '\0';
}

/* Room for n members (its warm_max); its target is bounds_set's. */
static int
pool_size(struct warm_pool *p, unsigned n)
{
	struct warm_member *m;

	if (n > p->cap) {
		if ((m = reallocarray(p->m, n, sizeof(*m))) == NULL)
			return -1;
		memset(m + p->cap, 0, (n - p->cap) * sizeof(*m));
		p->m = m;
		p->cap = n;
	}
	return 0;
}

/* Members of projects' pools the descriptor budget was made for: what
 * the projects may grow to at start (a SIGHUP may not ask for more). */
static unsigned
projects_want(const struct rt_cli *rt, const struct project_table *pt)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; pt != NULL && i < pt->n; i++)
		if (pt->v[i].valid)
			n += pt->v[i].warm_max * (unsigned)pt->v[i].nservices;
	return rt_is_podman(rt->cfg) ? n : 0;
}

/* A pool's floor and ceiling; its target, within them. */
static void
bounds_set(struct warm_pool *p, unsigned floor, unsigned max, unsigned idle_s,
    unsigned mib)
{
	p->bounds = (struct demand_bounds){ .floor = floor, .max = max,
	    .idle_s = idle_s, .mib = mib };
	p->want = p->want < floor ? floor : p->want > max ? max : p->want;
}

int
warm_init(struct rt_cli *rt, const struct project_table *pt)
{
	const struct sbx_config *cfg = rt->cfg;
	size_t i;

	for (i = 0; i < cfg->nservices; i++) {
		rt->warm.pool[i].svc = i;
		if (cfg->services[i].warm_max == 0)
			continue;
		if (!rt_is_podman(cfg)) {
			log_warnx("warm = %u, warm_max = %u for %s: warm "
			    "containers need podman (rm --ignore, uid ranges "
			    "per container); none is started",
			    cfg->services[i].warm, cfg->services[i].warm_max,
			    cfg->services[i].name);
			continue;
		}
		if (pool_size(&rt->warm.pool[i], cfg->services[i].warm_max) ==
		    -1)
			return -1;
		bounds_set(&rt->warm.pool[i], cfg->services[i].warm,
		    cfg->services[i].warm_max, cfg->services[i].warm_idle,
		    cfg->services[i].warm_mib);
	}
	rt->warm.project_cap = projects_want(rt, pt);
	warm_projects(rt, pt);
	return 0;
}

static ssize_t
config_index(const struct rt_cli *rt, const char *service)
{
	const struct service_cfg *s = config_service(rt->cfg, service);

	return s == NULL ? -1 : s - rt->cfg->services;
}

/* The member of slot (slots are unique on the host), and its pool. */
static struct warm_member *
member_of(struct rt_cli *rt, unsigned slot, struct warm_pool **pool)
{
	struct warm_pool *p;
	unsigned i;

	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		for (i = 0; i < p->cap; i++)
			if (p->m[i].slot == slot) {
				*pool = p;
				return &p->m[i];
			}
	return NULL;
}

static struct warm_job *
job_new(struct rt_cli *rt, const struct warm_pool *p, unsigned slot)
{
	struct warm_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->rt = rt;
	j->svc = p->svc;
	j->w.slot = slot;
	strlcpy(j->w.conn.name, rt->cfg->services[p->svc].name,
	    sizeof(j->w.conn.name));
	strlcpy(j->w.project, p->project, sizeof(j->w.project));
	strlcpy(j->w.seed, p->seed, sizeof(j->w.seed));
	return j;
}

/* The slot comes back once the runtime said its container is gone. */
static void
removed(void *arg, const void *result, size_t len)
{
	struct warm_job *j = arg;
	const uint32_t *code = result;

	if (result != NULL && len == sizeof(*code) && *code == SBX_OK) {
		idmap_put(&j->rt->idmap, j->w.slot);
		idmap_put_range(&j->rt->idmap, j->w.host_uid);
	} else
		log_warnx("warm %s-%u: its container could not be removed; "
		    "its uid range stays taken", j->w.conn.name, j->w.slot);
	free(j);
}

/* Remove a member's container, record and directory; free its entry. */
static void
discard(struct rt_cli *rt, struct warm_pool *p, struct warm_member *m)
{
	struct warm_job *j;

	if (m->ready)
		p->nready--;
	else
		p->nstarting--;
	record_remove_pool(rt->cfg->services[p->svc].name, m->slot);
	if (m->svc.pidfd >= 0)
		close(m->svc.pidfd);
	if ((j = job_new(rt, p, m->slot)) != NULL)
		j->w.host_uid = m->svc.host_uid;
	if (j == NULL ||
	    worker_spawn(rt->pool, JOB_WARM_REMOVE, 0, &j->w, sizeof(j->w),
	    sizeof(uint32_t), now_ms() + (int64_t)rt->cfg->runtime_timeout *
	    1000, removed, j) == -1) {
		log_warnx("warm %s-%u: cannot start its removal; its uid range "
		    "stays taken", rt->cfg->services[p->svc].name, m->slot);
		free(j);
	}
	explicit_bzero(m, sizeof(*m));
}

/* Its ready members beyond want, or all of them: gone. */
static void
trim(struct rt_cli *rt, struct warm_pool *p, bool all)
{
	unsigned i;

	for (i = 0; i < p->cap && (all || p->nready + p->nstarting > p->want);
	    i++)
		if (p->m[i].slot != 0 && p->m[i].ready)
			discard(rt, p, &p->m[i]);
}

/* A project's pool that may hold none (its project dropped, or its
 * warm_max 0) is given up once its last member went (one still
 * starting comes back to it). One of floor 0 keeps its demand. */
static void
pool_drop(struct rt_cli *rt, struct warm_pool *p)
{
	if (p->bounds.max == 0 && p->nready + p->nstarting == 0 &&
	    p >= rt->warm.pool + rt->cfg->nservices && p->project[0] != '\0') {
		free(p->m);
		memset(p, 0, sizeof(*p));
	}
}

static struct warm_pool *
project_pool(struct rt_cli *rt, size_t svc, const char *project)
{
	struct warm_pool *p, *free_one = NULL;

	for (p = rt->warm.pool + rt->cfg->nservices;
	    p < rt->warm.pool + WARM_POOLS; p++) {
		if (p->project[0] == '\0') {
			if (free_one == NULL)
				free_one = p;
			continue;
		}
		if (p->svc == svc && strcmp(p->project, project) == 0)
			return p;
	}
	if (free_one != NULL) {
		free_one->svc = svc;
		strlcpy(free_one->project, project, sizeof(free_one->project));
	}
	return free_one;
}

/* One project's pools (up to its file's warm_max, within the cap left;
 * its floor warm, within that too). */
static unsigned
project_pools(struct rt_cli *rt, const struct project *pr, unsigned left,
    bool *kept)
{
	struct warm_pool *p;
	unsigned want = pr->warm_max, used = 0, max;
	ssize_t svc;
	size_t i;

	for (i = 0; i < pr->nservices; i++) {
		if ((svc = config_index(rt, pr->services[i])) < 0 ||
		    (p = project_pool(rt, (size_t)svc, pr->slug)) == NULL)
			continue;
		if (want > left - used)
			log_warnx("warm_max = %u of project %s: only %u more "
			    "warm containers than at start fit the descriptor "
			    "budget (restart the monitor for more)", want,
			    pr->slug, left - used);
		if (strcmp(p->seed, pr->seed) != 0 ||
		    p->seed_sum != pr->seed_sum) {
			trim(rt, p, true);	/* its seed changed */
			strlcpy(p->seed, pr->seed, sizeof(p->seed));
			p->seed_sum = pr->seed_sum;
		}
		max = want < left - used ? want : left - used;
		if (pool_size(p, max) == 0) {
			used += max;
			bounds_set(p, pr->warm < max ? pr->warm : max, max,
			    pr->warm_idle, rt->cfg->services[svc].warm_mib);
		}
		trim(rt, p, false);
		kept[p - rt->warm.pool] = true;
	}
	return used;
}

void
warm_projects(struct rt_cli *rt, const struct project_table *pt)
{
	bool kept[WARM_POOLS] = { false };
	unsigned left = rt->warm.project_cap;
	struct warm_pool *p;
	size_t i;

	for (i = 0; pt != NULL && i < pt->n; i++) {
		if (!pt->v[i].valid || pt->v[i].warm_max == 0)
			continue;
		if (rt_is_podman(rt->cfg))
			left -= project_pools(rt, &pt->v[i], left, kept);
		else
			log_warnx("warm = %u, warm_max = %u of project %s: "
			    "warm containers need podman; none is started",
			    pt->v[i].warm, pt->v[i].warm_max, pt->v[i].slug);
	}
	for (p = rt->warm.pool + rt->cfg->nservices;
	    p < rt->warm.pool + WARM_POOLS; p++)
		if (p->project[0] != '\0' && !kept[p - rt->warm.pool]) {
			memset(&p->bounds, 0, sizeof(p->bounds));
			p->want = 0;
			trim(rt, p, true);
			pool_drop(rt, p);
		}
}

static void
backoff(struct warm_pool *p, bool failed)
{
	if (!failed) {
		p->retry_ms = 0;
		return;
	}
	p->retry_ms = p->retry_ms == 0 ? RETRY_MIN_MS :
	    p->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : p->retry_ms * 2;
	p->retry_at = now_ms() + p->retry_ms;
}

/* Its socket path, its pidfd, and a service's own pool's record. */
static bool
member_ready(struct rt_cli *rt, struct warm_pool *p, struct warm_member *m,
    const struct warm_started *r)
{
	const struct service_cfg *s = &rt->cfg->services[p->svc];
	char dir[SBX_SOCKET_MAX];

	m->svc.pid = r->pid;
	m->svc.conn.port = (s->transport & TRANSPORT_TCP) ? r->port : 0;
	/* config_parse.c bounds run_dir: the socket path fits. */
	if ((s->transport & TRANSPORT_UNIX) &&
	    (sockdir_pool_path(rt->cfg, s->name, m->slot, dir,
	    sizeof(dir)) == -1 || strlcpy(m->svc.conn.socket, dir,
	    sizeof(m->svc.conn.socket)) >= sizeof(m->svc.conn.socket) ||
	    strlcat(m->svc.conn.socket, "/", sizeof(m->svc.conn.socket)) >=
	    sizeof(m->svc.conn.socket) || strlcat(m->svc.conn.socket,
	    s->socket_name, sizeof(m->svc.conn.socket)) >=
	    sizeof(m->svc.conn.socket)))
		return false;
	if ((m->svc.pidfd = (int)syscall(SYS_pidfd_open, r->pid, 0)) < 0)
		return false;
	return p->project[0] != '\0' ||
	    record_write_pool(rt->cfg, &m->svc, m->slot) == 0;
}

static void
started(void *arg, const void *result, size_t len)
{
	struct warm_job *j = arg;
	const struct warm_started *r = result;
	struct rt_cli *rt = j->rt;
	const struct service_cfg *s = &rt->cfg->services[j->svc];
	struct warm_pool *p = NULL;
	struct warm_member *m = member_of(rt, j->w.slot, &p);
	bool sound = r != NULL && len == sizeof(*r) &&
	    warm_started_valid(r, s), ok = sound && r->code == SBX_OK;

	rt->warm.starting--;
	if (m == NULL) {	/* cannot be: the entry waits for us */
		free(j);
		return;
	}
	ok = ok && member_ready(rt, p, m, r);
	backoff(p, !ok);
	if (!ok) {
		log_warnx("warm %s-%u: not started: %s", s->name, m->slot,
		    sound ? r->message : "the worker failed");
		discard(rt, p, m);
	} else if (m->seed_sum != p->seed_sum ||
	    p->nready + p->nstarting > p->want) {
		m->ready = true;	/* its pool changed meanwhile */
		p->nstarting--;
		p->nready++;
		discard(rt, p, m);
		trim(rt, p, false);
	} else {
		m->ready = true;
		p->nstarting--;
		p->nready++;
		log_info("warm %s-%u%s%s: ready", s->name, m->slot,
		    p->project[0] != '\0' ? " of project " : "", p->project);
	}
	free(j);
}

static int
start_one(struct rt_cli *rt, struct warm_pool *p)
{
	struct warm_member *m = NULL;
	struct warm_job *j;
	unsigned i, slot;

	for (i = 0; i < p->cap; i++)
		if (p->m[i].slot == 0) {
			m = &p->m[i];
			break;
		}
	if (m == NULL || (slot = idmap_take(&rt->idmap)) == 0)
		return -1;
	if ((j = job_new(rt, p, slot)) == NULL) {
		idmap_put(&rt->idmap, slot);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	m->slot = slot;
	m->seed_sum = p->seed_sum;
	m->svc.pidfd = -1;
	strlcpy(m->svc.conn.name, j->w.conn.name, sizeof(m->svc.conn.name));
	secret_fill(m->svc.conn.password, sizeof(m->svc.conn.password));
	memcpy(j->w.conn.password, m->svc.conn.password,
	    sizeof(j->w.conn.password));
	j->w.host_uid = m->svc.host_uid = rt_host_uid(rt, slot,
	    &rt->cfg->services[p->svc]);
	if (worker_spawn(rt->pool, JOB_WARM_START, 1U << p->svc, &j->w,
	    sizeof(j->w),
	    sizeof(struct warm_started), now_ms() +
	    ((int64_t)rt->cfg->runtime_timeout * 3 +
	    rt->cfg->services[p->svc].ready_timeout + 10) * 1000,
	    started, j) == -1) {
		explicit_bzero(j, sizeof(*j));
		free(j);
		explicit_bzero(m, sizeof(*m));
		idmap_put(&rt->idmap, slot);
		return -1;
	}
	explicit_bzero(j->w.conn.password, sizeof(j->w.conn.password));
	p->nstarting++;
	rt->warm.starting++;
	return 0;
}

/* A ready member of p that still runs (a dead one is replaced). */
static struct warm_member *
take_from(struct rt_cli *rt, struct warm_pool *p)
{
	unsigned i;

	for (i = 0; i < p->cap; i++) {
		struct warm_member *m = &p->m[i];

		if (m->slot == 0 || !m->ready)
			continue;
		if (rt_warm_alive(&m->svc))
			return m;
		log_warnx("warm %s-%u: found dead at a claim: replaced",
		    m->svc.conn.name, m->slot);
		discard(rt, p, m);
	}
	return NULL;
}

struct warm_member *
warm_take(struct rt_cli *rt, const char *service, const char *project,
    bool seeded)
{
	ssize_t svc = config_index(rt, service);
	struct warm_pool *p;
	struct warm_member *m = NULL;

	if (svc < 0)
		return NULL;
	for (p = rt->warm.pool + rt->cfg->nservices;
	    m == NULL && p < rt->warm.pool + WARM_POOLS; p++)
		if (p->project[0] != '\0' && p->svc == (size_t)svc &&
		    strcmp(p->project, project) == 0)
			m = take_from(rt, p);
	/* A service's own pool has no project's seed. */
	if (m == NULL && !(seeded &&
	    rt->cfg->services[svc].probe == PROBE_POSTGRES))
		m = take_from(rt, &rt->warm.pool[svc]);
	return m;
}

/* The pool a new agent's service would take from first: its project's,
 * else the service's own unless that lacks the project's seed. */
static struct warm_pool *
pool_for(struct rt_cli *rt, size_t svc, const char *project, bool seeded)
{
	struct warm_pool *p;

	for (p = rt->warm.pool + rt->cfg->nservices;
	    p < rt->warm.pool + WARM_POOLS; p++)
		if (p->project[0] != '\0' && p->svc == svc &&
		    strcmp(p->project, project) == 0)
			return p;
	if (seeded && rt->cfg->services[svc].probe == PROBE_POSTGRES)
		return NULL;
	return &rt->warm.pool[svc];
}

void
warm_demand(struct rt_cli *rt, const char *service, const char *project,
    bool seeded, bool claimed)
{
	ssize_t svc = config_index(rt, service);
	struct warm_pool *p;

	if (svc >= 0 && (p = pool_for(rt, (size_t)svc, project, seeded)) != NULL)
		demand_note(&p->demand, now_ms(), p->bounds.idle_s, claimed);
}

/* Claimed: the sandbox holds its slot and pidfd now. */
void
warm_taken(struct rt_cli *rt, struct warm_member *m)
{
	struct warm_pool *p = NULL;

	if (member_of(rt, m->slot, &p) != m)
		return;
	if (rt->warm.nunrecords < WARM_RENAMES) {
		struct warm_unrecord *u =
		    &rt->warm.unrecords[rt->warm.nunrecords++];

		strlcpy(u->service, m->svc.conn.name, sizeof(u->service));
		u->slot = m->slot;
	} else
		record_remove_pool(m->svc.conn.name, m->slot);
	p->nready--;
	explicit_bzero(m, sizeof(*m));
}

void
warm_unrecord(struct rt_cli *rt)
{
	size_t i;

	for (i = 0; i < rt->warm.nunrecords; i++)
		record_remove_pool(rt->warm.unrecords[i].service,
		    rt->warm.unrecords[i].slot);
	rt->warm.nunrecords = 0;
}

void
warm_rename_later(struct rt_cli *rt, const char *from, const char *to,
    unsigned slot)
{
	struct warm_rename *r;

	if (rt->warm.nrenames == WARM_RENAMES)
		return;		/* its name stays the pool's: sbx-monitor(8) */
	r = &rt->warm.renames[rt->warm.nrenames++];
	strlcpy(r->from, from, sizeof(r->from));
	strlcpy(r->to, to, sizeof(r->to));
	r->slot = slot;
}

static bool
names_slot(const struct warm_rename *v, size_t n, unsigned slot)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (v[i].slot == slot)
			return true;
	return false;
}

void
warm_rename_cancel(struct rt_cli *rt, unsigned slot)
{
	struct warm *w = &rt->warm;
	size_t i;

	for (i = 0; i < w->nrenames; )
		if (w->renames[i].slot == slot)
			w->renames[i] = w->renames[--w->nrenames];
		else
			i++;
}

void
warm_slot_free(struct rt_cli *rt, unsigned slot)
{
	struct warm *w = &rt->warm;

	warm_rename_cancel(rt, slot);
	if (w->renaming != NULL && names_slot(w->renaming->v,
	    w->renaming->n, slot) && w->nheld < WARM_RENAMES)
		w->held[w->nheld++] = slot;
	else
		idmap_put(&rt->idmap, slot);
}

static void
renamed(void *arg, const void *result, size_t len)
{
	struct warm_job *j = arg;
	struct warm *w = &j->rt->warm;
	const uint32_t *code = result;

	/* run_logged said which, in the runtime's words. */
	if (result == NULL || len != sizeof(*code) || *code != SBX_OK)
		log_warnx("warm: of %zu claimed containers, some keep their "
		    "pool name (see above)", (size_t)j->renames.n);
	while (w->nheld > 0)
		idmap_put(&j->rt->idmap, w->held[--w->nheld]);
	w->renaming = NULL;
	free(j);
}

/* A worker for background work, beyond what tenants may need. */
static bool
spare(const struct rt_cli *rt, size_t provisions)
{
	return workers_spare(rt->pool, rt->cfg->max_provisions, provisions);
}

/* A ready member whose process died while idle (OOM, a crash, an
 * admin's kill): replaced now, not when a claim trips on it and its
 * agent waits for a cold provision instead. One pidfd poll each. */
static void
sweep_dead(struct rt_cli *rt, size_t provisions)
{
	struct warm_pool *p;
	struct warm_member *m;
	unsigned k;

	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		for (k = 0; k < p->cap; k++) {
			m = &p->m[k];
			if (m->slot == 0 || !m->ready ||
			    rt_pid_alive(m->svc.pidfd) ||
			    !spare(rt, provisions))
				continue;
			log_warnx("warm %s-%u: died while idle: replaced",
			    rt->cfg->services[p->svc].name, m->slot);
			discard(rt, p, m);
		}
}

static void
rename_work(struct rt_cli *rt, size_t provisions)
{
	struct warm_job *j;

	if (rt->warm.nrenames == 0 || rt->warm.renaming != NULL ||
	    !spare(rt, provisions) ||
	    (j = calloc(1, sizeof(*j))) == NULL)
		return;
	j->rt = rt;
	memcpy(j->renames.v, rt->warm.renames, sizeof(j->renames.v));
	j->renames.n = (uint32_t)rt->warm.nrenames;
	if (worker_spawn(rt->pool, JOB_RENAME, 0, &j->renames,
	    sizeof(j->renames), sizeof(uint32_t), now_ms() +
	    (int64_t)rt->cfg->runtime_timeout * 1000 *
	    (int64_t)j->renames.n, renamed, j) == -1)
		free(j);
	else {
		rt->warm.nrenames = 0;
		rt->warm.renaming = &j->renames;
	}
}

/* Each pool's target from its demand, all of them within warm_memory. */
static void
targets_set(struct rt_cli *rt, int64_t now)
{
	struct demand_bounds b[WARM_POOLS];
	unsigned want[WARM_POOLS], target[WARM_POOLS];
	struct warm_pool *p;
	size_t i;

	for (i = 0; i < WARM_POOLS; i++) {
		p = &rt->warm.pool[i];
		b[i] = p->bounds;
		want[i] = pool_used(rt, p) ?
		    demand_target(&p->demand, now, &p->bounds) : 0;
	}
	demand_budget(target, want, b, WARM_POOLS, rt->cfg->warm_memory);
	for (i = 0; i < WARM_POOLS; i++)
		if (pool_used(rt, &rt->warm.pool[i]))
			rt->warm.pool[i].want = target[i];
}

/* What a pool is refilled to now: its floor while a tenant's provision
 * runs, its target once none does. Growing it beside a burst's
 * provisions would start its containers twice on the same cores, and
 * slow the burst that asked for it; its queued requests are served by
 * their own provisions. */
static unsigned
fill_to(const struct warm_pool *p, size_t provisions)
{
	return provisions == 0 || p->want < p->bounds.floor ? p->want :
	    p->bounds.floor;
}

/* A pool above its target: a few ready members go, each with a worker
 * no tenant needs, by a dead one's removal (discard). */
static void
shrink(struct rt_cli *rt, struct warm_pool *p, size_t provisions,
    unsigned *gone)
{
	unsigned i;

	for (i = p->cap; i-- > 0 && *gone < WARM_SHRINK &&
	    p->nready + p->nstarting > p->want; )
		if (p->m[i].slot != 0 && p->m[i].ready && spare(rt, provisions)) {
			discard(rt, p, &p->m[i]);
			(*gone)++;
		}
}

void
warm_work(struct rt_cli *rt, size_t provisions)
{
	unsigned gone = 0;
	const struct sbx_config *cfg = rt->cfg;
	int64_t now = now_ms();
	struct warm_pool *p;

	warm_unrecord(rt);	/* before a refill may reuse a slot */
	if (rt->warm.claiming > 0)
		return;
	rename_work(rt, provisions);
	sweep_dead(rt, provisions);
	if (!cfg->enabled)
		return;
	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		pool_drop(rt, p);
	targets_set(rt, now);
	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		if (pool_used(rt, p))
			shrink(rt, p, provisions, &gone);
	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		while (pool_used(rt, p) &&
		    p->nready + p->nstarting < fill_to(p, provisions) &&
		    now >= p->retry_at && rt->warm.starting < WARM_STARTS &&
		    provisions + rt->warm.starting < cfg->max_provisions &&
		    spare(rt, provisions) && start_one(rt, p) == 0)
			;
}

/* Adoption: a service's own pool's member (a project's pool starts anew). */
int
warm_adopt(struct rt_cli *rt, const char *service, unsigned slot,
    const struct sbx_conn *c, uint32_t host_uid, int pid, int pidfd)
{
	ssize_t svc = config_index(rt, service);
	struct warm_pool *p;
	unsigned i;

	if (svc < 0)
		return -1;
	p = &rt->warm.pool[svc];
	for (i = 0; i < p->cap; i++) {	/* above its target: shrunk later */
		if (p->m[i].slot != 0)
			continue;
		p->m[i].slot = slot;
		p->m[i].ready = true;
		p->m[i].svc.conn = *c;
		p->m[i].svc.pid = pid;
		p->m[i].svc.pidfd = pidfd;
		p->m[i].svc.host_uid = host_uid;
		p->nready++;
		return 0;
	}
	return -1;	/* warm_max was lowered: this one goes */
}

bool
warm_owns_dir(const struct rt_cli *rt, const char *path)
{
	const struct warm_pool *p;
	char dir[SBX_SOCKET_MAX];
	unsigned i;

	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++)
		for (i = 0; i < p->cap; i++)
			if (p->m[i].slot != 0 &&
			    sockdir_pool_path(rt->cfg, rt->cfg->services[p->svc].name,
			    p->m[i].slot, dir, sizeof(dir)) == 0 &&
			    strcmp(dir, path) == 0)
				return true;
	return false;
}

/* A service's own pool's ready members (status, metrics). */
unsigned
warm_ready(const struct rt_cli *rt, size_t svc)
{
	return rt->warm.pool[svc].nready;
}

/* Service svc's own pool, and its projects' pools summed (no label may
 * name a project: metrics_snap.h). */
void
warm_metrics(const struct rt_cli *rt, size_t svc, struct metrics_svc *m)
{
	const struct warm_pool *p;
	struct metrics_pool *mp;

	m->warm = rt->warm.pool[svc].nready;
	for (p = rt->warm.pool; p < rt->warm.pool + WARM_POOLS; p++) {
		if (p->svc != svc || !pool_used(rt, p))
			continue;
		mp = &m->pool[p >= rt->warm.pool + rt->cfg->nservices];
		mp->ready += p->nready;
		mp->target += p->want;
		mp->claims += p->demand.claims;
		mp->misses += p->demand.misses;
	}
}
