/*
 * reload.h - JOB_RELOAD: the projects and the subordinate uids, read as
 * root's files for the monitor (reload.c).
 * runs in: sbx-worker's JOB_RELOAD (root: the opens, the seeds' copies and
 *   the result; the parse in a child that drops to sbx-job, jobuser.c),
 *   runtime deny filter
 */
#ifndef SBX_WORKER_RELOAD_H
#define SBX_WORKER_RELOAD_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	reload_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
