/*
 * adopt.c - JOB_ADOPT, at the monitor's start: the sandbox records the
 * last monitor left, each with what the runtime runs of it, and the
 * containers that no record accounts for.
 * runs in: sbx-worker's JOB_ADOPT (root, runtime deny filter)
 *
 * A record is read as any file on disk (regular, root's, its exact size,
 * every field sound); one that is not a record is removed here. For each
 * service the worker finds: is its [service] section as it was when the
 * container started, does the container run (under any name it may have),
 * on the port it was published on, and does it listen. Which of them the
 * monitor adopts, for whom, with which uid ranges, is its own decision
 * (privsep/monitor/adopt.c): nothing here is adopted or discarded but files that
 * are not records.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adopt.h"
#include "config.h"
#include "guard.h"
#include "iox.h"
#include "job.h"
#include "listen.h"
#include "log.h"
#include "proc.h"
#include "rt_run.h"
#include "rtname.h"
#include "service.h"
#include "slug.h"

struct found {
	struct adopt_found	*v;
	size_t			 n, cap;
	struct adopt_gone	*gone;
	size_t			 ngone, capgone;
	struct rt_seen		*seen;
	size_t			 nseen;
};

/* A version 1 record: no warm slot. Converted in place. */
struct record_svc_v1 {
	struct sbx_conn	conn;
	uint64_t	confhash;
};

/* Up to version 4 a record has no bind_pid: its services start where
 * bind_pid is now. Moved in place; n as if it always had them. */
static ssize_t
upgrade_head(struct record *r, ssize_t n)
{
	const size_t gap = offsetof(struct record, svc) - RECORD_V4_HEAD;

	if (n < (ssize_t)RECORD_V4_HEAD || (size_t)n - RECORD_V4_HEAD >
	    sizeof(r->svc))
		return -1;
	memmove(r->svc, (char *)r + RECORD_V4_HEAD, (size_t)n -
	    RECORD_V4_HEAD);
	r->bind_pid = 0;
	r->pad = 0;
	r->bind_start = 0;
	return n + (ssize_t)gap;
}

static ssize_t
upgrade_v1(struct record *r, ssize_t n)
{
	struct record_svc_v1 v1[SBX_MAX_SERVICES];
	uint32_t i;

	if (r->nservices == 0 || r->nservices > SBX_MAX_SERVICES ||
	    (size_t)n != offsetof(struct record, svc) +
	    r->nservices * sizeof(v1[0]))
		return -1;
	memcpy(v1, r->svc, r->nservices * sizeof(v1[0]));
	memset(r->svc, 0, sizeof(r->svc));
	for (i = 0; i < r->nservices; i++) {
		r->svc[i].conn = v1[i].conn;
		r->svc[i].confhash = v1[i].confhash;
	}
	explicit_bzero(v1, sizeof(v1));
	r->version = 2;
	return (ssize_t)record_size(r->nservices);
}

/* A file on disk: regular, root's, a record's exact size, sound. */
static int
record_read(int dir, const char *name, struct record *r, int64_t *used)
{
	struct stat st;
	ssize_t n;
	int fd;

	memset(r, 0, sizeof(*r));
	if ((fd = openat(dir, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1)
		return -1;
	n = (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != 0) ? -1 : read(fd, r, sizeof(*r));
	close(fd);
	if (n >= (ssize_t)RECORD_V4_HEAD && r->magic == RECORD_MAGIC &&
	    r->version < 5)
		n = upgrade_head(r, n);
	if (n >= (ssize_t)offsetof(struct record, svc) &&
	    r->magic == RECORD_MAGIC && r->version == 1)
		n = upgrade_v1(r, n);
	if (n < (ssize_t)offsetof(struct record, svc) ||
	    (size_t)n != record_size(r->nservices) || !record_valid(r))
		return -1;
	*used = (int64_t)st.st_mtim.tv_sec * 1000 +
	    st.st_mtim.tv_nsec / 1000000;
	return 0;
}

static const struct rt_seen *
seen_find(const struct found *f, const char *name)
{
	size_t i;

	for (i = 0; i < f->nseen; i++)
		if (strcmp(f->seen[i].name, name) == 0)
			return &f->seen[i];
	return NULL;
}

/* A service's container, by any name it may have; *pool_named when it
 * still runs under its pool name. */
static const struct rt_seen *
svc_seen(const struct found *f, const struct record *r, uint32_t i,
    bool *pool_named)
{
	char names[2][RT_NAME_MAX];
	const struct rt_seen *c = NULL;
	size_t n, k;

	*pool_named = false;
	if (r->uid == RECORD_POOL_UID)
		return rt_pool_name(names[0], sizeof(names[0]),
		    r->svc[0].conn.name, r->idmap) == 0 ?
		    seen_find(f, names[0]) : NULL;
	n = rt_svc_names(r->uid, r->agent, r->svc[i].conn.name,
	    r->svc[i].warm, names);
	for (k = 0; k < n && c == NULL; k++)
		if ((c = seen_find(f, names[k])) != NULL)
			*pool_named = n == 2 && k == 0;
	return c;
}

/*
 * The host uid range a container runs in, from its main process's
 * uid_map: "0 HOST 65536" for a range of its own; 0 for the host's own
 * uids (docker: no user namespace); UINT32_MAX for anything else.
 */
static uint32_t
uid_range(int pid)
{
	char path[32], line[128] = "", *p = line, *end;
	unsigned long v[3], in, out, n;
	FILE *f;
	int k;

	snprintf(path, sizeof(path), "/proc/%d/uid_map", pid);
	if ((f = fopen(path, "re")) == NULL)
		return UINT32_MAX;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	fclose(f);
	for (k = 0; k < 3; k++, p = end) {
		errno = 0;
		v[k] = strtoul(p, &end, 10);
		if (end == p || errno != 0)
			return UINT32_MAX;
	}
	in = v[0];
	out = v[1];
	n = v[2];
	if (in != 0)
		return UINT32_MAX;
	if (out == 0 && n == 4294967295UL)
		return 0;
	return n == JOB_RANGE_UIDS && out > 0 && out <= UINT32_MAX -
	    JOB_RANGE_UIDS ? (uint32_t)out : UINT32_MAX;
}

/* Each running container's range, as the kernel has it; a record that
 * says another (version 4 on) has changed under us. */
static bool
ranges(const struct found *f, struct adopt_found *a)
{
	const struct rt_seen *c;
	bool pool_named, same = true;
	uint32_t i, h;

	for (i = 0; i < a->r.nservices; i++) {
		if ((c = svc_seen(f, &a->r, i, &pool_named)) == NULL ||
		    c->pid <= 0 || (h = uid_range(c->pid)) == 0)
			continue;	/* docker: the record's range */
		if (h == UINT32_MAX || (a->r.svc[i].host_uid != 0 &&
		    a->r.svc[i].host_uid != h))
			same = false;
		else
			a->r.svc[i].host_uid = h;
	}
	return same;
}

/* Each service: configured as it was, its container running, listening. */
static unsigned
whole(const struct sbx_config *cfg, const struct found *f,
    struct adopt_found *a)
{
	const struct record *r = &a->r;
	const struct service_cfg *s;
	const struct rt_seen *c;
	bool pool_named;
	uint32_t i;

	for (i = 0; i < r->nservices; i++) {
		if ((s = config_service(cfg, r->svc[i].conn.name)) == NULL)
			return ADOPT_SERVICE_GONE;
		if (!record_same_config(r, i, s))
			return ADOPT_SERVICE_CHANGED;
		if ((c = svc_seen(f, r, i, &pool_named)) == NULL)
			return ADOPT_CONTAINER_MISSING;
		if (c->pid <= 0)
			return ADOPT_CONTAINER_STOPPED;
		if ((s->transport & TRANSPORT_TCP) &&
		    (uint32_t)c->port != r->svc[i].conn.port)
			return ADOPT_PORT_CHANGED;
		if (!rt_listening(&r->svc[i].conn))
			return ADOPT_NOT_LISTENING;
		a->pid[i] = c->pid;
		a->pool_named |= (uint32_t)pool_named << i;
	}
	if (r->bind_pid != 0 && proc_start(r->bind_pid) != r->bind_start)
		return ADOPT_LEASE_ENDED;
	return ranges(f, a) ? ADOPT_WHOLE : ADOPT_RANGE_CHANGED;
}

static void *
grow(void *v, size_t *cap, size_t size)
{
	void *nv;

	*cap = *cap ? *cap * 2 : 16;
	if (*cap > ADOPT_MAX || (nv = reallocarray(v, *cap, size)) == NULL)
		fatalx("adoption: out of memory, or more than %d records",
		    ADOPT_MAX);
	return nv;
}

static void
found_add(const struct sbx_config *cfg, struct found *f, int dir,
    const char *file)
{
	struct adopt_found *a;
	bool pool = strncmp(file, "pool-", 5) == 0;

	if (f->n == f->cap)
		f->v = grow(f->v, &f->cap, sizeof(*f->v));
	a = &f->v[f->n];
	memset(a, 0, sizeof(*a));
	if (strlcpy(a->file, file, sizeof(a->file)) >= sizeof(a->file) ||
	    record_read(dir, file, &a->r, &a->used_wall_ms) == -1 ||
	    pool != (a->r.uid == RECORD_POOL_UID) || (pool &&
	    (a->r.nservices != 1 || a->r.idmap == 0 ||
	    a->r.svc[0].warm != a->r.idmap))) {
		log_warnx("adoption: %s is not a sandbox record: removed",
		    file);
		unlinkat(dir, file, 0);
		explicit_bzero(a, sizeof(*a));
		return;
	}
	if ((a->why = whole(cfg, f, a)) != ADOPT_WHOLE)
		(void)ranges(f, a);	/* what runs holds its range still */
	f->n++;
}

static void
records(const struct sbx_config *cfg, struct found *f)
{
	char path[CFG_STR + 16];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "%s/sandboxes", cfg->state_dir);
	if ((dir = opendir(path)) == NULL)
		fatal("adoption: %s", path);
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (d->d_name[0] == '.')	/* a write the last one left */
			unlinkat(dirfd(dir), d->d_name, 0);
		else
			found_add(cfg, f, dirfd(dir), d->d_name);
	}
	closedir(dir);
}

/* Does a record name this container (a pool member, or a claimed one)? */
static bool
named(const struct found *f, const char *container)
{
	char names[2][RT_NAME_MAX];
	size_t i, n, k;
	uint32_t j;

	for (i = 0; i < f->n; i++)
		for (j = 0; j < f->v[i].r.nservices; j++) {
			const struct record *r = &f->v[i].r;

			n = r->uid == RECORD_POOL_UID ? rt_pool_name(names[0],
			    sizeof(names[0]), r->svc[0].conn.name,
			    r->idmap) == 0 : rt_svc_names(r->uid, r->agent,
			    r->svc[j].conn.name, r->svc[j].warm, names);
			for (k = 0; k < n; k++)
				if (strcmp(names[k], container) == 0)
					return true;
		}
	return false;
}

/* The record of a key, or NULL. */
static const struct record *
key_record(const struct found *f, uid_t uid, const char *agent)
{
	size_t i;

	for (i = 0; i < f->n; i++)
		if (f->v[i].r.uid == uid && strcmp(f->v[i].r.agent, agent) == 0)
			return &f->v[i].r;
	return NULL;
}

/* The service of a key's container its record lacks, or NULL. */
static const char *
extra_service(const struct record *r, const struct rt_seen *c,
    char *service, size_t cap)
{
	char prefix[SBX_SLUG_MAX * 2];
	size_t n;
	uint32_t i;

	n = (size_t)snprintf(prefix, sizeof(prefix), "sbx-%u-%s-",
	    (unsigned)r->uid, r->agent);
	if (strncmp(c->name, prefix, n) != 0 ||
	    strlcpy(service, c->name + n, cap) >= cap ||
	    !slug_valid(service, strlen(service)))
		return NULL;
	for (i = 0; i < r->nservices; i++)
		if (strcmp(r->svc[i].conn.name, service) == 0)
			return NULL;
	return service;
}

static void
gone_add(struct found *f, const struct rt_seen *c, unsigned why,
    const char *service)
{
	struct adopt_gone *g;

	if (f->ngone == f->capgone)
		f->gone = grow(f->gone, &f->capgone, sizeof(*f->gone));
	g = &f->gone[f->ngone++];
	memset(g, 0, sizeof(*g));
	g->why = why;
	if (c->pid > 0 && (g->host_uid = uid_range(c->pid)) == UINT32_MAX)
		g->host_uid = 0;
	strlcpy(g->container, c->name, sizeof(g->container));
	if (why == ADOPT_POOL_NO_RECORD) {
		g->g.key.uid = (uid_t)-1;
		strlcpy(g->g.name, c->name, sizeof(g->g.name));
		return;
	}
	g->g.key.uid = c->uid;
	strlcpy(g->g.key.agent, c->agent, sizeof(g->g.key.agent));
	if (service != NULL)
		strlcpy(g->g.service, service, sizeof(g->g.service));
}

/* Containers no record accounts for: a provision or reshape left half
 * done, or a warm container whose record went. */
static void
orphans(struct found *f)
{
	char service[SBX_SLUG_MAX];
	const struct record *r;
	const char *extra;
	size_t i;

	for (i = 0; i < f->nseen; i++) {
		const struct rt_seen *c = &f->seen[i];

		if (c->pool) {
			if (!named(f, c->name))
				gone_add(f, c, ADOPT_POOL_NO_RECORD, NULL);
		} else if (!slug_valid(c->agent, strlen(c->agent)))
			log_warnx("adoption: container %s has a bad agent "
			    "label", c->name);
		else if ((r = key_record(f, c->uid, c->agent)) == NULL)
			gone_add(f, c, ADOPT_NO_RECORD, NULL);
		else if ((extra = extra_service(r, c, service,
		    sizeof(service))) != NULL)
			gone_add(f, c, ADOPT_NOT_IN_SANDBOX, extra);
	}
}

/* One rule a record wants for its service k, if that is a tcp one. */
static void
want_one(const struct sbx_config *cfg, const struct record *r, uint32_t k,
    struct guard_want *g)
{
	const struct service_cfg *s = config_service(cfg,
	    r->svc[k].conn.name);
	bool pool = r->uid == RECORD_POOL_UID;

	if (s == NULL || !(s->transport & TRANSPORT_TCP) ||
	    r->svc[k].conn.port == 0)
		return;
	if (pool)
		guard_note_pool(g->v[g->n].note, sizeof(g->v[g->n].note),
		    s->name, r->svc[k].warm);
	else
		guard_note_key(g->v[g->n].note, sizeof(g->v[g->n].note),
		    r->uid, r->agent, s->name);
	g->v[g->n].port = r->svc[k].conn.port;
	g->v[g->n].owner = pool ? GUARD_NO_OWNER : r->uid;
	g->v[g->n].prober = r->svc[k].host_uid == 0 ? 0 :
	    r->svc[k].host_uid + JOB_RANGE_UIDS - 1;
	g->n++;
}

/*
 * The tcp guard as the records say, whole or not (a sandbox the monitor
 * discards keeps its rules until its containers are gone), the chain
 * never emptied meanwhile (guard.c).
 */
static bool
guard(const struct sbx_config *cfg, const struct found *f)
{
	struct guard_want g = { 0, NULL, 0, NULL };
	const struct record *r;
	size_t i;
	uint32_t k;
	bool ok;

	if ((g.v = calloc(f->n * SBX_MAX_SERVICES + 1, sizeof(*g.v))) ==
	    NULL || (g.busy = calloc(f->nseen + 1, sizeof(*g.busy))) ==
	    NULL) {
		free(g.v);
		return false;
	}
	for (i = 0; i < f->nseen; i++)
		if (f->seen[i].port > 0)
			g.busy[g.nbusy++] = (unsigned)f->seen[i].port;
	for (i = 0; i < f->n; i++) {
		r = &f->v[i].r;
		for (k = 0; k < r->nservices && k < SBX_MAX_SERVICES; k++)
			want_one(cfg, r, k, &g);
	}
	ok = guard_sync(cfg, &g) == 0;
	free(g.v);
	free(g.busy);
	return ok;
}

int
adopt_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	struct found f = { 0 };
	struct adopt_head h = { .magic = ADOPT_MAGIC };
	int64_t deadline = now_ms() + 10000;
	int rc = 1;

	(void)job;
	(void)len;
	if (rt_list(cfg, &f.seen, &f.nseen) == -1)
		return 1;
	records(cfg, &f);
	orphans(&f);
	h.guarded = guard(cfg, &f);
	h.nfound = (uint32_t)f.n;
	h.ngone = (uint32_t)f.ngone;
	if (write_all(fd, &h, sizeof(h), deadline) == 0 &&
	    write_all(fd, f.v, f.n * sizeof(*f.v), deadline) == 0 &&
	    write_all(fd, f.gone, f.ngone * sizeof(*f.gone), deadline) == 0)
		rc = 0;
	if (f.v != NULL)
		explicit_bzero(f.v, f.n * sizeof(*f.v));
	free(f.v);
	free(f.gone);
	free(f.seen);
	return rc;
}
