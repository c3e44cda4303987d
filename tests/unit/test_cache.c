/*
 * test_cache.c - the monitor's sandbox cache (cache.c) and request
 * handling (handle.c) beyond the seed's eleven cases: release, failure,
 * limits, expiry, status, scale and the policy refusals. Same setup and
 * runtime double (rtdouble.h) as test_seed.c.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache.h"
#include "cache_revoke.h"
#include "cache_status.h"
#include "code.h"
#include "config.h"
#include "dispatch.h"
#include "handle.h"
#include "project.h"
#include "fixture.h"


static void
limits(unsigned max_per_uid, int64_t idle_ttl_ms)
{
	cr_assert_eq(cache.count, 0, "set limits on an empty cache");
	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd },
	    (struct cache_limits){ .max_per_uid = max_per_uid,
	    .idle_ttl_ms = idle_ttl_ms }, clock_fake);
}

static void
setup(void)
{
	fixture_four_projects();
	limits(0, 0);
	env = (struct handler_env){ .cfg = &cfg, .projects = &projects,
	    .cache = &cache };
}

TestSuite(cache, .init = setup);

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
status(uid_t uid, struct capture *c)
{
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = SBX_REQ_STATUS;
	dispatch_handle(&env, uid, &rq, (struct sbx_reply){ capture_fn, c });
}

static const struct sbx_conn *
conn(const struct sbx_ans *a, const char *name)
{
	uint32_t i;

	for (i = 0; i < a->nservices; i++)
		if (!strcmp(a->services[i].name, name))
			return &a->services[i];
	cr_assert_fail("no service %s in the answer", name);
	return NULL;
}

static void
expect_ok_sandbox(const struct sbx_ans *a)
{
	cr_assert_eq(a->type, SBX_REQ_SANDBOX);
	cr_assert_eq(a->code, SBX_OK, "code %u: %s", a->code, a->message);
	cr_assert_gt(a->nservices, 0);
}

static void
expect_code(const struct sbx_ans *a, uint32_t type, enum sbx_code code)
{
	cr_assert_eq(a->type, type, "type %u, want %u", a->type, type);
	cr_assert_eq(a->code, (uint32_t)code, "code %s (%s), want %s",
	    sbx_code_name((enum sbx_code)a->code), a->message,
	    sbx_code_name(code));
	cr_assert_neq(a->message[0], '\0');
	if (code != SBX_OK)
		cr_assert_eq(a->nservices, 0, "an error carries no services");
}

/* ---- release ----------------------------------------------------------- */

Test(cache, release_tears_down_and_next_request_provisions_again)
{
	struct capture c = { 0 };
	char first[SBX_SECRET_MAX];

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[0]);
	strlcpy(first, conn(&c.ans[0], "postgres")->password, sizeof(first));
	release(1000, "dev-1", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_RELEASE, SBX_OK);
	cr_assert_eq(c.ans[1].released, 1);
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
	cr_assert_eq(cache.count, 0);

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_eq(rtd.provisions, 2, "a released sandbox is not a hit");
	cr_assert_eq(rtd.is_live_calls, 0);
	cr_assert_str_neq(conn(&c.ans[2], "postgres")->password, first,
	    "fresh passwords after a release");
	cr_assert_not_null(cache_find(&cache, 1000, "dev-1"));
}

Test(cache, release_of_unknown_agent)
{
	struct capture c = { 0 };

	release(1000, "ghost", &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_RELEASE, SBX_OK);
	cr_assert_eq(c.ans[0].released, 0);
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_eq(cache.count, 0);

	/* and with other sandboxes around */
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	release(1000, "dev-2", &c);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.ans[2].released, 0);
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_not_null(cache_find(&cache, 1000, "dev-1"));
}

Test(cache, release_by_another_uid_never_touches_it)
{
	struct capture c = { 0 };
	struct sbx_sandbox *sb;
	char pw[SBX_SECRET_MAX];

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	sb = cache_find(&cache, 1000, "dev-1");
	cr_assert_not_null(sb);
	strlcpy(pw, sb->svc[0].conn.password, sizeof(pw));
	release(1001, "dev-1", &c);
	release(0, "dev-1", &c);	/* not even root's release */
	cr_assert_eq(c.n, 3);
	cr_assert_eq(c.ans[1].released, 0);
	cr_assert_eq(c.ans[2].released, 0);
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1"), sb);
	cr_assert_eq(sb->state, SB_READY);
	cr_assert_str_eq(sb->svc[0].conn.password, pw);
	cr_assert_null(cache_find(&cache, 1001, "dev-1"));
	cr_assert_eq(cache.count, 1, "no entry made for the other uid");

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 1, "still a hit");
	cr_assert_str_eq(conn(&c.ans[3], "postgres")->password, pw);
}

Test(cache, release_queued_behind_deferred_provision)
{
	struct capture c = { 0 };

	rtd.deferred = true;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	release(1000, "dev-1", &c);
	cr_assert_eq(c.n, 0, "the release waits for the provision");
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->state, SB_PROVISIONING);
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[0]);
	expect_code(&c.ans[1], SBX_REQ_RELEASE, SBX_OK);
	cr_assert_eq(c.ans[1].released, 1);
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
}

Test(cache, request_after_queued_release_provisions_anew)
{
	struct capture c = { 0 };

	rtd.deferred = true;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	release(1000, "dev-1", &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 1);
	rtd_complete(&rtd);
	/* provision answered, release done, third request started anew */
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[1].released, 1);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_eq(rtd.npending, 1);
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_str_neq(conn(&c.ans[2], "postgres")->password,
	    conn(&c.ans[0], "postgres")->password);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->state, SB_READY);
}

/* ---- failure ----------------------------------------------------------- */

Test(cache, failed_provision_fails_every_waiter_and_caches_nothing)
{
	struct capture c = { 0 };

	rtd.deferred = true;
	rtd.fail_with = SBX_E_RUNTIME_FAILED;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0);
	cr_assert_eq(rtd.provisions, 1, "one provision for both");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	cr_assert_str_eq(c.ans[0].message, "double says no");
	cr_assert_eq(memcmp(&c.ans[0], &c.ans[1], sizeof(c.ans[0])), 0);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
	cr_assert_eq(cache.count, 0);
	cr_assert_eq(rtd.provisions, 1, "no retry on its own");

	/* the next request tries again */
	rtd.deferred = false;
	rtd.fail_with = SBX_OK;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_eq(rtd.provisions, 2);
}

Test(cache, failed_provision_does_not_show_in_status)
{
	struct capture c = { 0 };
	struct sbx_status_rec recs[4];

	rtd.fail_with = SBX_E_TIMEOUT;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_TIMEOUT);
	cr_assert_eq(cache_status(&cache, recs, 4), 0);
	cr_assert_eq(cache_busy(&cache), 0);
}

/* ---- limits ------------------------------------------------------------ */

Test(cache, max_per_uid)
{
	struct capture c = { 0 };

	limits(2, 0);
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "c", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[0]);
	expect_ok_sandbox(&c.ans[1]);
	expect_code(&c.ans[2], SBX_REQ_SANDBOX, SBX_E_BUSY);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_null(cache_find(&cache, 1000, "c"));

	/* an agent already holding one still gets its hit */
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 4);
	expect_ok_sandbox(&c.ans[3]);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_eq(memcmp(&c.ans[0], &c.ans[3], sizeof(c.ans[0])), 0);

	/* the limit is per uid */
	ensure(1001, "c", "roboco-api", "postgres", NULL, &c);
	ensure(999, "c", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[4]);
	expect_ok_sandbox(&c.ans[5]);
	cr_assert_eq(rtd.provisions, 4);

	/* a release frees a slot */
	release(1000, "b", &c);
	cr_assert_eq(c.ans[6].released, 1);
	ensure(1000, "c", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 8);
	expect_ok_sandbox(&c.ans[7]);
}

Test(cache, max_per_uid_counts_provisions_in_flight)
{
	struct capture c = { 0 };

	limits(1, 0);
	rtd.deferred = true;
	ensure(1000, "a", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "b", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_BUSY);
	cr_assert_eq(rtd.provisions, 1);
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[1]);
}

/* ---- idle expiry ------------------------------------------------------- */

Test(cache, idle_expiry)
{
	struct capture c = { 0 };

	limits(0, 60000);
	fake_now = 1000;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->used_ms, 1000);

	fake_now = 1000 + 60000 - 1;
	cr_assert_eq(cache_expire(&cache), 0, "not expired before the ttl");
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_not_null(cache_find(&cache, 1000, "dev-1"));

	fake_now = 1000 + 60000 + 1;
	cr_assert_eq(cache_expire(&cache), 1, "expired after the ttl");
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
	cr_assert_eq(c.n, 1, "expiry answers nobody");
}

Test(cache, hit_renews_used_ms)
{
	struct capture c = { 0 };
	struct sbx_sandbox *sb;

	limits(0, 60000);
	fake_now = 1000;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	fake_now = 50000;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 1);
	sb = cache_find(&cache, 1000, "dev-1");
	cr_assert_eq(sb->used_ms, 50000);
	cr_assert_eq(sb->created_ms, 1000, "a hit does not renew the age");

	fake_now = 61000;	/* 60 s after the provision, 11 s after the hit */
	cr_assert_eq(cache_expire(&cache), 0);
	cr_assert_eq(rtd.teardowns, 0);
	fake_now = 50000 + 60000 + 1;
	cr_assert_eq(cache_expire(&cache), 1);
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
}

Test(cache, expiry_skips_busy_entries_and_zero_ttl)
{
	struct capture c = { 0 };

	/* ttl 0: never */
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	fake_now += 365LL * 24 * 3600 * 1000;
	cr_assert_eq(cache_expire(&cache), 0);
	cr_assert_eq(rtd.teardowns, 0);
	release(1000, "dev-1", &c);
	cr_assert_eq(cache.count, 0);

	/* a provision in flight is not idle, whatever the clock says */
	limits(0, 1000);
	rtd.deferred = true;
	ensure(1000, "dev-2", "roboco-api", "postgres", NULL, &c);
	fake_now += 10000;
	cr_assert_eq(cache_expire(&cache), 0);
	cr_assert_eq(rtd.teardowns, 1, "only the release above");
	rtd_complete(&rtd);
	cr_assert_eq(cache_find(&cache, 1000, "dev-2")->state, SB_READY);
}

/* ---- status ------------------------------------------------------------ */

Test(cache, status_has_no_password_and_only_ready_entries)
{
	struct capture c = { 0 };
	struct sbx_status_rec recs[8];
	size_t n, i;

	fake_now = 1000;
	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	ensure(1001, "dev-1", "roboco-api", "postgres", NULL, &c);
	fake_now = 6000;
	ensure(1000, "dev-1", "both", "postgres", NULL, &c);	/* hit */
	rtd.deferred = true;
	ensure(1002, "slow", "roboco-api", "postgres", NULL, &c);	/* in flight */
	cr_assert_eq(c.n, 3);
	cr_assert_eq(cache.count, 3);

	fake_now = 11000;
	memset(recs, 0xa5, sizeof(recs));
	n = cache_status(&cache, recs, 8);
	cr_assert_eq(n, 2, "only ready entries, not the one provisioning");
	/* tree order: by uid, then agent */
	cr_assert_eq(recs[0].uid, 1000);
	cr_assert_str_eq(recs[0].agent, "dev-1");
	cr_assert_str_eq(recs[0].project, "both");
	cr_assert_eq(recs[0].nservices, 2);
	cr_assert_str_eq(recs[0].services[0], "postgres");
	cr_assert_str_eq(recs[0].services[1], "redis");
	cr_assert_eq(recs[0].age_s, 10);
	cr_assert_eq(recs[0].idle_s, 5);
	cr_assert_eq(recs[1].uid, 1001);
	cr_assert_str_eq(recs[1].project, "roboco-api");
	cr_assert_eq(recs[1].nservices, 1);
	cr_assert_eq(recs[1].age_s, 10);
	cr_assert_eq(recs[1].idle_s, 10);

	for (i = 0; i < 2; i++) {
		const struct sbx_sandbox *sb = cache_find(&cache,
		    recs[i].uid, recs[i].agent);
		size_t k;

		cr_assert_not_null(sb);
		for (k = 0; k < sb->nservices; k++) {
			const char *pw = sb->svc[k].conn.password;

			cr_assert_eq(strlen(pw), 32);
			cr_assert_null(memmem(recs, sizeof(recs), pw, strlen(pw)),
			    "a password is in the status records");
		}
	}
	/* the one still provisioning has its passwords already */
	cr_assert_null(memmem(recs, sizeof(recs),
	    cache_find(&cache, 1002, "slow")->svc[0].conn.password, 32));
	/* records are fully cleared, not just terminated */
	for (i = 2; i < SBX_MAX_SERVICES; i++)
		cr_assert_eq(recs[0].services[i][0], 0);
	rtd_complete(&rtd);
	cr_assert_eq(cache_status(&cache, recs, 8), 3);
}

/* The records a status answer gets, as the reply writer picks them. */
static size_t
status_recs(const struct sbx_ans *a, struct sbx_status_rec *recs, size_t max)
{
	uid_t only = (uid_t)a->status_uid;

	return cache_status_of(&cache, a->status_all ? NULL : &only, recs,
	    max < a->nstatus ? max : a->nstatus);
}

Test(cache, status_of_each_uid_is_its_own_root_sees_all)
{
	struct capture c = { 0 };
	struct sbx_status_rec recs[8];
	size_t n;

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-2", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "dev-1", "roboco-api", "postgres", NULL, &c);
	status(1000, &c);
	cr_assert_eq(c.n, 4);
	expect_code(&c.ans[3], SBX_REQ_STATUS, SBX_OK);
	cr_assert_not(c.ans[3].status_all);
	n = status_recs(&c.ans[3], recs, 8);
	cr_assert_eq(n, 2);
	cr_assert_eq(recs[0].uid, 1000);
	cr_assert_eq(recs[1].uid, 1000);
	status(1001, &c);
	n = status_recs(&c.ans[4], recs, 8);
	cr_assert_eq(n, 1);
	cr_assert_eq(recs[0].uid, 1001);
	status(65534, &c);
	expect_code(&c.ans[5], SBX_REQ_STATUS, SBX_OK);
	cr_assert_eq(status_recs(&c.ans[5], recs, 8), 0);
	status(0, &c);
	cr_assert_eq(c.n, 7);
	expect_code(&c.ans[6], SBX_REQ_STATUS, SBX_OK);
	cr_assert(c.ans[6].status_all);
	cr_assert_eq(status_recs(&c.ans[6], recs, 8), 3);
}

Test(cache, status_respects_max)
{
	struct capture c = { 0 };
	struct sbx_status_rec recs[3];

	ensure(1, "a", "roboco-api", "postgres", NULL, &c);
	ensure(2, "a", "roboco-api", "postgres", NULL, &c);
	ensure(3, "a", "roboco-api", "postgres", NULL, &c);
	ensure(4, "a", "roboco-api", "postgres", NULL, &c);
	memset(recs, 0, sizeof(recs));
	cr_assert_eq(cache_status(&cache, recs, 2), 2);
	cr_assert_eq(recs[2].uid, 0, "wrote past max");
	cr_assert_eq(cache_status(&cache, recs, 0), 0);
}

/* ---- scale ------------------------------------------------------------- */

#define MANY	10000

Test(cache, ten_thousand_entries)
{
	struct capture c = { 0 };
	struct sbx_status_rec *recs;
	struct sbx_sandbox *sb;
	char agent[SBX_SLUG_MAX];
	int i;

	for (i = 0; i < MANY; i++) {
		snprintf(agent, sizeof(agent), "agent-%d", i);
		c.n = 0;
		ensure((uid_t)(1000 + i % 10), agent, "roboco-api", "postgres",
		    NULL, &c);
		cr_assert_eq(c.n, 1);
		cr_assert_eq(c.ans[0].code, SBX_OK);
	}
	cr_assert_eq(cache.count, MANY);
	cr_assert_eq(rtd.provisions, MANY);
	for (i = 0; i < MANY; i += 997) {
		snprintf(agent, sizeof(agent), "agent-%d", i);
		sb = cache_find(&cache, (uid_t)(1000 + i % 10), agent);
		cr_assert_not_null(sb, "%s lost", agent);
		cr_assert_str_eq(sb->key.agent, agent);
		cr_assert_eq(sb->key.uid, (uid_t)(1000 + i % 10));
		cr_assert_null(cache_find(&cache, (uid_t)(1001 + i % 10),
		    agent), "%s found under the wrong uid", agent);
	}
	cr_assert_null(cache_find(&cache, 1000, "agent-10000"));
	snprintf(agent, sizeof(agent), "agent-%d", MANY - 1);
	cr_assert_not_null(cache_find(&cache, 1000 + (MANY - 1) % 10, agent));

	recs = calloc(MANY + 1, sizeof(*recs));
	cr_assert_not_null(recs);
	cr_assert_eq(cache_status(&cache, recs, MANY + 1), MANY);
	cr_assert_eq(cache_status(&cache, recs, 100), 100);
	free(recs);

	c.n = 0;
	status(0, &c);
	cr_assert_eq(c.ans[0].nstatus, MANY);

	/* a hit in a big tree is still a hit */
	c.n = 0;
	ensure(1005, "agent-5", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, MANY);
	cr_assert_eq(c.ans[0].code, SBX_OK);
}

/* ---- policy refusals --------------------------------------------------- */

Test(cache, service_not_opted_in)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "redis", NULL, &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", "redis", &c);
	ensure(1000, "dev-1", "both", "minio", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN);
	expect_code(&c.ans[2], SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_null(cache_find(&cache, 1000, "dev-1"));
	cr_assert_eq(cache.count, 0);
}

Test(cache, project_with_no_services_is_not_opted_in)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "empty", NULL, NULL, &c);
	ensure(1000, "dev-1", "empty", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_NOT_OPTED_IN);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(cache.count, 0);
}

Test(cache, unknown_project)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "no-such-project", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_UNKNOWN_PROJECT);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(cache.count, 0);
}

Test(cache, invalid_project_file_is_unknown_project)
{
	struct capture c = { 0 };

	proj[3].valid = false;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_UNKNOWN_PROJECT);
	cr_assert_eq(rtd.provisions, 0);
}

Test(cache, disabled)
{
	struct capture c = { 0 };

	cfg.enabled = false;
	poison_projects();	/* flag off: no project lookup at all */
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(0, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_DISABLED);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_DISABLED);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(cache.count, 0);
}

Test(cache, project_allow_list)
{
	struct capture c = { 0 };
	struct project *p = &proj[2];	/* "locked": postgres */

	p->anyone = false;
	p->nuids = 1;
	p->uids[0] = 1000;

	ensure(1001, "dev-1", "locked", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_FORBIDDEN);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_null(cache_find(&cache, 1001, "dev-1"));

	available(1001, "locked", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_AVAILABLE, SBX_OK);
	cr_assert_eq(c.ans[1].nservices, 0, "available gives [] to 1001");

	available(1000, "locked", &c);
	expect_code(&c.ans[2], SBX_REQ_AVAILABLE, SBX_OK);
	cr_assert_eq(c.ans[2].nservices, 1);
	cr_assert_str_eq(c.ans[2].services[0].name, "postgres");
	cr_assert_eq(c.ans[2].services[0].password[0], '\0',
	    "available carries names only");

	ensure(1000, "dev-1", "locked", "postgres", NULL, &c);
	cr_assert_eq(c.n, 4);
	expect_ok_sandbox(&c.ans[3]);
	cr_assert_eq(rtd.provisions, 1);
	cr_assert_eq(rtd.prov[0].key.uid, 1000);

	/* another project stays open to 1001 */
	ensure(1001, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[4]);
}

Test(cache, ping_and_unknown_type)
{
	struct capture c = { 0 };
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = SBX_REQ_PING;
	dispatch_handle(&env, 1000, &rq, (struct sbx_reply){ capture_fn, &c });
	rq.hdr.type = 77;
	dispatch_handle(&env, 1000, &rq, (struct sbx_reply){ capture_fn, &c });
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[0], SBX_REQ_PING, SBX_OK);
	expect_code(&c.ans[1], 77, SBX_E_INTERNAL);
	cr_assert_eq(rtd.provisions, 0);
}

/* A changed service set on a hit re-provisions with the new full set. */
/* ---- a project's set changes under a live sandbox (issue #15) -------- */

Test(cache, grown_set_starts_only_what_is_missing)
{
	struct capture c = { 0 };
	struct sbx_conn pg;

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	pg = *conn(&c.ans[0], "postgres");
	strlcpy(proj[3].services[proj[3].nservices++], "redis", SBX_SLUG_MAX);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_eq(c.ans[1].nservices, 2);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_eq(rtd.prov[1].nservices, 2);
	cr_assert_eq(rtd.prov[1].nkept, 1, "postgres kept running");
	cr_assert_eq(rtd.prov[1].ndropped, 0);
	cr_assert_str_eq(conn(&c.ans[1], "postgres")->password, pg.password);
	cr_assert_eq(conn(&c.ans[1], "postgres")->port, pg.port);
	cr_assert_str_neq(conn(&c.ans[1], "redis")->password, pg.password);
	cr_assert_eq(rtd.teardowns, 0, "nothing torn down");
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 2, "then a hit");
	cr_assert_str_eq(conn(&c.ans[2], "redis")->password,
	    conn(&c.ans[1], "redis")->password);
}

Test(cache, shrunk_set_drops_only_what_went)
{
	struct capture c = { 0 };
	char pw[SBX_SECRET_MAX];

	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	strlcpy(pw, conn(&c.ans[0], "postgres")->password, sizeof(pw));
	proj[0].nservices = 1;	/* redis no longer offered */
	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_eq(c.ans[1].nservices, 1);
	cr_assert_str_eq(conn(&c.ans[1], "postgres")->password, pw);
	cr_assert_eq(rtd.prov[1].nkept, 1);
	cr_assert_eq(rtd.prov[1].ndropped, 1, "redis removed");
	cr_assert_eq(rtd.teardowns, 0);
}

Test(cache, failed_reshape_leaves_the_sandbox_as_it_was)
{
	struct capture c = { 0 };
	char pw[SBX_SECRET_MAX];

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	strlcpy(pw, conn(&c.ans[0], "postgres")->password, sizeof(pw));
	strlcpy(proj[3].services[proj[3].nservices++], "redis", SBX_SLUG_MAX);
	rtd.fail_with = SBX_E_RUNTIME_FAILED;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	rtd.fail_with = SBX_OK;
	proj[3].nservices = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_eq(rtd.provisions, 2, "a hit on the old set");
	cr_assert_str_eq(conn(&c.ans[2], "postgres")->password, pw);
	cr_assert_eq(cache.count, 1);
}

Test(cache, another_project_under_a_held_slug_is_a_conflict)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_CONFLICT);
	cr_assert_not_null(strstr(c.ans[1].message, "project both"),
	    "names the held project: %s", c.ans[1].message);
	cr_assert_eq(rtd.provisions, 1);
	cr_assert_eq(rtd.teardowns, 0, "nothing torn down");
	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_eq(rtd.provisions, 1, "the held sandbox is still a hit");
	release(1000, "dev-1", &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[4]);
	cr_assert_eq(rtd.provisions, 2, "after release, the other project");
}

static size_t allowed_n;
static size_t
allowed_first(void *arg, const struct sbx_sandbox *sb,
    char (*out)[SBX_SLUG_MAX])
{
	size_t i;

	(void)arg;
	for (i = 0; i < allowed_n && i < sb->nservices; i++)
		strlcpy(out[i], sb->svc[i].conn.name, SBX_SLUG_MAX);
	return i;
}

Test(cache, revoke_drops_services_or_whole_sandboxes)
{
	struct capture c = { 0 };

	ensure(1000, "a", "both", "postgres", NULL, &c);
	ensure(1001, "b", "both", "postgres", NULL, &c);
	allowed_n = 2;
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 0);
	allowed_n = 1;
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 2);
	cr_assert_eq(rtd.provisions, 4, "two reshapes");
	cr_assert_eq(rtd.prov[2].ndropped, 1);
	cr_assert_eq(rtd.teardowns, 0);
	cr_assert_eq(c.n, 2, "no one is answered for a revocation");
	allowed_n = 0;
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 2);
	cr_assert_eq(rtd.teardowns, 2);
	cr_assert_eq(cache.count, 0);
}

/* A reload that meets a provision in flight counts it, and the next
 * call (the monitor's tick) revokes it once it is idle. */
Test(cache, revoke_counts_a_busy_entry_and_takes_it_when_idle)
{
	struct capture c = { 0 };

	rtd.deferred = true;
	ensure(1000, "a", "both", "postgres", NULL, &c);
	allowed_n = 0;
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 0);
	cr_assert_eq(cache.revoke_busy, 1, "the provision in flight");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 1, "its agent is answered");
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 1);
	cr_assert_eq(cache.revoke_busy, 0);
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_eq(cache.count, 0);
}

/* A revocation whose teardown cannot start (no worker free) is not
 * forgotten: the next call (the monitor's tick) takes it again. */
Test(cache, a_revocation_that_cannot_start_is_asked_again)
{
	struct capture c = { 0 };

	ensure(1000, "a", "both", "postgres", NULL, &c);
	allowed_n = 0;
	rtd.refuse_teardowns = 1;
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 1);
	cr_assert_eq(cache.count, 1, "still there: its teardown did not start");
	cr_assert_eq(cache.revoke_busy, 1, "so it is asked again");
	cr_assert_eq(cache_revoke(&cache, allowed_first, NULL), 1);
	cr_assert_eq(cache.count, 0, "torn down at the next call");
	cr_assert_eq(cache.revoke_busy, 0);
}

/* ---- warm containers: a miss served by a claim ----------------------- */

Test(cache, claim_answers_a_miss_with_no_provision)
{
	struct capture c = { 0 };

	rtd.warm = 1;
	rtd.deferred = true;	/* a provision would not answer yet */
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1, "answered at once");
	expect_ok_sandbox(&c.ans[0]);
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(rtd.claims, 1);
	cr_assert_str_eq(conn(&c.ans[0], "postgres")->password, "warm-1-0");
	cr_assert_eq(cache.nprovisions, 0);

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2, "the claimed sandbox is a hit");
	cr_assert_str_eq(conn(&c.ans[1], "postgres")->password, "warm-1-0");

	ensure(1000, "dev-2", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2, "no warm set left: a provision, deferred");
	cr_assert_eq(rtd.provisions, 1);
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[2]);
}

Test(cache, claim_is_not_held_back_by_provision_limits)
{
	struct capture c = { 0 };

	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd },
	    (struct cache_limits){ .max_provisions = 1 }, clock_fake);
	rtd.deferred = true;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(cache.nprovisions, 1);
	ensure(1001, "dev-2", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_BUSY);
	rtd.warm = 1;
	ensure(1001, "dev-2", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_eq(rtd.claims, 1);
	rtd_complete(&rtd);
}

Test(cache, dead_sandbox_is_provisioned_again_not_claimed)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 1);
	rtd.live = false;
	rtd.warm = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_eq(rtd.provisions, 2, "the runtime removes what is left");
	cr_assert_eq(rtd.claims, 0);
}

Test(cache, claimed_sandbox_is_torn_down_and_never_claimed_again)
{
	struct capture c = { 0 };

	rtd.warm = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	release(1000, "dev-1", &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[1].released, 1);
	cr_assert_eq(rtd.teardowns, 1);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_ok_sandbox(&c.ans[2]);
	cr_assert_eq(rtd.claims, 1);
	cr_assert_eq(rtd.provisions, 1, "the pool is spent: a provision");
	cr_assert_str_neq(conn(&c.ans[2], "postgres")->password, "warm-1-0");
}

/* A claim of tcp services answers once its ports are the owner's, and a
 * request for the same key meanwhile gets the same sandbox. */
Test(cache, claim_with_ports_answers_after_their_hand_over)
{
	struct capture c = { 0 };

	rtd.warm = 1;
	rtd.claim_ports = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0, "no reply before the ports are the owner's");
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 0, "the same key waits for the same claim");
	cr_assert_eq(rtd.claims, 1);
	rtd_claim_complete(&rtd, SBX_OK);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[0]);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_str_eq(conn(&c.ans[0], "postgres")->password, "warm-1-0");
	cr_assert_str_eq(conn(&c.ans[1], "postgres")->password, "warm-1-0");
	cr_assert_eq(rtd.provisions, 0);
	cr_assert_eq(rtd.teardowns, 0);
}

/* Fail closed: ports that could not be handed over refuse the claim,
 * which is torn down; the next request provisions anew. */
Test(cache, claim_whose_ports_stay_closed_is_refused_and_torn_down)
{
	struct capture c = { 0 };

	rtd.warm = 1;
	rtd.claim_ports = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	rtd_claim_complete(&rtd, SBX_E_RUNTIME_FAILED);
	cr_assert_eq(c.n, 1);
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	cr_assert_eq(rtd.teardowns, 1, "the claimed containers go");
	rtd.claim_ports = 0;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_ok_sandbox(&c.ans[1]);
	cr_assert_eq(rtd.provisions, 1, "a provision, not the same claim");
	cr_assert_str_neq(conn(&c.ans[1], "postgres")->password, "warm-1-0");
}

Test(cache, claim_with_no_worker_for_its_ports_is_refused_and_torn_down)
{
	struct capture c = { 0 };

	rtd.warm = 1;
	rtd.claim_ports = 2;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1, "answered at once");
	expect_code(&c.ans[0], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	cr_assert_eq(rtd.teardowns, 1);
	cr_assert_eq(cache.count, 0, "nothing of it is left");
}

/* ---- reset and snapshot ------------------------------------------------- */

static void
data_op(uid_t uid, enum sbx_req_type op, const char *agent,
    const char *snapshot, struct capture *c)
{
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = op;
	if (op == SBX_REQ_RESET) {
		strlcpy(rq.reset.agent, agent, SBX_SLUG_MAX);
		strlcpy(rq.reset.to, snapshot, SBX_SLUG_MAX);
	} else {
		strlcpy(rq.snapshot.agent, agent, SBX_SLUG_MAX);
		strlcpy(rq.snapshot.name, snapshot, SBX_SLUG_MAX);
	}
	dispatch_handle(&env, uid, &rq, (struct sbx_reply){ capture_fn, c });
}

Test(cache, reset_answers_the_hit_reply_with_the_same_credentials)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "both", "postgres", "redis", &c);
	data_op(1000, SBX_REQ_RESET, "dev-1", "", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_RESET, SBX_OK);
	cr_assert_eq(c.ans[1].nservices, c.ans[0].nservices);
	cr_assert_str_eq(conn(&c.ans[1], "postgres")->password,
	    conn(&c.ans[0], "postgres")->password);
	cr_assert_str_eq(conn(&c.ans[1], "redis")->socket,
	    conn(&c.ans[0], "redis")->socket);
	cr_assert_eq(rtd.datas, 1);
	cr_assert_eq(rtd.provisions, 1, "a reset provisions nothing");
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->state, SB_READY);
}

Test(cache, snapshot_answers_its_name)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	data_op(1000, SBX_REQ_SNAPSHOT, "dev-1", "clean", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_SNAPSHOT, SBX_OK);
	cr_assert_str_eq(c.ans[1].snapshot, "clean");
	cr_assert_str_eq(rtd.data_snapshot, "clean");
	cr_assert_eq(c.ans[1].nservices, 0, "no credentials in its reply");
}

Test(cache, reset_or_snapshot_with_no_sandbox_is_no_sandbox)
{
	struct capture c = { 0 };

	data_op(1000, SBX_REQ_RESET, "ghost", "", &c);
	data_op(1000, SBX_REQ_SNAPSHOT, "ghost", "s1", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[0], SBX_REQ_RESET, SBX_E_NO_SANDBOX);
	expect_code(&c.ans[1], SBX_REQ_SNAPSHOT, SBX_E_NO_SANDBOX);
	cr_assert_eq(rtd.datas, 0);
	cr_assert_eq(cache.count, 0, "no entry made for them");
}

Test(cache, another_uids_reset_of_the_same_slug_touches_nothing)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	data_op(1001, SBX_REQ_RESET, "dev-1", "", &c);
	data_op(1001, SBX_REQ_SNAPSHOT, "dev-1", "mine", &c);
	data_op(0, SBX_REQ_RESET, "dev-1", "", &c);	/* nor root's */
	cr_assert_eq(c.n, 4);
	expect_code(&c.ans[1], SBX_REQ_RESET, SBX_E_NO_SANDBOX);
	expect_code(&c.ans[2], SBX_REQ_SNAPSHOT, SBX_E_NO_SANDBOX);
	expect_code(&c.ans[3], SBX_REQ_RESET, SBX_E_NO_SANDBOX);
	cr_assert_eq(rtd.datas, 0);
	cr_assert_eq(cache.count, 1);
}

Test(cache, reset_waits_for_the_provision_and_release_for_the_reset)
{
	struct capture c = { 0 };

	rtd.deferred = true;
	rtd.data_deferred = true;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	data_op(1000, SBX_REQ_RESET, "dev-1", "", &c);
	cr_assert_eq(c.n, 0, "the reset waits for the provision");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(rtd.datas, 1);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->state, SB_DATA);
	release(1000, "dev-1", &c);
	cr_assert_eq(c.n, 1, "the release waits for the reset");
	cr_assert_eq(rtd.teardowns, 0);
	rtd_data_complete(&rtd);
	cr_assert_eq(c.n, 3);
	expect_code(&c.ans[1], SBX_REQ_RESET, SBX_OK);
	expect_code(&c.ans[2], SBX_REQ_RELEASE, SBX_OK);
	cr_assert_eq(c.ans[2].released, 1);
	cr_assert_eq(rtd.teardowns, 1);
}

Test(cache, a_sandbox_being_reset_stays_in_status)
{
	struct capture c = { 0 };

	rtd.data_deferred = true;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	data_op(1000, SBX_REQ_SNAPSHOT, "dev-1", "s", &c);
	status(1000, &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[1].nstatus, 1);
	cr_assert_eq(cache_status(&cache, (struct sbx_status_rec[2]){ 0 }, 2),
	    1, "listed while its snapshot runs");
	rtd_data_complete(&rtd);
}

Test(cache, a_failed_reset_says_why_and_keeps_the_sandbox)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	rtd.data_code = SBX_E_UNKNOWN_SNAPSHOT;
	data_op(1000, SBX_REQ_RESET, "dev-1", "nope", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_RESET, SBX_E_UNKNOWN_SNAPSHOT);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->state, SB_READY);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(rtd.provisions, 1, "still a hit");
}

Test(cache, a_reset_counts_toward_the_uids_running_provisions)
{
	struct capture c = { 0 };

	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd },
	    (struct cache_limits){ .max_provisions_per_uid = 1 }, clock_fake);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1001, "dev-9", "roboco-api", "postgres", NULL, &c);
	rtd.deferred = true;
	ensure(1000, "dev-2", "roboco-api", "postgres", NULL, &c);
	data_op(1000, SBX_REQ_RESET, "dev-1", "", &c);
	cr_assert_eq(c.n, 2, "the reset waits for the uid's provision");
	cr_assert_eq(rtd.datas, 0);
	data_op(1001, SBX_REQ_RESET, "dev-9", "", &c);
	cr_assert_eq(c.n, 3, "another uid's reset is not held back by it");
	expect_code(&c.ans[2], SBX_REQ_RESET, SBX_OK);
	cr_assert_eq(rtd.datas, 1);
	rtd_complete(&rtd);
	cache_retry(&cache);
	cr_assert_eq(rtd.datas, 2, "its turn came");
	cr_assert_eq(c.n, 5);
	expect_code(&c.ans[4], SBX_REQ_RESET, SBX_OK);
}

/* A reset's worker goes on after its reply (the tidy-up): until it has
 * exited, it counts toward max_provisions, and toward its owner's, a
 * release of its sandbox meanwhile or not. */
Test(cache, a_reset_counts_toward_the_limits_until_its_worker_exits)
{
	struct capture c = { 0 };

	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd },
	    (struct cache_limits){ .max_provisions = 1 }, clock_fake);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	rtd.data_linger = true;
	data_op(1000, SBX_REQ_RESET, "dev-1", "", &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_RESET, SBX_OK);
	cr_assert_eq(cache.nprovisions, 1, "its worker still runs");
	ensure(1001, "dev-9", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	expect_code(&c.ans[2], SBX_REQ_SANDBOX, SBX_E_BUSY);
	cr_assert_eq(rtd.provisions, 1, "no provision past the limit");
	release(1000, "dev-1", &c);
	cr_assert_eq(c.n, 4, "the release is not held back");
	cr_assert_eq(cache.count, 0);
	cr_assert_eq(cache.nprovisions, 1, "the worker outlives its sandbox");
	rtd_data_exit(&rtd);
	cr_assert_eq(cache.nprovisions, 0);
	ensure(1001, "dev-9", "roboco-api", "postgres", NULL, &c);
	expect_ok_sandbox(&c.ans[4]);
	cr_assert_eq(rtd.provisions, 2);
}

/* A reshape that cannot start (no worker) says why to its caller and
 * leaves its audit line, as any provision that could not start. */
static void
setup_stderr(void)
{
	setup();
	cr_redirect_stderr();
}

Test(cache, a_reshape_that_cannot_start_is_answered_and_audited,
    .init = setup_stderr)
{
	struct capture c = { 0 };
	char buf[8192];
	size_t n;
	FILE *f;

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	proj[3].nservices = 2;	/* roboco-api grows: redis */
	strlcpy(proj[3].services[1], "redis", SBX_SLUG_MAX);
	rtd.refuse_provisions = 1;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	expect_code(&c.ans[1], SBX_REQ_SANDBOX, SBX_E_RUNTIME_FAILED);
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->nservices, 1,
	    "the sandbox as it was");
	fflush(stderr);
	f = cr_get_redirected_stderr();
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	cr_assert_not_null(strstr(buf, "audit event=provision uid=1000 "
	    "agent=dev-1 project=roboco-api services=postgres "
	    "result=runtime_failed ms=0 reshape=yes"), "%s", buf);
}
