/*
 * metrics_fmt.c - the monitor's counters (struct metrics_snap) in
 * Prometheus' text exposition format, into the file JOB_METRICS opened.
 * runs in: sbx-worker's JOB_METRICS, in its child that dropped to sbx-job
 *   (runtime deny filter and job allowlist: jobuser.c)
 */
#include <stdio.h>

#include "code.h"
#include "metrics_fmt.h"
#include "metrics_snap.h"

static const double bucket_s[METRICS_NBUCKETS] = METRICS_BUCKETS_S;

static const char *const event_names[METRICS_NEVENTS] = { "provision",
    "hit", "evict", "release", "expire", "refuse", "adopt", "discard",
    "revoke" };

static void
write_counters(FILE *f, const struct metrics_snap *m)
{
	int op, c, ev;

	fputs("# HELP sbx_requests_total Answers the monitor gave, by op and "
	    "result.\n# TYPE sbx_requests_total counter\n", f);
	for (op = 1; op < SBX_REQ_MAX; op++)
		for (c = 0; c < SBX_CODE_MAX; c++)
			if (m->answers[op][c] != 0)
				fprintf(f, "sbx_requests_total{op=\"%s\","
				    "result=\"%s\"} %llu\n", sbx_req_name(op),
				    sbx_code_name((enum sbx_code)c),
				    (unsigned long long)m->answers[op][c]);
	fputs("# HELP sbx_events_total Sandbox events of the audit trail "
	    "(provision, hit, evict, release, expire, refuse, adopt, discard, "
	    "revoke), by result.\n# TYPE sbx_events_total counter\n", f);
	for (ev = 0; ev < METRICS_NEVENTS; ev++)
		for (c = 0; c < SBX_CODE_MAX; c++)
			if (m->events[ev][c] != 0)
				fprintf(f, "sbx_events_total{event=\"%s\","
				    "result=\"%s\"} %llu\n", event_names[ev],
				    sbx_code_name((enum sbx_code)c),
				    (unsigned long long)m->events[ev][c]);
}

static void
write_provisions(FILE *f, const struct metrics_snap *m)
{
	const struct metrics_svc *s;
	uint32_t i;
	size_t b;
	int c;

	fputs("# HELP sbx_provisions_total Services provisioned, by result."
	    "\n# TYPE sbx_provisions_total counter\n", f);
	for (i = 0, s = m->svc; i < m->nservices; i++, s++)
		for (c = 0; c < SBX_CODE_MAX; c++)
			if (c == SBX_OK || s->result[c] != 0)
				fprintf(f, "sbx_provisions_total{service="
				    "\"%s\",result=\"%s\"} %llu\n", s->name,
				    sbx_code_name((enum sbx_code)c),
				    (unsigned long long)s->result[c]);
	fputs("# HELP sbx_provision_seconds Time from request to ready, "
	    "successful provisions.\n# TYPE sbx_provision_seconds histogram\n",
	    f);
	for (i = 0, s = m->svc; i < m->nservices; i++, s++) {
		for (b = 0; b < METRICS_NBUCKETS; b++)
			fprintf(f, "sbx_provision_seconds_bucket{service=\"%s\","
			    "le=\"%g\"} %llu\n", s->name, bucket_s[b],
			    (unsigned long long)s->bucket[b]);
		fprintf(f, "sbx_provision_seconds_bucket{service=\"%s\","
		    "le=\"+Inf\"} %llu\n", s->name,
		    (unsigned long long)s->count);
		fprintf(f, "sbx_provision_seconds_sum{service=\"%s\"} %.3f\n",
		    s->name, (double)s->sum_ms / 1000.0);
		fprintf(f, "sbx_provision_seconds_count{service=\"%s\"} %llu\n",
		    s->name, (unsigned long long)s->count);
	}
}

/* One series per service and kind of pool: its own, its projects'. */
static void
pool_series(FILE *f, const struct metrics_snap *m, const char *name,
    const char *help, const char *type, int field)
{
	static const char *const kind[2] = { "service", "projects" };
	const struct metrics_pool *p;
	uint32_t i, k;

	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	for (i = 0; i < m->nservices; i++)
		for (k = 0; k < 2; k++) {
			p = &m->svc[i].pool[k];
			fprintf(f, "%s{service=\"%s\",pool=\"%s\"} %llu\n",
			    name, m->svc[i].name, kind[k], (unsigned long long)
			    (field == 0 ? p->ready : field == 1 ? p->target :
			    field == 2 ? p->claims : p->misses));
		}
}

/* The warm pools: size, target, and the new agents they met. */
static void
write_pools(FILE *f, const struct metrics_snap *m)
{
	pool_series(f, m, "sbx_warm_pool_size", "Warm containers ready, per "
	    "service and pool (its own; its projects' summed).", "gauge", 0);
	pool_series(f, m, "sbx_warm_pool_target", "Warm containers the pool "
	    "keeps now: the recent peak of new agents, within warm and "
	    "warm_max and warm_memory.", "gauge", 1);
	pool_series(f, m, "sbx_warm_claims_total", "New agents' requests "
	    "served from the pool.", "counter", 2);
	pool_series(f, m, "sbx_warm_misses_total", "New agents' requests "
	    "the pool had no container for.", "counter", 3);
}

static void
write_gauges(FILE *f, const struct metrics_snap *m)
{
	uint32_t i;

	fprintf(f, "# HELP sbx_sandboxes Sandboxes the monitor holds.\n"
	    "# TYPE sbx_sandboxes gauge\nsbx_sandboxes %llu\n",
	    (unsigned long long)m->sandboxes);
	fputs("# HELP sbx_warm_containers Warm containers ready, per service."
	    "\n# TYPE sbx_warm_containers gauge\n", f);
	for (i = 0; i < m->nservices; i++)
		fprintf(f, "sbx_warm_containers{service=\"%s\"} %u\n",
		    m->svc[i].name, m->svc[i].warm);
	write_pools(f, m);
	fprintf(f, "# HELP sbx_open_fds Descriptors the monitor has open.\n"
	    "# TYPE sbx_open_fds gauge\nsbx_open_fds %llu\n"
	    "# HELP sbx_max_fds The monitor's descriptor limit.\n"
	    "# TYPE sbx_max_fds gauge\nsbx_max_fds %llu\n",
	    (unsigned long long)m->fds_open, (unsigned long long)m->fds_limit);
	fprintf(f, "# HELP sbx_uid_ranges Host uid ranges taken: sandboxes' "
	    "and warm containers'.\n# TYPE sbx_uid_ranges gauge\n"
	    "sbx_uid_ranges %u\n# HELP sbx_max_uid_ranges userns_slots.\n"
	    "# TYPE sbx_max_uid_ranges gauge\nsbx_max_uid_ranges %u\n",
	    m->uid_ranges, m->uid_ranges_max);
}

/* The whole exposition to f; 0, or -1 if a write failed. */
int
metrics_format(FILE *f, const struct metrics_snap *m)
{
	write_gauges(f, m);
	write_counters(f, m);
	write_provisions(f, m);
	return ferror(f) ? -1 : 0;
}
