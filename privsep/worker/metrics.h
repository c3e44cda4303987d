/*
 * metrics.h - JOB_METRICS: the monitor's counters as a file (metrics.c).
 * runs in: sbx-worker's JOB_METRICS (root: the open and the rename; the
 *   formatting in a child that drops to sbx-job, jobuser.c), runtime deny
 *   filter
 */
#ifndef SBX_WORKER_METRICS_H
#define SBX_WORKER_METRICS_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	metrics_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
