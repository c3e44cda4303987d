/*
 * provision.h - the runtime jobs: start and probe, claim, remove, rename
 * (provision.c).
 * runs in: sbx-worker's runtime jobs and a provision's service children
 *   (root, runtime deny filter)
 */
#ifndef SBX_PROVISION_H
#define SBX_PROVISION_H

#include <stddef.h>

struct sbx_config;

/* The jobs' bodies (main.c's table): each writes its one result to fd;
 * its return is its exit. */
int	provision_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	claim_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	teardown_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	evict_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	warm_start_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	warm_remove_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	rename_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
