/*
 * claims.c - the claims of warm tcp containers that come together share
 * one JOB_CLAIM: one iptables-restore hands all their ports over, where
 * one each queued behind the others in the kernel.
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * A claim whose sandbox has a tcp service waits here (rt_claim); at the
 * end of a pass of the loop the claims pending go in one job, unless a
 * job runs: those that come meanwhile go when it has answered. At most
 * one job, of at most CLAIM_BATCH claims, so that a burst makes two
 * jobs, not one per claim; nothing here waits. Each claim's reply goes
 * out only once its batch's answer says its ports are its owner's
 * (claims_result_valid): an answer not of that form, a worker that died
 * or overran, or one that could not start, refuses every claim of its
 * batch, and the cache tears each down (cache_claimed).
 */
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "results.h"
#include "runtime.h"
#include "service.h"

/* The claims of a job, the sandboxes the cache keeps in SB_PROVISIONING
 * until cache_claimed. */
struct claim_batch {
	struct rt_cli		*rt;
	size_t			 n;
	struct sbx_sandbox	*sb[CLAIM_BATCH];
};

bool
claims_room(const struct rt_cli *rt)
{
	return rt->claims.npending < CLAIM_BATCH;
}

void
claims_add(struct rt_cli *rt, struct sbx_sandbox *sb)
{
	rt->claims.pending[rt->claims.npending++] = sb;
	rt->warm.claiming++;
}

/* Each of b's claims answered: its ports its owner's (ok[i]), or refused
 * and torn down. */
static void
batch_end(struct claim_batch *b, const bool *ok, const char *why)
{
	struct rt_cli *rt = b->rt;
	struct sbx_sandbox *sb;
	size_t i;

	for (i = 0; i < b->n; i++) {
		sb = b->sb[i];
		rt->warm.claiming--;
		if (!ok[i])
			log_warnx("claim uid=%u agent=%s: %s",
			    (unsigned)sb->key.uid, sb->key.agent, why);
		cache_claimed(sb, ok[i] ? SBX_OK : SBX_E_RUNTIME_FAILED,
		    ok[i] ? "ok" : "the runtime could not open the "
		    "sandbox's ports to you.");
	}
	free(b);
}

static void
claims_done(void *arg, const void *result, size_t len)
{
	struct claim_batch *b = arg;
	struct claim_results r;
	bool ok[CLAIM_BATCH], valid;
	size_t i;

	b->rt->claims.running = false;
	valid = claims_result_valid(result, len, b->n, &r);
	for (i = 0; i < b->n; i++)
		ok[i] = valid && r.code[i] == SBX_OK;
	batch_end(b, ok, result == NULL ? "its ports' guard did not "
	    "finish" : !valid ? "its ports' guard answered out of form" :
	    "its ports could not be given to the owner (see above)");
}

/* Claim sb's tcp ports in c: each one's name, slot, port and range. */
static void
claim_of(const struct rt_cli *rt, const struct sbx_sandbox *sb,
    struct job_claim *c, uint32_t *mask)
{
	const struct service_cfg *s;
	struct job_claim_port *p;
	size_t i;

	c->key = sb->key;
	for (i = 0; i < sb->nservices; i++) {
		if ((s = config_service(rt->cfg, sb->svc[i].conn.name)) ==
		    NULL || (s->transport & TRANSPORT_TCP) == 0)
			continue;
		*mask |= 1U << (s - rt->cfg->services);
		p = &c->port[c->nports++];
		strlcpy(p->service, s->name, sizeof(p->service));
		p->slot = sb->svc[i].warm;
		p->port = sb->svc[i].conn.port;
		p->host_uid = sb->svc[i].host_uid;
	}
}

/* b's job started; -1: no worker could take it. */
static int
batch_spawn(struct rt_cli *rt, struct claim_batch *b)
{
	struct job_claims *j;
	uint32_t mask = 0;
	size_t i;
	int rc;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->n = (uint32_t)b->n;
	for (i = 0; i < b->n; i++)
		claim_of(rt, b->sb[i], &j->v[i], &mask);
	rc = worker_spawn(rt->pool, JOB_CLAIM, mask, j, sizeof(*j),
	    sizeof(struct claim_results), now_ms() +
	    ((int64_t)rt->cfg->runtime_timeout + 10) * 1000, claims_done, b);
	free(j);
	return rc;
}

void
claims_send(struct rt_cli *rt)
{
	struct claim_batch *b;
	bool ok[CLAIM_BATCH] = { false };
	size_t i;

	if (rt->claims.running || rt->claims.npending == 0)
		return;
	if ((b = calloc(1, sizeof(*b))) == NULL)
		return;		/* the next pass tries again */
	b->rt = rt;
	b->n = rt->claims.npending;
	for (i = 0; i < b->n; i++)
		b->sb[i] = rt->claims.pending[i];
	rt->claims.npending = 0;
	if (batch_spawn(rt, b) == -1) {
		/* Fail closed: the ports stay the pool's, open to nobody. */
		log_warn("cannot start a runtime worker");
		batch_end(b, ok, "its ports' guard could not start");
		return;
	}
	rt->claims.running = true;
}
