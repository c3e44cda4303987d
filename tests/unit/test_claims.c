/*
 * test_claims.c - the claims that come together share one JOB_CLAIM
 * (privsep/monitor/claims.c), with the job pool and the cache stood in
 * for: claims pending go in one job, at most one runs, those that come
 * meanwhile go when it has answered; the job names each claim's tcp
 * ports and nothing else; each claim is given only on its own SBX_OK, an
 * answer out of form (or none) and a job that cannot start refuse the
 * whole batch; the batch has a cap.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "claims.h"
#include "results.h"
#include "runtime.h"

/* ---- the job pool and the cache, stood in for --------------------------- */

static struct job_claims sent;		/* the last job's body */
static unsigned spawns;
static int spawn_fails;
static worker_done sent_done;
static void *sent_arg;

int
worker_spawn(struct worker_pool *p, enum job_type type, uint32_t svcmask,
    const void *arg, size_t len, size_t result_size, int64_t deadline,
    worker_done done, void *done_arg)
{
	(void)p; (void)deadline;
	cr_assert_eq(type, JOB_CLAIM);
	cr_assert_eq(len, sizeof(sent));
	cr_assert_eq(result_size, sizeof(struct claim_results));
	cr_assert_eq(svcmask, 1u, "postgres alone: redis is on a socket");
	if (spawn_fails)
		return -1;
	memcpy(&sent, arg, sizeof(sent));
	spawns++;
	sent_done = done;
	sent_arg = done_arg;
	return 0;
}

#define NSB	(CLAIM_BATCH + 8)

static struct sbx_sandbox *answered[NSB];
static enum sbx_code codes[NSB];
static size_t nanswered;

void
cache_claimed(struct sbx_sandbox *sb, enum sbx_code code, const char *msg)
{
	(void)msg;
	cr_assert_lt(nanswered, NSB);
	answered[nanswered] = sb;
	codes[nanswered++] = code;
}

/* ---- the runtime and its sandboxes -------------------------------------- */

static struct sbx_config cfg;
static struct rt_cli rt;
static struct sbx_sandbox sb[NSB];
static struct sbx_svc svc[NSB][2];

static void
setup(void)
{
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	cfg.nservices = 2;
	cfg.runtime_timeout = 30;
	strcpy(cfg.services[0].name, "postgres");
	cfg.services[0].transport = TRANSPORT_BOTH;
	strcpy(cfg.services[1].name, "redis");
	cfg.services[1].transport = TRANSPORT_UNIX;
	memset(&rt, 0, sizeof(rt));
	rt.cfg = &cfg;
	memset(sb, 0, sizeof(sb));
	memset(svc, 0, sizeof(svc));
	for (i = 0; i < NSB; i++) {
		sb[i].key.uid = 1000 + (uid_t)i;
		snprintf(sb[i].key.agent, sizeof(sb[i].key.agent), "a%zu", i);
		sb[i].nservices = 2;
		sb[i].svc = svc[i];
		strcpy(svc[i][0].conn.name, "postgres");
		strcpy(svc[i][0].conn.password, "secret");
		svc[i][0].conn.port = 40000 + (uint32_t)i;
		svc[i][0].warm = 1 + (unsigned)i;
		svc[i][0].host_uid = 100000 + 65536 * (uint32_t)i;
		strcpy(svc[i][1].conn.name, "redis");
		strcpy(svc[i][1].conn.password, "secret");
		svc[i][1].warm = 500 + (unsigned)i;
	}
	memset(&sent, 0, sizeof(sent));
	spawns = 0;
	spawn_fails = 0;
	sent_done = NULL;
	sent_arg = NULL;
	nanswered = 0;
}

TestSuite(claims, .init = setup);

/* The running job's answer: n codes, the first bad one at index bad
 * (n: none). */
static void
answer(size_t n, size_t bad)
{
	struct claim_results r;

	memset(&r, 0, sizeof(r));
	r.n = (uint32_t)n;
	if (bad < n)
		r.code[bad] = SBX_E_RUNTIME_FAILED;
	sent_done(sent_arg, &r, sizeof(r));
}

Test(claims, one_job_for_the_claims_of_a_pass_naming_only_their_ports)
{
	size_t i;

	for (i = 0; i < 3; i++)
		claims_add(&rt, &sb[i]);
	cr_assert_eq(spawns, 0, "nothing before the pass ends");
	cr_assert_eq(rt.warm.claiming, 3);
	claims_send(&rt);
	cr_assert_eq(spawns, 1);
	cr_assert_eq(sent.n, 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(sent.v[i].key.uid, sb[i].key.uid);
		cr_assert_str_eq(sent.v[i].key.agent, sb[i].key.agent);
		cr_assert_eq(sent.v[i].nports, 1, "redis is on a socket");
		cr_assert_str_eq(sent.v[i].port[0].service, "postgres");
		cr_assert_eq(sent.v[i].port[0].port, 40000 + i);
		cr_assert_eq(sent.v[i].port[0].slot, 1 + i);
		cr_assert_eq(sent.v[i].port[0].host_uid, 100000 + 65536 * i);
	}
	cr_assert_null(memmem(&sent, sizeof(sent), "secret", 6),
	    "no password in the job");
	cr_assert_eq(nanswered, 0, "no reply before the job answers");
	answer(3, 3);
	cr_assert_eq(nanswered, 3);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(answered[i], &sb[i]);
		cr_assert_eq(codes[i], SBX_OK);
	}
	cr_assert_eq(rt.warm.claiming, 0);
}

Test(claims, those_that_come_meanwhile_go_when_it_has_answered)
{
	size_t i;

	claims_add(&rt, &sb[0]);
	claims_send(&rt);
	for (i = 1; i < 5; i++)
		claims_add(&rt, &sb[i]);
	claims_send(&rt);
	cr_assert_eq(spawns, 1, "one job at a time");
	answer(1, 1);
	cr_assert_eq(nanswered, 1);
	cr_assert_eq(codes[0], SBX_OK);
	claims_send(&rt);
	cr_assert_eq(spawns, 2);
	cr_assert_eq(sent.n, 4);
	cr_assert_eq(sent.v[0].key.uid, sb[1].key.uid);
	answer(4, 2);
	cr_assert_eq(nanswered, 5);
	cr_assert_eq(codes[1], SBX_OK);
	cr_assert_eq(codes[2], SBX_OK);
	cr_assert_eq(codes[3], SBX_E_RUNTIME_FAILED, "its own code refuses it");
	cr_assert_eq(codes[4], SBX_OK);
	claims_send(&rt);
	cr_assert_eq(spawns, 2, "nothing pending");
	cr_assert_eq(rt.warm.claiming, 0);
}

/* Every claim of the job was answered, and refused. */
static void
all_refused(size_t n)
{
	size_t i;

	cr_assert_eq(nanswered, n);
	for (i = 0; i < n; i++)
		cr_assert_eq(codes[i], SBX_E_RUNTIME_FAILED, "claim %zu", i);
	cr_assert_eq(rt.warm.claiming, 0);
}

Test(claims, no_answer_refuses_the_batch)
{
	claims_add(&rt, &sb[0]);
	claims_add(&rt, &sb[1]);
	claims_send(&rt);
	sent_done(sent_arg, NULL, 0);
	all_refused(2);
}

Test(claims, an_answer_for_another_count_refuses_the_batch)
{
	claims_add(&rt, &sb[0]);
	claims_add(&rt, &sb[1]);
	claims_send(&rt);
	answer(1, 1);
	all_refused(2);
}

Test(claims, a_short_answer_refuses_the_batch)
{
	struct claim_results r;

	claims_add(&rt, &sb[0]);
	claims_send(&rt);
	memset(&r, 0, sizeof(r));
	r.n = 1;
	sent_done(sent_arg, &r, sizeof(r) - 1);
	all_refused(1);
}

Test(claims, a_job_that_cannot_start_refuses_the_batch)
{
	claims_add(&rt, &sb[0]);
	claims_add(&rt, &sb[1]);
	spawn_fails = 1;
	claims_send(&rt);
	all_refused(2);
	spawn_fails = 0;
	claims_add(&rt, &sb[2]);
	claims_send(&rt);
	cr_assert_eq(spawns, 1, "the next batch goes");
}

Test(claims, a_batch_has_a_cap)
{
	size_t i;

	for (i = 0; i < CLAIM_BATCH; i++) {
		cr_assert(claims_room(&rt));
		claims_add(&rt, &sb[i]);
	}
	cr_assert_not(claims_room(&rt));
	claims_send(&rt);
	cr_assert_eq(sent.n, CLAIM_BATCH);
	cr_assert(claims_room(&rt), "room again once it is sent");
	answer(CLAIM_BATCH, CLAIM_BATCH);
	cr_assert_eq(nanswered, CLAIM_BATCH);
}
