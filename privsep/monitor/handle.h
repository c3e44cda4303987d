/*
 * handle.h - meaning of each validated request.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#ifndef SBX_HANDLE_H
#define SBX_HANDLE_H

#include "cache.h"
#include "config.h"
#include "project.h"
#include "subuid.h"

struct handler_env {
	const struct sbx_config		*cfg;
	const struct project_table	*projects;
	struct cache			*cache;
	const struct subuid_table	*subuids;	/* NULL: none */
	/* Warm containers ready of service i (config order); NULL: none. */
	unsigned	(*warm_ready)(const void *arg, size_t i);
	const void	*warm_arg;
};

/*
 * What each request type means, given the caller's uid (dispatch.c's
 * table calls them). Each answers through r, now or when the cache's
 * work completes. A status answer carries nstatus and each pooled
 * service's ready count (services[], warm[]); the reply writer adds the
 * sandboxes' records.
 */
typedef void (*handler_fn)(const struct handler_env *, uid_t,
    const union sbx_req_any *, struct sbx_reply);

void	handle_ping(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_available(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_sandbox(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_release(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_status(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_reset(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);
void	handle_snapshot(const struct handler_env *, uid_t,
	    const union sbx_req_any *, struct sbx_reply);

#endif
