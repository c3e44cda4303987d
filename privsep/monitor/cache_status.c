/*
 * cache_status.c - what the table shows: status, a lease's sandbox, the
 * work in flight at a stop. Reads alone.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#include <string.h>

#include "cache.h"
#include "cache_status.h"

size_t
cache_status(struct cache *c, struct sbx_status_rec *out, size_t max)
{
	return cache_status_of(c, NULL, out, max);
}

struct sbx_sandbox *
cache_find_lease(struct cache *c, int pidfd)
{
	struct sbx_sandbox *sb;

	RB_FOREACH(sb, sbx_tree, &c->tree)
		if (sb->lease.pidfd == pidfd)
			return sb;
	return NULL;
}

size_t
cache_status_of(struct cache *c, const uid_t *only, struct sbx_status_rec *out,
    size_t max)
{
	struct sbx_sandbox *sb;
	int64_t now = c->clock();
	size_t n = 0, i;

	RB_FOREACH(sb, sbx_tree, &c->tree) {
		if (n == max)
			break;
		if ((sb->state != SB_READY && sb->state != SB_DATA) ||
		    (only != NULL && sb->key.uid != *only))
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		out[n].uid = (uint32_t)sb->key.uid;
		strlcpy(out[n].agent, sb->key.agent, sizeof(out[n].agent));
		strlcpy(out[n].project, sb->project, sizeof(out[n].project));
		out[n].nservices = (uint32_t)sb->nservices;
		for (i = 0; i < sb->nservices; i++)
			strlcpy(out[n].services[i], sb->svc[i].conn.name,
			    sizeof(out[n].services[i]));
		out[n].age_s = (uint64_t)(now - sb->created_ms) / 1000;
		out[n].idle_s = (uint64_t)(now - sb->used_ms) / 1000;
		out[n].bind_pid = sb->lease.pidfd >= 0 ? sb->lease.pid : 0;
		n++;
	}
	return n;
}

/* Entries with work in flight, for a clean shutdown. */
size_t
cache_busy(const struct cache *c)
{
	struct sbx_sandbox *sb;
	size_t n = 0;

	RB_FOREACH(sb, sbx_tree, (struct sbx_tree *)(uintptr_t)&c->tree)
		if (sb->state == SB_PROVISIONING || sb->state == SB_TEARING ||
		    sb->state == SB_DATA)
			n++;
	return n;
}
