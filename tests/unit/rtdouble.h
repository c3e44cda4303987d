/*
 * rtdouble.h - a test double of the runtime interface (struct sbx_runtime),
 * in the spirit of the seed's MagicMock: it records calls, answers
 * is_live as told, and completes provisions at once or when the test says.
 */
#ifndef SBX_RTDOUBLE_H
#define SBX_RTDOUBLE_H

#include <stdbool.h>
#include <string.h>

#include "cache.h"

#define RTD_MAX_CALLS	64

struct rtd_call {
	struct sbx_key	key;
	size_t		nservices;
	size_t		nkept;		/* a reshape's services kept running */
	size_t		ndropped;	/* and those it removes */
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
};

struct rtdouble {
	bool		live;		/* what is_live answers */
	bool		deferred;	/* provisions wait for rtd_complete() */
	enum sbx_code	fail_with;	/* SBX_OK: succeed */
	int		refuse_teardowns; /* the next N cannot start (no worker) */
	int		provisions, teardowns, is_live_calls;
	struct rtd_call	prov[RTD_MAX_CALLS];
	struct rtd_call	live_calls[RTD_MAX_CALLS];
	struct sbx_sandbox *pending[RTD_MAX_CALLS];
	int		npending;
	unsigned	port_seq;
};

static void
rtd_record(struct rtd_call *c, const struct sbx_sandbox *sb)
{
	size_t i;

	memset(c, 0, sizeof(*c));
	c->key = sb->key;
	c->nservices = sb->nservices;
	for (i = 0; i < sb->nservices; i++) {
		strlcpy(c->services[i], sb->svc[i].conn.name, SBX_SLUG_MAX);
		c->nkept += sb->svc[i].keep;
	}
	if (sb->prev != NULL)
		c->ndropped = sb->nprev - c->nkept;
}

static void
rtd_finish(struct rtdouble *d, struct sbx_sandbox *sb)
{
	struct sbx_outcome o;
	size_t i;

	memset(&o, 0, sizeof(o));
	o.code = d->fail_with;
	strlcpy(o.message, d->fail_with ? "double says no" : "ok",
	    sizeof(o.message));
	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].keep) {	/* reported as it runs */
			o.svc[i] = sb->svc[i];
			o.svc[i].keep = false;
			memset(o.svc[i].conn.password, 0, SBX_SECRET_MAX);
			continue;
		}
		strlcpy(o.svc[i].conn.name, sb->svc[i].conn.name, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.host, "h", SBX_HOST_MAX);
		o.svc[i].conn.port = 40000 + d->port_seq++;
		strlcpy(o.svc[i].conn.user, "u", SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.database, "db", SBX_SLUG_MAX);
		o.svc[i].pid = 1;
		o.svc[i].pidfd = -1;
	}
	cache_provisioned(sb, &o);
}

static int
rtd_provision(void *impl, struct sbx_sandbox *sb)
{
	struct rtdouble *d = impl;

	rtd_record(&d->prov[d->provisions++ % RTD_MAX_CALLS], sb);
	if (d->deferred)
		d->pending[d->npending++] = sb;
	else
		rtd_finish(d, sb);
	return 0;
}

static bool
rtd_is_live(void *impl, struct sbx_sandbox *sb)
{
	struct rtdouble *d = impl;

	rtd_record(&d->live_calls[d->is_live_calls++ % RTD_MAX_CALLS], sb);
	return d->live;
}

static int
rtd_teardown(void *impl, struct sbx_sandbox *sb)
{
	struct rtdouble *d = impl;

	if (d->refuse_teardowns > 0) {
		d->refuse_teardowns--;
		return -1;
	}
	d->teardowns++;
	cache_torn_down(sb);
	return 0;
}

static const struct sbx_runtime_ops rtd_ops = {
	.provision = rtd_provision,
	.is_live = rtd_is_live,
	.teardown = rtd_teardown,
};

/* Complete every deferred provision, oldest first. */
static void
rtd_complete(struct rtdouble *d)
{
	int i, n = d->npending;

	d->npending = 0;
	for (i = 0; i < n; i++)
		rtd_finish(d, d->pending[i]);
}

#endif
