/*
 * config_job.h - JOB_CONFIG: sbx.conf for the monitor's start, or every
 * file checked for sbx-monitor -t (config_job.c).
 * runs in: sbx-worker's JOB_CONFIG (root: the opens and the result; the
 *   parse in a child that drops to sbx-job, jobuser.c), runtime deny filter
 */
#ifndef SBX_CONFIG_JOB_H
#define SBX_CONFIG_JOB_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	config_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
