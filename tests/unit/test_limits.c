/*
 * test_limits.c - issue #15, points 2 and 3, in the monitor's cache and
 * request handling: the descriptor budget (max_fds), sandboxes in all,
 * requests per uid and in all, waiters per entry, provisions per uid
 * and in all, releases that wait for a worker, and subordinate uids
 * counted toward their owner or refused. Each limit: the request past
 * it gets busy with a sentence naming it, nobody else is touched, and
 * the counts go back to zero (nothing leaks). Runtime double, no podman.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "cache.h"
#include "cache_revoke.h"
#include "code.h"
#include "config.h"
#include "dispatch.h"
#include "handle.h"
#include "project.h"
#include "subuid.h"
#include "fixture.h"

static struct subuid_range ranges[2];
static struct subuid_table subuids;

static void
setup(void)
{
	fixture_four_projects();
	/* uid 1000 owns 100000-165535; 1001 owns 200000-200009 */
	ranges[0] = (struct subuid_range){ 100000, 65536, 1000 };
	ranges[1] = (struct subuid_range){ 200000, 10, 1001 };
	subuids = (struct subuid_table){ .v = ranges, .n = 2, .cap = 2 };
	env = (struct handler_env){ .cfg = &cfg, .projects = &projects,
	    .cache = &cache, .subuids = &subuids };
}

TestSuite(limits, .init = setup);

static void
with(struct cache_limits l)
{
	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd }, l,
	    clock_fake);
}

static void
release(uid_t uid, const char *agent, struct capture *c)
{
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = SBX_REQ_RELEASE;
	strlcpy(rq.release.agent, agent, SBX_SLUG_MAX);
	dispatch_handle(&env, uid, &rq, (struct sbx_reply){ capture_fn, c });
}

static void
expect_ok(const struct capture *c, int i)
{
	cr_assert_gt(c->n, i, "answer %d missing", i);
	cr_assert_eq(c->ans[i].code, SBX_OK, "answer %d: %s: %s", i,
	    sbx_code_name((enum sbx_code)c->ans[i].code), c->ans[i].message);
}

/* Busy, the sentence names the limit, and the reply's retry_after_ms is
 * the one docs/protocol.md gives for it. */
static void
expect_busy(const struct capture *c, int i, const char *limit,
    uint32_t retry_ms)
{
	cr_assert_gt(c->n, i, "answer %d missing", i);
	cr_assert_eq(c->ans[i].code, SBX_E_BUSY, "answer %d: %s: %s", i,
	    sbx_code_name((enum sbx_code)c->ans[i].code), c->ans[i].message);
	cr_assert_not_null(strstr(c->ans[i].message, limit),
	    "message names %s: %s", limit, c->ans[i].message);
	cr_assert_eq(c->ans[i].retry_after_ms, retry_ms,
	    "%s: retry_after_ms %u, want %u", limit, c->ans[i].retry_after_ms,
	    retry_ms);
	cr_assert_eq(c->ans[i].nservices, 0);
}

/* A host-wide limit's refusal names it and nothing of the host's load:
 * no number, which would tell one uid of the others. */
static void
expect_host_busy(const struct capture *c, int i, const char *limit,
    uint32_t retry_ms)
{
	const char *m;

	expect_busy(c, i, limit, retry_ms);
	for (m = c->ans[i].message; *m != '\0'; m++)
		cr_assert(*m < '0' || *m > '9', "a count of the host's in "
		    "answer %d: %s", i, c->ans[i].message);
}

/* Everything released or expired: no count is left anywhere. */
static void
expect_empty(void)
{
	cr_assert_eq(cache.count, 0, "entries left: %zu", cache.count);
	cr_assert_eq(cache.nrequests, 0);
	cr_assert_eq(cache.nprovisions, 0);
	cr_assert_eq(cache.nfds, 0, "descriptors counted: %zu", cache.nfds);
	cr_assert_eq(cache.nstalled, 0);
	cr_assert(RB_EMPTY(&cache.quotas), "an owner's record is left");
}

static void
agent(char *buf, size_t len, int i)
{
	snprintf(buf, len, "a%d", i);
}

/* ---- the descriptor budget ------------------------------------------- */

/*
 * max_fds 9, two-service sandboxes: four fit (8 descriptors), the fifth
 * is busy, a one-service sandbox takes the last. Then every release and
 * every expiry still works, and the budget is whole again.
 */
Test(limits, fd_budget_fill_to_busy_then_release_and_expire_all)
{
	struct capture c = { 0 };
	char a[16];
	int i;

	with((struct cache_limits){ .max_fds = 9, .idle_ttl_ms = 60000 });
	for (i = 0; i < 4; i++) {
		agent(a, sizeof(a), i);
		ensure(1000 + (uid_t)i, a, "both", "postgres", NULL, &c);
		expect_ok(&c, i);
	}
	cr_assert_eq(cache.nfds, 8);
	ensure(1010, "a9", "both", "postgres", NULL, &c);
	expect_host_busy(&c, 4, "descriptor budget", 30000);
	cr_assert_null(cache_find(&cache, 1010, "a9"), "nothing kept for it");
	ensure(1011, "one", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 5);
	cr_assert_eq(cache.nfds, 9);
	ensure(1000, "a0", "both", "postgres", NULL, &c);
	expect_ok(&c, 6);	/* a hit costs nothing */
	cr_assert_eq(rtd.provisions, 5);

	release(1000, "a0", &c);
	expect_ok(&c, 7);
	cr_assert_eq(c.ans[7].released, 1, "a release works at the limit");
	ensure(1010, "a9", "both", "postgres", NULL, &c);
	expect_ok(&c, 8);	/* its two descriptors were given back */

	fake_now += 60001;
	cr_assert_eq(cache_expire(&cache), 5, "every sandbox expires");
	cr_assert_eq(rtd.teardowns, 6);
	expect_empty();
}

/* A dead sandbox's provision again reuses its own descriptors. */
Test(limits, fd_budget_reprovision_counts_own_descriptors)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_fds = 2 });
	ensure(1000, "a", "both", "postgres", NULL, &c);
	expect_ok(&c, 0);
	rtd.live = false;
	ensure(1000, "a", "both", "postgres", NULL, &c);
	expect_ok(&c, 1);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_eq(cache.nfds, 2);
	release(1000, "a", &c);
	expect_empty();
}

/* A claim of warm containers holds descriptors as a provision does: past
 * the budget, no claim either (the warm set stays in the pool). */
Test(limits, fd_budget_holds_for_a_claim_too)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_fds = 2 });
	ensure(1000, "a", "both", "postgres", NULL, &c);
	expect_ok(&c, 0);
	rtd.warm = 1;
	ensure(1001, "b", "both", "postgres", NULL, &c);
	expect_host_busy(&c, 1, "descriptor budget", 30000);
	cr_assert_eq(rtd.claims, 0, "nothing claimed past the budget");
	cr_assert_eq(rtd.warm, 1);
	release(1000, "a", &c);
	ensure(1001, "b", "both", "postgres", NULL, &c);
	expect_ok(&c, 3);
	cr_assert_eq(rtd.claims, 1, "within it, the claim");
}

/* ---- sandboxes in all -------------------------------------------------- */

Test(limits, max_sandboxes)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_sandboxes = 2 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "b", "roboco-api", "postgres", NULL, &c);
	ensure(1002, "c", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	expect_ok(&c, 1);
	expect_host_busy(&c, 2, "max_sandboxes", 30000);
	cr_assert_eq(cache.count, 2);
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 3);	/* a hit at the limit */
	release(1001, "b", &c);
	ensure(1002, "c", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 5);
	release(1000, "a", &c);
	release(1002, "c", &c);
	expect_empty();
}

Test(limits, max_sandboxes_per_uid_names_the_limit)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_per_uid = 1 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "b", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	expect_busy(&c, 1, "max_sandboxes_per_uid", 10000);
	expect_ok(&c, 2);	/* another uid is not touched */
}

/* ---- requests ------------------------------------------------------------ */

Test(limits, requests_per_uid_cost_nobody_else)
{
	struct capture c = { 0 }, other = { 0 };
	char a[16];
	int i;

	with((struct cache_limits){ .max_requests_per_uid = 3 });
	rtd.deferred = true;
	for (i = 0; i < 4; i++) {
		agent(a, sizeof(a), i);
		ensure(1000, a, "roboco-api", "postgres", NULL, &c);
	}
	cr_assert_eq(c.n, 1, "three wait, the fourth is answered at once");
	expect_busy(&c, 0, "max_requests_per_uid", 1000);
	release(1000, "a0", &c);
	expect_busy(&c, 1, "max_requests_per_uid", 1000);
	ensure(1001, "a0", "roboco-api", "postgres", NULL, &other);
	cr_assert_eq(cache.nrequests, 4, "the other uid's request waits too");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 5);
	expect_ok(&c, 2);
	expect_ok(&c, 3);
	expect_ok(&c, 4);
	expect_ok(&other, 0);
	cr_assert_eq(cache.nrequests, 0);
	ensure(1000, "a3", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.npending, 1, "after the answers it may ask again");
}

Test(limits, waiters_per_entry)
{
	struct capture c = { 0 }, other = { 0 };
	int i;

	with((struct cache_limits){ .max_waiters = 2 });
	rtd.deferred = true;
	for (i = 0; i < 3; i++)
		ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_busy(&c, 0, "max_waiters", 1000);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &other);
	cr_assert_eq(rtd.npending, 2, "another agent of the same uid is not held");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 3);
	expect_ok(&c, 1);
	expect_ok(&c, 2);
	cr_assert_eq(rtd.provisions, 2, "one provision for the agent's two");
	expect_ok(&other, 0);
}

Test(limits, requests_in_all_but_releases_pass)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_requests = 2 });
	ensure(1000, "r", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	rtd.deferred = true;
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "b", "roboco-api", "postgres", NULL, &c);
	ensure(1002, "c", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_host_busy(&c, 1, "max_requests", 2000);
	release(1000, "r", &c);	/* gives back: never refused for totals */
	cr_assert_eq(c.n, 3);
	expect_ok(&c, 2);
	cr_assert_eq(c.ans[2].released, 1);
	rtd_complete(&rtd);
	cr_assert_eq(cache.nrequests, 0);
}

/* ---- provisions ------------------------------------------------------------ */

Test(limits, provisions_per_uid_cost_nobody_else)
{
	struct capture c = { 0 }, other = { 0 };

	with((struct cache_limits){ .max_provisions_per_uid = 2 });
	rtd.deferred = true;
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "c", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0, "the third waits its turn: no busy");
	cr_assert_not_null(cache_find(&cache, 1000, "c"), "queued");
	ensure(1001, "a", "roboco-api", "postgres", NULL, &other);
	cr_assert_eq(rtd.npending, 3, "another uid provisions at once");
	cr_assert_eq(cache.nprovisions, 3);
	rtd_complete(&rtd);
	expect_ok(&c, 0);
	expect_ok(&c, 1);
	expect_ok(&other, 0);
	cr_assert_eq(cache.nprovisions, 0);
	cache_retry(&cache);	/* the loop's, once provisions ended */
	cr_assert_eq(rtd.npending, 1, "its turn came: provisioning");
	rtd_complete(&rtd);
	expect_ok(&c, 2);
}

/* A request that waited its turn past its deadline is busy. */
Test(limits, a_turn_waited_past_its_deadline_is_busy)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_provisions_per_uid = 1,
	    .max_wait_ms = 5000 });
	rtd.deferred = true;
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0);
	fake_now += 4000;
	cache_retry(&cache);
	cr_assert_eq(c.n, 0, "within its deadline it waits");
	fake_now += 2000;
	cache_retry(&cache);
	cr_assert_eq(c.n, 1);
	expect_busy(&c, 0, "max_provisions_per_uid", 2000);
	rtd_complete(&rtd);
}

Test(limits, provisions_in_all)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_provisions = 2 });
	rtd.deferred = true;
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1002, "a", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_host_busy(&c, 0, "max_provisions", 2000);
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(cache.count, 2);
}

/* ---- releases and expiry without a worker ---------------------------------- */

Test(limits, release_waits_for_a_worker_and_is_retried)
{
	struct capture c = { 0 };

	with((struct cache_limits){ 0 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	rtd.refuse_teardowns = 2;
	release(1000, "a", &c);
	cr_assert_eq(c.n, 1, "no answer while no worker can take it");
	cr_assert_eq(cache_find(&cache, 1000, "a")->state, SB_READY);
	cr_assert_eq(cache.nstalled, 1);
	cache_retry(&cache);
	cr_assert_eq(c.n, 1, "still none free");
	cache_retry(&cache);
	cr_assert_eq(c.n, 2);
	expect_ok(&c, 1);
	cr_assert_eq(c.ans[1].released, 1);
	expect_empty();
}

Test(limits, expiry_retried_until_a_worker_takes_it)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .idle_ttl_ms = 1000 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	fake_now += 1001;
	rtd.refuse_teardowns = 1;
	cr_assert_eq(cache_expire(&cache), 0);
	cr_assert_eq(cache_find(&cache, 1000, "a")->state, SB_READY);
	cr_assert_eq(cache_expire(&cache), 1, "the next tick tries again");
	expect_empty();
	/* audited once: tests/stress/faults.sh counts the lines */
}

/* ---- teardowns the runtime refuses ----------------------------------------- */

/* The agent hears why, and its sandbox is still its own: the same
 * passwords at the next request, and a later release removes it. */
Test(limits, release_refused_by_the_runtime_keeps_the_sandbox)
{
	struct capture c = { 0 };
	char pw[SBX_SECRET_MAX];

	with((struct cache_limits){ 0 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	strlcpy(pw, c.ans[0].services[0].password, sizeof(pw));
	rtd.fail_teardowns = 1;
	release(1000, "a", &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[1].code, SBX_E_RUNTIME_FAILED, "%s",
	    sbx_code_name((enum sbx_code)c.ans[1].code));
	cr_assert_eq(c.ans[1].released, 0);
	cr_assert_str_eq(c.ans[1].message, "the sandbox could not be torn "
	    "down: podman rm: refused (rtdouble).");
	cr_assert_eq(cache_find(&cache, 1000, "a")->state, SB_READY);
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 2);
	cr_assert_str_eq(c.ans[2].services[0].password, pw, "a hit");
	cr_assert_eq(rtd.provisions, 1);
	release(1000, "a", &c);
	expect_ok(&c, 3);
	cr_assert_eq(c.ans[3].released, 1);
	cr_assert_eq(rtd.teardowns, 2);
	expect_empty();
}

/* An expiry the runtime refuses waits another idle_ttl, not a tick. */
Test(limits, expiry_refused_by_the_runtime_waits_another_ttl)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .idle_ttl_ms = 1000 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	fake_now += 1001;
	rtd.fail_teardowns = 1;
	cr_assert_eq(cache_expire(&cache), 1);
	cr_assert_eq(cache_find(&cache, 1000, "a")->state, SB_READY);
	fake_now += 999;
	cr_assert_eq(cache_expire(&cache), 0, "not at every tick");
	fake_now += 1;
	cr_assert_eq(cache_expire(&cache), 1);
	cr_assert_eq(rtd.teardowns, 2);
	expect_empty();
}

/* ---- subordinate uids ------------------------------------------------------ */

Test(limits, subuids_count_toward_their_owner)
{
	struct capture c = { 0 };

	cfg.subuid = SUBUID_COUNT;
	with((struct cache_limits){ .max_per_uid = 2 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(100005, "a", "roboco-api", "postgres", NULL, &c);
	ensure(165535, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	expect_ok(&c, 1);
	expect_busy(&c, 2, "max_sandboxes_per_uid", 10000);
	/* each its own key: a subordinate uid never reaches the owner's */
	cr_assert_not_null(cache_find(&cache, 100005, "a"));
	cr_assert_neq(cache_find(&cache, 100005, "a"),
	    cache_find(&cache, 1000, "a"));
	/* past the range, and another owner's range: their own quotas */
	ensure(165536, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "a", "roboco-api", "postgres", NULL, &c);
	ensure(200000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(200009, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 3);
	expect_ok(&c, 4);
	expect_ok(&c, 5);
	expect_busy(&c, 6, "max_sandboxes_per_uid", 10000);
	release(100005, "a", &c);
	ensure(165535, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 8);
}

Test(limits, subuids_count_for_provisions_and_requests_too)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_provisions_per_uid = 1,
	    .max_requests_per_uid = 5 });
	rtd.deferred = true;
	ensure(100001, "a", "roboco-api", "postgres", NULL, &c);
	ensure(100002, "a", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0, "the owner's one provision runs: it waits");
	cr_assert_eq(rtd.npending, 1);
	rtd_complete(&rtd);
	cache_retry(&cache);
	cr_assert_eq(rtd.npending, 1, "then its turn");
	rtd_complete(&rtd);
}

Test(limits, subuids_refused)
{
	struct capture c = { 0 };

	cfg.subuid = SUBUID_REFUSE;
	with((struct cache_limits){ 0 });
	ensure(100005, "a", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.ans[0].code, SBX_E_FORBIDDEN);
	cr_assert_not_null(strstr(c.ans[0].message, "subuid = refuse"),
	    "%s", c.ans[0].message);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(cache.count, 0);
	available(100005, "roboco-api", &c);
	cr_assert_eq(c.ans[1].code, SBX_OK);
	cr_assert_eq(c.ans[1].nservices, 0, "available says: no sandbox");
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 2);	/* the owner itself is not subordinate */
	release(100005, "a", &c);
	cr_assert_eq(c.ans[3].code, SBX_OK);
	cr_assert_eq(c.ans[3].released, 0);
}

/* ---- all of them at once: nothing leaks --------------------------------- */

Test(limits, counts_return_to_zero)
{
	struct capture c = { 0 };
	char a[16];
	int i;

	with((struct cache_limits){ .max_per_uid = 3, .max_sandboxes = 5,
	    .max_fds = 8, .max_requests = 6, .max_requests_per_uid = 4,
	    .max_waiters = 2, .max_provisions = 4,
	    .max_provisions_per_uid = 2 });
	rtd.deferred = true;
	for (i = 0; i < 40; i++) {
		agent(a, sizeof(a), i % 4);
		ensure((uid_t)(1000 + i % 3 + (i % 5 == 0 ? 99000 : 0)), a,
		    i % 2 ? "both" : "roboco-api", "postgres", NULL, &c);
		if (i % 7 == 0)
			rtd_complete(&rtd);
		if (i % 11 == 0)
			release((uid_t)(1000 + i % 3), a, &c);
	}
	rtd_complete(&rtd);
	cr_assert_leq(cache.nfds, 8);
	cr_assert_leq(cache.count, 5);
	for (i = 0; i < 3; i++) {
		int j;

		for (j = 0; j < 4; j++) {
			agent(a, sizeof(a), j);
			release((uid_t)(1000 + i), a, &c);
			release((uid_t)(100000 + i), a, &c);
		}
	}
	expect_empty();
}

/* ---- reshapes (a project's set changed) --------------------------------- */

/* A grown set needs descriptors too: past the budget it is busy, and the
 * live sandbox stays as it was. */
Test(limits, reshape_past_the_budget_is_busy_and_keeps_the_sandbox)
{
	struct capture c = { 0 };
	char pw[SBX_SECRET_MAX];

	with((struct cache_limits){ .max_fds = 2 });
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "b", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 0);
	expect_ok(&c, 1);
	strlcpy(pw, c.ans[0].services[0].password, sizeof(pw));
	set_project(&proj[3], "roboco-api", "postgres", "redis");
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_host_busy(&c, 2, "descriptor budget", 30000);
	cr_assert_eq(cache_find(&cache, 1000, "a")->state, SB_READY);
	cr_assert_eq(cache.nfds, 2);
	release(1001, "b", &c);
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	expect_ok(&c, 4);
	cr_assert_eq(c.ans[4].nservices, 2);
	cr_assert_str_eq(c.ans[4].services[0].password, pw,
	    "the kept service keeps its password");
	cr_assert_eq(cache.nfds, 2);
	release(1000, "a", &c);
	expect_empty();
}

static size_t
keep_postgres(void *arg, const struct sbx_sandbox *sb,
    char (*out)[SBX_SLUG_MAX])
{
	(void)arg;
	(void)sb;
	strlcpy(out[0], "postgres", SBX_SLUG_MAX);
	return 1;
}

Test(limits, revoke_counts_return_to_zero)
{
	struct capture c = { 0 };

	with((struct cache_limits){ .max_fds = 4, .max_requests = 1 });
	ensure(1000, "a", "both", "postgres", NULL, &c);
	expect_ok(&c, 0);
	cr_assert_eq(cache.nfds, 2);
	cr_assert_eq(cache_revoke(&cache, keep_postgres, NULL), 1);
	cr_assert_eq(cache.nfds, 1, "the dropped service's descriptor is free");
	cr_assert_eq(cache.nrequests, 0, "the revocation's own request is gone");
	release(1000, "a", &c);
	expect_empty();
}

/* ---- the keys, as config_parse.c checks them ------------------------------ */

static int
load(const char *keys, struct sbx_config *out, char *err, size_t len)
{
	char path[] = "/tmp/sbx-limits-conf.XXXXXX";
	FILE *f;
	int fd, rc;

	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fprintf(f, "[sbx]\nruntime = /bin/true\n%s\n", keys);
	fclose(f);
	rc = config_load(path, out, err, len);
	unlink(path);
	return rc;
}

Test(limits, config_defaults_and_refusals)
{
	static struct sbx_config c;
	char err[512];

	cr_assert_eq(load("", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.max_sandboxes, 512);
	cr_assert_eq(c.max_requests, 256);
	cr_assert_eq(c.max_requests_per_uid, 32);
	cr_assert_eq(c.max_waiters, 16);
	cr_assert_eq(c.max_provisions, 24);
	cr_assert_eq(c.max_provisions_per_uid, 4);
	cr_assert_eq(c.max_open_files, 0);
	cr_assert_eq(c.subuid, SUBUID_COUNT);
	cr_assert_str_eq(c.subuid_file, "/etc/subuid");
	cr_assert_eq(load("subuid = refuse\nmax_open_files = 64\n"
	    "max_sandboxes = 0", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.subuid, SUBUID_REFUSE);
	cr_assert_eq(c.max_open_files, 64);

	cr_assert_eq(load("max_provisions = 32", &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "max_workers"), "%s", err);
	/* With a warm pool, one worker more stays free for it: 31 of 32
	 * workers is fine without one, refused with one. */
	cr_assert_eq(load("max_provisions = 31", &c, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(load("max_provisions = 30\n[service r]\nimage = i\n"
	    "port = 1\nprobe = redis\nwarm = 1", &c, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(load("max_provisions = 31\n[service r]\nimage = i\n"
	    "port = 1\nprobe = redis\nwarm = 1", &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "max_workers - 2 (30)"), "%s", err);
	cr_assert_eq(load("max_provisions_per_uid = 30", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load("max_requests_per_uid = 300", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load("max_sandboxes = 8", &c, err, sizeof(err)), -1,
	    "below max_sandboxes_per_uid (16)");
	cr_assert_eq(load("max_waiters = 0", &c, err, sizeof(err)), -1);
	cr_assert_eq(load("max_open_files = 16", &c, err, sizeof(err)), -1);
	cr_assert_eq(load("subuid = maybe", &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "count or refuse"), "%s", err);
	cr_assert_eq(load("subuid_file = etc/subuid", &c, err, sizeof(err)),
	    -1);
	cr_assert_eq(load("max_request = 5", &c, err, sizeof(err)), -1,
	    "a typo is an error");
}

#define WARM_SECTION	"[service r]\nimage = i\nport = 1\nprobe = redis\n"

#define DATA_KEYS	"data = /srv/pgdata/pgdata\n" \
    "data_template = /var/lib/sbx/templates/pg\ndata_size = 256m\n"

/* data, data_template, data_size: all three or none, each checked, the
 * error naming the file and line; they count in the section's hash. */
Test(limits, config_data_keys)
{
	static struct sbx_config c;
	char err[512];
	uint64_t h;

	cr_assert_eq(load(WARM_SECTION DATA_KEYS, &c, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_str_eq(c.services[0].data_path, "/srv/pgdata/pgdata");
	cr_assert_str_eq(c.services[0].data_template,
	    "/var/lib/sbx/templates/pg");
	cr_assert_str_eq(c.services[0].data_size, "256m");
	h = c.services[0].hash;
	cr_assert_eq(load(WARM_SECTION "transport = tcp\n" DATA_KEYS, &c, err,
	    sizeof(err)), 0, "on tcp alone too: %s", err);
	cr_assert_eq(load(WARM_SECTION, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_neq(c.services[0].hash, h, "data counts in the hash");
	cr_assert_eq(load(WARM_SECTION "data = /srv/pgdata/pgdata\n"
	    "data_size = 256m", &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "data, data_template and data_size go "
	    "together"), "%s", err);
	cr_assert_eq(load(WARM_SECTION "data = srv/pgdata", &c, err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, ":7: [service r] data must be an "
	    "absolute path"), "the file and line: %s", err);
	cr_assert_eq(load(WARM_SECTION "data_template = /t/../etc", &c, err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, ":7: [service r] data_template must"),
	    "%s", err);
	cr_assert_eq(load(WARM_SECTION "data = /srv/d:ro", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "data_size = 256m,nr_inodes=9", &c, err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, ":7: [service r] data_size must be a "
	    "size"), "%s", err);
	cr_assert_eq(load(WARM_SECTION "data_size = 0m", &c, err, sizeof(err)),
	    -1);
	cr_assert_eq(load(WARM_SECTION "data_size = 256", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "data_size = 256t", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "tmpfs = /srv/pgdata/pgdata:size=1m\n"
	    DATA_KEYS, &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "data /srv/pgdata/pgdata is a tmpfs's "
	    "path too"), "%s", err);
	cr_assert_eq(load(WARM_SECTION "tmpfs = /srv/pgdata:size=1m\n"
	    DATA_KEYS, &c, err, sizeof(err)), 0, "a tmpfs above it: %s", err);
}

/* warm_max, warm_idle, warm_mib, warm_memory: defaults, ranges, and the
 * checks between keys, each error naming the file and, for a value out
 * of range, its line. */
Test(limits, config_warm_keys)
{
	static struct sbx_config c;
	char err[512];

	cr_assert_eq(load(WARM_SECTION "warm = 2", &c, err, sizeof(err)), 0,
	    "%s", err);
	cr_assert_eq(c.services[0].warm_max, 2, "unset: a fixed pool");
	cr_assert_eq(c.services[0].warm_idle, 300);
	cr_assert_eq(c.services[0].warm_mib, 64);
	cr_assert_eq(c.warm_memory, 0);
	/* Either order of warm and warm_max. */
	cr_assert_eq(load(WARM_SECTION "warm_max = 32\nwarm = 2\n"
	    "warm_idle = 30\nwarm_mib = 60", &c, err, sizeof(err)), 0, "%s",
	    err);
	cr_assert_eq(c.services[0].warm_max, 32);
	cr_assert_eq(c.services[0].warm, 2);
	cr_assert_eq(c.services[0].warm_idle, 30);
	cr_assert_eq(c.services[0].warm_mib, 60);
	cr_assert_eq(load("warm_memory = 2048\n" WARM_SECTION "warm = 1\n"
	    "warm_max = 64", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.warm_memory, 2048);

	cr_assert_eq(load(WARM_SECTION "warm = 4\nwarm_max = 2", &c, err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "warm_max (2) is below warm (4)"), "%s",
	    err);
	cr_assert_not_null(strstr(err, "/tmp/sbx-limits-conf."), "the file: %s",
	    err);
	cr_assert_eq(load(WARM_SECTION "warm_max = 65", &c, err, sizeof(err)),
	    -1);
	cr_assert_not_null(strstr(err, ":7: warm_max must be a whole number "
	    "up to 64"), "the file and line: %s", err);
	cr_assert_eq(load(WARM_SECTION "warm_max = -1", &c, err, sizeof(err)),
	    -1);
	cr_assert_eq(load(WARM_SECTION "warm_max = 4294967295", &c, err,
	    sizeof(err)), -1, "not the unset mark");
	cr_assert_eq(load(WARM_SECTION "warm_max = 0x10", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "warm_idle = 0", &c, err, sizeof(err)),
	    -1);
	cr_assert_not_null(strstr(err, ":7: warm_idle must be seconds"), "%s",
	    err);
	cr_assert_eq(load(WARM_SECTION "warm_idle = 86401", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "warm_idle = 99999999999999999999", &c,
	    err, sizeof(err)), -1);
	cr_assert_eq(load(WARM_SECTION "warm_mib = 0", &c, err, sizeof(err)),
	    -1);
	cr_assert_eq(load(WARM_SECTION "warm_mib = 65537", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load("warm_memory = 16777217", &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, ":3: warm_memory"), "%s", err);
	cr_assert_eq(load("warm_memory = 1m", &c, err, sizeof(err)), -1);
	/* A budget below the floors it must hold. */
	cr_assert_eq(load("warm_memory = 100\n" WARM_SECTION "warm = 2", &c,
	    err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "warm_memory (100 MiB) is below"), "%s",
	    err);
	/* warm_max counts against half of userns_slots, as warm did. */
	cr_assert_eq(load("userns_slots = 100\n" WARM_SECTION "warm_max = 51",
	    &c, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "half of userns_slots"), "%s", err);
	/* A warm key in [sbx] is a typo there. */
	cr_assert_eq(load("warm_max = 4", &c, err, sizeof(err)), -1);
}

/*
 * A record holds its services' hashes, and a restart adopts only what
 * hashes the same: a change here discards every sandbox of every host
 * at its next upgrade. So one section's value is pinned, and what must
 * not count (line order, warm, ready_timeout) is checked not to.
 */
#define PINNED_SECTION "[service r]\nimage = localhost/sbx-redis:7\n" \
	"port = 6379\nprobe = redis\nuser = default\ndatabase = 0\n" \
	"env = SBX_PASSWORD={password}\ntmpfs = /data\nmemory = 128m\n" \
	"cpus = 1\npids = 64\n"

static uint64_t
section_hash(const char *section)
{
	static struct sbx_config c;
	char err[512];

	cr_assert_eq(load(section, &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.nservices, 1);
	return c.services[0].hash;
}

Test(limits, service_hash_is_pinned_and_ignores_what_no_container_has)
{
	uint64_t h = section_hash(PINNED_SECTION);

	cr_assert_eq(h, 0xad91b0c637ed5e66ULL, "the hash of one section changed: %#llx",
	    (unsigned long long)h);
	cr_assert_eq(section_hash(PINNED_SECTION "warm = 2\n"
	    "ready_timeout = 90\n"), h, "warm and ready_timeout do not count");
	cr_assert_eq(section_hash("[service r]\npids = 64\ncpus = 1\n"
	    "memory = 128m\ntmpfs = /data\nenv = SBX_PASSWORD={password}\n"
	    "database = 0\nuser = default\nprobe = redis\nport = 6379\n"
	    "image = localhost/sbx-redis:7\n"), h, "nor the order of lines");
	cr_assert_neq(section_hash(PINNED_SECTION "memory = 256m\n"), h);
	cr_assert_neq(section_hash(PINNED_SECTION "transport = tcp\n"), h);
	cr_assert_neq(section_hash(PINNED_SECTION "env = X=1\n"), h);
}
