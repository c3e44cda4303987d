/*
 * rt_seen.c - the check of each entry of the runtime's listing that a
 * worker wrote (JOB_LIST, worker/rt_run.c), at start, before the loop:
 * the listing names containers after agents, whose names tenants choose.
 */
#include <limits.h>
#include <string.h>

#include "runtime.h"
#include "slug.h"

/* A container name of ours: sbx-, slugs and numbers joined by dashes. */
#define SEEN_NAME_CHARS	"abcdefghijklmnopqrstuvwxyz0123456789._-"

/* One entry as a worker wrote it: strings end within their fields, the
 * numbers are what parse_seen can yield. */
bool
rt_seen_sound(const struct rt_seen *c)
{
	return c->name[0] != '\0' &&
	    memchr(c->name, '\0', sizeof(c->name)) != NULL &&
	    strspn(c->name, SEEN_NAME_CHARS) == strlen(c->name) &&
	    memchr(c->agent, '\0', sizeof(c->agent)) != NULL &&
	    (c->pool || slug_field_valid(c->agent, sizeof(c->agent))) &&
	    c->pid >= 0 && c->port >= 0 && c->port <= 65535 &&
	    (c->pool ? c->uid == (uid_t)-1 && c->agent[0] == '\0' :
	    c->uid <= INT_MAX);
}
