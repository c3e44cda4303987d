/*
 * metrics.c - JOB_METRICS: the monitor's counters (struct metrics_snap)
 * in Prometheus' text exposition format.
 * runs in: sbx-worker's JOB_METRICS (root, runtime deny filter)
 *
 * The file is written to PATH.tmp and renamed, so the collector never
 * reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "metrics_snap.h"
#include "slug.h"
#include "work.h"

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

/* Every name a label: ended within its field and a slug's characters,
 * as the monitor's own services are. */
static int
snap_valid(const struct metrics_snap *m)
{
	uint32_t i;

	if (memchr(m->path, '\0', sizeof(m->path)) == NULL ||
	    m->path[0] != '/' || m->nservices > SBX_MAX_SERVICES)
		return 0;
	for (i = 0; i < m->nservices; i++)
		if (memchr(m->svc[i].name, '\0', SBX_SLUG_MAX) == NULL ||
		    strspn(m->svc[i].name, SLUG_BYTES) !=
		    strlen(m->svc[i].name))
			return 0;
	return 1;
}

int
metrics_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	const struct metrics_snap *m = job;
	char tmp[CFG_STR + 8];
	FILE *f = NULL;
	uint32_t code = SBX_E_INTERNAL;
	int out = -1, bad;

	(void)cfg;
	(void)len;
	/* Root writes in the collector's directory: PATH.tmp is made anew,
	 * never followed if it is a link someone put there. */
	if (!snap_valid(m) || snprintf(tmp, sizeof(tmp), "%s.tmp",
	    m->path) >= (int)sizeof(tmp) || (unlink(tmp) == -1 &&
	    errno != ENOENT) || (out = open(tmp, O_WRONLY | O_CREAT | O_EXCL |
	    O_NOFOLLOW | O_CLOEXEC, 0644)) == -1 ||
	    (f = fdopen(out, "w")) == NULL) {
		log_debug("metrics: cannot write %s.tmp", m->path);
		if (out != -1)
			close(out);
		return write_all(fd, &code, sizeof(code), now_ms() + 1000) ==
		    0 ? 0 : 1;
	}
	write_gauges(f, m);
	write_counters(f, m);
	write_provisions(f, m);
	bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, m->path) == -1) {
		log_warn("metrics: %s", m->path);
		unlink(tmp);
	} else
		code = SBX_OK;
	return write_all(fd, &code, sizeof(code), now_ms() + 1000) == 0 ? 0 : 1;
}
