/*
 * cache.c - what the monitor holds per (uid, agent), and in what order it
 * serves the operations queued on one entry.
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   cache_adopt at start
 *
 * Rules (docs/contract.md, "Sandbox semantics"):
 *  - miss: provision the project's full opted-in set, cache, reply;
 *  - hit: cheap liveness check; live => reply, dead => provision again
 *    with fresh passwords (the runtime tears leftovers down first);
 *  - operations on one key serialise: a request arriving while a
 *    provision runs waits for it and gets its result;
 *  - keys are (peer uid, agent): no operation ever reaches another uid's
 *    entry, because the uid is part of every lookup;
 *  - limits (issue #15): a request past one is answered busy at once,
 *    with a sentence naming the limit, and touches nothing of anyone
 *    else's. Per-uid limits are counted per owner (struct sbx_quota).
 *    The monitor sizes max_fds from its descriptor budget, so that a
 *    release, an expiry and a teardown always have descriptors left.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "metrics.h"
#include "cache.h"
#include "log.h"
#include "secret.h"

static int
key_cmp(const struct sbx_sandbox *a, const struct sbx_sandbox *b)
{
	if (a->key.uid != b->key.uid)
		return a->key.uid < b->key.uid ? -1 : 1;
	return strcmp(a->key.agent, b->key.agent);
}

RB_GENERATE(sbx_tree, sbx_sandbox, node, key_cmp)

static int
quota_cmp(const struct sbx_quota *a, const struct sbx_quota *b)
{
	if (a->owner != b->owner)
		return a->owner < b->owner ? -1 : 1;
	return 0;
}

RB_GENERATE_STATIC(sbx_quotas, sbx_quota, node, quota_cmp)

static void provision_metrics(const struct sbx_sandbox *, enum sbx_code);

void
cache_init(struct cache *c, struct sbx_runtime rt, struct cache_limits lim,
    int64_t (*clock)(void))
{
	RB_INIT(&c->tree);
	RB_INIT(&c->quotas);
	c->rt = rt;
	c->lim = lim;
	c->count = c->nrequests = c->nprovisions = c->nfds = c->nstalled = 0;
	c->clock = clock;
	c->owner_of = NULL;
	c->owner_arg = NULL;
}

struct sbx_sandbox *
cache_find(struct cache *c, uid_t uid, const char *agent)
{
	struct sbx_sandbox probe;

	memset(&probe, 0, sizeof(probe));
	probe.key.uid = uid;
	strlcpy(probe.key.agent, agent, sizeof(probe.key.agent));
	return RB_FIND(sbx_tree, &c->tree, &probe);
}

static struct sbx_quota *
quota_find(struct cache *c, uid_t owner)
{
	struct sbx_quota probe = { .owner = owner };

	return RB_FIND(sbx_quotas, &c->quotas, &probe);
}

/* An owner's record lives while it holds an entry, or a data job of
 * one still runs (cache_data_exited). */
static void
quota_put(struct cache *c, struct sbx_quota *q)
{
	if (q->sandboxes > 0 || q->provisions > 0)
		return;
	RB_REMOVE(sbx_quotas, &c->quotas, q);
	free(q);
}

/*
 * Every state change goes through here: it keeps the counts the limits
 * look at. An entry that is not empty holds (or is about to hold) one
 * descriptor per service; the runtime closes them before it says a
 * provision failed, and cache_torn_down() has them closed.
 */
static void
set_state(struct sbx_sandbox *sb, enum sbx_state st)
{
	struct cache *c = sb->cache;

	/* A reset or snapshot holds a worker as a provision does: it counts
	 * toward the same limits, so that no uid's data jobs take the
	 * workers another uid's provision needs. */
	if (sb->state == SB_PROVISIONING || sb->state == SB_DATA) {
		c->nprovisions--;
		sb->quota->provisions--;
	}
	if (st == SB_PROVISIONING || st == SB_DATA) {
		c->nprovisions++;
		sb->quota->provisions++;
	}
	c->nfds -= sb->fds;
	sb->fds = st == SB_EMPTY ? 0 : (unsigned)sb->nservices;
	c->nfds += sb->fds;
	sb->state = st;
}

static struct sbx_sandbox *
entry_new(struct cache *c, uid_t uid, uid_t owner, const char *agent)
{
	struct sbx_sandbox *sb;
	struct sbx_quota *q;

	if ((q = quota_find(c, owner)) == NULL) {
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return NULL;
		q->owner = owner;
		RB_INSERT(sbx_quotas, &c->quotas, q);
	}
	if ((sb = calloc(1, sizeof(*sb))) == NULL) {
		quota_put(c, q);
		return NULL;
	}
	sb->quota = q;
	q->sandboxes++;
	sb->key.uid = uid;
	strlcpy(sb->key.agent, agent, sizeof(sb->key.agent));
	sb->state = SB_EMPTY;
	sb->cache = c;
	sb->lease.pidfd = -1;
	TAILQ_INIT(&sb->waiters);
	RB_INSERT(sbx_tree, &c->tree, sb);
	c->count++;
	return sb;
}

/* The services hold passwords: wiped before they go back to malloc. */
static void
svc_array_free(struct sbx_svc *v, size_t n)
{
	if (v != NULL)
		explicit_bzero(v, n * sizeof(*v));
	free(v);
}

static void
svc_free(struct sbx_sandbox *sb)
{
	svc_array_free(sb->svc, sb->nservices);
	svc_array_free(sb->prev, sb->nprev);
	sb->svc = sb->prev = NULL;
	sb->nservices = sb->nprev = 0;
}

static void
lease_close(struct sbx_lease *l)
{
	if (l->pidfd >= 0)
		close(l->pidfd);
	l->pidfd = -1;
}

static void
entry_free(struct sbx_sandbox *sb)
{
	struct cache *c = sb->cache;

	if (c->rt.ops->forget != NULL)
		c->rt.ops->forget(c->rt.impl, sb);
	if (c->rt.ops->gone != NULL)
		c->rt.ops->gone(c->rt.impl, sb);
	lease_close(&sb->lease);
	RB_REMOVE(sbx_tree, &c->tree, sb);
	c->count--;
	sb->quota->sandboxes--;
	quota_put(c, sb->quota);
	svc_free(sb);
	explicit_bzero(sb, sizeof(*sb));
	free(sb);
}

static void
reply_send(struct sbx_reply r, const struct sbx_ans *a)
{
	if (r.fn != NULL)
		r.fn(r.ctx, a);
}

static void
reply_error(struct sbx_reply r, enum sbx_req_type type, enum sbx_code code,
    const char *msg)
{
	struct sbx_ans a;

	answer_init(&a, type, code, "%s", msg);
	reply_send(r, &a);
}

/*
 * A refusal for a limit: the sentence that names it, and how long a
 * client should wait before it asks again (retry_after_ms in the reply,
 * docs/protocol.md, "Errors"). The hint grows with what must happen
 * for the limit to free: a provision ends in seconds, a sandbox goes
 * only when it is released or expires.
 */
struct busy {
	char		msg[SBX_MESSAGE_MAX];
	uint32_t	retry_ms;
	bool		own;	/* the uid's own provisions: its turn comes */
};

#define RETRY_PROVISIONS_MS	2000	/* a provision ends */
#define RETRY_REQUESTS_UID_MS	1000	/* this uid's waiting requests go */
#define RETRY_REQUESTS_MS	2000	/* the host's queue drains */
#define RETRY_SANDBOXES_UID_MS	10000	/* a release or an expiry of its own */
#define RETRY_SANDBOXES_MS	30000	/* anyone's release or expiry */

static void busy_set(struct busy *, uint32_t, const char *, ...)
    __attribute__((format(printf, 3, 4)));

static void
busy_set(struct busy *b, uint32_t retry_ms, const char *fmt, ...)
{
	va_list ap;

	b->retry_ms = retry_ms;
	va_start(ap, fmt);
	vsnprintf(b->msg, sizeof(b->msg), fmt, ap);
	va_end(ap);
}

static void
reply_busy(struct sbx_reply r, enum sbx_req_type type, const struct busy *b)
{
	struct sbx_ans a;

	answer_init(&a, type, SBX_E_BUSY, "%s", b->msg);
	a.retry_after_ms = b->retry_ms;
	reply_send(r, &a);
}

static void
reply_sandbox(struct sbx_sandbox *sb, enum sbx_req_type type,
    struct sbx_reply r)
{
	struct sbx_ans a;
	size_t i;

	answer_init(&a, type, SBX_OK, "ok");
	a.nservices = (uint32_t)sb->nservices;
	for (i = 0; i < sb->nservices; i++)
		a.services[i] = sb->svc[i].conn;
	reply_send(r, &a);
	explicit_bzero(&a, sizeof(a));
}

static void
reply_released(struct sbx_reply r, bool released)
{
	struct sbx_ans a;

	answer_init(&a, SBX_REQ_RELEASE, SBX_OK, "ok");
	a.released = released;
	reply_send(r, &a);
}

/* A request answered with the sandbox binds it to its process, if it
 * named one (a hit re-binds); the one it was bound to before goes. */
static void
lease_take(struct sbx_sandbox *sb, struct sbx_waiter *w)
{
	if (w->lease.pidfd < 0)
		return;
	lease_close(&sb->lease);
	sb->lease = w->lease;
	w->lease.pidfd = -1;
	if (sb->cache->leased != NULL)
		sb->cache->leased(sb->cache->owner_arg, sb);
}

struct sbx_waiter *
cache_waiter_new(enum sbx_req_type op, struct sbx_reply reply)
{
	struct sbx_waiter *w;

	if ((w = calloc(1, sizeof(*w))) == NULL)
		return NULL;
	w->op = op;
	w->reply = reply;
	w->lease.pidfd = -1;
	return w;
}

static void
waiter_free(struct sbx_waiter *w)
{
	lease_close(&w->lease);
	free(w);
}

void
cache_waiter_add(struct sbx_sandbox *sb, struct sbx_waiter *w, bool head)
{
	if (head)
		TAILQ_INSERT_HEAD(&sb->waiters, w, entry);
	else
		TAILQ_INSERT_TAIL(&sb->waiters, w, entry);
	sb->nwaiters++;
	sb->quota->requests++;
	sb->cache->nrequests++;
	w->queued_ms = sb->cache->clock();
}

static void
waiter_done(struct sbx_sandbox *sb, struct sbx_waiter *w)
{
	TAILQ_REMOVE(&sb->waiters, w, entry);
	sb->nwaiters--;
	sb->quota->requests--;
	sb->cache->nrequests--;
	waiter_free(w);
}

/*
 * The entry's services become w's set, named, nothing running: what it
 * held is forgotten first. Sized to the set, not SBX_MAX_SERVICES: 1,000
 * cached sandboxes of two services are then ~1 MiB, not ~7
 * (bench/README.md, figure 5).
 */
static bool
services_new(struct sbx_sandbox *sb, const struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	size_t i;

	if (c->rt.ops->forget != NULL)
		c->rt.ops->forget(c->rt.impl, sb);
	svc_free(sb);
	if ((sb->svc = calloc(w->nservices, sizeof(*sb->svc))) == NULL)
		return false;
	strlcpy(sb->project, w->project, sizeof(sb->project));
	sb->nservices = w->nservices;
	for (i = 0; i < w->nservices; i++) {
		strlcpy(sb->svc[i].conn.name, w->services[i],
		    sizeof(sb->svc[i].conn.name));
		sb->svc[i].pidfd = -1;
	}
	return true;
}

/* Set up the entry for a fresh provision of w's set and start it. */
static bool
start_provision(struct sbx_sandbox *sb, const struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	size_t i;

	if (!services_new(sb, w)) {
		set_state(sb, SB_EMPTY);
		return false;
	}
	for (i = 0; i < w->nservices; i++)
		secret_fill(sb->svc[i].conn.password,
		    sizeof(sb->svc[i].conn.password));
	sb->generation++;
	set_state(sb, SB_PROVISIONING);
	sb->started_ms = c->clock();
	if (c->rt.ops->provision(c->rt.impl, sb) == -1) {
		set_state(sb, SB_EMPTY);
		return false;
	}
	return true;
}

static ssize_t
svc_find(const struct sbx_svc *v, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(v[i].conn.name, name) == 0)
			return (ssize_t)i;
	return -1;
}

/* A reshape that did not happen: the sandbox as it was. */
static void
reshape_undo(struct sbx_sandbox *sb)
{
	svc_array_free(sb->svc, sb->nservices);
	sb->svc = sb->prev;
	sb->nservices = sb->nprev;
	sb->prev = NULL;
	sb->nprev = 0;
	set_state(sb, SB_READY);
}

/* What the runtime reports, but the passwords stay the ones we made. */
static void
take_outcome(struct sbx_sandbox *sb, const struct sbx_outcome *o)
{
	char password[SBX_SECRET_MAX];
	size_t i;

	for (i = 0; i < sb->nservices; i++) {
		memcpy(password, sb->svc[i].conn.password, sizeof(password));
		sb->svc[i] = o->svc[i];
		memcpy(sb->svc[i].conn.password, password, sizeof(password));
	}
	explicit_bzero(password, sizeof(password));
}

/*
 * The project's set changed under a live sandbox: keep what it still
 * has (the same containers, passwords and data), start what it lacks,
 * let the runtime remove what it no longer has. Nothing the agent uses
 * is touched until the runtime says the new set is up (cache_provisioned).
 */
static bool
start_reshape(struct sbx_sandbox *sb, const struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	struct sbx_svc *nv;
	ssize_t j;
	size_t i;

	if ((nv = calloc(w->nservices, sizeof(*nv))) == NULL)
		return false;
	for (i = 0; i < w->nservices; i++) {
		if ((j = svc_find(sb->svc, sb->nservices,
		    w->services[i])) >= 0) {
			nv[i] = sb->svc[j];
			nv[i].keep = true;
			continue;
		}
		strlcpy(nv[i].conn.name, w->services[i],
		    sizeof(nv[i].conn.name));
		secret_fill(nv[i].conn.password, sizeof(nv[i].conn.password));
		nv[i].pidfd = -1;
	}
	sb->prev = sb->svc;
	sb->nprev = sb->nservices;
	sb->svc = nv;
	sb->nservices = w->nservices;
	sb->generation++;
	set_state(sb, SB_PROVISIONING);
	sb->started_ms = c->clock();
	if (c->rt.ops->provision(c->rt.impl, sb) == -1) {
		reshape_undo(sb);
		return false;
	}
	return true;
}

bool
cache_teardown_start(struct sbx_sandbox *sb)
{
	struct cache *c = sb->cache;

	set_state(sb, SB_TEARING);
	sb->started_ms = c->clock();
	if (c->rt.ops->teardown(c->rt.impl, sb) == -1) {
		/* Keep what we know: a later release or expiry tries again. */
		set_state(sb, SB_READY);
		return false;
	}
	return true;
}

static bool
same_set(const struct sbx_sandbox *sb, const struct sbx_waiter *w)
{
	size_t i;

	if (strcmp(sb->project, w->project) != 0 ||
	    sb->nservices != w->nservices)
		return false;
	for (i = 0; i < w->nservices; i++)
		if (strcmp(sb->svc[i].conn.name, w->services[i]) != 0)
			return false;
	return true;
}

/*
 * May a provision of w's set start for sb now? false if so, else true
 * and why not in *b. The entry's own descriptors go when it is
 * provisioned again.
 */
/* The monitor's descriptor budget: what a claim takes too (the warm
 * containers it takes are refilled, with descriptors of their own). */
static bool
fds_refused(const struct sbx_sandbox *sb, const struct sbx_waiter *w,
    struct busy *b)
{
	const struct cache *c = sb->cache;
	const struct cache_limits *l = &c->lim;

	if (l->max_fds == 0 || c->nfds - sb->fds + w->nservices <= l->max_fds)
		return false;
	busy_set(b, RETRY_SANDBOXES_MS, "the monitor's descriptor budget for "
	    "sandboxes is spent; try again after a release.");
	return true;
}

static bool
provision_refused(const struct sbx_sandbox *sb, const struct sbx_waiter *w,
    struct busy *b)
{
	const struct cache *c = sb->cache;
	const struct cache_limits *l = &c->lim;

	b->own = false;
	if (l->max_provisions_per_uid > 0 &&
	    sb->quota->provisions >= l->max_provisions_per_uid &&
	    (b->own = true))
		busy_set(b, RETRY_PROVISIONS_MS, "this user already has %u "
		    "sandboxes being provisioned, the most one user may "
		    "(max_provisions_per_uid); try again soon.",
		    sb->quota->provisions);
	else if (l->max_provisions > 0 && c->nprovisions >= l->max_provisions)
		busy_set(b, RETRY_PROVISIONS_MS, "the host is provisioning "
		    "the most sandboxes it runs at once (max_provisions); "
		    "try again soon.");
	else
		return fds_refused(sb, w, b);
	return true;
}

static void
refuse_head(struct sbx_sandbox *sb, struct sbx_waiter *w,
    const struct busy *b)
{
	audit_refuse(w->op, sb->key.uid, sb->key.agent, w->project,
	    (const char (*)[SBX_SLUG_MAX])w->services, w->nservices,
	    SBX_E_BUSY);
	reply_busy(w->reply, w->op, b);
	waiter_done(sb, w);
}

/*
 * No worker could take the teardown now (provisions leave some to
 * teardowns, but a burst of expiries may take them all): the release
 * waits at the head, and cache_retry() starts it again.
 */
static void
stall(struct sbx_sandbox *sb)
{
	if (!sb->stalled) {
		sb->stalled = true;
		sb->cache->nstalled++;
	}
}

/*
 * A provision ended, or a claim stood in for one. Every request queued
 * for the same project gets its result, success or failure alike: they
 * asked concurrently and exactly one provision ran for all of them.
 */
static void
answer_queue(struct sbx_sandbox *sb, const char *project, enum sbx_code code,
    const char *message)
{
	struct sbx_waiter *w;

	while ((w = TAILQ_FIRST(&sb->waiters)) != NULL &&
	    w->op == SBX_REQ_SANDBOX &&	/* NOLINT(clang-analyzer-unix.Malloc) */
	    strcmp(w->project, project) == 0) {
		if (code == SBX_OK) {
			reply_sandbox(sb, SBX_REQ_SANDBOX, w->reply);
			lease_take(sb, w);
		} else
			reply_error(w->reply, SBX_REQ_SANDBOX, code, message);
		waiter_done(sb, w);
	}
}

/* A release of the monitor's own, no one to tell, first in sb's queue:
 * the caller's cache_run() starts it. Without memory the sandbox stays
 * until it expires. */
static void
release_own(struct sbx_sandbox *sb)
{
	struct sbx_waiter *w;

	if ((w = cache_waiter_new(SBX_REQ_RELEASE, (struct sbx_reply){ NULL,
	    NULL })) == NULL) {
		log_warnx("uid=%u agent=%s: no memory to tear down a refused "
		    "claim; it goes when it expires", (unsigned)sb->key.uid,
		    sb->key.agent);
		return;
	}
	cache_waiter_add(sb, w, true);
}

/*
 * A claim is served (SBX_OK) or refused: its waiters are told, and a
 * refused one's containers, which are the sandbox's, are torn down by a
 * release that cache_run() starts next.
 */
static void
claimed(struct sbx_sandbox *sb, enum sbx_code code, const char *message)
{
	struct cache *c = sb->cache;
	char project[SBX_SLUG_MAX];

	set_state(sb, SB_READY);
	sb->created_ms = sb->used_ms = c->clock();
	audit_sandbox(AUDIT_PROVISION, sb, code, "ms=%lld warm=yes",
	    (long long)(c->clock() - sb->started_ms));
	provision_metrics(sb, code);
	strlcpy(project, sb->project, sizeof(project));
	answer_queue(sb, project, code, message);
	if (code != SBX_OK)
		release_own(sb);
}

void
cache_claimed(struct sbx_sandbox *sb, enum sbx_code code, const char *message)
{
	claimed(sb, code, message);
	cache_run(sb);
}

enum claim { CLAIM_NONE, CLAIM_DONE, CLAIM_WAIT };

/*
 * A miss served from the runtime's warm pool: the containers were started
 * ahead, so the sandbox is ready now (or once its ports are the owner's),
 * and no provision limit applies. Any service without a warm container,
 * and the runtime does a normal provision instead.
 */
static enum claim
try_claim(struct sbx_sandbox *sb, const struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	int r;

	if (c->rt.ops->claim == NULL || !services_new(sb, w))
		return CLAIM_NONE;
	sb->started_ms = c->clock();
	if ((r = c->rt.ops->claim(c->rt.impl, sb)) == -1) {
		svc_free(sb);
		return CLAIM_NONE;
	}
	sb->generation++;
	if (r == 1) {
		set_state(sb, SB_PROVISIONING);
		return CLAIM_WAIT;
	}
	if (r == 2)
		claimed(sb, SBX_E_RUNTIME_FAILED, "the runtime could not open "
		    "the sandbox's ports to you.");
	else
		claimed(sb, SBX_OK, "ok");
	return CLAIM_DONE;
}

/*
 * Serve the head of the queue. Returns true when it was answered at once
 * (look at the next one), false when work was started for it or the
 * entry is busy.
 */
/*
 * A request past its uid's own running provisions waits its turn in the
 * queue (cache_retry takes it again when a provision ends), within its
 * deadline; past any other limit, or its deadline, it is busy. false:
 * it waits.
 */
static bool
waits_turn(struct sbx_sandbox *sb, struct sbx_waiter *w, const struct busy *b)
{
	const struct cache *c = sb->cache;

	if (b->own && (c->lim.max_wait_ms == 0 ||
	    c->clock() - w->queued_ms < c->lim.max_wait_ms)) {
		stall(sb);
		return false;
	}
	refuse_head(sb, w, b);
	return true;
}

static void
audit_data(const struct sbx_sandbox *sb, enum sbx_req_type op,
    const char *snapshot, enum sbx_code code)
{
	audit_sandbox(op == SBX_REQ_RESET ? AUDIT_RESET : AUDIT_SNAPSHOT, sb,
	    code, "%s=%s ms=%lld", op == SBX_REQ_RESET ? "to" : "name",
	    snapshot[0] != '\0' ? snapshot : "-",
	    code == SBX_OK || sb->state == SB_DATA ?
	    (long long)(sb->cache->clock() - sb->started_ms) : 0LL);
}

/* A reset or a snapshot at the head: of a sandbox held, one at a time. */
static bool
serve_data(struct sbx_sandbox *sb, struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	struct busy b;

	if (sb->state != SB_READY) {
		audit_refuse(w->op, sb->key.uid, sb->key.agent, NULL, NULL, 0,
		    SBX_E_NO_SANDBOX);
		reply_error(w->reply, w->op, SBX_E_NO_SANDBOX, "this agent "
		    "holds no sandbox.");
		waiter_done(sb, w);
		return true;
	}
	if (provision_refused(sb, w, &b))
		return waits_turn(sb, w, &b);
	sb->started_ms = c->clock();
	set_state(sb, SB_DATA);
	/* w may be answered and gone when data() returns 0. */
	if (c->rt.ops->data != NULL &&
	    c->rt.ops->data(c->rt.impl, sb, w->op, w->snapshot) == 0)
		return false;
	set_state(sb, SB_READY);
	audit_data(sb, w->op, w->snapshot, SBX_E_RUNTIME_FAILED);
	reply_error(w->reply, w->op, SBX_E_RUNTIME_FAILED, "the runtime could "
	    "not start the work.");
	waiter_done(sb, w);
	return true;
}

static bool
serve_head(struct sbx_sandbox *sb, struct sbx_waiter *w)
{
	struct cache *c = sb->cache;
	struct busy b;

	if (w->op == SBX_REQ_RESET || w->op == SBX_REQ_SNAPSHOT)
		return serve_data(sb, w);
	if (w->op == SBX_REQ_RELEASE) {
		if (sb->state == SB_EMPTY) {
			audit_sandbox(AUDIT_RELEASE, sb, SBX_OK, "released=no");
			reply_released(w->reply, false);
			waiter_done(sb, w);
			return true;
		}
		if (!cache_teardown_start(sb))
			stall(sb);
		return false;
	}
	if (sb->state == SB_READY && strcmp(sb->project, w->project) != 0) {
		char msg[SBX_MESSAGE_MAX];

		/* Nothing of the held sandbox goes until it is released. */
		snprintf(msg, sizeof(msg), "this agent holds a sandbox of "
		    "project %.63s; release it first.", sb->project);
		audit_refuse(SBX_REQ_SANDBOX, sb->key.uid, sb->key.agent,
		    w->project, (const char (*)[SBX_SLUG_MAX])w->services,
		    w->nservices, SBX_E_CONFLICT);
		reply_error(w->reply, SBX_REQ_SANDBOX, SBX_E_CONFLICT, msg);
		waiter_done(sb, w);
		return true;
	}
	if (sb->state == SB_READY && c->rt.ops->is_live(c->rt.impl, sb)) {
		int64_t now = c->clock(), idle = now - sb->used_ms;

		if (!same_set(sb, w)) {
			if (provision_refused(sb, w, &b))
				return waits_turn(sb, w, &b);
			if (start_reshape(sb, w))
				return false;
			audit_sandbox(AUDIT_PROVISION, sb,
			    SBX_E_RUNTIME_FAILED, "ms=0 reshape=yes");
			/* A revocation's own (no one to answer) is
			 * asked again at the next tick, as a busy one. */
			if (w->reply.fn == NULL)
				c->revoke_busy++;
			reply_error(w->reply, SBX_REQ_SANDBOX,
			    SBX_E_RUNTIME_FAILED, "the runtime could not start "
			    "provisioning.");
			waiter_done(sb, w);
			return true;
		}
		sb->used_ms = now;
		sb->expiring = false;
		reply_sandbox(sb, SBX_REQ_SANDBOX, w->reply);	/* answer first, then log */
		lease_take(sb, w);
		audit_sandbox(AUDIT_HIT, sb, SBX_OK, "idle_s=%lld",
		    (long long)idle / 1000);
		waiter_done(sb, w);
		return true;
	}
	/* A dead sandbox is provisioned again: the runtime's provision
	 * removes what is left of it first, a claim would not. */
	if (sb->state != SB_READY && !fds_refused(sb, w, &b))
		switch (try_claim(sb, w)) {
		case CLAIM_DONE:
			return true;
		case CLAIM_WAIT:
			return false;
		case CLAIM_NONE:
			break;
		}
	if (provision_refused(sb, w, &b))
		return waits_turn(sb, w, &b);
	if (sb->state == SB_READY)
		audit_sandbox(AUDIT_EVICT, sb, SBX_OK, "reason=not_live");
	if (start_provision(sb, w))
		return false;
	audit_sandbox(AUDIT_PROVISION, sb, SBX_E_RUNTIME_FAILED, "ms=0");
	reply_error(w->reply, SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED,
	    "the runtime could not start provisioning.");
	waiter_done(sb, w);
	return true;
}

/* Serve waiters until one needs the runtime; drop the entry once idle. */
void
cache_run(struct sbx_sandbox *sb)
{
	struct sbx_waiter *w;

	while (sb->state == SB_READY || sb->state == SB_EMPTY) {
		if ((w = TAILQ_FIRST(&sb->waiters)) == NULL)
			break;
		/* w is the new head: the analyzer loses TAILQ_REMOVE's tqe_prev. */
		if (!serve_head(sb, w))	/* NOLINT(clang-analyzer-unix.Malloc) */
			return;
	}
	if (sb->state == SB_EMPTY && TAILQ_EMPTY(&sb->waiters))
		entry_free(sb);
}

/*
 * May w wait in the monitor? false if so, else true and why not in *b.
 * q is what the owner holds (NULL: nothing), sb the entry (NULL: none
 * yet). A release is never refused for the host's totals: it gives back.
 */
static bool
enqueue_refused(const struct cache *c, const struct sbx_quota *q,
    const struct sbx_sandbox *sb, const struct sbx_waiter *w,
    struct busy *b)
{
	const struct cache_limits *l = &c->lim;
	bool takes = w->op == SBX_REQ_SANDBOX;

	if (l->max_requests_per_uid > 0 && q != NULL &&
	    q->requests >= l->max_requests_per_uid)
		busy_set(b, RETRY_REQUESTS_UID_MS, "this user already has %u "
		    "requests waiting, the most one user may "
		    "(max_requests_per_uid).", q->requests);
	else if (sb != NULL && l->max_waiters > 0 &&
	    sb->nwaiters >= l->max_waiters)
		busy_set(b, RETRY_REQUESTS_UID_MS, "%u requests already wait "
		    "for this agent's sandbox, the most one may have "
		    "(max_waiters).", sb->nwaiters);
	else if (takes && l->max_requests > 0 &&
	    c->nrequests >= l->max_requests)
		busy_set(b, RETRY_REQUESTS_MS, "the monitor holds the most "
		    "requests it takes at once (max_requests); try again "
		    "soon.");
	else if (takes && sb == NULL && l->max_per_uid > 0 && q != NULL &&
	    q->sandboxes >= l->max_per_uid)
		busy_set(b, RETRY_SANDBOXES_UID_MS, "this user already holds "
		    "%u sandboxes, the most one user may "
		    "(max_sandboxes_per_uid).", q->sandboxes);
	else if (takes && sb == NULL && l->max_sandboxes > 0 &&
	    c->count >= l->max_sandboxes)
		busy_set(b, RETRY_SANDBOXES_MS, "the host holds the most "
		    "sandboxes it may (max_sandboxes); try again later.");
	else
		return false;
	return true;
}

static void
enqueue(struct cache *c, uid_t uid, uid_t owner, const char *agent,
    struct sbx_waiter *w)
{
	struct sbx_sandbox *sb = cache_find(c, uid, agent);
	struct busy b;

	if (enqueue_refused(c, sb != NULL ? sb->quota : quota_find(c, owner),
	    sb, w, &b)) {
		audit_refuse(w->op, uid, agent, w->project,
		    (const char (*)[SBX_SLUG_MAX])w->services, w->nservices,
		    SBX_E_BUSY);
		reply_busy(w->reply, w->op, &b);
		waiter_free(w);
		return;
	}
	if (sb == NULL) {
		if ((sb = entry_new(c, uid, owner, agent)) == NULL) {
			audit_refuse(w->op, uid, agent, w->project,
			    (const char (*)[SBX_SLUG_MAX])w->services,
			    w->nservices, SBX_E_INTERNAL);
			reply_error(w->reply, w->op, SBX_E_INTERNAL,
			    "the monitor is out of memory.");
			waiter_free(w);
			return;
		}
	}
	cache_waiter_add(sb, w, false);
	if (TAILQ_FIRST(&sb->waiters) == w)
		cache_run(sb);
}

void
cache_request(struct cache *c, uid_t uid, uid_t owner, const char *agent,
    const char *project, const char (*services)[SBX_SLUG_MAX],
    size_t nservices, struct sbx_lease *lease, struct sbx_reply reply)
{
	struct sbx_waiter *w;
	size_t i;

	if (nservices == 0 || nservices > SBX_MAX_SERVICES) {
		if (lease != NULL)
			lease_close(lease);
		audit_refuse(SBX_REQ_SANDBOX, uid, agent, project, NULL, 0,
		    SBX_E_NOT_OPTED_IN);
		reply_error(reply, SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN,
		    "the project offers no sandbox services.");
		return;
	}
	if ((w = cache_waiter_new(SBX_REQ_SANDBOX, reply)) == NULL) {
		if (lease != NULL)
			lease_close(lease);
		audit_refuse(SBX_REQ_SANDBOX, uid, agent, project, services,
		    nservices, SBX_E_INTERNAL);
		reply_error(reply, SBX_REQ_SANDBOX, SBX_E_INTERNAL,
		    "the monitor is out of memory.");
		return;
	}
	strlcpy(w->project, project, sizeof(w->project));
	w->nservices = nservices;
	for (i = 0; i < nservices; i++)
		strlcpy(w->services[i], services[i], sizeof(w->services[i]));
	if (lease != NULL) {
		w->lease = *lease;
		lease->pidfd = -1;	/* the waiter's now */
	}
	enqueue(c, uid, owner, agent, w);
}

void
cache_release(struct cache *c, uid_t uid, uid_t owner, const char *agent,
    struct sbx_reply reply)
{
	struct sbx_waiter *w;

	if (cache_find(c, uid, agent) == NULL) {
		audit(AUDIT_RELEASE, uid, agent, NULL, NULL, 0, SBX_OK,
		    "released=no");
		reply_released(reply, false);
		return;
	}
	if ((w = cache_waiter_new(SBX_REQ_RELEASE, reply)) == NULL) {
		audit_refuse(SBX_REQ_RELEASE, uid, agent, NULL, NULL, 0,
		    SBX_E_INTERNAL);
		reply_error(reply, SBX_REQ_RELEASE, SBX_E_INTERNAL,
		    "the monitor is out of memory.");
		return;
	}
	enqueue(c, uid, owner, agent, w);
}

void
cache_data(struct cache *c, uid_t uid, uid_t owner, const char *agent,
    enum sbx_req_type op, const char *snapshot, struct sbx_reply reply)
{
	struct sbx_sandbox *sb = cache_find(c, uid, agent);
	struct sbx_waiter *w;

	if (sb == NULL || (sb->state == SB_EMPTY &&
	    TAILQ_EMPTY(&sb->waiters))) {
		audit_refuse(op, uid, agent, NULL, NULL, 0, SBX_E_NO_SANDBOX);
		reply_error(reply, op, SBX_E_NO_SANDBOX, "this agent holds no "
		    "sandbox.");
		return;
	}
	if ((w = cache_waiter_new(op, reply)) == NULL) {
		audit_refuse(op, uid, agent, NULL, NULL, 0, SBX_E_INTERNAL);
		reply_error(reply, op, SBX_E_INTERNAL,
		    "the monitor is out of memory.");
		return;
	}
	strlcpy(w->snapshot, snapshot, sizeof(w->snapshot));
	enqueue(c, uid, owner, agent, w);
}

void
cache_data_done(struct sbx_sandbox *sb, enum sbx_code code,
    const char *message)
{
	struct sbx_waiter *w = TAILQ_FIRST(&sb->waiters);
	struct cache *c = sb->cache;
	struct sbx_ans a;

	audit_data(sb, w->op, w->snapshot, code);
	set_state(sb, SB_READY);
	/* Its worker goes on (the tidy-up): counted until it exited. */
	c->nprovisions++;
	sb->quota->provisions++;
	sb->used_ms = sb->cache->clock();
	sb->expiring = false;
	if (code == SBX_OK && w->op == SBX_REQ_RESET)
		reply_sandbox(sb, SBX_REQ_RESET, w->reply);
	else if (code == SBX_OK) {
		answer_init(&a, SBX_REQ_SNAPSHOT, SBX_OK, "ok");
		strlcpy(a.snapshot, w->snapshot, sizeof(a.snapshot));
		reply_send(w->reply, &a);
	} else
		reply_error(w->reply, w->op, code, message);
	waiter_done(sb, w);
	cache_run(sb);
}

void
cache_data_exited(struct cache *c, uid_t owner)
{
	struct sbx_quota *q = quota_find(c, owner);

	if (q == NULL || q->provisions == 0 || c->nprovisions == 0) {
		log_warnx("owner %u: a data job ended that was not counted",
		    (unsigned)owner);
		return;
	}
	c->nprovisions--;
	q->provisions--;
	quota_put(c, q);
}

/* A provision ended: its result and its time, per service. */
static void
provision_metrics(const struct sbx_sandbox *sb, enum sbx_code code)
{
	char names[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	size_t i;

	for (i = 0; i < sb->nservices && i < SBX_MAX_SERVICES; i++)
		strlcpy(names[i], sb->svc[i].conn.name, sizeof(names[i]));
	metrics_provision((const char (*)[SBX_SLUG_MAX])names, i, code,
	    sb->cache->clock() - sb->started_ms);
}

/* A reshape ended: the new set, or on failure the old one, as it was. */
static void
reshaped(struct sbx_sandbox *sb, const struct sbx_outcome *o)
{
	if (o->code != SBX_OK) {
		reshape_undo(sb);
		return;
	}
	take_outcome(sb, o);
	svc_array_free(sb->prev, sb->nprev);
	sb->prev = NULL;
	sb->nprev = 0;
	sb->used_ms = sb->cache->clock();
	set_state(sb, SB_READY);
}

void
cache_provisioned(struct sbx_sandbox *sb, const struct sbx_outcome *o)
{
	char project[SBX_SLUG_MAX];

	strlcpy(project, sb->project, sizeof(project));
	if (sb->prev != NULL)
		reshaped(sb, o);
	else if (o->code == SBX_OK) {
		take_outcome(sb, o);
		set_state(sb, SB_READY);
		sb->created_ms = sb->used_ms = sb->cache->clock();
	} else
		set_state(sb, SB_EMPTY);
	audit_sandbox(AUDIT_PROVISION, sb, o->code, "ms=%lld",
	    (long long)(sb->cache->clock() - sb->started_ms));
	provision_metrics(sb, o->code);
	answer_queue(sb, project, o->code, o->message);
	cache_run(sb);
}

void
cache_torn_down(struct sbx_sandbox *sb)
{
	struct sbx_waiter *w = TAILQ_FIRST(&sb->waiters);
	struct cache *c = sb->cache;

	/* Its descriptors go now, not when the entry is reused or freed. */
	if (c->rt.ops->forget != NULL)
		c->rt.ops->forget(c->rt.impl, sb);
	set_state(sb, SB_EMPTY);
	if (w != NULL && w->op == SBX_REQ_RELEASE) {
		audit_sandbox(AUDIT_RELEASE, sb, SBX_OK, "released=yes ms=%lld",
		    (long long)(sb->cache->clock() - sb->started_ms));
		reply_released(w->reply, true);
		waiter_done(sb, w);
	}
	cache_run(sb);
}

/*
 * The runtime refused the teardown (why: its words). What it still holds
 * is the agent's sandbox, as when no worker could start the teardown: a
 * release says runtime_failed and may be asked again, an expiry is tried
 * again one idle_ttl later rather than at every tick, and a later request
 * finds a service that went meanwhile dead and provisions anew.
 */
void
cache_teardown_failed(struct sbx_sandbox *sb, const char *why)
{
	struct sbx_waiter *w = TAILQ_FIRST(&sb->waiters);
	char msg[SBX_MESSAGE_MAX];

	set_state(sb, SB_READY);
	sb->used_ms = sb->cache->clock();
	sb->expiring = false;
	if (w != NULL && w->op == SBX_REQ_RELEASE) {
		audit_sandbox(AUDIT_RELEASE, sb, SBX_E_RUNTIME_FAILED,
		    "released=no");
		snprintf(msg, sizeof(msg), "the sandbox could not be torn "
		    "down: %s", why);
		reply_error(w->reply, SBX_REQ_RELEASE, SBX_E_RUNTIME_FAILED,
		    msg);
		waiter_done(sb, w);
	}
	cache_run(sb);
}

/* Tear down every ready, unqueued sandbox idle for longer than idle_ttl. */
size_t
cache_expire(struct cache *c)
{
	struct sbx_sandbox *sb, *next;
	int64_t now = c->clock();
	size_t n = 0;

	if (c->lim.idle_ttl_ms <= 0)
		return 0;
	RB_FOREACH_SAFE(sb, sbx_tree, &c->tree, next) {
		if (sb->state != SB_READY || !TAILQ_EMPTY(&sb->waiters) ||
		    now - sb->used_ms < c->lim.idle_ttl_ms)
			continue;
		/* Once per expiry, however many ticks it waits for a worker. */
		if (!sb->expiring)
			audit_sandbox(AUDIT_EXPIRE, sb, SBX_OK, "idle_s=%lld",
			    (long long)(now - sb->used_ms) / 1000);
		sb->expiring = true;
		if (cache_teardown_start(sb))
			n++;
	}
	return n;
}

/*
 * Start the releases that found no worker. From the monitor's loop (a
 * tick, a worker done), never from a completion: a runtime that
 * completes at once would free entries under this walk.
 */
void
cache_retry(struct cache *c)
{
	struct sbx_sandbox *sb, *next;

	if (c->nstalled == 0)
		return;
	RB_FOREACH_SAFE(sb, sbx_tree, &c->tree, next) {
		if (!sb->stalled)
			continue;
		sb->stalled = false;
		c->nstalled--;
		cache_run(sb);
	}
}

struct sbx_sandbox *
cache_adopt(struct cache *c, uid_t uid, const char *agent,
    const char *project, const struct sbx_svc *svc, size_t n,
    int64_t created_ms, int64_t used_ms)
{
	struct sbx_sandbox *sb;

	if (n == 0 || n > SBX_MAX_SERVICES || cache_find(c, uid, agent) != NULL ||
	    (sb = entry_new(c, uid, c->owner_of != NULL ?
	    c->owner_of(c->owner_arg, uid) : uid, agent)) == NULL)
		return NULL;
	if ((sb->svc = calloc(n, sizeof(*sb->svc))) == NULL) {
		entry_free(sb);
		return NULL;
	}
	memcpy(sb->svc, svc, n * sizeof(*svc));
	sb->nservices = n;
	strlcpy(sb->project, project, sizeof(sb->project));
	set_state(sb, SB_READY);
	sb->generation = 1;	/* a later provision removes what is left */
	sb->created_ms = created_ms;
	sb->used_ms = used_ms;
	return sb;
}
