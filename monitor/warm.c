/*
 * warm.c - warm containers: started ahead, confined as a sandbox's, each
 * with a password of its own that nobody has seen, so that a miss is a
 * claim (runtime_cli.c, rt_claim) with no runtime call before the reply.
 * Its jobs run in sbx-worker (worker/provision.c).
 *
 * A warm container is named sbx-pool-<service>-<slot> and labelled
 * sbx.pool=<service>; its slot is a uid range of its own (idmap.c); its
 * socket directory is run_dir/.pool/<service>-<slot> (root only) and its
 * record state_dir/sandboxes/pool-<service>-<slot> (record.c), so that a
 * restart adopts it. A claimed one is renamed sbx-<uid>-<agent>-<service>-
 * w<slot> after the reply and is torn down like any sandbox's; it never
 * comes back. The pool is refilled from the loop within what tenants'
 * provisions leave: it never takes the workers a tenant's provision or
 * teardown may need.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "record.h"
#include "runtime.h"
#include "rtname.h"
#include "secret.h"
#include "sockdir.h"

#define WARM_STARTS	2		/* at once, all services */
#define RETRY_MIN_MS	2000		/* after a failed start */
#define RETRY_MAX_MS	300000

int
warm_init(struct rt_cli *rt)
{
	const struct sbx_config *cfg = rt->cfg;
	size_t i;

	for (i = 0; i < cfg->nservices; i++) {
		if (cfg->services[i].warm == 0)
			continue;
		if (!rt_is_podman(cfg)) {
			log_warnx("warm = %u for %s: warm containers need "
			    "podman (rm --ignore, uid ranges per container); "
			    "none is started", cfg->services[i].warm,
			    cfg->services[i].name);
			continue;
		}
		if ((rt->warm.svc[i].m = calloc(cfg->services[i].warm,
		    sizeof(struct warm_member))) == NULL)
			return -1;
	}
	return 0;
}

static ssize_t
config_index(const struct rt_cli *rt, const char *service)
{
	const struct service_cfg *s = config_service(rt->cfg, service);

	return s == NULL ? -1 : s - rt->cfg->services;
}

static struct warm_member *
member_of(struct rt_cli *rt, size_t svc, unsigned slot)
{
	const struct warm_svc *w = &rt->warm.svc[svc];
	unsigned i;

	for (i = 0; w->m != NULL && i < rt->cfg->services[svc].warm; i++)
		if (w->m[i].slot == slot)
			return &w->m[i];
	return NULL;
}

static struct warm_job *
job_new(struct rt_cli *rt, size_t svc, unsigned slot)
{
	struct warm_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return NULL;
	j->rt = rt;
	j->svc = svc;
	j->w.slot = slot;
	strlcpy(j->w.conn.name, rt->cfg->services[svc].name,
	    sizeof(j->w.conn.name));
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
discard(struct rt_cli *rt, size_t svc, struct warm_member *m)
{
	struct warm_job *j;

	if (m->ready)
		rt->warm.svc[svc].nready--;
	else
		rt->warm.svc[svc].nstarting--;
	record_remove_pool(rt->cfg->services[svc].name, m->slot);
	if (m->svc.pidfd >= 0)
		close(m->svc.pidfd);
	if ((j = job_new(rt, svc, m->slot)) != NULL)
		j->w.host_uid = m->svc.host_uid;
	if (j == NULL ||
	    worker_spawn(rt->pool, JOB_WARM_REMOVE, 0, &j->w, sizeof(j->w),
	    sizeof(uint32_t), now_ms() + (int64_t)rt->cfg->runtime_timeout *
	    1000, removed, j) == -1) {
		log_warnx("warm %s-%u: cannot start its removal; its uid range "
		    "stays taken", rt->cfg->services[svc].name, m->slot);
		free(j);
	}
	explicit_bzero(m, sizeof(*m));
}

static void
backoff(struct warm_svc *w, bool failed)
{
	if (!failed) {
		w->retry_ms = 0;
		return;
	}
	w->retry_ms = w->retry_ms == 0 ? RETRY_MIN_MS :
	    w->retry_ms * 2 > RETRY_MAX_MS ? RETRY_MAX_MS : w->retry_ms * 2;
	w->retry_at = now_ms() + w->retry_ms;
}

static void
started(void *arg, const void *result, size_t len)
{
	struct warm_job *j = arg;
	const struct warm_started *r = result;
	struct rt_cli *rt = j->rt;
	const struct service_cfg *s = &rt->cfg->services[j->svc];
	struct warm_member *m = member_of(rt, j->svc, j->w.slot);
	bool sound = r != NULL && len == sizeof(*r) &&
	    warm_started_sound(r, s), ok = sound && r->code == SBX_OK;
	char dir[SBX_SOCKET_MAX];

	rt->warm.starting--;
	if (m == NULL) {	/* cannot be: the entry waits for us */
		free(j);
		return;
	}
	if (ok) {
		m->svc.pid = r->pid;
		m->svc.conn.port = (s->transport & TRANSPORT_TCP) ? r->port : 0;
		/* config.c bounds run_dir: the socket path fits. */
		if ((s->transport & TRANSPORT_UNIX) &&
		    (sockdir_pool_path(rt->cfg, s->name, m->slot, dir,
		    sizeof(dir)) == -1 || strlcpy(m->svc.conn.socket, dir,
		    sizeof(m->svc.conn.socket)) >= sizeof(m->svc.conn.socket) ||
		    strlcat(m->svc.conn.socket, "/", sizeof(m->svc.conn.socket)) >=
		    sizeof(m->svc.conn.socket) || strlcat(m->svc.conn.socket,
		    s->socket_name, sizeof(m->svc.conn.socket)) >=
		    sizeof(m->svc.conn.socket)))
			ok = false;
		m->svc.pidfd = ok ? (int)syscall(SYS_pidfd_open, r->pid, 0) : -1;
		ok = m->svc.pidfd >= 0 &&
		    record_write_pool(rt->cfg, &m->svc, m->slot) == 0;
	}
	backoff(&rt->warm.svc[j->svc], !ok);
	if (!ok) {
		log_warnx("warm %s-%u: not started: %s", s->name, m->slot,
		    sound ? r->message : "the worker failed");
		discard(rt, j->svc, m);
	} else {
		m->ready = true;
		rt->warm.svc[j->svc].nstarting--;
		rt->warm.svc[j->svc].nready++;
		log_info("warm %s-%u: ready", s->name, m->slot);
	}
	free(j);
}

static int
start_one(struct rt_cli *rt, size_t svc)
{
	struct warm_svc *w = &rt->warm.svc[svc];
	struct warm_member *m = NULL;
	struct warm_job *j;
	unsigned i, slot;

	for (i = 0; i < rt->cfg->services[svc].warm; i++)
		if (w->m[i].slot == 0) {
			m = &w->m[i];
			break;
		}
	if (m == NULL || (slot = idmap_take(&rt->idmap)) == 0)
		return -1;
	if ((j = job_new(rt, svc, slot)) == NULL) {
		idmap_put(&rt->idmap, slot);
		return -1;
	}
	memset(m, 0, sizeof(*m));
	m->slot = slot;
	m->svc.pidfd = -1;
	strlcpy(m->svc.conn.name, j->w.conn.name, sizeof(m->svc.conn.name));
	secret_fill(m->svc.conn.password, sizeof(m->svc.conn.password));
	memcpy(j->w.conn.password, m->svc.conn.password,
	    sizeof(j->w.conn.password));
	j->w.host_uid = m->svc.host_uid = rt_host_uid(rt, slot,
	    &rt->cfg->services[svc]);
	if (worker_spawn(rt->pool, JOB_WARM_START, 1U << svc, &j->w,
	    sizeof(j->w),
	    sizeof(struct warm_started), now_ms() +
	    ((int64_t)rt->cfg->runtime_timeout * 2 +
	    rt->cfg->services[svc].ready_timeout + 10) * 1000,
	    started, j) == -1) {
		explicit_bzero(j, sizeof(*j));
		free(j);
		explicit_bzero(m, sizeof(*m));
		idmap_put(&rt->idmap, slot);
		return -1;
	}
	explicit_bzero(j->w.conn.password, sizeof(j->w.conn.password));
	w->nstarting++;
	rt->warm.starting++;
	return 0;
}

struct warm_member *
warm_take(struct rt_cli *rt, const char *service)
{
	ssize_t svc = config_index(rt, service);
	struct warm_svc *w;
	unsigned i;

	if (svc < 0 || (w = &rt->warm.svc[svc])->m == NULL)
		return NULL;
	for (i = 0; i < rt->cfg->services[svc].warm; i++) {
		struct warm_member *m = &w->m[i];

		if (m->slot == 0 || !m->ready)
			continue;
		if (rt_warm_alive(&m->svc))
			return m;
		log_warnx("warm %s-%u: found dead at a claim: replaced",
		    service, m->slot);
		discard(rt, (size_t)svc, m);
	}
	return NULL;
}

/* Claimed: the sandbox holds its slot and pidfd now. */
void
warm_taken(struct rt_cli *rt, struct warm_member *m)
{
	ssize_t svc = config_index(rt, m->svc.conn.name);

	if (svc < 0)
		return;
	if (rt->warm.nunrecords < WARM_RENAMES) {
		struct warm_unrecord *u =
		    &rt->warm.unrecords[rt->warm.nunrecords++];

		strlcpy(u->service, m->svc.conn.name, sizeof(u->service));
		u->slot = m->slot;
	} else
		record_remove_pool(m->svc.conn.name, m->slot);
	rt->warm.svc[svc].nready--;
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
warm_slot_free(struct rt_cli *rt, unsigned slot)
{
	struct warm *w = &rt->warm;
	size_t i;

	for (i = 0; i < w->nrenames; )
		if (w->renames[i].slot == slot)
			w->renames[i] = w->renames[--w->nrenames];
		else
			i++;
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

/* Workers a tenant may still need: every provision max_provisions lets
 * start, and one for a teardown. The pool takes only what is beyond. */
static bool
worker_spare(const struct rt_cli *rt, size_t provisions)
{
	unsigned need = rt->cfg->max_provisions > provisions ?
	    rt->cfg->max_provisions - (unsigned)provisions : 0;

	return rt->pool->n + need + 2 <= rt->pool->max;
}

/* A ready member whose process died while idle (OOM, a crash, an
 * admin's kill): replaced now, not when a claim trips on it and its
 * agent waits for a cold provision instead. One pidfd poll each. */
static void
sweep_dead(struct rt_cli *rt, size_t provisions)
{
	struct warm_member *m;
	size_t i;
	unsigned k;

	for (i = 0; i < rt->cfg->nservices; i++)
		for (k = 0; rt->warm.svc[i].m != NULL &&
		    k < rt->cfg->services[i].warm; k++) {
			m = &rt->warm.svc[i].m[k];
			if (m->slot == 0 || !m->ready ||
			    rt_pid_alive(m->svc.pidfd) ||
			    !worker_spare(rt, provisions))
				continue;
			log_warnx("warm %s-%u: died while idle: replaced",
			    rt->cfg->services[i].name, m->slot);
			discard(rt, i, m);
		}
}

void
warm_work(struct rt_cli *rt, size_t provisions)
{
	const struct sbx_config *cfg = rt->cfg;
	struct warm_job *j;
	int64_t now = now_ms();
	size_t i;

	warm_unrecord(rt);	/* before a refill may reuse a slot */
	if (rt->warm.nrenames > 0 && rt->warm.renaming == NULL &&
	    worker_spare(rt, provisions) &&
	    (j = calloc(1, sizeof(*j))) != NULL) {
		j->rt = rt;
		memcpy(j->renames.v, rt->warm.renames, sizeof(j->renames.v));
		j->renames.n = (uint32_t)rt->warm.nrenames;
		if (worker_spawn(rt->pool, JOB_RENAME, 0, &j->renames,
		    sizeof(j->renames), sizeof(uint32_t), now +
		    (int64_t)cfg->runtime_timeout * 1000 *
		    (int64_t)j->renames.n, renamed, j) == -1)
			free(j);
		else {
			rt->warm.nrenames = 0;
			rt->warm.renaming = &j->renames;
		}
	}
	sweep_dead(rt, provisions);
	if (!cfg->enabled)
		return;
	for (i = 0; i < cfg->nservices; i++) {
		const struct warm_svc *w = &rt->warm.svc[i];

		while (w->m != NULL && w->nready + w->nstarting <
		    cfg->services[i].warm && now >= w->retry_at &&
		    rt->warm.starting < WARM_STARTS &&
		    provisions + rt->warm.starting < cfg->max_provisions &&
		    worker_spare(rt, provisions) && start_one(rt, i) == 0)
			;
	}
}

int
warm_adopt(struct rt_cli *rt, const char *service, unsigned slot,
    const struct sbx_conn *c, uint32_t host_uid, int pid, int pidfd)
{
	ssize_t svc = config_index(rt, service);
	struct warm_svc *w;
	unsigned i;

	if (svc < 0 || (w = &rt->warm.svc[svc])->m == NULL)
		return -1;
	for (i = 0; i < rt->cfg->services[svc].warm; i++) {
		if (w->m[i].slot != 0)
			continue;
		w->m[i].slot = slot;
		w->m[i].ready = true;
		w->m[i].svc.conn = *c;
		w->m[i].svc.pid = pid;
		w->m[i].svc.pidfd = pidfd;
		w->m[i].svc.host_uid = host_uid;
		w->nready++;
		return 0;
	}
	return -1;	/* warm was lowered: this one goes */
}

bool
warm_owns_dir(const struct rt_cli *rt, const char *path)
{
	char dir[SBX_SOCKET_MAX];
	size_t s;
	unsigned i;

	for (s = 0; s < rt->cfg->nservices; s++)
		for (i = 0; rt->warm.svc[s].m != NULL &&
		    i < rt->cfg->services[s].warm; i++)
			if (rt->warm.svc[s].m[i].slot != 0 &&
			    sockdir_pool_path(rt->cfg, rt->cfg->services[s].name,
			    rt->warm.svc[s].m[i].slot, dir, sizeof(dir)) == 0 &&
			    strcmp(dir, path) == 0)
				return true;
	return false;
}

unsigned
warm_ready(const struct rt_cli *rt, size_t svc)
{
	return rt->warm.svc[svc].nready;
}
