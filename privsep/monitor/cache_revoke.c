/*
 * cache_revoke.c - a reload's revocation: what the new policies no
 * longer allow a sandbox is taken from it, once it is idle.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#include <string.h>

#include "audit.h"
#include "cache.h"
#include "cache_revoke.h"

static void
revoke_one(struct sbx_sandbox *sb, char (*keep)[SBX_SLUG_MAX], size_t n)
{
	struct sbx_waiter *w;
	size_t i;

	if (n == 0) {
		audit_sandbox(AUDIT_REVOKE, sb, SBX_OK, "services=all");
		if (!cache_teardown_start(sb))
			sb->cache->revoke_busy++;	/* asked again */
		return;
	}
	/* A request of our own, with the smaller set, and no one to tell. */
	if ((w = cache_waiter_new(SBX_REQ_SANDBOX, (struct sbx_reply){ NULL,
	    NULL })) == NULL)
		return;
	strlcpy(w->project, sb->project, sizeof(w->project));
	w->nservices = n;
	for (i = 0; i < n; i++)
		strlcpy(w->services[i], keep[i], sizeof(w->services[i]));
	audit_sandbox(AUDIT_REVOKE, sb, SBX_OK, "kept=%zu of=%zu", n,
	    sb->nservices);
	cache_waiter_add(sb, w, true);
	cache_run(sb);
}

size_t
cache_revoke(struct cache *c, cache_allowed_fn allowed, void *arg)
{
	char keep[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	struct sbx_sandbox *sb, *next;
	size_t n, count = 0;

	c->revoke_busy = 0;
	RB_FOREACH_SAFE(sb, sbx_tree, &c->tree, next) {
		/* Asked again once idle: a request the new policy refuses
		 * never reaches the cache, so that may be all it gets. */
		if (sb->state != SB_READY || !TAILQ_EMPTY(&sb->waiters)) {
			c->revoke_busy++;
			continue;
		}
		if ((n = allowed(arg, sb, keep)) >= sb->nservices)
			continue;
		revoke_one(sb, keep, n);
		count++;
	}
	return count;
}
