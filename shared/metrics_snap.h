/*
 * metrics_snap.h - the monitor's counters and gauges as one flat struct,
 * rendered by a worker (JOB_METRICS, privsep/worker/metrics.c) into metrics_file
 * in Prometheus' text format, for node_exporter's textfile collector.
 * runs in: the monitor (root, monitor allowlist once started) and
 *   sbx-worker's JOB_METRICS (root, runtime deny filter)
 *
 * Labels are bounded sets only: an op, a result code, an event, a
 * configured service name; never a uid, agent or project.
 */
#ifndef SBX_METRICS_SNAP_H
#define SBX_METRICS_SNAP_H

#include <stdint.h>

#include "config.h"
#include "msg.h"

#define METRICS_NEVENTS	9	/* the audit events, audit.h's order */
#define METRICS_NBUCKETS	10

/* The histogram's upper bounds, in seconds. */
#define METRICS_BUCKETS_S	{ 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120 }

/* A service's warm pools of one kind: its own, or its projects' summed. */
struct metrics_pool {
	uint32_t	ready;		/* members ready now */
	uint32_t	target;		/* what demand asks (demand.c) */
	uint64_t	claims;		/* new agents served from it */
	uint64_t	misses;		/* new agents it had none for */
};

struct metrics_svc {
	char		name[SBX_SLUG_MAX];
	uint64_t	result[SBX_CODE_MAX];
	uint64_t	bucket[METRICS_NBUCKETS];	/* cumulative */
	uint64_t	count;
	uint64_t	sum_ms;
	uint32_t	warm;		/* ready now */
	uint32_t	pad;
	struct metrics_pool pool[2];	/* its own, its projects' */
};

struct metrics_snap {
	char		path[CFG_STR];		/* metrics_file */
	uint64_t	answers[SBX_REQ_MAX][SBX_CODE_MAX];
	uint64_t	events[METRICS_NEVENTS][SBX_CODE_MAX];
	uint32_t	nservices;		/* svc[], sbx.conf's order */
	struct metrics_svc svc[SBX_MAX_SERVICES];
	uint64_t	sandboxes;
	uint64_t	fds_open, fds_limit;
	uint32_t	uid_ranges, uid_ranges_max;	/* idmap.c's slots */
};

#endif
