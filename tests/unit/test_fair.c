/*
 * test_fair.c - the broker's fairness between uids: live children
 * counted per uid until they say they hand their request over
 * (conntab.c) and refusal lines limited per uid (ratelim.c), both pure,
 * with time passed in; and the relation sbx.conf keeps between max_connections_per_uid and max_children.
 */
#include <criterion/criterion.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "load.h"
#include "config.h"
#include "conntab.h"
#include "ratelim.h"

Test(conntab, a_uid_at_its_limit_is_refused_alone)
{
	struct conntab t;
	pid_t pid = 100;
	unsigned i;

	cr_assert_eq(conntab_init(&t, 8, 3), 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(conntab_admit(&t, 65534), ADMIT_OK);
		cr_assert_eq(conntab_add(&t, pid++, 65534), 0);
	}
	cr_assert_eq(conntab_count(&t, 65534), 3);
	cr_assert_eq(conntab_admit(&t, 65534), ADMIT_UID_FULL);
	/* Another uid, and root, still get in. */
	cr_assert_eq(conntab_admit(&t, 1000), ADMIT_OK);
	cr_assert_eq(conntab_admit(&t, 0), ADMIT_OK);
	conntab_free(&t);
}

Test(conntab, the_global_limit_holds_across_uids)
{
	struct conntab t;
	uid_t uid;

	cr_assert_eq(conntab_init(&t, 4, 2), 0);
	for (uid = 1; uid <= 4; uid++)
		cr_assert_eq(conntab_add(&t, (pid_t)(10 + uid), uid), 0);
	cr_assert_eq(conntab_admit(&t, 5), ADMIT_FULL);
	cr_assert_eq(conntab_add(&t, 99, 5), -1, "a full table takes no more");
	/* The uid's own limit is named first when both hold. */
	cr_assert_eq(conntab_add(&t, 98, 1), -1);
	conntab_free(&t);
}

Test(conntab, a_reaped_child_frees_its_uids_place)
{
	struct conntab t;
	uid_t uid = 0;

	cr_assert_eq(conntab_init(&t, 4, 2), 0);
	cr_assert_eq(conntab_add(&t, 11, 7), 0);
	cr_assert_eq(conntab_add(&t, 12, 8), 0);
	cr_assert_eq(conntab_add(&t, 13, 7), 0);
	cr_assert_eq(conntab_admit(&t, 7), ADMIT_UID_FULL);
	cr_assert_eq(conntab_del(&t, 11, &uid), 0);
	cr_assert_eq(uid, 7);
	cr_assert_eq(conntab_count(&t, 7), 1);
	cr_assert_eq(conntab_count(&t, 8), 1);
	cr_assert_eq(conntab_admit(&t, 7), ADMIT_OK);
	cr_assert_eq(conntab_del(&t, 11, &uid), -1, "reaped twice");
	cr_assert_eq(conntab_del(&t, 4242, &uid), -1, "not ours");
	cr_assert_eq(t.n, 2);
	conntab_free(&t);
}

/* A child that said it hands its request over (its pid on the notice
 * pipe, broker.c) leaves its uid's share at once; its place in the
 * table stays until it is reaped. */
Test(conntab, a_handed_child_leaves_its_uids_share_not_the_table)
{
	struct conntab t;
	uid_t uid = 0;

	cr_assert_eq(conntab_init(&t, 3, 2), 0);
	cr_assert_eq(conntab_add(&t, 21, 7), 0);
	cr_assert_eq(conntab_add(&t, 22, 7), 0);
	cr_assert_eq(conntab_admit(&t, 7), ADMIT_UID_FULL);
	conntab_handed(&t, 22);
	conntab_handed(&t, 4242);	/* not ours: nothing */
	cr_assert_eq(conntab_count(&t, 7), 1, "the handed child no longer "
	    "counts for uid 7");
	cr_assert_eq(conntab_exiting(&t), 1, "it is only exiting now");
	cr_assert_eq(conntab_admit(&t, 7), ADMIT_OK);
	cr_assert_eq(conntab_add(&t, 23, 7), 0);
	cr_assert_eq(conntab_admit(&t, 7), ADMIT_UID_FULL);
	cr_assert_eq(conntab_admit(&t, 8), ADMIT_FULL, "it still holds its "
	    "place: three live children in a table of three");
	/* Reaped, its place goes; the next child in it counts again. */
	cr_assert_eq(conntab_del(&t, 22, &uid), 0);
	cr_assert_eq(uid, 7);
	cr_assert_eq(conntab_exiting(&t), 0);
	cr_assert_eq(conntab_count(&t, 7), 2);
	cr_assert_eq(conntab_add(&t, 24, 8), 0);
	cr_assert_eq(conntab_count(&t, 8), 1, "a new child is not handed");
	conntab_free(&t);
}

Test(conntab, bad_sizes_are_refused)
{
	struct conntab t;

	cr_assert_eq(conntab_init(&t, 0, 1), -1);
	cr_assert_eq(conntab_init(&t, 4, 0), -1);
	cr_assert_eq(conntab_init(&t, 4, 5), -1);
}

/* What the limiter reported, in order. */
static struct {
	uid_t		uid[RL_SLOTS * 4];
	unsigned	count[RL_SLOTS * 4];
	size_t		n;
} got;

static void
record(uid_t uid, unsigned count, void *arg)
{
	(void)arg;
	cr_assert_lt(got.n, RL_SLOTS * 4);
	got.uid[got.n] = uid;
	got.count[got.n] = count;
	got.n++;
}

static void
setup(void)
{
	memset(&got, 0, sizeof(got));
}

/* Lines of uid allowed out of n tries at time now. */
static unsigned
allowed(struct ratelim *rl, uid_t uid, unsigned n, int64_t now)
{
	unsigned ok = 0;

	while (n-- > 0)
		ok += rl_allow(rl, uid, now);
	return ok;
}

Test(ratelim, a_burst_then_one_per_interval, .init = setup)
{
	struct ratelim rl;

	rl_init(&rl, 10, 1000, 5000, record, NULL);
	cr_assert_eq(allowed(&rl, 42, 1000, 0), 10);
	cr_assert_eq(allowed(&rl, 42, 1000, 999), 0);
	cr_assert_eq(allowed(&rl, 42, 1000, 1000), 1);
	cr_assert_eq(allowed(&rl, 42, 1000, 3500), 2);
	cr_assert_eq(got.n, 0, "nothing reported before the window ends");
}

Test(ratelim, one_report_per_window_with_the_count, .init = setup)
{
	struct ratelim rl;

	rl_init(&rl, 10, 1000, 5000, record, NULL);
	allowed(&rl, 42, 110, 100);		/* 100 dropped, window to 5100 */
	cr_assert_eq(rl_next(&rl), 5100);
	rl_tick(&rl, 5099);
	cr_assert_eq(got.n, 0);
	rl_tick(&rl, 5100);
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.uid[0], 42);
	cr_assert_eq(got.count[0], 100);
	cr_assert_eq(rl_next(&rl), -1, "no window open");
	rl_tick(&rl, 9000);
	cr_assert_eq(got.n, 1, "reported once");
}

Test(ratelim, one_uids_flood_leaves_another_its_lines, .init = setup)
{
	struct ratelim rl;
	int64_t t;

	rl_init(&rl, 10, 1000, 5000, record, NULL);
	for (t = 0; t < 60000; t += 10) {
		allowed(&rl, 65534, 50, t);	/* 5000 lines a second */
		if (t % 1000 == 0)
			cr_assert(rl_allow(&rl, 1000, t),
			    "uid 1000's line at %lld ms", (long long)t);
		rl_tick(&rl, t);
	}
	/* Nothing of uid 1000's dropped, so nothing reported for it. */
	for (size_t i = 0; i < got.n; i++)
		cr_assert_eq(got.uid[i], 65534);
	/* The flood cost about one line a second plus one report each 5 s. */
	cr_assert_geq(got.n, 11);
	cr_assert_leq(got.n, 12);
}

Test(ratelim, a_quiet_uid_never_banks_more_than_burst, .init = setup)
{
	struct ratelim rl;

	rl_init(&rl, 3, 1000, 5000, record, NULL);
	cr_assert(rl_allow(&rl, 7, 0));
	cr_assert_eq(allowed(&rl, 7, 100, 3600 * 1000), 3);
}

Test(ratelim, the_table_is_bounded_and_a_flooder_keeps_its_slot, .init = setup)
{
	struct ratelim rl;
	int64_t t = 0;
	uid_t uid;

	/* No refill within the test: every slot stays in use. */
	rl_init(&rl, 2, 1000000, 5000, record, NULL);
	/* uid 1 floods and is suppressed; 1000 other uids pass by, more
	 * than the table holds, each evicting the least recently seen. */
	cr_assert_eq(allowed(&rl, 1, 10, t), 2);
	for (uid = 100; uid < 1100; uid++) {
		cr_assert(rl_allow(&rl, uid, ++t));
		cr_assert(!rl_allow(&rl, 1, ++t));
	}
	/* uid 1 kept its slot (always the most recently seen): still
	 * limited, its count intact; no passer-by was suppressed. */
	cr_assert_eq(got.n, 0);
	rl_tick(&rl, 5000);
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.uid[0], 1);
	cr_assert_eq(got.count[0], 8 + 1000);
}

Test(ratelim, a_slot_at_rest_is_taken_before_a_busy_one, .init = setup)
{
	struct ratelim rl;
	uid_t uid;

	rl_init(&rl, 1, 1000, 5000, record, NULL);
	/* uid 0 seen first, then suppressed; the rest each log one line. */
	cr_assert_eq(allowed(&rl, 0, 3, 0), 1);
	for (uid = 1; uid < RL_SLOTS; uid++)
		cr_assert(rl_allow(&rl, uid, 10));
	/* At 1010 ms every bucket but uid 0's count is full again: a
	 * newcomer takes one of those, and uid 0's count survives. */
	cr_assert(rl_allow(&rl, 9999, 1010));
	cr_assert_eq(got.n, 0);
	rl_tick(&rl, 5000);
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.uid[0], 0);
	cr_assert_eq(got.count[0], 2);
}

Test(ratelim, an_evicted_uid_has_its_count_reported_first, .init = setup)
{
	struct ratelim rl;
	uid_t uid;

	rl_init(&rl, 1, 1000, 5000, record, NULL);
	/* Every slot suppressed: none at rest. */
	for (uid = 0; uid < RL_SLOTS; uid++)
		cr_assert_eq(allowed(&rl, uid, 3, (int64_t)uid), 1);
	cr_assert_eq(got.n, 0);
	/* A newcomer takes the least recently seen slot: uid 0's. */
	cr_assert(rl_allow(&rl, 5000, 100));
	cr_assert_eq(got.n, 1);
	cr_assert_eq(got.uid[0], 0);
	cr_assert_eq(got.count[0], 2);
	rl_flush(&rl);
	cr_assert_eq(got.n, RL_SLOTS, "the other 63 at flush, uid 0 once");
}

/* sbx.conf's max_connections_per_uid, through config_load(). */
static int
load_conf(const char *body, struct sbx_config *c, char *err, size_t len)
{
	char path[] = "/tmp/sbx-fair-conf.XXXXXX";
	FILE *f;
	int fd, rc;

	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_not_null(f = fdopen(fd, "w"));
	fprintf(f, "[sbx]\nruntime = /bin/true\n%s", body);
	fclose(f);
	rc = config_load(path, c, err, len);
	unlink(path);
	return rc;
}

Test(config, per_uid_defaults_to_16_or_half_of_max_children)
{
	static struct sbx_config c;
	char err[512];

	cr_assert_eq(load_conf("", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.max_children, 128);
	cr_assert_eq(c.max_connections_per_uid, 16);
	cr_assert_eq(load_conf("max_children = 10\n", &c, err, sizeof(err)),
	    0, "%s", err);
	cr_assert_eq(c.max_connections_per_uid, 5);
	cr_assert_eq(load_conf("max_children = 64\nmax_connections_per_uid = "
	    "32\n", &c, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(c.max_connections_per_uid, 32);
}

Test(config, one_uid_may_never_hold_more_than_half)
{
	static struct sbx_config c;
	char err[512];

	cr_assert_eq(load_conf("max_children = 64\nmax_connections_per_uid = "
	    "33\n", &c, err, sizeof(err)), -1);
	cr_assert(strstr(err, "max_connections_per_uid must be from 1 to "
	    "half of max_children (64)") != NULL, "%s", err);
	cr_assert_eq(load_conf("max_connections_per_uid = 0\n", &c, err,
	    sizeof(err)), -1);
	cr_assert_eq(load_conf("max_children = 1\n", &c, err, sizeof(err)),
	    -1, "one child cannot be shared");
}
