/*
 * handle.c - what each validated request means, given the caller's uid
 * (from SO_PEERCRED, read by the monitor itself), the config and the
 * project policies.
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * Slow work goes to the cache and its runtime.
 */
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "handle.h"
#include "lease.h"
#include "log.h"

static void
send_ans(struct sbx_reply r, const struct sbx_ans *a)
{
	r.fn(r.ctx, a);
}

static void
answer_ok(struct sbx_ans *a, enum sbx_req_type type)
{
	answer_init(a, type, SBX_OK, "ok");
}

/*
 * Whose quotas a uid's requests count toward: the user who owns the
 * subordinate range it is in, else its own. false: refused (subuid =
 * refuse), *owner is the owner for the refusal's sentence.
 */
static bool
quota_owner(const struct handler_env *e, uid_t uid, uid_t *owner)
{
	*owner = uid;
	if (!subuid_owner(e->subuids, uid, owner))
		return true;
	return e->cfg->subuid != SUBUID_REFUSE;
}

void
handle_ping(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	struct sbx_ans a;

	(void)e;
	(void)uid;
	(void)any;
	answer_ok(&a, SBX_REQ_PING);
	send_ans(r, &a);
}

void
handle_available(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	const struct sbx_req_available *rq = &any->available;
	const struct project *p;
	struct sbx_ans a;
	uid_t owner;
	size_t i;

	answer_ok(&a, SBX_REQ_AVAILABLE);
	/* The spawn-time probe never fails: anything off is "no sandbox".
	 * Flag off: no project lookup at all (the seed's promise). */
	if (!e->cfg->enabled) {
		send_ans(r, &a);
		return;
	}
	p = project_find(e->projects, rq->project);
	if (p != NULL && p->valid && project_allows(p, uid) &&
	    quota_owner(e, uid, &owner))
		for (i = 0; i < p->nservices; i++)
			strlcpy(a.services[a.nservices++].name, p->services[i],
			    SBX_SLUG_MAX);
	send_ans(r, &a);
}

static void
refuse(struct sbx_reply r, uid_t uid, const struct sbx_req_sandbox *rq,
    enum sbx_code code, const char *msg)
{
	struct sbx_ans a;

	audit_refuse(SBX_REQ_SANDBOX, uid, rq->agent, rq->project,
	    (const char (*)[SBX_SLUG_MAX])rq->services, rq->nservices, code);
	answer_init(&a, SBX_REQ_SANDBOX, code, "%s", msg);
	send_ans(r, &a);
}

void
handle_sandbox(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	const struct sbx_req_sandbox *rq = &any->sandbox;
	const struct project *p;
	struct sbx_lease lease;
	char why[SBX_MESSAGE_MAX];
	uid_t owner;
	uint32_t i;

	/* The flag first: off means no project lookup at all. */
	if (!e->cfg->enabled) {
		refuse(r, uid, rq, SBX_E_DISABLED,
		    "sandboxes are disabled on this host.");
		return;
	}
	if (!quota_owner(e, uid, &owner)) {
		snprintf(why, sizeof(why), "uid %u is a subordinate uid of uid "
		    "%u, and this host refuses those (subuid = refuse).",
		    (unsigned)uid, (unsigned)owner);
		refuse(r, uid, rq, SBX_E_FORBIDDEN, why);
		return;
	}
	p = project_find(e->projects, rq->project);
	/* An invalid file's line and cause are the admin's: they may name
	 * users and groups. */
	if (p == NULL || !p->valid) {
		if (p != NULL)
			log_warnx("uid=%u project=%s refused: invalid project "
			    "file %s", (unsigned)uid, rq->project, p->why);
		refuse(r, uid, rq, SBX_E_UNKNOWN_PROJECT, p == NULL ?
		    "no such project." : "the project's file is invalid; "
		    "the host's log says why.");
		return;
	}
	if (!project_allows(p, uid)) {
		refuse(r, uid, rq, SBX_E_FORBIDDEN,
		    "this user may not use the project.");
		return;
	}
	if (p->nservices == 0) {
		refuse(r, uid, rq, SBX_E_NOT_OPTED_IN,
		    "the project has not opted in to any sandbox service.");
		return;
	}
	for (i = 0; i < rq->nservices; i++)
		if (!project_offers(p, rq->services[i])) {
			snprintf(why, sizeof(why), "%s is not in the project's "
			    "sandbox_services.", rq->services[i]);
			refuse(r, uid, rq, SBX_E_NOT_OPTED_IN, why);
			return;
		}
	/* A process of the caller's own, or nothing changes. */
	if (rq->bind_pid != 0 &&
	    lease_open(rq->bind_pid, uid, 0, &lease) == -1) {
		snprintf(why, sizeof(why), "bind_pid %d is not a live process "
		    "of this user.", (int)rq->bind_pid);
		refuse(r, uid, rq, SBX_E_FORBIDDEN, why);
		return;
	}
	cache_request(e->cache, uid, owner, rq->agent, p->slug,
	    (const char (*)[SBX_SLUG_MAX])p->services, p->nservices,
	    rq->bind_pid != 0 ? &lease : NULL, r);
}

/* Always allowed: a refused uid holds nothing to release. */
void
handle_release(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	uid_t owner;

	quota_owner(e, uid, &owner);
	cache_release(e->cache, uid, owner, any->release.agent, r);
}

/* Of the caller's own sandbox only, like a release: the cache's key is
 * the peer's uid, whatever agent it names. */
void
handle_reset(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	uid_t owner;

	quota_owner(e, uid, &owner);
	cache_data(e->cache, uid, owner, any->reset.agent, SBX_REQ_RESET,
	    any->reset.to, r);
}

void
handle_snapshot(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	uid_t owner;

	quota_owner(e, uid, &owner);
	cache_data(e->cache, uid, owner, any->snapshot.agent,
	    SBX_REQ_SNAPSHOT, any->snapshot.name, r);
}

/* Root's status lists every uid's sandboxes and the warm containers
 * ready; any other uid's, only its own sandboxes: the filter is the peer
 * uid, like every cache key, and the pool is the host's load. */
void
handle_status(const struct handler_env *e, uid_t uid,
    const union sbx_req_any *any, struct sbx_reply r)
{
	struct sbx_ans a;
	size_t i;

	(void)any;
	answer_ok(&a, SBX_REQ_STATUS);
	a.nstatus = (uint32_t)e->cache->count;	/* at most; the writer trims */
	a.status_all = uid == 0;
	a.status_uid = (uint32_t)uid;
	for (i = 0; uid == 0 && e->warm_ready != NULL &&
	    i < e->cfg->nservices; i++) {
		if (e->cfg->services[i].warm == 0)
			continue;
		strlcpy(a.services[a.nservices].name, e->cfg->services[i].name,
		    sizeof(a.services[0].name));
		a.warm[a.nservices++] = e->warm_ready(e->warm_arg, i);
	}
	send_ans(r, &a);
}
