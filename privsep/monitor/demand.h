/*
 * demand.h - a warm pool's target from its new agents' demand: the peak
 * of a short window's requests, remembered for warm_idle, within the
 * pool's floor and warm_max, and the warm_memory budget (demand.c).
 * runs in: the monitor (root, unfiltered): its loop
 */
#ifndef SBX_DEMAND_H
#define SBX_DEMAND_H

#include <stddef.h>
#include <stdint.h>

/* New agents within this many seconds are one burst. */
#define DEMAND_WINDOW_S	10
/* warm_idle is remembered in this many steps (its peak, per step). */
#define DEMAND_STEPS	16

struct demand {
	int64_t		sec[DEMAND_WINDOW_S];	/* each bucket's second */
	unsigned	n[DEMAND_WINDOW_S];	/* new agents in it */
	int64_t		step[DEMAND_STEPS + 1];	/* each slot's step */
	unsigned	peak[DEMAND_STEPS + 1];	/* its highest window */
	uint64_t	claims, misses;		/* since start (metrics) */
};

/* What a pool may hold: its floor (warm), its ceiling (warm_max), how
 * long a peak is remembered, and what one member is counted at. */
struct demand_bounds {
	unsigned	floor, max, idle_s, mib;
};

/* One new agent's request met the pool (now: ms, any monotonic clock). */
void	demand_note(struct demand *, int64_t now, unsigned idle_s,
	    int claimed);
/* The highest burst within the last idle_s seconds (a little more:
 * never less). */
unsigned demand_peak(const struct demand *, int64_t now, unsigned idle_s);
/* The peak within [floor, max]; max <= floor: the floor, as a fixed
 * pool's. */
unsigned demand_target(const struct demand *, int64_t now,
	    const struct demand_bounds *);
/*
 * want[], clipped into target[] so that their members, at each pool's mib, hold at
 * most budget MiB (0: no budget). Floors are never clipped (config_parse.c
 * refuses a budget below them); what is above them is handed out one
 * member per pool in turn, so that no pool starves the others.
 */
void	demand_budget(unsigned *target, const unsigned *want,
	    const struct demand_bounds *, size_t n, uint64_t budget);

#endif
