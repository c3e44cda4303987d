/*
 * cache_revoke.h - a reload's revocation: what the new policies no
 * longer allow a sandbox is taken from it, once it is idle
 * (cache_revoke.c).
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#ifndef SBX_CACHE_REVOKE_H
#define SBX_CACHE_REVOKE_H

#include <stddef.h>

#include "msg.h"

struct cache;
struct sbx_sandbox;

/*
 * SIGHUP: allowed() writes the services of sb that its project still
 * offers its uid (in sb's order) and returns how many. A sandbox that
 * keeps none is torn down, one that keeps fewer loses the others. An
 * entry that is busy (provisioning, or requests queued) is skipped and
 * counted in revoke_busy: the caller asks again while that is not 0.
 */
typedef size_t (*cache_allowed_fn)(void *arg, const struct sbx_sandbox *sb,
    char (*out)[SBX_SLUG_MAX]);
size_t	cache_revoke(struct cache *, cache_allowed_fn, void *arg);

#endif
