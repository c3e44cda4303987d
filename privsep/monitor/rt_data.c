/*
 * rt_data.c - a reset or a snapshot of a ready sandbox: the monitor has
 * decided whose it is (cache.c: the caller's own, one at a time); a
 * worker does the work in the sandbox's services (privsep/worker/data.c),
 * or the sandbox's resident data worker does, which keeps a postgres
 * session from one job to the next (resident.c), and answers one
 * data_result, checked here before the caller sees it.
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * The worker and its session children, which run as uids of the
 * sandbox's ranges, go on after the reply (the tidy-up). Until the
 * worker's process has exited, its job counts toward max_provisions
 * (cache_data_exited) and max_workers (jobpool.c), and the ranges stay
 * pinned (idmap.c): a release meanwhile removes the containers, but
 * their ranges go to no other sandbox before the tidy-up has ended.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "code.h"
#include "iox.h"
#include "log.h"
#include "resident.h"
#include "results.h"
#include "rt_data.h"
#include "runtime.h"
#include "service.h"

struct data_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;		/* NULL once answered */
	struct cache		*cache;
	uid_t			 owner;		/* whose provisions it counts in */
	size_t			 npins;
	uint32_t		 pins[SBX_MAX_SERVICES];	/* ranges */
};

static void
unpin(struct data_job *dj)
{
	while (dj->npins > 0)
		idmap_unpin(&dj->rt->idmap, dj->pins[--dj->npins]);
}

/* The worker's process exited: its sessions' too (jobpool.c). */
static void
data_exited(void *arg)
{
	struct data_job *dj = arg;

	unpin(dj);
	cache_data_exited(dj->cache, dj->owner);
	free(dj);
}

static void
data_done(void *arg, const void *result, size_t len)
{
	struct data_job *j = arg;
	const struct data_result *r = result;
	struct sbx_sandbox *sb = j->sb;

	j->sb = NULL;	/* the rest is data_exited's */
	if (r == NULL || len != sizeof(*r) || !data_result_valid(r)) {
		log_warnx("data uid=%u agent=%s: %s", (unsigned)sb->key.uid,
		    sb->key.agent, r == NULL ? "the worker did not finish" :
		    "the worker answered what no data job can");
		cache_data_done(sb, SBX_E_RUNTIME_FAILED, "the work on the "
		    "sandbox's data did not finish (see the monitor's log).");
		return;
	}
	if (r->code != SBX_OK)
		log_info("data uid=%u agent=%s: %s: %s", (unsigned)sb->key.uid,
		    sb->key.agent, sbx_code_name(r->code), r->message);
	cache_data_done(sb, r->code, r->message);
}

int
rt_data(void *impl, struct sbx_sandbox *sb, enum sbx_req_type op,
    const char *snapshot)
{
	struct rt_cli *rt = impl;
	const struct service_cfg *s;
	struct data_job *dj;
	struct job_data *j;
	uint32_t mask = 0;
	int64_t deadline;
	size_t i;
	int rc = -1;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (dj = calloc(1, sizeof(*dj))) == NULL) {
		free(j);
		return -1;
	}
	*dj = (struct data_job){ .rt = rt, .sb = sb, .cache = sb->cache,
	    .owner = sb->quota->owner };
	j->key = sb->key;
	memcpy(j->project, sb->project, sizeof(j->project));
	j->op = op == SBX_REQ_RESET ? DATA_RESET : DATA_SNAPSHOT;
	strlcpy(j->snapshot, snapshot, sizeof(j->snapshot));
	j->max_snapshots = rt->cfg->max_snapshots;
	j->nservices = (uint32_t)sb->nservices;
	for (i = 0; i < sb->nservices; i++) {
		if ((s = config_service(rt->cfg, sb->svc[i].conn.name)) != NULL)
			mask |= 1U << (s - rt->cfg->services);
		j->svc[i].conn = sb->svc[i].conn;
		j->svc[i].pid = sb->svc[i].pid;
		j->svc[i].host_uid = sb->svc[i].host_uid;
		/* Fail closed: a range not pinned, no session in it. */
		if (sb->svc[i].host_uid != 0 && idmap_pin(&rt->idmap,
		    sb->svc[i].host_uid) == -1)
			goto out;
		if (sb->svc[i].host_uid != 0)
			dj->pins[dj->npins++] = sb->svc[i].host_uid;
	}
	/* The worker's own deadlines end first: a wait for the sandbox's
	 * lock (another job's tidy-up), then the work. */
	deadline = now_ms() + ((int64_t)rt->cfg->runtime_timeout * 2 + 10) *
	    1000;
	rc = resident_send(rt, sb, j, mask, sizeof(struct data_result),
	    deadline, data_done, dj, data_exited, dj);
	if (rc == -1)
		rc = worker_spawn_held(rt->pool, JOB_DATA, mask, j, sizeof(*j),
		    sizeof(struct data_result), deadline, data_done, dj,
		    data_exited, dj);
out:
	explicit_bzero(j, sizeof(*j));
	free(j);
	if (rc == -1) {
		unpin(dj);
		free(dj);
	}
	return rc;
}
