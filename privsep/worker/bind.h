/*
 * bind.h - JOB_BIND: state_dir, the broker's chroot and the agent socket,
 * bound for the monitor (bind.c).
 * runs in: sbx-worker's JOB_BIND (root, runtime deny filter)
 */
#ifndef SBX_WORKER_BIND_H
#define SBX_WORKER_BIND_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	bind_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
