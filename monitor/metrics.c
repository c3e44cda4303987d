/*
 * metrics.c - the monitor's counters in Prometheus' text exposition
 * format, for node_exporter's textfile collector.
 * runs in: the monitor's loop (root, unfiltered)
 *
 * Labels are bounded sets only: an op, a result code, an event, a
 * configured service name. No uid, agent or project is ever a label:
 * tenants choose those, and each new value would be a new time series in
 * every fleet's Prometheus (sbx.conf(5), metrics_file). Counters live in
 * fixed arrays; nothing here allocates. The file is written to PATH.tmp
 * and renamed, so the collector never reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "metrics.h"

#define NEVENTS		(AUDIT_REVOKE + 1)
#define NBUCKETS	10

static const double bucket_s[NBUCKETS] = { 0.05, 0.1, 0.25, 0.5, 1, 2.5,
    5, 10, 30, 120 };

static const char *const event_names[NEVENTS] = {
	[AUDIT_PROVISION] = "provision", [AUDIT_HIT] = "hit",
	[AUDIT_EVICT] = "evict", [AUDIT_RELEASE] = "release",
	[AUDIT_EXPIRE] = "expire", [AUDIT_REFUSE] = "refuse",
	[AUDIT_ADOPT] = "adopt", [AUDIT_DISCARD] = "discard",
	[AUDIT_REVOKE] = "revoke",
};

struct svc_stats {
	char		name[SBX_SLUG_MAX];
	uint64_t	result[SBX_CODE_MAX];
	uint64_t	bucket[NBUCKETS];	/* cumulative at write time */
	uint64_t	count;
	double		sum_s;
};

static uint64_t answers[SBX_REQ_MAX][SBX_CODE_MAX];
static uint64_t events[NEVENTS][SBX_CODE_MAX];
static struct svc_stats svcs[SBX_MAX_SERVICES];

void
metrics_answer(enum sbx_req_type op, enum sbx_code code)
{
	if ((unsigned)op < SBX_REQ_MAX && (unsigned)code < SBX_CODE_MAX)
		answers[op][code]++;
}

void
metrics_event(enum audit_event ev, enum sbx_code code)
{
	if ((unsigned)ev < NEVENTS && (unsigned)code < SBX_CODE_MAX)
		events[ev][code]++;
}

static struct svc_stats *
svc_slot(const char *name)
{
	size_t i;

	for (i = 0; i < SBX_MAX_SERVICES; i++) {
		if (svcs[i].name[0] == '\0')
			strlcpy(svcs[i].name, name, sizeof(svcs[i].name));
		if (strcmp(svcs[i].name, name) == 0)
			return &svcs[i];
	}
	return NULL;	/* only configured services are provisioned */
}

void
metrics_provision(const char (*services)[SBX_SLUG_MAX], size_t n,
    enum sbx_code code, int64_t ms)
{
	struct svc_stats *s;
	size_t i, b;

	for (i = 0; i < n; i++) {
		if ((s = svc_slot(services[i])) == NULL ||
		    (unsigned)code >= SBX_CODE_MAX)
			continue;
		s->result[code]++;
		if (code != SBX_OK)
			continue;
		for (b = 0; b < NBUCKETS; b++)
			if ((double)ms / 1000.0 <= bucket_s[b])
				s->bucket[b]++;
		s->count++;
		s->sum_s += (double)ms / 1000.0;
	}
}

static void
write_counters(FILE *f)
{
	int op, c, ev;

	fputs("# HELP sbx_requests_total Answers the monitor gave, by op and "
	    "result.\n# TYPE sbx_requests_total counter\n", f);
	for (op = 1; op < SBX_REQ_MAX; op++)
		for (c = 0; c < SBX_CODE_MAX; c++)
			if (answers[op][c] != 0)
				fprintf(f, "sbx_requests_total{op=\"%s\","
				    "result=\"%s\"} %llu\n", sbx_req_name(op),
				    sbx_code_name((enum sbx_code)c),
				    (unsigned long long)answers[op][c]);
	fputs("# HELP sbx_events_total Sandbox events of the audit trail "
	    "(provision, hit, evict, release, expire, refuse, adopt, discard, "
	    "revoke), by result.\n# TYPE sbx_events_total counter\n", f);
	for (ev = 0; ev < NEVENTS; ev++)
		for (c = 0; c < SBX_CODE_MAX; c++)
			if (events[ev][c] != 0)
				fprintf(f, "sbx_events_total{event=\"%s\","
				    "result=\"%s\"} %llu\n", event_names[ev],
				    sbx_code_name((enum sbx_code)c),
				    (unsigned long long)events[ev][c]);
}

static void
write_provisions(FILE *f, const char *const *names, size_t n)
{
	struct svc_stats *s;
	size_t i, b;
	int c;

	fputs("# HELP sbx_provisions_total Services provisioned, by result."
	    "\n# TYPE sbx_provisions_total counter\n", f);
	for (i = 0; i < n; i++)
		if ((s = svc_slot(names[i])) != NULL)
			for (c = 0; c < SBX_CODE_MAX; c++)
				if (c == SBX_OK || s->result[c] != 0)
					fprintf(f, "sbx_provisions_total{service="
					    "\"%s\",result=\"%s\"} %llu\n",
					    s->name, sbx_code_name(
					    (enum sbx_code)c), (unsigned long
					    long)s->result[c]);
	fputs("# HELP sbx_provision_seconds Time from request to ready, "
	    "successful provisions.\n# TYPE sbx_provision_seconds histogram\n",
	    f);
	for (i = 0; i < n; i++) {
		if ((s = svc_slot(names[i])) == NULL)
			continue;
		for (b = 0; b < NBUCKETS; b++)
			fprintf(f, "sbx_provision_seconds_bucket{service=\"%s\","
			    "le=\"%g\"} %llu\n", s->name, bucket_s[b],
			    (unsigned long long)s->bucket[b]);
		fprintf(f, "sbx_provision_seconds_bucket{service=\"%s\","
		    "le=\"+Inf\"} %llu\n", s->name,
		    (unsigned long long)s->count);
		fprintf(f, "sbx_provision_seconds_sum{service=\"%s\"} %.3f\n",
		    s->name, s->sum_s);
		fprintf(f, "sbx_provision_seconds_count{service=\"%s\"} %llu\n",
		    s->name, (unsigned long long)s->count);
	}
}

static void
write_gauges(FILE *f, const char *const *names, size_t n,
    const struct metrics_gauges *g)
{
	size_t i;

	fprintf(f, "# HELP sbx_sandboxes Sandboxes the monitor holds.\n"
	    "# TYPE sbx_sandboxes gauge\nsbx_sandboxes %zu\n", g->sandboxes);
	fputs("# HELP sbx_warm_containers Warm containers ready, per service."
	    "\n# TYPE sbx_warm_containers gauge\n", f);
	for (i = 0; i < n; i++)
		fprintf(f, "sbx_warm_containers{service=\"%s\"} %u\n",
		    names[i], g->warm[i]);
	fprintf(f, "# HELP sbx_open_fds Descriptors the monitor has open.\n"
	    "# TYPE sbx_open_fds gauge\nsbx_open_fds %zu\n"
	    "# HELP sbx_max_fds The monitor's descriptor limit.\n"
	    "# TYPE sbx_max_fds gauge\nsbx_max_fds %zu\n", g->fds_open,
	    g->fds_limit);
	fprintf(f, "# HELP sbx_uid_ranges Host uid ranges taken: sandboxes' "
	    "and warm containers'.\n# TYPE sbx_uid_ranges gauge\n"
	    "sbx_uid_ranges %u\n# HELP sbx_max_uid_ranges userns_slots.\n"
	    "# TYPE sbx_max_uid_ranges gauge\nsbx_max_uid_ranges %u\n",
	    g->uid_ranges, g->uid_ranges_max);
}

void
metrics_write(const char *path, const char *const *services,
    size_t nservices, const struct metrics_gauges *g)
{
	char tmp[4096 + 8];
	FILE *f = NULL;
	int fd = -1, bad;

	/* Root writes in the collector's directory: PATH.tmp is made anew,
	 * never followed if it is a link someone put there. */
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", path) >= (int)sizeof(tmp) ||
	    ((unlink(tmp) == -1 && errno != ENOENT) ||
	    (fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0644)) == -1 || (f = fdopen(fd, "w")) == NULL)) {
		log_debug("metrics: cannot write %s.tmp", path);
		if (fd != -1)
			close(fd);
		return;
	}
	write_gauges(f, services, nservices, g);
	write_counters(f);
	write_provisions(f, services, nservices);
	bad = ferror(f);
	if (fclose(f) != 0 || bad || rename(tmp, path) == -1) {
		log_warn("metrics: %s", path);
		unlink(tmp);
	}
}
