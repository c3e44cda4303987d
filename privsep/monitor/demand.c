/*
 * demand.c - a warm pool's target from its new agents' demand.
 * runs in: the monitor (root, unfiltered): its loop
 *
 * A new agent's request is noted on the pool it would take from,
 * claimed or missed (warm.c). The burst is how many came within the
 * last DEMAND_WINDOW_S seconds (one bucket a second); the peak is the
 * highest burst within warm_idle, kept as DEMAND_STEPS steps of
 * warm_idle / DEMAND_STEPS seconds each, so that a peak is forgotten,
 * and the target back at the floor, between warm_idle and warm_idle
 * plus one step after the burst. Time is the caller's (tests pass
 * their own); nothing here reads a clock or allocates.
 */
#include "demand.h"

/* Seconds per step: warm_idle in DEMAND_STEPS steps, at least one. */
static int64_t
step_len(unsigned idle_s)
{
	return idle_s <= DEMAND_STEPS ? 1 :
	    ((int64_t)idle_s + DEMAND_STEPS - 1) / DEMAND_STEPS;
}

/* Steps a peak is kept beyond its own. */
static int64_t
steps_kept(unsigned idle_s)
{
	int64_t len = step_len(idle_s);

	return ((int64_t)idle_s + len - 1) / len;
}

/* New agents within the window that ends at second sec. */
static unsigned
burst(const struct demand *d, int64_t sec)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i < DEMAND_WINDOW_S; i++)
		if (d->n[i] > 0 && sec - d->sec[i] >= 0 &&
		    sec - d->sec[i] < DEMAND_WINDOW_S)
			n += d->n[i];
	return n;
}

void
demand_note(struct demand *d, int64_t now, unsigned idle_s, int claimed)
{
	int64_t sec = now / 1000, step = sec / step_len(idle_s);
	size_t b = (size_t)(sec % DEMAND_WINDOW_S);
	size_t k = (size_t)(step % (DEMAND_STEPS + 1));
	unsigned n;

	if (d->sec[b] != sec || d->n[b] == 0) {
		d->sec[b] = sec;
		d->n[b] = 0;
	}
	if (d->n[b] < UINT32_MAX)
		d->n[b]++;
	if (claimed)
		d->claims++;
	else
		d->misses++;
	if (d->step[k] != step || d->peak[k] == 0) {
		d->step[k] = step;
		d->peak[k] = 0;
	}
	if ((n = burst(d, sec)) > d->peak[k])
		d->peak[k] = n;
}

unsigned
demand_peak(const struct demand *d, int64_t now, unsigned idle_s)
{
	int64_t step = now / 1000 / step_len(idle_s), kept = steps_kept(idle_s);
	unsigned peak = 0;
	size_t k;

	for (k = 0; k < DEMAND_STEPS + 1; k++)
		if (d->peak[k] > peak && step - d->step[k] >= 0 &&
		    step - d->step[k] <= kept)
			peak = d->peak[k];
	return peak;
}

unsigned
demand_target(const struct demand *d, int64_t now,
    const struct demand_bounds *b)
{
	unsigned peak;

	if (b->max <= b->floor)
		return b->floor;
	peak = demand_peak(d, now, b->idle_s);
	return peak < b->floor ? b->floor : peak > b->max ? b->max : peak;
}

void
demand_budget(unsigned *target, const unsigned *want,
    const struct demand_bounds *b, size_t n, uint64_t budget)
{
	uint64_t used = 0;
	size_t i;
	int more;

	for (i = 0; i < n; i++) {
		target[i] = budget == 0 || want[i] < b[i].floor ? want[i] :
		    b[i].floor;
		used += (uint64_t)target[i] * b[i].mib;
	}
	if (budget == 0)
		return;
	do {
		more = 0;
		for (i = 0; i < n; i++)
			if (target[i] < want[i] && used + b[i].mib <= budget) {
				target[i]++;
				used += b[i].mib;
				more = 1;
			}
	} while (more);
}
