/*
 * rtdouble.c - the runtime double (rtdouble.h): what a unit test or the
 * bench monitor gets in place of podman. A provision completes at once
 * (or, deferred, at rtd_complete) with the services on 127.0.0.1, a
 * reshape reports its kept services as they run, is_live answers as told.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "rtdouble.h"

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
	strlcpy(o.message, d->fail_with ? "double says no" : "ready",
	    sizeof(o.message));
	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].keep) {	/* reported as it runs */
			o.svc[i] = sb->svc[i];
			o.svc[i].keep = false;
			memset(o.svc[i].conn.password, 0, SBX_SECRET_MAX);
			continue;
		}
		/* Ports from 40000, wrapping within 20000-59999: a bench
		 * fills the cache with many thousands. */
		strlcpy(o.svc[i].conn.name, sb->svc[i].conn.name, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.host, "127.0.0.1", SBX_HOST_MAX);
		o.svc[i].conn.port = (20000 + d->port_seq++) % 40000 + 20000;
		strlcpy(o.svc[i].conn.user, "default", SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.database, "0", SBX_SLUG_MAX);
		o.svc[i].pid = getpid();
		o.svc[i].pidfd = -1;
	}
	cache_provisioned(sb, &o);
}

static int
rtd_provision(void *impl, struct sbx_sandbox *sb)
{
	struct rtdouble *d = impl;

	if (d->refuse_provisions > 0) {
		d->refuse_provisions--;
		return -1;
	}
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
	if (d->fail_teardowns > 0) {
		d->fail_teardowns--;
		cache_teardown_failed(sb, "podman rm: refused (rtdouble).");
		return 0;
	}
	cache_torn_down(sb);
	return 0;
}

/* A warm set: every service at once, passwords nobody saw ("warm-N"). */
static int
rtd_claim(void *impl, struct sbx_sandbox *sb)
{
	struct rtdouble *d = impl;
	size_t i;

	if (d->warm == 0)
		return -1;
	d->warm--;
	d->claims++;
	for (i = 0; i < sb->nservices; i++) {
		struct sbx_svc *s = &sb->svc[i];

		strlcpy(s->conn.host, "127.0.0.1", SBX_HOST_MAX);
		s->conn.port = (20000 + d->port_seq++) % 40000 + 20000;
		snprintf(s->conn.password, SBX_SECRET_MAX, "warm-%d-%zu",
		    d->claims, i);
		s->pid = getpid();
		s->pidfd = -1;
		s->warm = (unsigned)d->claims;
	}
	if (d->claim_ports == 1)
		d->claim_pending = sb;
	return d->claim_ports;
}

void
rtd_claim_complete(struct rtdouble *d, enum sbx_code code)
{
	struct sbx_sandbox *sb = d->claim_pending;

	d->claim_pending = NULL;
	if (sb != NULL)
		cache_claimed(sb, code, code == SBX_OK ? "ok" : "the runtime "
		    "could not open the sandbox's ports to you.");
}

/* A reset or snapshot answered: its worker exits now, or when told. */
static void
rtd_data_answer(struct rtdouble *d, struct sbx_sandbox *sb)
{
	struct cache *c = sb->cache;
	uid_t owner = sb->quota->owner;

	cache_data_done(sb, d->data_code, d->data_code == SBX_OK ? "ok" :
	    "the data job failed (rtdouble).");
	if (!d->data_linger) {
		cache_data_exited(c, owner);
		return;
	}
	d->data_running++;
	d->data_cache = c;
	d->data_owner = owner;
}

void
rtd_data_exit(struct rtdouble *d)
{
	for (; d->data_running > 0; d->data_running--)
		cache_data_exited(d->data_cache, d->data_owner);
}

/* A reset or snapshot: ends at once with data_code, or when told. */
static int
rtd_data(void *impl, struct sbx_sandbox *sb, enum sbx_req_type op,
    const char *snapshot)
{
	struct rtdouble *d = impl;

	(void)op;
	d->datas++;
	strlcpy(d->data_snapshot, snapshot, sizeof(d->data_snapshot));
	if (d->data_deferred) {
		d->data_pending = sb;
		return 0;
	}
	rtd_data_answer(d, sb);
	return 0;
}

void
rtd_data_complete(struct rtdouble *d)
{
	struct sbx_sandbox *sb = d->data_pending;

	d->data_pending = NULL;
	if (sb != NULL)
		rtd_data_answer(d, sb);
}

const struct sbx_runtime_ops rtd_ops = {
	.provision = rtd_provision,
	.is_live = rtd_is_live,
	.teardown = rtd_teardown,
	.claim = rtd_claim,
	.data = rtd_data,
};

void
rtd_complete(struct rtdouble *d)
{
	int i, n = d->npending;

	d->npending = 0;
	for (i = 0; i < n; i++)
		rtd_finish(d, d->pending[i]);
}
