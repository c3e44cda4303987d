/*
 * cache_status.h - what the cache's table shows: status, a lease's
 * sandbox, the work in flight at a stop (cache_status.c).
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#ifndef SBX_CACHE_STATUS_H
#define SBX_CACHE_STATUS_H

#include <stddef.h>
#include <sys/types.h>

struct cache;
struct sbx_sandbox;
struct sbx_status_rec;

/* The sandbox whose lease has this pidfd, or NULL. */
struct sbx_sandbox *cache_find_lease(struct cache *, int pidfd);
/* The ready sandboxes, at most max; of one uid only (*only), or of
 * every uid (only NULL, or cache_status). */
size_t	cache_status(struct cache *, struct sbx_status_rec *, size_t max);
size_t	cache_status_of(struct cache *, const uid_t *only,
	    struct sbx_status_rec *, size_t max);
/* Entries with work in flight, for a clean shutdown. */
size_t	cache_busy(const struct cache *);

#endif
