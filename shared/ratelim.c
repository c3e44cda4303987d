/*
 * ratelim.c - the broker's refusal lines, limited per uid, so that one
 * tenant's flood of bad or idle connections cannot push the host's log
 * (journald drops a service's lines past its own rate limit) into losing
 * another tenant's audit lines.
 * runs in: the monitor (root, monitor allowlist once started), the broker
 *   (root until its drop, then broker user; unfiltered, then the broker
 *   allowlist)
 *
 * Each uid has a token bucket: burst lines at once, then one per
 * refill_ms. A line past that is counted, and window_ms after the first
 * one dropped the count is reported in one line. The table is fixed:
 * a new uid takes a free slot, else one at rest (its bucket full and
 * nothing to report: forgetting it changes nothing), else the least
 * recently seen one, whose count is reported first. A uid that floods is
 * always the most recently seen, so others' churn cannot reset its
 * bucket; nothing a tenant does makes the table grow.
 */
#include <string.h>

#include "ratelim.h"

void
rl_init(struct ratelim *rl, unsigned burst, unsigned refill_ms,
    unsigned window_ms, rl_report_fn report, void *arg)
{
	memset(rl, 0, sizeof(*rl));
	rl->burst = burst;
	rl->refill_ms = refill_ms > 0 ? refill_ms : 1;
	rl->window_ms = window_ms;
	rl->report = report;
	rl->arg = arg;
}

/* Tokens due since refill_ms; a full bucket's clock starts when it is
 * first drawn on, so a quiet uid never banks more than burst. */
static void
refill(const struct ratelim *rl, struct rl_slot *s, int64_t now)
{
	int64_t due;

	if (s->tokens < rl->burst && now > s->refill_ms) {
		due = (now - s->refill_ms) / rl->refill_ms;
		if (due < (int64_t)(rl->burst - s->tokens)) {
			s->tokens += (unsigned)due;
			s->refill_ms += due * rl->refill_ms;
			return;
		}
		s->tokens = rl->burst;
	}
	if (s->tokens >= rl->burst)
		s->refill_ms = now;
}

static void
report(struct ratelim *rl, struct rl_slot *s)
{
	if (s->suppressed > 0 && rl->report != NULL)
		rl->report(s->uid, s->suppressed, rl->arg);
	s->suppressed = 0;
	s->window_end = 0;
}

static bool
at_rest(const struct ratelim *rl, struct rl_slot *s, int64_t now)
{
	refill(rl, s, now);
	return s->suppressed == 0 && s->tokens >= rl->burst;
}

/* A slot for a uid not in the table: free, at rest, or the oldest. */
static struct rl_slot *
take_slot(struct ratelim *rl, int64_t now)
{
	struct rl_slot *s, *oldest = NULL;
	size_t i;

	for (i = 0; i < RL_SLOTS; i++) {
		s = &rl->slot[i];
		if (!s->used || at_rest(rl, s, now))
			return s;
		if (oldest == NULL || s->seen_ms < oldest->seen_ms)
			oldest = s;
	}
	report(rl, oldest);
	return oldest;
}

static struct rl_slot *
slot_of(struct ratelim *rl, uid_t uid, int64_t now)
{
	struct rl_slot *s;
	size_t i;

	for (i = 0; i < RL_SLOTS; i++)
		if (rl->slot[i].used && rl->slot[i].uid == uid)
			return &rl->slot[i];
	s = take_slot(rl, now);
	memset(s, 0, sizeof(*s));
	s->used = true;
	s->uid = uid;
	s->tokens = rl->burst;
	s->refill_ms = now;
	return s;
}

bool
rl_allow(struct ratelim *rl, uid_t uid, int64_t now)
{
	struct rl_slot *s = slot_of(rl, uid, now);

	s->seen_ms = now;
	refill(rl, s, now);
	if (s->tokens > 0) {
		s->tokens--;
		return true;
	}
	if (s->suppressed++ == 0)
		s->window_end = now + rl->window_ms;
	return false;
}

void
rl_tick(struct ratelim *rl, int64_t now)
{
	size_t i;

	for (i = 0; i < RL_SLOTS; i++)
		if (rl->slot[i].used && rl->slot[i].suppressed > 0 &&
		    rl->slot[i].window_end <= now)
			report(rl, &rl->slot[i]);
}

int64_t
rl_next(const struct ratelim *rl)
{
	int64_t next = -1;
	size_t i;

	for (i = 0; i < RL_SLOTS; i++)
		if (rl->slot[i].used && rl->slot[i].suppressed > 0 &&
		    (next == -1 || rl->slot[i].window_end < next))
			next = rl->slot[i].window_end;
	return next;
}

void
rl_flush(struct ratelim *rl)
{
	size_t i;

	for (i = 0; i < RL_SLOTS; i++)
		if (rl->slot[i].used)
			report(rl, &rl->slot[i]);
}
