/*
 * data.c - a reset or a snapshot of a ready sandbox: the monitor has
 * decided whose it is (cache.c: the caller's own, one at a time); a
 * worker does the work in the sandbox's services (worker/data.c) and
 * answers one data_result, checked here before the caller sees it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "runtime.h"

struct data_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;
};

static void
data_done(void *arg, const void *result, size_t len)
{
	struct data_job *j = arg;
	const struct data_result *r = result;
	struct sbx_sandbox *sb = j->sb;

	free(j);
	if (r == NULL || len != sizeof(*r) || !data_result_sound(r)) {
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
	size_t i;
	int rc = -1;

	if ((j = calloc(1, sizeof(*j))) == NULL ||
	    (dj = calloc(1, sizeof(*dj))) == NULL) {
		free(j);
		return -1;
	}
	*dj = (struct data_job){ .rt = rt, .sb = sb };
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
	}
	/* The worker's own deadlines end first: a wait for the sandbox's
	 * lock (another job's tidy-up), then the work. */
	rc = worker_spawn(rt->pool, JOB_DATA, mask, j, sizeof(*j),
	    sizeof(struct data_result), now_ms() +
	    ((int64_t)rt->cfg->runtime_timeout * 2 + 10) * 1000, data_done,
	    dj);
	explicit_bzero(j, sizeof(*j));
	free(j);
	if (rc == -1)
		free(dj);
	return rc;
}
