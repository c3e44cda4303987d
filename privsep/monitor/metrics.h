/*
 * metrics.h - counters for the fleet view, written for node_exporter's
 * textfile collector (metrics_file in sbx.conf) by a worker.
 * runs in: the monitor (root, monitor allowlist once started)
 *
 * The monitor opens no network port for them.
 */
#ifndef SBX_METRICS_H
#define SBX_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "metrics_snap.h"
#include "msg.h"
#include "jobpool.h"

void	metrics_answer(enum sbx_req_type, enum sbx_code);
void	metrics_event(enum audit_event, enum sbx_code);
void	metrics_provision(const char (*services)[SBX_SLUG_MAX], size_t n,
	    enum sbx_code, int64_t ms);
/* Every few seconds from the loop: g holds the gauges (warm per service
 * in svc[i].warm, sbx.conf's order); the counters are added and a worker
 * writes the file, unless the last one is still at it. */
void	metrics_write(struct worker_pool *, const struct sbx_config *,
	    struct metrics_snap *g);

#endif
