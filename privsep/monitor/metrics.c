/*
 * metrics.c - the monitor's counters, for node_exporter's textfile
 * collector (metrics_file).
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * Counting is the loop's: fixed arrays, nothing allocated. Rendering and
 * writing the file is a worker's (JOB_METRICS, privsep/worker/metrics.c),
 * given one flat snapshot every few seconds.
 */
#include <string.h>

#include "iox.h"
#include "metrics.h"

_Static_assert(AUDIT_REVOKE + 1 == METRICS_NEVENTS,
    "metrics_snap.h counts the audit events");

static const double bucket_s[METRICS_NBUCKETS] = METRICS_BUCKETS_S;
static struct metrics_snap snap;	/* counters; the rest at each write */
static bool writing;			/* one JOB_METRICS at a time */

void
metrics_answer(enum sbx_req_type op, enum sbx_code code)
{
	if ((unsigned)op < SBX_REQ_MAX && (unsigned)code < SBX_CODE_MAX)
		snap.answers[op][code]++;
}

void
metrics_event(enum audit_event ev, enum sbx_code code)
{
	if ((unsigned)ev < METRICS_NEVENTS && (unsigned)code < SBX_CODE_MAX)
		snap.events[ev][code]++;
}

static struct metrics_svc *
svc_slot(const char *name)
{
	size_t i;

	for (i = 0; i < SBX_MAX_SERVICES; i++) {
		if (snap.svc[i].name[0] == '\0')
			strlcpy(snap.svc[i].name, name, SBX_SLUG_MAX);
		if (strcmp(snap.svc[i].name, name) == 0)
			return &snap.svc[i];
	}
	return NULL;	/* only configured services are provisioned */
}

void
metrics_provision(const char (*services)[SBX_SLUG_MAX], size_t n,
    enum sbx_code code, int64_t ms)
{
	struct metrics_svc *s;
	size_t i, b;

	for (i = 0; i < n; i++) {
		if ((s = svc_slot(services[i])) == NULL ||
		    (unsigned)code >= SBX_CODE_MAX)
			continue;
		s->result[code]++;
		if (code != SBX_OK)
			continue;
		for (b = 0; b < METRICS_NBUCKETS; b++)
			if ((double)ms / 1000.0 <= bucket_s[b])
				s->bucket[b]++;
		s->count++;
		s->sum_ms += (uint64_t)ms;
	}
}

static void
written(void *arg, const void *result, size_t len)
{
	(void)arg;
	(void)result;
	(void)len;
	writing = false;	/* the worker logged a failure */
}

void
metrics_write(struct worker_pool *pool, const struct sbx_config *cfg,
    struct metrics_snap *g)
{
	const struct metrics_svc *s;
	struct metrics_pool pools[2];
	uint32_t warm;
	size_t i;

	if (writing)
		return;
	memcpy(g->path, cfg->metrics_file, sizeof(g->path));
	memcpy(g->answers, snap.answers, sizeof(g->answers));
	memcpy(g->events, snap.events, sizeof(g->events));
	g->nservices = (uint32_t)cfg->nservices;
	for (i = 0; i < cfg->nservices; i++) {
		warm = g->svc[i].warm;
		memcpy(pools, g->svc[i].pool, sizeof(pools));
		if ((s = svc_slot(cfg->services[i].name)) != NULL)
			g->svc[i] = *s;
		g->svc[i].warm = warm;
		memcpy(g->svc[i].pool, pools, sizeof(pools));
	}
	if (worker_spawn(pool, JOB_METRICS, 0, g, sizeof(*g), sizeof(uint32_t),
	    now_ms() + 10000, written, NULL) == 0)
		writing = true;
}
