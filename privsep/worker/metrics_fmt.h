/*
 * metrics_fmt.h - the monitor's counters in Prometheus' text exposition
 * format (metrics_fmt.c).
 * runs in: sbx-worker's JOB_METRICS, in its child that dropped to sbx-job
 *   (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_METRICS_FMT_H
#define SBX_METRICS_FMT_H

#include <stdio.h>

struct metrics_snap;

/* The exposition of m to f; 0, or -1 if a write failed. */
int	metrics_format(FILE *f, const struct metrics_snap *m);

#endif
