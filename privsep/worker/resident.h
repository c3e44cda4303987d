/*
 * resident.h - JOB_RESIDENT: a sandbox's data worker that stays
 * (resident.c).
 * runs in: sbx-worker's JOB_RESIDENT (root, runtime deny filter); the
 *   sessions it forks as data.c's (the sandbox's prober uid, session
 *   allowlist)
 */
#ifndef SBX_WORKER_RESIDENT_H
#define SBX_WORKER_RESIDENT_H

#include <stddef.h>

struct resident_ask;
struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	resident_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

/* Its check of an ask (apart for its unit test): 0, or -1. */
int	resident_ask_valid(const struct resident_ask *, size_t len);

#endif
