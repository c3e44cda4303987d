/*
 * adopt.c - at start, the sandboxes that outlived the previous monitor
 * (CONTRACT.md, sbx-monitor: a restart adopts every sandbox that is still
 * whole and alive). Runs in: the monitor, before it serves.
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

#include "adopt.h"
#include "audit.h"
#include "iox.h"
#include "log.h"
#include "record.h"
#include "runtime_argv.h"
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
	size_t				 adopted;
};

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

static void
gone_add(struct adoption *ad, uid_t uid, const char *agent,
    const char *service)
{
	struct rt_gone *v;
	size_t i;

	for (i = 0; i < ad->ngone; i++)
		if (ad->gone[i].key.uid == uid &&
		    strcmp(ad->gone[i].key.agent, agent) == 0 &&
		    strcmp(ad->gone[i].service, service) == 0)
			return;
	if (ad->ngone == ad->capgone) {
		ad->capgone = ad->capgone ? ad->capgone * 2 : 16;
		if ((v = reallocarray(ad->gone, ad->capgone,
		    sizeof(*v))) == NULL)
			fatal("adoption");
		ad->gone = v;
	}
	memset(&ad->gone[ad->ngone], 0, sizeof(ad->gone[0]));
	ad->gone[ad->ngone].key.uid = uid;
	strlcpy(ad->gone[ad->ngone].key.agent, agent, SBX_SLUG_MAX);
	strlcpy(ad->gone[ad->ngone].service, service, SBX_SLUG_MAX);
	ad->ngone++;
}

/* The project still opts in to exactly these services, for this uid. */
static const char *
policy_refuses(const struct adoption *ad, const struct record *r)
{
	const struct project *p = project_find(ad->projects, r->project);
	uint32_t i;

	if (p == NULL || !p->valid)
		return "project_gone";
	if (!project_allows(p, r->uid))
		return "uid_not_allowed";
	if (p->nservices != r->nservices)
		return "set_changed";
	for (i = 0; i < r->nservices; i++)
		if (strcmp(p->services[i], r->svc[i].conn.name) != 0)
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

/* Each service: configured as it was, its container running, listening. */
static const char *
services_refuse(const struct adoption *ad, const struct record *r,
    struct sbx_svc *svc)
{
	char name[SBX_SLUG_MAX * 3];
	const struct service_cfg *s;
	const struct rt_seen *c;
	uint32_t i;

	for (i = 0; i < r->nservices; i++)
		svc[i].pidfd = -1;
	for (i = 0; i < r->nservices; i++) {
		svc[i].conn = r->svc[i].conn;
		if ((s = config_service(ad->cfg, r->svc[i].conn.name)) == NULL)
			return "service_gone";
		if (record_confhash(s) != r->svc[i].confhash)
			return "service_changed";
		if (rt_container_name(name, sizeof(name), r->uid, r->agent,
		    s->name) == -1 || (c = seen_find(ad, name)) == NULL)
			return "container_missing";
		if (c->pid <= 0)
			return "container_stopped";
		if ((s->transport & TRANSPORT_TCP) &&
		    (uint32_t)c->port != r->svc[i].conn.port)
			return "port_changed";
		svc[i].pid = c->pid;
		if ((svc[i].pidfd = (int)syscall(SYS_pidfd_open, c->pid, 0)) ==
		    -1)
			return "container_stopped";
		if (!rt_listening(&svc[i].conn))
			return "not_listening";
	}
	return NULL;
}

static void
adopt_one(struct adoption *ad, const char *file)
{
	struct sbx_svc svc[SBX_MAX_SERVICES];
	struct sbx_sandbox *sb;
	const char *why = NULL;
	struct record r;
	int64_t used_wall, now = now_ms(), wall = wall_ms();

	memset(svc, 0, sizeof(svc));
	if (record_read(file, &r, &used_wall) == -1) {
		log_warnx("adoption: %s is not a sandbox record: removed", file);
		unlinkat(record_dirfd(), file, 0);
		return;
	}
	if ((why = policy_refuses(ad, &r)) == NULL &&
	    (why = services_refuse(ad, &r, svc)) == NULL &&
	    rt_is_podman(ad->cfg) && idmap_claim(&ad->rt->idmap, r.idmap) == -1)
		why = "uid_range_taken";
	if (why == NULL && (sb = cache_adopt(ad->cache, r.uid, r.agent,
	    r.project, svc, r.nservices, now - (wall - r.created_wall_ms),
	    now - (wall - used_wall))) != NULL) {
		sb->idmap = rt_is_podman(ad->cfg) ? r.idmap : 0;
		audit_sandbox(AUDIT_ADOPT, sb, SBX_OK, "idle_s=%lld",
		    (long long)(wall - used_wall) / 1000);
		ad->adopted++;
	} else {
		if (why == NULL) {
			why = "duplicate";
			idmap_put(&ad->rt->idmap, r.idmap);
		}
		close_pidfds(svc, r.nservices);
		audit(AUDIT_DISCARD, r.uid, r.agent, r.project, NULL, 0,
		    SBX_OK, "reason=%s", why);
		gone_add(ad, r.uid, r.agent, "");
		unlinkat(record_dirfd(), file, 0);
	}
	explicit_bzero(&r, sizeof(r));
	explicit_bzero(svc, sizeof(svc));
}

static void
adopt_records(struct adoption *ad)
{
	struct dirent *d;
	DIR *dir;
	int fd;

	if ((fd = dup(record_dirfd())) == -1 || (dir = fdopendir(fd)) == NULL)
		fatal("reading the sandbox records");
	while ((d = readdir(dir)) != NULL) {
		if (d->d_name[0] == '.') {
			if (strcmp(d->d_name, ".") != 0 &&
			    strcmp(d->d_name, "..") != 0)
				unlinkat(record_dirfd(), d->d_name, 0);
			continue;	/* a write the last monitor left */
		}
		adopt_one(ad, d->d_name);
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
};

static bool
keep_dir(void *arg, const char *path)
{
	const struct kept *k = arg;
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->path[i], path) == 0)
			return true;
	return false;
}

static void
prune_dirs(struct adoption *ad)
{
	struct sbx_status_rec *v;
	struct kept k = { NULL, 0 };
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

	if (runtime_list(cfg, &ad.seen, &ad.nseen) == -1)
		return -1;
	adopt_records(&ad);
	orphans(&ad);
	if (runtime_remove(cfg, ad.gone, ad.ngone) == -1)
		log_warnx("adoption: some of %zu discarded sandboxes could not "
		    "be removed (see above)", ad.ngone);
	prune_dirs(&ad);
	log_info("adopted %zu sandboxes, discarded %zu", ad.adopted, ad.ngone);
	free(ad.seen);
	free(ad.gone);
	return 0;
}
