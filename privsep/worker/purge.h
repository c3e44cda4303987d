/*
 * purge.h - JOB_PURGE, for sbx-monitor --purge: every container, record and
 * run_dir file of this host's sbx (purge.c).
 * runs in: sbx-worker's JOB_PURGE (root, runtime deny filter)
 */
#ifndef SBX_PURGE_H
#define SBX_PURGE_H

#include <stddef.h>

struct sbx_config;

/* JOB_PURGE's body (main.c's table): each removal one line on fd, the
 * admin's stdout; its return is its exit, 1 if anything failed. */
int	purge_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
