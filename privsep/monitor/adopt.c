/*
 * adopt.c - at start, the sandboxes that outlived the previous monitor
 * (docs/contract.md, "Restarts and upgrades": a restart adopts every
 * sandbox that is still whole and alive).
 * runs in: the monitor at its start (root, unfiltered)
 *
 * A worker reads the records and the runtime's listing (JOB_ADOPT,
 * privsep/worker/adopt.c) and says of each record whether all it names runs; its
 * answer is checked here as hostile. The decisions are the monitor's: a
 * sandbox is adopted when it is whole, its project still opts in to
 * exactly its services for its uid, its uid ranges are its own and its
 * key is not taken. Everything else is torn down, each with one audit
 * line saying why: records without containers, containers without a
 * record, and directories under run_dir that no sandbox owns.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <bitstring.h>	/* libbsd */

#include "adopt.h"
#include "adopt_check.h"
#include "audit.h"
#include "cache_status.h"
#include "iox.h"
#include "lease.h"
#include "log.h"
#include "proc.h"
#include "record.h"
#include "rt_start.h"
#include "rtname.h"
#include "service.h"
#include "slug.h"
#include "sockdir.h"

#define ADOPT_DEADLINE_MS(cfg)	((int64_t)(cfg)->runtime_timeout * 1000 * \
	(JOB_LIST_CALLS + 2))

struct adoption {
	const struct sbx_config		*cfg;
	const struct project_table	*projects;
	struct cache			*cache;
	struct rt_cli			*rt;
	const struct adopt_found	*found;
	size_t				 nfound;
	struct rt_gone			*gone;		/* to tear down */
	size_t				 ngone;
	size_t				 adopted, warm;
	uint32_t			*held;		/* discarded ranges */
	size_t				 nheld;
	bitstr_t			*claimed;	/* slots sandbox
							 * records name */
};

static void
gone_add(struct adoption *ad, const struct rt_gone *g)
{
	struct rt_gone *v;

	if ((v = reallocarray(ad->gone, ad->ngone + 1, sizeof(*v))) == NULL)
		fatal("adoption");
	ad->gone = v;
	ad->gone[ad->ngone++] = *g;
}

static void
gone_key(struct adoption *ad, uid_t uid, const char *agent)
{
	struct rt_gone g = { .key.uid = uid };

	strlcpy(g.key.agent, agent, sizeof(g.key.agent));
	gone_add(ad, &g);
}

static void
gone_name(struct adoption *ad, const char *name)
{
	struct rt_gone g = { .key.uid = (uid_t)-1 };

	strlcpy(g.name, name, sizeof(g.name));
	gone_add(ad, &g);
}

/*
 * The project still opts in to each of these services, for this uid. A
 * set that grew is adopted as it is: the agent's next request provisions
 * only what is missing (a reshape), as it would have without the restart.
 */
static const char *
policy_refuses(const struct adoption *ad, const struct record *r)
{
	const struct project *p = project_find(ad->projects, r->project);
	uint32_t i;

	if (p == NULL || !p->valid)
		return "project_gone";
	if (!project_allows(p, r->uid))
		return "uid_not_allowed";
	for (i = 0; i < r->nservices; i++)
		if (!project_offers(p, r->svc[i].conn.name))
			return "set_changed";
	return NULL;
}

/* Where the layout puts service s's range in slot, or 0. */
static uint32_t
layout_uid(const struct adoption *ad, unsigned slot, const char *service)
{
	const struct service_cfg *s = config_service(ad->cfg, service);

	return s == NULL ? 0 : rt_host_uid(ad->rt, slot, s);
}

/* Are the sandbox's own containers where the layout puts its slot's
 * ranges (sbx.conf's services and userns_base as they were)? */
static bool
in_layout(const struct adoption *ad, const struct record *r)
{
	uint32_t i;

	for (i = 0; r->idmap != 0 && i < r->nservices; i++)
		if (r->svc[i].warm == 0 && r->svc[i].host_uid != 0 &&
		    r->svc[i].host_uid != layout_uid(ad, r->idmap,
		    r->svc[i].conn.name))
			return false;
	return r->idmap != 0;
}

/* The ranges of services 0..n-1 and the slot, given back. */
static void
unclaim(struct adoption *ad, const struct record *r, uint32_t n,
    unsigned slot)
{
	uint32_t i;

	idmap_put(&ad->rt->idmap, slot);
	for (i = 0; i < n; i++) {
		idmap_put(&ad->rt->idmap, r->svc[i].warm);
		idmap_put_range(&ad->rt->idmap, r->svc[i].host_uid);
	}
}

/*
 * The uid ranges a record's containers run in: its slot where the layout
 * still puts them there, else each container's own range; a claimed warm
 * container's slot (its name) and, where the layout no longer puts it
 * there, its range. All, or none and -1. *slot: the sandbox's slot.
 */
static int
claim_ranges(struct adoption *ad, const struct record *r, unsigned *slot)
{
	struct idmap *m = &ad->rt->idmap;
	bool layout = in_layout(ad, r);
	uint32_t i, h;

	*slot = layout ? r->idmap : 0;
	if (layout && idmap_claim(m, r->idmap) == -1)
		return -1;
	for (i = 0; i < r->nservices; i++) {
		h = r->svc[i].host_uid;
		if (r->svc[i].warm != 0 && idmap_claim(m, r->svc[i].warm) == -1)
			break;
		if (h != 0 && (r->svc[i].warm != 0 ? h != layout_uid(ad,
		    r->svc[i].warm, r->svc[i].conn.name) : !layout) &&
		    idmap_claim_range(m, h) == -1) {
			idmap_put(m, r->svc[i].warm);
			break;
		}
	}
	if (i == r->nservices)
		return 0;
	unclaim(ad, r, i, *slot);
	return -1;
}

/* A warm container's slot (its name) and, where the layout no longer
 * puts it there, its range. */
static int
claim_warm(struct adoption *ad, const struct record *r)
{
	uint32_t h = r->svc[0].host_uid;

	if (idmap_claim(&ad->rt->idmap, r->idmap) == -1)
		return -1;
	if (h == 0 || h == layout_uid(ad, r->idmap, r->svc[0].conn.name) ||
	    idmap_claim_range(&ad->rt->idmap, h) == 0)
		return 0;
	idmap_put(&ad->rt->idmap, r->idmap);
	return -1;
}

/* A discarded record's running containers keep their ranges until the
 * runtime says they are gone (adopt_sandboxes). */
static void
hold_ranges(struct adoption *ad, const uint32_t *h, size_t n)
{
	uint32_t *v;
	size_t i;

	for (i = 0; i < n; i++) {
		if (h[i] == 0 || idmap_claim_range(&ad->rt->idmap, h[i]) == -1)
			continue;	/* none, or held already */
		if ((v = reallocarray(ad->held, ad->nheld + 1,
		    sizeof(*v))) == NULL)
			fatal("adoption");
		ad->held = v;
		ad->held[ad->nheld++] = h[i];
	}
}

/* Each service as recorded, with a pidfd of its container; NULL, or
 * why not (those opened are closed). */
static const char *
open_services(const struct adopt_found *a, struct sbx_svc *svc)
{
	uint32_t i, j;

	for (i = 0; i < a->r.nservices; i++) {
		svc[i].conn = a->r.svc[i].conn;
		svc[i].pid = a->pid[i];
		svc[i].warm = a->r.svc[i].warm;
		svc[i].host_uid = a->r.svc[i].host_uid;
		if ((svc[i].pidfd = proc_pidfd(a->pid[i])) == -1) {
			for (j = 0; j < i; j++)
				close(svc[j].pidfd);
			return "container_stopped";
		}
	}
	return NULL;
}

/* The names of a record's claimed warm containers: removed by name with
 * a sandbox that is not adopted; renamed for the admin's ps, after the
 * start, where one still has its pool name (warm.c). */
static void
claimed_names(struct adoption *ad, const struct adopt_found *a, bool kept)
{
	char names[2][RT_NAME_MAX];
	uint32_t i;

	for (i = 0; i < a->r.nservices; i++) {
		if (a->r.svc[i].warm == 0 || rt_svc_names(a->r.uid, a->r.agent,
		    a->r.svc[i].conn.name, a->r.svc[i].warm, names) != 2)
			continue;
		if (!kept) {
			gone_name(ad, names[0]);
			gone_name(ad, names[1]);
		} else if ((a->pool_named >> i) & 1)
			warm_rename_later(ad->rt, names[0], names[1],
			    a->r.svc[i].warm);
	}
}

static void
adopt_one(struct adoption *ad, const struct adopt_found *a)
{
	struct sbx_svc svc[SBX_MAX_SERVICES];
	const struct record *r = &a->r;
	struct sbx_sandbox *sb = NULL;
	const char *why = adopt_why_name(a->why);
	int64_t now = now_ms(), wall = wall_ms();
	struct sbx_lease lease = { .pidfd = -1 };
	unsigned slot = 0;
	uint32_t i, h[SBX_MAX_SERVICES];

	for (i = 0; i < r->nservices; i++)
		if (r->svc[i].warm != 0 && r->svc[i].warm <= ad->rt->idmap.nslots)
			bit_set(ad->claimed, (int)r->svc[i].warm - 1);
	memset(svc, 0, sizeof(svc));
	if (a->why == ADOPT_WHOLE && (why = policy_refuses(ad, r)) == NULL &&
	    claim_ranges(ad, r, &slot) == -1)
		why = "uid_range_taken";
	if (why == NULL && r->bind_pid != 0 && lease_open(r->bind_pid, r->uid,
	    r->bind_start, &lease) == -1) {
		why = "bind_pid_exited";
		unclaim(ad, r, r->nservices, slot);
	}
	if (why == NULL && (why = open_services(a, svc)) != NULL) {
		unclaim(ad, r, r->nservices, slot);
		close(lease.pidfd);
	}
	if (why == NULL && (sb = cache_adopt(ad->cache, r->uid, r->agent,
	    r->project, svc, r->nservices, now - (wall - r->created_wall_ms),
	    now - (wall - a->used_wall_ms))) == NULL) {
		why = "duplicate";
		unclaim(ad, r, r->nservices, slot);
		for (i = 0; i < r->nservices; i++)
			close(svc[i].pidfd);
		close(lease.pidfd);
	}
	claimed_names(ad, a, why == NULL);
	if (why == NULL) {
		sb->idmap = slot;
		if (lease.pidfd >= 0) {
			sb->lease = lease;
			if (ad->cache->leased != NULL)
				ad->cache->leased(ad->cache->owner_arg, sb);
		}
		audit_sandbox(AUDIT_ADOPT, sb, SBX_OK, "idle_s=%lld",
		    (long long)(wall - a->used_wall_ms) / 1000);
		ad->adopted++;
	} else {
		audit(AUDIT_DISCARD, r->uid, r->agent, r->project, NULL, 0,
		    SBX_OK, "reason=%s", why);
		gone_key(ad, r->uid, r->agent);
		unlinkat(record_dirfd(), a->file, 0);
		for (i = 0; i < r->nservices; i++)
			h[i] = r->svc[i].host_uid;
		hold_ranges(ad, h, r->nservices);
	}
	explicit_bzero(svc, sizeof(svc));
}

/*
 * A warm container's record: adopted into the pool when it is whole and
 * its service still warm. One whose slot a sandbox's record names was
 * claimed (the last monitor stopped before the pool record's removal,
 * warm.h), whether or not that sandbox was adopted: only the record goes.
 */
static void
adopt_warm(struct adoption *ad, const struct adopt_found *a)
{
	const struct record *r = &a->r;
	char name[RT_NAME_MAX];
	const char *why = adopt_why_name(a->why);
	int pidfd = -1;

	if ((r->idmap <= ad->rt->idmap.nslots &&
	    bit_test(ad->claimed, (int)r->idmap - 1)) ||
	    rt_pool_name(name, sizeof(name), r->svc[0].conn.name,
	    r->idmap) == -1) {
		unlinkat(record_dirfd(), a->file, 0);	/* claimed */
		return;
	}
	if (a->why == ADOPT_WHOLE && claim_warm(ad, r) == -1)
		why = "uid_range_taken";
	else if (a->why == ADOPT_WHOLE &&
	    (pidfd = proc_pidfd(a->pid[0])) == -1)
		why = "container_stopped";
	else if (a->why == ADOPT_WHOLE && warm_adopt(ad->rt,
	    r->svc[0].conn.name, r->idmap, &r->svc[0].conn,
	    r->svc[0].host_uid, a->pid[0], pidfd) == -1)
		why = "warm_lowered";
	else if (a->why == ADOPT_WHOLE) {
		ad->warm++;
		return;
	}
	log_info("adoption: warm container %s discarded: %s", name, why);
	if (pidfd != -1)
		close(pidfd);
	if (a->why == ADOPT_WHOLE && strcmp(why, "uid_range_taken") != 0)
		unclaim(ad, r, 1, 0);
	hold_ranges(ad, &r->svc[0].host_uid, 1);
	gone_name(ad, name);
	unlinkat(record_dirfd(), a->file, 0);
}

/* Containers no record accounts for, as the worker found them: a key
 * whose record was discarded goes whole already. */
static void
orphans(struct adoption *ad, const struct adopt_gone *g, size_t n)
{
	const struct sbx_sandbox *sb;
	size_t i;

	for (i = 0; i < n; i++) {
		hold_ranges(ad, &g[i].host_uid, 1);
		if (g[i].why == ADOPT_POOL_NO_RECORD) {
			log_info("adoption: warm container %s has no record: "
			    "removed", g[i].container);
			gone_add(ad, &g[i].g);
			continue;
		}
		sb = cache_find(ad->cache, g[i].g.key.uid, g[i].g.key.agent);
		if (g[i].why == ADOPT_NOT_IN_SANDBOX && sb == NULL)
			continue;
		audit(AUDIT_DISCARD, g[i].g.key.uid, g[i].g.key.agent,
		    sb != NULL ? sb->project : NULL, NULL, 0, SBX_OK,
		    "reason=%s container=%s", adopt_why_name(g[i].why),
		    g[i].container);
		gone_add(ad, &g[i].g);
	}
}

/* sockdir_prune's keep(): the directory of an adopted sandbox. */
struct kept {
	char	(*path)[SBX_SOCKET_MAX];
	size_t	  n;
	const struct rt_cli *rt;
};

static bool
keep_dir(void *arg, const char *path)
{
	const struct kept *k = arg;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->path[i], path) == 0)
			return true;
	return warm_owns_dir(k->rt, path);
}

static void
prune_dirs(struct adoption *ad)
{
	struct sbx_status_rec *v;
	struct kept k = { NULL, 0, ad->rt };
	size_t n, i;

	if ((v = calloc(ad->adopted + 1, sizeof(*v))) == NULL ||
	    (k.path = calloc(ad->adopted + 1, sizeof(*k.path))) == NULL)
		fatal("adoption");
	n = cache_status(ad->cache, v, ad->adopted + 1);
	for (i = 0; i < n; i++)
		if (sockdir_key_path(ad->cfg, v[i].uid, v[i].agent,
		    k.path[k.n], sizeof(k.path[0])) == 0)
			k.n++;
	sockdir_prune(ad->cfg, keep_dir, &k);
	free(v);
	free(k.path);
}

int
adopt_sandboxes(const struct sbx_config *cfg,
    const struct project_table *projects, struct cache *cache,
    struct rt_cli *rt)
{
	struct adoption ad = { .cfg = cfg, .projects = projects,
	    .cache = cache, .rt = rt };
	const struct adopt_head *h = NULL;
	const struct adopt_found *f;
	size_t len = 0, i;
	int fd;

	if ((ad.claimed = bit_alloc((int)rt->idmap.nslots + 1)) == NULL ||
	    (fd = memfd_create("sbx-adopt", MFD_CLOEXEC)) == -1)
		fatal("adoption");
	if (worker_spawn_wait(JOB_ADOPT, UINT32_MAX, NULL, 0, fd, now_ms() +
	    ADOPT_DEADLINE_MS(cfg)) == -1)
		log_warnx("adoption: its worker failed (see above)");
	else if ((h = adopt_answer_take(fd, &len)) == NULL)
		log_warnx("adoption: its worker answered what no adoption is");
	close(fd);
	if (h == NULL) {
		free(ad.claimed);
		return -1;
	}
	f = (const void *)(h + 1);
	for (i = 0; i < h->nfound; i++)	/* sandboxes first: they claim */
		if (f[i].r.uid != RECORD_POOL_UID)
			adopt_one(&ad, &f[i]);
	for (i = 0; i < h->nfound; i++)
		if (f[i].r.uid == RECORD_POOL_UID)
			adopt_warm(&ad, &f[i]);
	orphans(&ad, (const void *)(f + h->nfound), h->ngone);
	/* The ranges of what was discarded come back once it is gone;
	 * else they stay taken, rather than be shared. */
	if (runtime_remove(cfg, ad.gone, ad.ngone) == -1)
		log_warnx("adoption: some of %zu discarded containers could "
		    "not be removed (see above); their %zu uid ranges stay "
		    "taken", ad.ngone, ad.nheld);
	else
		for (i = 0; i < ad.nheld; i++)
			idmap_put_range(&rt->idmap, ad.held[i]);
	prune_dirs(&ad);
	log_info("adopted %zu sandboxes and %zu warm containers, discarded "
	    "%zu", ad.adopted, ad.warm, ad.ngone);
	if (!h->guarded)
		log_warnx("the packet filter for tcp ports could not be laid "
		    "(see above): a tcp service is guarded by its password "
		    "alone");
	munmap((void *)(uintptr_t)h, len);
	free(ad.gone);
	free(ad.held);
	free(ad.claimed);
	return 0;
}
