/*
 * adopt.c - at start, the sandboxes that outlived the previous monitor
 * (docs/contract.md, "Restarts and upgrades": a restart adopts every sandbox that is still
 * whole and alive).
 * runs in: the monitor at start, before the loop (root, unfiltered)
 *
 * Two records must agree: ours (record.c: key, project, services,
 * passwords, uid range, times) and the runtime's (runtime_list: which
 * containers exist and run). A sandbox is adopted when its project still
 * opts in to exactly its services for its uid, every service's config
 * section is the one it was started with, every container runs and
 * listens, and its uid range is its own. Everything else is torn down,
 * each with one audit line saying why: records without containers,
 * containers without a record (a provision the last monitor did not see
 * through), and directories under run_dir that no sandbox owns.
 */
#include <dirent.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bitstring.h>	/* libbsd */

#include "adopt.h"
#include "audit.h"
#include "iox.h"
#include "log.h"
#include "record.h"
#include "rtname.h"
#include "slug.h"
#include "sockdir.h"

struct adoption {
	const struct sbx_config		*cfg;
	const struct project_table	*projects;
	struct cache			*cache;
	struct rt_cli			*rt;
	struct rt_seen			*seen;
	size_t				 nseen;
	struct rt_gone			*gone;		/* to tear down */
	size_t				 ngone, capgone;
	size_t				 adopted, warm;
	char				(*kept)[SBX_SLUG_MAX * 3];
	size_t				 nkept, capkept;	/* containers */
	bitstr_t			*claimed;	/* slots sandbox
							 * records name */
};

static void
kept_add(struct adoption *ad, const char *name)
{
	char (*v)[SBX_SLUG_MAX * 3];

	if (ad->nkept == ad->capkept) {
		ad->capkept = ad->capkept ? ad->capkept * 2 : 16;
		if ((v = reallocarray(ad->kept, ad->capkept,
		    sizeof(*v))) == NULL)
			fatal("adoption");
		ad->kept = v;
	}
	strlcpy(ad->kept[ad->nkept++], name, sizeof(ad->kept[0]));
}

static bool
kept_has(const struct adoption *ad, const char *name)
{
	size_t i;

	for (i = 0; i < ad->nkept; i++)
		if (strcmp(ad->kept[i], name) == 0)
			return true;
	return false;
}

static const struct rt_seen *
seen_find(const struct adoption *ad, const char *name)
{
	size_t i;

	for (i = 0; i < ad->nseen; i++)
		if (strcmp(ad->seen[i].name, name) == 0)
			return &ad->seen[i];
	return NULL;
}

static bool
gone_has_key(const struct adoption *ad, uid_t uid, const char *agent)
{
	size_t i;

	for (i = 0; i < ad->ngone; i++)
		if (ad->gone[i].key.uid == uid &&
		    strcmp(ad->gone[i].key.agent, agent) == 0 &&
		    ad->gone[i].service[0] == '\0')
			return true;
	return false;
}

static struct rt_gone *
gone_new(struct adoption *ad)
{
	struct rt_gone *v;

	if (ad->ngone == ad->capgone) {
		ad->capgone = ad->capgone ? ad->capgone * 2 : 16;
		if ((v = reallocarray(ad->gone, ad->capgone,
		    sizeof(*v))) == NULL)
			fatal("adoption");
		ad->gone = v;
	}
	memset(&ad->gone[ad->ngone], 0, sizeof(ad->gone[0]));
	return &ad->gone[ad->ngone++];
}

static void
gone_add(struct adoption *ad, uid_t uid, const char *agent,
    const char *service)
{
	struct rt_gone *g;
	size_t i;

	for (i = 0; i < ad->ngone; i++)
		if (ad->gone[i].key.uid == uid &&
		    strcmp(ad->gone[i].key.agent, agent) == 0 &&
		    strcmp(ad->gone[i].service, service) == 0 &&
		    ad->gone[i].name[0] == '\0')
			return;
	g = gone_new(ad);
	g->key.uid = uid;
	strlcpy(g->key.agent, agent, SBX_SLUG_MAX);
	strlcpy(g->service, service, SBX_SLUG_MAX);
}

/* A warm container nobody holds: by its name (it has no key labels). */
static void
gone_add_name(struct adoption *ad, const char *name)
{
	struct rt_gone *g = gone_new(ad);

	g->key.uid = (uid_t)-1;
	strlcpy(g->name, name, sizeof(g->name));
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

static void
close_pidfds(struct sbx_svc *svc, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (svc[i].pidfd >= 0)
			close(svc[i].pidfd);
}

/* A service's container, by any name it may have (rt_svc_names). */
static const struct rt_seen *
svc_seen(const struct adoption *ad, uid_t uid, const char *agent,
    const char *service, unsigned warm)
{
	char names[2][SBX_SLUG_MAX * 3];
	const struct rt_seen *c = NULL;
	size_t n = rt_svc_names(uid, agent, service, warm, names), i;

	for (i = 0; i < n && c == NULL; i++)
		c = seen_find(ad, names[i]);
	return c;
}

/* The uid ranges of a record: the sandbox's and its claimed services'. */
static int
claim_slots(struct adoption *ad, const struct record *r)
{
	struct idmap *m = &ad->rt->idmap;
	uint32_t i, j;

	if (r->idmap != 0 && idmap_claim(m, r->idmap) == -1)
		return -1;
	for (i = 0; i < r->nservices; i++)
		if (r->svc[i].warm != 0 && idmap_claim(m, r->svc[i].warm) == -1)
			break;
	if (i == r->nservices)
		return 0;
	for (j = 0; j < i; j++)
		idmap_put(m, r->svc[j].warm);
	idmap_put(m, r->idmap);
	return -1;
}

static void
put_slots(struct adoption *ad, const struct record *r)
{
	uint32_t i;

	idmap_put(&ad->rt->idmap, r->idmap);
	for (i = 0; i < r->nservices; i++)
		idmap_put(&ad->rt->idmap, r->svc[i].warm);
}

/* Each service: configured as it was, its container running, listening. */
static const char *
services_refuse(const struct adoption *ad, const struct record *r,
    struct sbx_svc *svc)
{
	const struct service_cfg *s;
	const struct rt_seen *c;
	uint32_t i;

	for (i = 0; i < r->nservices; i++) {
		svc[i].conn = r->svc[i].conn;
		if ((s = config_service(ad->cfg, r->svc[i].conn.name)) == NULL)
			return "service_gone";
		if (!record_same_config(r, i, s))
			return "service_changed";
		if ((c = svc_seen(ad, r->uid, r->agent, s->name,
		    r->svc[i].warm)) == NULL)
			return "container_missing";
		if (c->pid <= 0)
			return "container_stopped";
		if ((s->transport & TRANSPORT_TCP) &&
		    (uint32_t)c->port != r->svc[i].conn.port)
			return "port_changed";
		svc[i].pid = c->pid;
		svc[i].warm = r->svc[i].warm;
		if ((svc[i].pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0)) ==
		    -1)
			return "container_stopped";
		if (!rt_listening(&svc[i].conn))
			return "not_listening";
	}
	return NULL;
}

/*
 * The names a record's claimed warm containers may have: kept (not
 * orphans) when the sandbox is adopted, removed by name when it is not.
 */
static void
claimed_names(struct adoption *ad, const struct record *r,
    void (*fn)(struct adoption *, const char *))
{
	char names[2][SBX_SLUG_MAX * 3];
	uint32_t i;

	for (i = 0; i < r->nservices; i++)
		if (r->svc[i].warm != 0 && rt_svc_names(r->uid, r->agent,
		    r->svc[i].conn.name, r->svc[i].warm, names) == 2) {
			fn(ad, names[0]);
			fn(ad, names[1]);
		}
}

/* Whatever becomes of the sandbox, its warm slots are no longer the
 * pool's: their pool records go unread (adopt_warm). */
static void
mark_claimed(struct adoption *ad, const struct record *r)
{
	uint32_t i;

	for (i = 0; i < r->nservices; i++)
		if (r->svc[i].warm != 0 && r->svc[i].warm <= ad->rt->idmap.nslots)
			bit_set(ad->claimed, (int)r->svc[i].warm - 1);
}

/* A claimed container the last monitor stopped before renaming: its
 * owner's name, for the admin's ps, after the start (warm.c). */
static void
rename_pool_named(struct adoption *ad, const struct record *r)
{
	char names[2][SBX_SLUG_MAX * 3];
	uint32_t i;

	for (i = 0; i < r->nservices; i++)
		if (r->svc[i].warm != 0 && rt_svc_names(r->uid, r->agent,
		    r->svc[i].conn.name, r->svc[i].warm, names) == 2 &&
		    seen_find(ad, names[0]) != NULL)
			warm_rename_later(ad->rt, names[0], names[1],
			    r->svc[i].warm);
}

static void
adopt_one(struct adoption *ad, const char *file)
{
	struct sbx_svc svc[SBX_MAX_SERVICES];
	struct sbx_sandbox *sb;
	const char *why = NULL;
	struct record r;
	int64_t used_wall, now = now_ms(), wall = wall_ms();
	size_t i;

	/* No pidfd yet: a record the policy refuses never opens one, and
	 * the discard closes only what was opened (descriptor 0 is not). */
	memset(svc, 0, sizeof(svc));
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		svc[i].pidfd = -1;
	if (record_read(file, &r, &used_wall) == -1) {
		log_warnx("adoption: %s is not a sandbox record: removed", file);
		unlinkat(record_dirfd(), file, 0);
		return;
	}
	mark_claimed(ad, &r);
	if ((why = policy_refuses(ad, &r)) == NULL &&
	    (why = services_refuse(ad, &r, svc)) == NULL &&
	    claim_slots(ad, &r) == -1)
		why = "uid_range_taken";
	if (why == NULL && (sb = cache_adopt(ad->cache, r.uid, r.agent,
	    r.project, svc, r.nservices, now - (wall - r.created_wall_ms),
	    now - (wall - used_wall))) != NULL) {
		sb->idmap = r.idmap;
		claimed_names(ad, &r, kept_add);
		rename_pool_named(ad, &r);
		audit_sandbox(AUDIT_ADOPT, sb, SBX_OK, "idle_s=%lld",
		    (long long)(wall - used_wall) / 1000);
		ad->adopted++;
	} else {
		if (why == NULL) {
			why = "duplicate";
			put_slots(ad, &r);
		}
		claimed_names(ad, &r, gone_add_name);
		close_pidfds(svc, r.nservices);
		audit(AUDIT_DISCARD, r.uid, r.agent, r.project, NULL, 0,
		    SBX_OK, "reason=%s", why);
		gone_add(ad, r.uid, r.agent, "");
		unlinkat(record_dirfd(), file, 0);
	}
	explicit_bzero(&r, sizeof(r));
	explicit_bzero(svc, sizeof(svc));
}

/*
 * A warm container's record: adopted into the pool when its service is
 * configured as it was, still warm, and its container runs and listens.
 * One whose slot a sandbox's record names was claimed (the last monitor
 * stopped before the pool record's removal, warm.h), whether or not that
 * sandbox was adopted: only the record goes.
 */
static void
adopt_warm(struct adoption *ad, const char *file)
{
	const struct service_cfg *s;
	const struct rt_seen *c = NULL;
	char name[SBX_SLUG_MAX * 3];
	const char *why = NULL;
	struct record r;
	int64_t used;
	int pidfd = -1;

	if (record_read(file, &r, &used) == -1 || r.uid != RECORD_POOL_UID ||
	    r.nservices != 1 || r.svc[0].warm != r.idmap || r.idmap == 0) {
		log_warnx("adoption: %s is not a warm container's record: "
		    "removed", file);
		unlinkat(record_dirfd(), file, 0);
		return;
	}
	if (rt_pool_name(name, sizeof(name), r.svc[0].conn.name,
	    r.idmap) == -1)
		why = "bad_name";
	else if ((r.idmap <= ad->rt->idmap.nslots &&
	    bit_test(ad->claimed, (int)r.idmap - 1)) ||
	    idmap_claim(&ad->rt->idmap, r.idmap) == -1) {
		unlinkat(record_dirfd(), file, 0);	/* claimed */
		explicit_bzero(&r, sizeof(r));
		return;
	} else if ((s = config_service(ad->cfg, r.svc[0].conn.name)) == NULL ||
	    !record_same_config(&r, 0, s))
		why = "service_changed";
	else if ((c = seen_find(ad, name)) == NULL || c->pid <= 0 ||
	    (pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0)) == -1)
		why = "container_missing";
	else if (!rt_listening(&r.svc[0].conn))
		why = "not_listening";
	else if (warm_adopt(ad->rt, s->name, r.idmap, &r.svc[0].conn, c->pid,
	    pidfd) == -1)
		why = "warm_lowered";
	if (why == NULL) {
		kept_add(ad, name);
		ad->warm++;
	} else {
		log_info("adoption: warm container %s discarded: %s", name, why);
		if (pidfd != -1)
			close(pidfd);
		if (strcmp(why, "bad_name") != 0) {
			idmap_put(&ad->rt->idmap, r.idmap);
			gone_add_name(ad, name);
		}
		unlinkat(record_dirfd(), file, 0);
	}
	explicit_bzero(&r, sizeof(r));
}

/* Sandboxes first: a warm record whose slot one holds is stale. */
static void
adopt_records(struct adoption *ad, bool warm)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	if ((fd = dup(record_dirfd())) == -1 || (dir = fdopendir(fd)) == NULL)
		fatal("reading the sandbox records");
	rewinddir(dir);	/* the dup shares the last pass's offset */
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.') {
			if (strcmp(d->d_name, ".") != 0 &&
			    strcmp(d->d_name, "..") != 0)
				unlinkat(record_dirfd(), d->d_name, 0);
			continue;	/* a write the last monitor left */
		}
		if (strncmp(d->d_name, "pool-", 5) != 0 && !warm)
			adopt_one(ad, d->d_name);
		else if (strncmp(d->d_name, "pool-", 5) == 0 && warm)
			adopt_warm(ad, d->d_name);
	}
	closedir(dir);
}

/* The service a container of an adopted sandbox runs, when the sandbox
 * no longer has it (a reshape the last monitor did not see through). */
static bool
extra_service(const struct sbx_sandbox *sb, const struct rt_seen *c,
    char *service, size_t cap)
{
	char prefix[SBX_SLUG_MAX * 2];
	size_t i, n;

	n = (size_t)snprintf(prefix, sizeof(prefix), "sbx-%u-%s-",
	    (unsigned)sb->key.uid, sb->key.agent);
	if (strncmp(c->name, prefix, n) != 0 ||
	    strlcpy(service, c->name + n, cap) >= cap ||
	    !slug_valid(service, strlen(service)))
		return false;
	for (i = 0; i < sb->nservices; i++)
		if (strcmp(sb->svc[i].conn.name, service) == 0)
			return false;
	return true;
}

/* Containers nobody adopted: a provision or reshape left half done. */
static void
orphans(struct adoption *ad)
{
	char service[SBX_SLUG_MAX];
	struct sbx_sandbox *sb;
	size_t i;

	for (i = 0; i < ad->nseen; i++) {
		const struct rt_seen *c = &ad->seen[i];

		if (c->pool) {
			if (!kept_has(ad, c->name)) {
				log_info("adoption: warm container %s has no "
				    "record: removed", c->name);
				gone_add_name(ad, c->name);
			}
			continue;
		}
		if (!slug_valid(c->agent, strlen(c->agent))) {
			log_warnx("adoption: container %s has a bad agent label",
			    c->name);
			continue;
		}
		if (gone_has_key(ad, c->uid, c->agent))
			continue;	/* its record was discarded */
		if ((sb = cache_find(ad->cache, c->uid, c->agent)) == NULL) {
			audit(AUDIT_DISCARD, c->uid, c->agent, NULL, NULL, 0,
			    SBX_OK, "reason=no_record container=%s", c->name);
			gone_add(ad, c->uid, c->agent, "");
		} else if (extra_service(sb, c, service, sizeof(service))) {
			audit(AUDIT_DISCARD, c->uid, c->agent, sb->project,
			    NULL, 0, SBX_OK, "reason=not_in_sandbox "
			    "container=%s", c->name);
			gone_add(ad, c->uid, c->agent, service);
		}
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

	if ((ad.claimed = bit_alloc((int)rt->idmap.nslots + 1)) == NULL)
		fatal("adoption");
	if (runtime_list(cfg, &ad.seen, &ad.nseen) == -1) {
		free(ad.claimed);
		return -1;
	}
	adopt_records(&ad, false);
	adopt_records(&ad, true);
	orphans(&ad);
	if (runtime_remove(cfg, ad.gone, ad.ngone) == -1)
		log_warnx("adoption: some of %zu discarded sandboxes could not "
		    "be removed (see above)", ad.ngone);
	prune_dirs(&ad);
	log_info("adopted %zu sandboxes and %zu warm containers, discarded "
	    "%zu", ad.adopted, ad.warm, ad.ngone);
	free(ad.seen);
	free(ad.gone);
	free(ad.kept);
	free(ad.claimed);
	return 0;
}
