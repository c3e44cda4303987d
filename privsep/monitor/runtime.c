/*
 * runtime.c - rt_cli_ops: podman (or docker) driven through its CLI,
 * by jobs of sbx-worker (jobpool.c), never from the loop itself.
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * A provision or teardown is a job: the sandbox's key, services and
 * passwords, and each service's host uid range, decided here. Its
 * outcome says only what the runtime alone knows (each container's pid
 * and published port); it is checked before use, and every name, path
 * and credential of the answer is the monitor's own (reach). A claim
 * serves a miss from warm containers with no job before the reply.
 * liveness.c holds a hit's checks; rt_start.c the runtime at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "claims.h"
#include "code.h"
#include "iox.h"
#include "liveness.h"
#include "log.h"
#include "proc.h"
#include "record.h"
#include "results.h"
#include "resident.h"
#include "rt_data.h"
#include "rtname.h"
#include "runtime.h"
#include "service.h"
#include "sockdir.h"

/* A provision's or a teardown's job, for its outcome. */
struct prov_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;
};

/* The removal of a claimed warm container of an evicted sandbox. */
struct evict_job {
	struct rt_cli		*rt;
	uint32_t		 host_uid;	/* its range */
	struct job_evict	 e;
};

/* How the agent reaches service s: docs/contract.md, "Reaching a sandbox". */
void
reach(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    const struct service_cfg *s, struct sbx_conn *c)
{
	char dir[SBX_SOCKET_MAX];
	uint32_t published = c->port;

	c->host[0] = c->socket[0] = '\0';
	c->port = 0;
	if ((s->transport & TRANSPORT_UNIX) && sockdir_path(cfg, sb->key.uid,
	    sb->key.agent, s->name, dir, sizeof(dir)) == 0) {
		if (snprintf(c->socket, sizeof(c->socket), "%s/%s", dir,
		    s->socket_name) >= (int)sizeof(c->socket))
			c->socket[0] = '\0';	/* config_parse.c bounds it */
		else if (s->probe == PROBE_POSTGRES) {
			strlcpy(c->host, dir, sizeof(c->host));
			c->port = s->port;
		}
	}
	if (s->transport & TRANSPORT_TCP) {
		strlcpy(c->host, "127.0.0.1", sizeof(c->host));
		c->port = published;
	}
}

/*
 * A miss served by warm containers (warm.c), in the loop: each service's
 * socket directory moves into the owner's (the container keeps its mount),
 * the record is written, and the reply can go. No runtime call: the
 * rename that shows the owner in the runtime's ps comes after the reply.
 */
static int
claim_one(struct rt_cli *rt, struct sbx_sandbox *sb, size_t i,
    struct warm_member *m, struct sbx_outcome *o)
{
	const struct service_cfg *s = config_service(rt->cfg,
	    sb->svc[i].conn.name);
	char err[SBX_MESSAGE_MAX];

	if (s == NULL || (service_has_unit(s) &&
	    sockdir_claim(rt->cfg, s->name, m->slot, sb->key.uid,
	    sb->key.agent, err, sizeof(err)) == -1)) {
		log_warnx("claim uid=%u agent=%s of warm %s-%u: %s",
		    (unsigned)sb->key.uid, sb->key.agent, sb->svc[i].conn.name,
		    m->slot, s == NULL ? "not configured" : err);
		return -1;
	}
	sb->svc[i] = m->svc;
	sb->svc[i].warm = m->slot;
	strlcpy(sb->svc[i].conn.user, s->user, sizeof(sb->svc[i].conn.user));
	strlcpy(sb->svc[i].conn.database, s->database,
	    sizeof(sb->svc[i].conn.database));
	sb->svc[i].port_seen_ms = 0;	/* the first hit connects */
	reach(rt->cfg, sb, s, &sb->svc[i].conn);
	o->svc[i] = sb->svc[i];
	return 0;
}

/* The owner's <uid>/<agent>/, once for all its services with a unit. */
static int
key_dir(struct rt_cli *rt, const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	char err[SBX_MESSAGE_MAX];
	size_t i;

	for (i = 0; i < sb->nservices; i++)
		if ((s = config_service(rt->cfg, sb->svc[i].conn.name)) != NULL &&
		    service_has_unit(s))
			break;
	if (i == sb->nservices ||
	    sockdir_make(rt->cfg, sb->key.uid, sb->key.agent, NULL, err,
	    sizeof(err)) == 0)
		return 0;
	log_warnx("claim uid=%u agent=%s: %s", (unsigned)sb->key.uid,
	    sb->key.agent, err);
	return -1;
}

static void
unclaim(struct rt_cli *rt, struct sbx_sandbox *sb, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct service_cfg *s = config_service(rt->cfg,
		    sb->svc[i].conn.name);

		if (s != NULL && service_has_unit(s))
			sockdir_unclaim(rt->cfg, s->name, sb->svc[i].warm,
			    sb->key.uid, sb->key.agent);
		explicit_bzero(&sb->svc[i].conn.password,
		    sizeof(sb->svc[i].conn.password));
		sb->svc[i].pidfd = -1;	/* still the pool's */
		sb->svc[i].warm = 0;
	}
}

/* The seed file of sb's project (project.h), or NULL: none. */
static const char *
seed_of(const struct rt_cli *rt, const struct sbx_sandbox *sb)
{
	const struct project *p;

	if (rt->projects == NULL ||
	    (p = project_find(rt->projects, sb->project)) == NULL ||
	    p->seed[0] == '\0')
		return NULL;
	return p->seed;
}

/* Does a claim of sb's set take a tcp service (a port to hand over)? */
static bool
claims_port(const struct rt_cli *rt, const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	size_t i;

	for (i = 0; i < sb->nservices; i++)
		if ((s = config_service(rt->cfg, sb->svc[i].conn.name)) !=
		    NULL && (s->transport & TRANSPORT_TCP))
			return true;
	return false;
}

/* A new agent's request, met by the pools or not: counted once, however
 * often its turn comes back before its provision (warm.c follows it). */
static void
demand(struct rt_cli *rt, struct sbx_sandbox *sb, bool seeded, bool claimed)
{
	size_t i;

	if (sb->demand_gen == sb->generation + 1)
		return;
	sb->demand_gen = sb->generation + 1;
	for (i = 0; i < sb->nservices; i++)
		warm_demand(rt, sb->svc[i].conn.name, sb->project, seeded,
		    claimed);
}

static int
rt_claim(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;
	struct warm_member *m[SBX_MAX_SERVICES];
	char names[2][SBX_SLUG_MAX * 3];
	struct sbx_outcome o;
	bool seeded = seed_of(rt, sb) != NULL, port = claims_port(rt, sb);
	size_t i, n;

	/* A port changes hands in a worker (guard.c): one must be free,
	 * and the next batch have room (claims.c). */
	if (sb->prev != NULL || sb->nservices > SBX_MAX_SERVICES ||
	    (port && (!workers_spare(rt->pool, 0, 0) || !claims_room(rt))))
		return -1;
	for (i = 0; i < sb->nservices; i++)
		if ((m[i] = warm_take(rt, sb->svc[i].conn.name, sb->project,
		    seeded)) == NULL)
			break;
	demand(rt, sb, seeded, i == sb->nservices);
	if (i < sb->nservices)
		return -1;
	memset(&o, 0, sizeof(o));
	if (key_dir(rt, sb) == -1)
		return -1;
	for (n = 0; n < sb->nservices; n++)
		if (claim_one(rt, sb, n, m[n], &o) == -1)
			break;
	if (n < sb->nservices || record_write(rt->cfg, sb, &o) == -1) {
		unclaim(rt, sb, n);
		explicit_bzero(&o, sizeof(o));
		return -1;
	}
	explicit_bzero(&o, sizeof(o));
	for (i = 0; i < sb->nservices; i++) {
		warm_taken(rt, m[i]);
		if (rt_svc_names(sb->key.uid, sb->key.agent,
		    sb->svc[i].conn.name, sb->svc[i].warm, names) == 2)
			warm_rename_later(rt, names[0], names[1],
			    sb->svc[i].warm);
	}
	log_info("provision uid=%u agent=%s project=%s services=%zu (warm): ok",
	    (unsigned)sb->key.uid, sb->key.agent, sb->project, sb->nservices);
	if (!port)
		return 0;
	/* Its reply waits for its batch's job (claims.c), which fails
	 * closed: the ports stay the pool's, open to nobody, and the cache
	 * tears the claimed sandbox down. */
	claims_add(rt, sb);
	return 1;
}

/* The longest ready_timeout of sb's services; 0: one is not configured. */
static unsigned
max_ready_timeout(const struct sbx_config *cfg, const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	unsigned max = 0;
	size_t i;

	for (i = 0; i < sb->nservices; i++) {
		if ((s = config_service(cfg, sb->svc[i].conn.name)) == NULL)
			return 0;
		if (s->ready_timeout > max)
			max = s->ready_timeout;
	}
	return max;
}

/* A reshape: did it drop sb->prev[i] (the new set lacks that service)? */
static bool
dropped(const struct sbx_sandbox *sb, size_t i)
{
	size_t j;

	for (j = 0; j < sb->nservices; j++)
		if (strcmp(sb->prev[i].conn.name, sb->svc[j].conn.name) == 0)
			return false;
	return true;
}

/* The sandbox as the agent gets it: the kept services as they are, the
 * new ones with the monitor's names, paths and credentials, and the
 * worker's pid and port. */
static void
outcome_take(const struct rt_cli *rt, const struct sbx_sandbox *sb,
    const struct job_outcome *jo, struct sbx_outcome *o)
{
	const struct service_cfg *s;
	size_t i;

	memset(o, 0, sizeof(*o));
	o->code = jo->code;
	memcpy(o->message, jo->message, sizeof(o->message));
	o->dropped_gone = jo->dropped_gone;
	for (i = 0; o->code == SBX_OK && i < sb->nservices; i++) {
		o->svc[i] = sb->svc[i];
		o->svc[i].pidfd = -1;
		if (sb->svc[i].keep ||
		    (s = config_service(rt->cfg, sb->svc[i].conn.name)) == NULL)
			continue;
		o->svc[i].pid = jo->svc[i].pid;
		o->svc[i].host_uid = rt_host_uid(rt, sb->idmap, s);
		o->svc[i].port_seen_ms = 0;
		strlcpy(o->svc[i].conn.user, s->user, SBX_SLUG_MAX);
		strlcpy(o->svc[i].conn.database, s->database, SBX_SLUG_MAX);
		o->svc[i].conn.port = jo->svc[i].port;
		reach(rt->cfg, sb, s, &o->svc[i].conn);
	}
}

static void cleanup_spawn(struct rt_cli *, struct sbx_sandbox *);

/*
 * A provision failed after its containers may have started: remove them.
 * A whole sandbox by its labels; a reshape only what it started (the
 * kept services run on, the agent still uses them), by the worker that
 * already tried, so here it is only logged.
 */
static void
failed_cleanup(struct rt_cli *rt, struct sbx_sandbox *sb)
{
	if (sb->prev == NULL)
		cleanup_spawn(rt, sb);
	else
		log_warnx("reshape uid=%u agent=%s: its new containers may be "
		    "left; the next provision of the key replaces them",
		    (unsigned)sb->key.uid, sb->key.agent);
}

/* The pidfds: kept services bring theirs, new ones get one now. A kept
 * service also keeps its warm slot: a claimed container has no label of
 * its key, and the slot is how its teardown finds it and what it gives
 * back. */
static void
open_pidfds(struct rt_cli *rt, struct sbx_sandbox *sb, struct sbx_outcome *o)
{
	size_t i;

	for (i = 0; i < sb->nservices && o->code == SBX_OK; i++) {
		if (sb->svc[i].keep) {
			o->svc[i].pidfd = sb->svc[i].pidfd;
			o->svc[i].port_seen_ms = sb->svc[i].port_seen_ms;
			o->svc[i].warm = sb->svc[i].warm;
		} else if ((o->svc[i].pidfd = proc_pidfd(o->svc[i].pid)) ==
		    -1) {
			o->code = SBX_E_RUNTIME_FAILED;
			snprintf(o->message, sizeof(o->message),
			    "%s exited right after it became ready.",
			    sb->svc[i].conn.name);
			failed_cleanup(rt, sb);
		}
	}
}

/*
 * A uid range comes back once the runtime said the containers that used
 * it are gone; otherwise it stays taken (one sandbox's worth of uids)
 * rather than risk two sandboxes sharing host uids.
 */
static void
slot_done(struct rt_cli *rt, const struct sbx_sandbox *sb, unsigned slot,
    bool removed)
{
	if (slot == 0)
		return;
	if (removed)
		warm_slot_free(rt, slot);
	else
		log_warnx("uid range %u of uid=%u agent=%s stays taken: its "
		    "containers may still exist", slot,
		    (unsigned)sb->key.uid, sb->key.agent);
}

/* Close what the outcome no longer needs: on failure the new services'
 * pidfds, on a reshape's success those of the services it dropped. */
static void
close_pidfds(struct sbx_sandbox *sb, struct sbx_outcome *o)
{
	size_t i;

	if (o->code != SBX_OK) {
		for (i = 0; i < sb->nservices; i++)
			if (!sb->svc[i].keep && o->svc[i].pidfd > 0)
				close(o->svc[i].pidfd);
		return;
	}
	for (i = 0; i < sb->nprev; i++)
		if (dropped(sb, i) && sb->prev[i].pidfd >= 0) {
			close(sb->prev[i].pidfd);
			sb->prev[i].pidfd = -1;
		}
}

/* A reshape's success: a dropped service it had claimed warm held a uid
 * range of its own, back once the worker said its container is gone. */
static void
dropped_done(struct rt_cli *rt, struct sbx_sandbox *sb,
    const struct sbx_outcome *o)
{
	size_t i;

	for (i = 0; o->code == SBX_OK && i < sb->nprev; i++)
		if (dropped(sb, i)) {
			slot_done(rt, sb, sb->prev[i].warm,
			    (o->dropped_gone >> i) & 1);
			if ((o->dropped_gone >> i) & 1)
				idmap_put_range(&rt->idmap,
				    sb->prev[i].host_uid);
			sb->prev[i].warm = 0;
		}
}

static void
provision_done(void *arg, const void *result, size_t len)
{
	struct prov_job *j = arg;
	struct sbx_sandbox *sb = j->sb;
	struct sbx_outcome o;
	size_t i;

	if (result == NULL || len != sizeof(struct job_outcome) ||
	    !outcome_valid(result, j->rt->cfg, sb)) {
		memset(&o, 0, sizeof(o));
		o.code = SBX_E_RUNTIME_FAILED;
		snprintf(o.message, sizeof(o.message), result == NULL ?
		    "provisioning did not finish within the deadline." :
		    "the runtime worker answered what no provision can.");
		failed_cleanup(j->rt, sb);
	} else {
		outcome_take(j->rt, sb, result, &o);
		/* Its containers may still run: the range goes with a
		 * removal tried again, not back to the pool. */
		if (o.code != SBX_OK && sb->prev == NULL &&
		    ((const struct job_outcome *)result)->removed != 1)
			failed_cleanup(j->rt, sb);
	}
	open_pidfds(j->rt, sb, &o);
	if (o.code == SBX_OK && record_write(j->rt->cfg, sb, &o) == -1) {
		o.code = SBX_E_INTERNAL;
		snprintf(o.message, sizeof(o.message), "the monitor could not "
		    "record the sandbox (see its log).");
		failed_cleanup(j->rt, sb);
	}
	/* A failed reshape leaves the sandbox as it was, its record too. */
	if (o.code != SBX_OK && sb->prev == NULL)
		record_remove(sb->key.uid, sb->key.agent);
	close_pidfds(sb, &o);
	dropped_done(j->rt, sb, &o);
	for (i = 0; i < sb->nservices; i++)
		o.svc[i].keep = false;
	log_info("provision uid=%u agent=%s project=%s services=%zu%s: %s%s%s",
	    (unsigned)sb->key.uid, sb->key.agent, sb->project, sb->nservices,
	    sb->prev != NULL ? " (reshape)" : "", sbx_code_name(o.code),
	    o.code ? ": " : "", o.code ? o.message : "");
	free(j);
	cache_provisioned(sb, &o);
	explicit_bzero(&o, sizeof(o));
}

static void held_release(struct rt_cli *, const struct sbx_key *);

/* The sandbox's range, and those of the warm containers it claimed. */
static void
idmap_done(struct rt_cli *rt, struct sbx_sandbox *sb, bool removed)
{
	size_t i;

	slot_done(rt, sb, sb->idmap, removed);
	sb->idmap = 0;
	for (i = 0; sb->svc != NULL && i < sb->nservices; i++) {
		slot_done(rt, sb, sb->svc[i].warm, removed);
		if (removed)
			idmap_put_range(&rt->idmap, sb->svc[i].host_uid);
		sb->svc[i].warm = 0;
	}
}

static void
teardown_done(void *arg, const void *result, size_t len)
{
	struct prov_job *j = arg;
	const struct job_outcome *o = result;
	bool valid = teardown_result_valid(result, len);
	const char *why = "the teardown worker did not finish.";

	if (valid && o->code == SBX_OK) {
		log_info("teardown uid=%u agent=%s project=%s: ok",
		    (unsigned)j->sb->key.uid, j->sb->key.agent, j->sb->project);
		record_remove(j->sb->key.uid, j->sb->key.agent);
		idmap_done(j->rt, j->sb, true);
		held_release(j->rt, &j->sb->key);
		cache_torn_down(j->sb);
		free(j);
		return;
	}
	/* Its record, ranges and descriptors stay: it is still the
	 * agent's (cache_teardown_failed), and a restart adopts it. */
	if (valid && o->message[0] != '\0')
		why = o->message;
	log_warnx("teardown uid=%u agent=%s project=%s: %s",
	    (unsigned)j->sb->key.uid, j->sb->key.agent, j->sb->project, why);
	cache_teardown_failed(j->sb, why);
	free(j);
}

/* A fire-and-forget teardown after a failed provision. */
struct cleanup_job {
	TAILQ_ENTRY(cleanup_job) entry;	/* in rt->held, once it failed */
	struct rt_cli		*rt;
	struct sbx_sandbox	 shadow;
};

/* A cleanup that could not remove the containers, or not start: its
 * range stays taken, with the key whose later removal gives it back. */
static void
held_add(struct rt_cli *rt, struct cleanup_job *c)
{
	log_warnx("uid range %u of uid=%u agent=%s stays taken until the "
	    "runtime removes the key's containers", c->shadow.idmap,
	    (unsigned)c->shadow.key.uid, c->shadow.key.agent);
	TAILQ_INSERT_TAIL(&rt->held, c, entry);
}

/* Every container of key is gone (a teardown or a cleanup removed them
 * by its label): the ranges held for its failed provisions come back. */
static void
held_release(struct rt_cli *rt, const struct sbx_key *key)
{
	struct cleanup_job *c, *next;

	TAILQ_FOREACH_SAFE(c, &rt->held, entry, next)
		if (c->shadow.key.uid == key->uid &&
		    strcmp(c->shadow.key.agent, key->agent) == 0) {
			TAILQ_REMOVE(&rt->held, c, entry);
			idmap_done(rt, &c->shadow, true);
			free(c);
		}
}

/*
 * sb's provision or teardown in a worker, which is given sb by value:
 * its key, services and passwords, nothing else of the monitor's. The
 * copy is wiped as soon as the worker has its own.
 */
/* One service of a job: its names and password, and the host uid range
 * of a service the job starts. */
static void
job_svc_of(const struct rt_cli *rt, const struct sbx_sandbox *sb,
    const struct sbx_svc *v, struct job_svc *j, uint32_t *mask)
{
	const struct service_cfg *s = config_service(rt->cfg, v->conn.name);

	j->conn = v->conn;
	j->pid = v->pid;
	j->keep = v->keep;
	j->warm = v->warm;
	j->host_uid = v->host_uid;
	if (s != NULL) {
		*mask |= 1U << (s - rt->cfg->services);
		/* a claimed one keeps the range it was started in */
		if (!v->keep && v->warm == 0)
			j->host_uid = rt_host_uid(rt, sb->idmap, s);
	}
}

/*
 * sb's provision or teardown in a worker, which is given sb by value:
 * its key, services and passwords, nothing else of the monitor's. The
 * copy is wiped as soon as the worker has its own.
 */
static int
spawn_sandbox_job(struct rt_cli *rt, enum job_type type,
    const struct sbx_sandbox *sb, int64_t timeout_ms, worker_done done,
    void *arg)
{
	struct job_sandbox *j;
	const char *seed;
	uint32_t mask = 0;
	size_t i;
	int rc;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->key = sb->key;
	memcpy(j->project, sb->project, sizeof(j->project));
	if ((seed = seed_of(rt, sb)) != NULL)
		strlcpy(j->seed, seed, sizeof(j->seed));
	j->generation = sb->generation;
	j->nservices = (uint32_t)sb->nservices;
	for (i = 0; i < sb->nservices; i++)
		job_svc_of(rt, sb, &sb->svc[i], &j->svc[i], &mask);
	j->reshape = sb->prev != NULL;
	j->nprev = sb->prev != NULL ? (uint32_t)sb->nprev : 0;
	for (i = 0; i < j->nprev; i++) {
		job_svc_of(rt, sb, &sb->prev[i], &j->prev[i], &mask);
		j->prev[i].dropped = dropped(sb, i);
	}
	j->ready_timeout = max_ready_timeout(rt->cfg, sb);
	rc = worker_spawn(rt->pool, type, mask, j, sizeof(*j),
	    sizeof(struct job_outcome), now_ms() + timeout_ms, done, arg);
	explicit_bzero(j, sizeof(*j));
	free(j);
	return rc;
}

static void
cleanup_done(void *arg, const void *result, size_t len)
{
	struct cleanup_job *c = arg;
	struct job_outcome o;

	memset(&o, 0, sizeof(o));
	if (result == NULL || len != sizeof(o)) {
		o.code = SBX_E_RUNTIME_FAILED;
		log_warnx("cleanup uid=%u agent=%s: did not finish",
		    (unsigned)c->shadow.key.uid, c->shadow.key.agent);
	} else {
		memcpy(&o, result, sizeof(o));
		o.message[sizeof(o.message) - 1] = '\0';
		if (o.code != SBX_OK)
			log_warnx("cleanup uid=%u agent=%s: %s",
			    (unsigned)c->shadow.key.uid, c->shadow.key.agent,
			    o.message);
	}
	if (o.code != SBX_OK) {
		held_add(c->rt, c);
		return;
	}
	idmap_done(c->rt, &c->shadow, true);
	held_release(c->rt, &c->shadow.key);
	free(c);
}

/* The cleanup takes sb's uid range with it: the next provision of the
 * key gets another while the old containers may still be there. The
 * range comes back once a removal of the key's containers worked. */
static void
cleanup_spawn(struct rt_cli *rt, struct sbx_sandbox *sb)
{
	struct cleanup_job *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		idmap_done(rt, sb, false);
		return;
	}
	c->shadow.key = sb->key;
	c->shadow.idmap = sb->idmap;
	sb->idmap = 0;
	c->rt = rt;
	if (spawn_sandbox_job(rt, JOB_TEARDOWN, &c->shadow,
	    (int64_t)rt->cfg->runtime_timeout * 1000, cleanup_done, c) == -1)
		held_add(rt, c);
}

static int
start_job(struct rt_cli *rt, struct sbx_sandbox *sb, enum job_type job,
    worker_done done, int64_t timeout_ms)
{
	struct prov_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->rt = rt;
	j->sb = sb;
	if (spawn_sandbox_job(rt, job, sb, timeout_ms, done, j) == -1) {
		log_warn("cannot start a runtime worker");
		free(j);
		return -1;
	}
	return 0;
}

/* Does the provision start a container (a reshape may only drop)? */
static bool
starts_any(const struct sbx_sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->nservices; i++)
		if (!sb->svc[i].keep)
			return true;
	return false;
}

/* The renames of sb's claimed containers (svc, n) that have not started:
 * their removal starts now. */
static void
renames_cancel(struct rt_cli *rt, const struct sbx_svc *svc, size_t n)
{
	size_t i;

	for (i = 0; svc != NULL && i < n; i++)
		if (svc[i].warm != 0)
			warm_rename_cancel(rt, svc[i].warm);
}

static int
rt_provision(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;
	/* Every service is configured: ready_timeout is never 0 (config_parse.c). */
	unsigned max_ready = max_ready_timeout(rt->cfg, sb);
	size_t i;

	if (max_ready == 0)
		return -1;
	/* The sandbox's own range, for what it starts (claimed containers
	 * have one each): its containers' host uids with podman, and its
	 * readiness probers' uid (prober_ids) with either runtime. */
	if (sb->idmap == 0 && starts_any(sb) &&
	    (sb->idmap = idmap_take(&rt->idmap)) == 0) {
		log_warnx("provision uid=%u agent=%s: every one of the %u uid "
		    "ranges (userns_slots) is taken", (unsigned)sb->key.uid,
		    sb->key.agent, rt->idmap.nslots);
		return -1;
	}
	/* The worker's own deadlines end first; this one is the backstop. */
	if (start_job(rt, sb, JOB_PROVISION, provision_done,
	    ((int64_t)rt->cfg->runtime_timeout * 3 + max_ready + 10) * 1000) == -1)
		return -1;
	for (i = 0; sb->prev != NULL && i < sb->nprev; i++)
		if (dropped(sb, i))
			renames_cancel(rt, &sb->prev[i], 1);
	return 0;
}

static int
rt_teardown(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;

	if (start_job(rt, sb, JOB_TEARDOWN, teardown_done,
	    ((int64_t)rt->cfg->runtime_timeout + 10) * 1000) == -1)
		return -1;
	renames_cancel(rt, sb->svc, sb->nservices);
	return 0;
}

static void
evict_done(void *arg, const void *result, size_t len)
{
	struct evict_job *j = arg;
	const uint32_t *code = result;

	if (result != NULL && len == sizeof(*code) && *code == SBX_OK) {
		warm_slot_free(j->rt, j->e.slot);
		idmap_put_range(&j->rt->idmap, j->host_uid);
	} else
		log_warnx("uid=%u agent=%s: the evicted warm container of %s "
		    "could not be removed; uid range %u stays taken",
		    (unsigned)j->e.key.uid, j->e.key.agent, j->e.service, j->e.slot);
	free(j);
}

static void
evict_claimed(struct rt_cli *rt, const struct sbx_sandbox *sb,
    const struct sbx_svc *svc)
{
	struct evict_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return;
	j->rt = rt;
	j->e.key = sb->key;
	strlcpy(j->e.service, svc->conn.name, sizeof(j->e.service));
	j->e.slot = svc->warm;
	j->host_uid = svc->host_uid;
	if (worker_spawn(rt->pool, JOB_EVICT, 0, &j->e, sizeof(j->e),
	    sizeof(uint32_t), now_ms() + (int64_t)rt->cfg->runtime_timeout *
	    1000, evict_done, j) == -1) {
		log_warnx("uid=%u agent=%s: cannot start the removal of its "
		    "evicted warm container of %s", (unsigned)sb->key.uid,
		    sb->key.agent, svc->conn.name);
		free(j);
	} else
		renames_cancel(rt, svc, 1);
}

/* Ends its resident data worker, closes the pidfds; a claimed container
 * still held was evicted (a teardown gives its slot back and clears warm
 * before this). */
static void
rt_forget(void *impl, struct sbx_sandbox *sb)
{
	size_t i;

	resident_stop(sb);
	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].pidfd > 0) {
			close(sb->svc[i].pidfd);
			sb->svc[i].pidfd = -1;
		}
		if (sb->svc[i].warm != 0) {
			evict_claimed(impl, sb, &sb->svc[i]);
			sb->svc[i].warm = 0;
		}
	}
}

/* The entry is freed after a failed provision whose containers the
 * runtime said are gone (else a cleanup took its range), or after its
 * teardown (the range is back already). */
static void
rt_freed(void *impl, struct sbx_sandbox *sb)
{
	idmap_done(impl, sb, true);
}

const struct sbx_runtime_ops rt_cli_ops = {
	.provision = rt_provision,
	.is_live = rt_is_live,
	.teardown = rt_teardown,
	.forget = rt_forget,
	.gone = rt_freed,
	.claim = rt_claim,
	.data = rt_data,
};
