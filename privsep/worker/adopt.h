/*
 * adopt.h - JOB_ADOPT: the sandbox records the last monitor left and what
 * the runtime runs of them (adopt.c).
 * runs in: sbx-worker's JOB_ADOPT (root, runtime deny filter)
 */
#ifndef SBX_WORKER_ADOPT_H
#define SBX_WORKER_ADOPT_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	adopt_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
