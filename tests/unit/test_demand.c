/*
 * test_demand.c - a warm pool's target from its new agents' demand
 * (privsep/monitor/demand.c), on a clock the test sets: a burst raises
 * the target to its size, clipped at warm_max and the warm_memory
 * budget; the target stays for warm_idle and falls back to the floor
 * after it; a trickle is not a burst; a fixed pool never moves.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "demand.h"

/* The test's clock, in ms: demand.c reads none of its own. */
static int64_t clock_ms;

static struct demand d;
static const struct demand_bounds pool = { .floor = 2, .max = 40,
    .idle_s = 60, .mib = 64 };

static void
reset(void)
{
	memset(&d, 0, sizeof(d));
	clock_ms = 1000000;	/* a monotonic clock's, far from 0 */
}

TestSuite(demand, .init = reset);

/* n new agents, one every gap_ms, claimed or not. */
static void
agents(unsigned n, int64_t gap_ms, int claimed)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		demand_note(&d, clock_ms, pool.idle_s, claimed);
		clock_ms += gap_ms;
	}
}

Test(demand, no_demand_is_the_floor)
{
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 2);
}

Test(demand, grows_to_the_peak)
{
	agents(32, 10, 0);	/* 32 at once, within 320 ms */
	cr_assert_eq(demand_peak(&d, clock_ms, pool.idle_s), 32);
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 32);
	cr_assert_eq(d.misses, 32);
	cr_assert_eq(d.claims, 0);
	/* A smaller burst later keeps the higher peak. */
	clock_ms += 20000;
	agents(5, 10, 1);
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 32);
	cr_assert_eq(d.claims, 5);
}

Test(demand, a_burst_across_seconds_counts_whole)
{
	clock_ms = 1000900;	/* the burst straddles a second's edge */
	agents(32, 250, 0);	/* 32 over 8 s: within the window */
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 32);
}

Test(demand, clipped_at_warm_max)
{
	struct demand_bounds b = pool;

	b.max = 20;
	agents(32, 10, 0);
	cr_assert_eq(demand_target(&d, clock_ms, &b), 20);
}

Test(demand, below_the_floor_is_the_floor)
{
	agents(1, 10, 0);
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 2);
}

Test(demand, a_fixed_pool_never_moves)
{
	struct demand_bounds b = pool;

	b.max = b.floor;	/* warm_max not set: warm */
	agents(32, 10, 0);
	cr_assert_eq(demand_target(&d, clock_ms, &b), 2);
	b.max = b.floor = 0;
	cr_assert_eq(demand_target(&d, clock_ms, &b), 0);
}

Test(demand, a_trickle_is_not_a_burst)
{
	/* One new agent every 5 s for 10 minutes: two in any window. */
	agents(120, 5000, 1);
	cr_assert_leq(demand_target(&d, clock_ms, &pool), 2);
}

Test(demand, decays_to_the_floor_after_idle)
{
	int64_t burst_end;

	agents(32, 10, 0);
	burst_end = clock_ms;
	/* Kept for warm_idle... */
	clock_ms = burst_end + 59000;
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 32);
	/* ...and gone within one step after it (60 s: 4 s steps). */
	clock_ms = burst_end + (60 + 4 + 1) * 1000;
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 2);
	/* A new burst after the decay is a new peak. */
	agents(10, 10, 0);
	cr_assert_eq(demand_target(&d, clock_ms, &pool), 10);
}

Test(demand, decays_never_before_idle)
{
	struct demand_bounds b = pool;
	int64_t t, end;
	unsigned idle[] = { 1, 7, 16, 17, 60, 300, 3601, 86400 };
	size_t i;

	for (i = 0; i < sizeof(idle) / sizeof(idle[0]); i++) {
		for (t = 0; t < 3; t++) {
			memset(&d, 0, sizeof(d));
			b.idle_s = idle[i];
			clock_ms = 5000000 + t * 333;
			demand_note(&d, clock_ms, b.idle_s, 0);
			demand_note(&d, clock_ms, b.idle_s, 0);
			demand_note(&d, clock_ms, b.idle_s, 0);
			end = clock_ms;
			cr_assert_eq(demand_target(&d, end + (int64_t)idle[i] *
			    1000 - 1, &b), 3, "idle %u: kept for warm_idle",
			    idle[i]);
			cr_assert_eq(demand_target(&d, end + ((int64_t)idle[i] +
			    (idle[i] + DEMAND_STEPS - 1) / DEMAND_STEPS + 1) *
			    1000, &b), 2, "idle %u: gone a step after",
			    idle[i]);
		}
	}
}

Test(demand, a_ring_slot_reused_is_not_an_old_peak)
{
	/* 32 at once, then one agent a step later for more than the
	 * ring's length: the old peak must not come back. */
	unsigned i;

	agents(32, 10, 0);
	for (i = 0; i < DEMAND_STEPS * 3; i++) {
		clock_ms += 4000;
		agents(1, 0, 1);
	}
	cr_assert_leq(demand_target(&d, clock_ms, &pool), 3);
}

Test(demand, budget_clips_growth_not_floors)
{
	struct demand_bounds b[2] = {
		{ .floor = 2, .max = 40, .idle_s = 60, .mib = 50 },	/* pg */
		{ .floor = 2, .max = 40, .idle_s = 60, .mib = 10 },	/* redis */
	};
	unsigned want[2] = { 32, 32 }, target[2];

	demand_budget(target, want, b, 2, 0);
	cr_assert_eq(target[0], 32, "no budget");
	cr_assert_eq(target[1], 32);
	/* 600 MiB: floors take 120; the rest, one member each in turn. */
	demand_budget(target, want, b, 2, 600);
	cr_assert_leq(target[0] * 50 + target[1] * 10, 600);
	cr_assert_geq(target[0], 2);
	cr_assert_geq(target[1], 2);
	cr_assert_eq(target[0], 10, "8 rounds of 60 MiB: %u", target[0]);
	cr_assert_eq(target[1], 10, "%u", target[1]);
	/* What the dearer cannot take, the cheaper may. */
	demand_budget(target, want, b, 2, 630);
	cr_assert_eq(target[0], 10);
	cr_assert_eq(target[1], 13);
	/* A budget below the floors (config_parse.c refuses it) keeps them. */
	demand_budget(target, want, b, 2, 1);
	cr_assert_eq(target[0], 2);
	cr_assert_eq(target[1], 2);
	/* Enough for all: all. */
	demand_budget(target, want, b, 2, 32 * 60);
	cr_assert_eq(target[0], 32);
	cr_assert_eq(target[1], 32);
}

Test(demand, budget_with_the_clock)
{
	/* Two pools' bursts under one budget: the clipped targets fall
	 * back to the floors together after warm_idle. */
	struct demand e;
	struct demand_bounds b[2] = { pool, pool };
	unsigned want[2], target[2], i;

	memset(&e, 0, sizeof(e));
	agents(30, 10, 0);
	for (i = 0; i < 30; i++)
		demand_note(&e, clock_ms, pool.idle_s, 0);
	want[0] = demand_target(&d, clock_ms, &b[0]);
	want[1] = demand_target(&e, clock_ms, &b[1]);
	demand_budget(target, want, b, 2, 64 * 20);
	cr_assert_eq(target[0] + target[1], 20);
	cr_assert_eq(target[0], 10);
	clock_ms += 70000;
	want[0] = demand_target(&d, clock_ms, &b[0]);
	want[1] = demand_target(&e, clock_ms, &b[1]);
	demand_budget(target, want, b, 2, 64 * 20);
	cr_assert_eq(target[0], 2);
	cr_assert_eq(target[1], 2);
}
