/*
 * idmap.c - host uid ranges for containers' user namespaces.
 * runs in: the monitor (root, monitor allowlist once started; no I/O)
 *
 * Every sandbox that starts a service gets a slot, IDMAP_SLOT_UIDS host
 * uids per configured service, that no other live sandbox has
 * (docs/contract.md, "Isolation": containers of different sandboxes never
 * share a host uid; nor do two services of one sandbox here). With podman
 * its containers run with --uidmap/--gidmap onto it; with either runtime,
 * the last uid of a service's range is its readiness prober's. podman
 * could pick the range itself (--userns=auto), but podman 4.3's
 * allocation deadlocks when several runs allocate at once.
 *
 * The layout (userns_base, userns_slots, the number and order of the
 * [service] sections) may change between starts while containers run on:
 * an adopted container keeps the range it was started with, which its
 * record and /proc/PID/uid_map say. Where that is not where the layout
 * now puts its slot's, it is held as a foreign range, and no slot that
 * touches a live range is handed out. A range comes back only when the
 * runtime said its container is gone (runtime.c, warm.c, adopt.c),
 * and no process of the monitor's runs in it: a reset's worker pins the
 * ranges of its sessions until it exited (rt_data.c), and a range given
 * back meanwhile is parked, still taken, until its last pin goes.
 */
#include <stdlib.h>

#include <bitstring.h>	/* libbsd */

#include "idmap.h"

int
idmap_init(struct idmap *m, uint32_t base, unsigned nslots, unsigned nsvc)
{
	*m = (struct idmap){ .nslots = nslots, .base = base,
	    .nsvc = nsvc ? nsvc : 1 };
	m->used = (unsigned char *)bit_alloc((int)nslots);
	m->parked = (unsigned char *)bit_alloc((int)nslots);
	return m->used == NULL || m->parked == NULL ? -1 : 0;
}

/* Does a pin fall in [lo, hi)? */
static int
pinned(const struct idmap *m, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < m->npins; i++)
		if (m->pins[i] >= lo && m->pins[i] < hi)
			return 1;
	return 0;
}

static uint64_t
slot_lo(const struct idmap *m, unsigned slot)
{
	return m->base + (uint64_t)(slot - 1) * m->nsvc * IDMAP_SLOT_UIDS;
}

static uint64_t
slot_hi(const struct idmap *m, unsigned slot)
{
	return slot_lo(m, slot) + (uint64_t)m->nsvc * IDMAP_SLOT_UIDS;
}

/* Does a foreign range touch [lo, hi)? */
static int
foreign_touches(const struct idmap *m, uint64_t lo, uint64_t hi)
{
	size_t i;

	for (i = 0; i < m->nforeign; i++)
		if (m->foreign[i] < hi && lo < m->foreign[i] +
		    (uint64_t)IDMAP_SLOT_UIDS)
			return 1;
	return 0;
}

unsigned
idmap_take(struct idmap *m)
{
	unsigned s;

	for (s = 1; s <= m->nslots; s++)
		if (idmap_claim(m, s) == 0)
			return s;
	return 0;
}

int
idmap_claim(struct idmap *m, unsigned slot)
{
	if (slot == 0 || slot > m->nslots ||
	    bit_test((bitstr_t *)m->used, slot - 1) ||
	    foreign_touches(m, slot_lo(m, slot), slot_hi(m, slot)))
		return -1;
	bit_set((bitstr_t *)m->used, slot - 1);
	m->inuse++;
	return 0;
}

void
idmap_put(struct idmap *m, unsigned slot)
{
	if (slot == 0 || slot > m->nslots ||
	    !bit_test((bitstr_t *)m->used, slot - 1))
		return;
	if (pinned(m, slot_lo(m, slot), slot_hi(m, slot))) {
		bit_set((bitstr_t *)m->parked, slot - 1);
		return;
	}
	bit_clear((bitstr_t *)m->parked, slot - 1);
	bit_clear((bitstr_t *)m->used, slot - 1);
	m->inuse--;
}

int
idmap_claim_range(struct idmap *m, uint32_t host_uid)
{
	uint64_t lo = host_uid, hi = lo + IDMAP_SLOT_UIDS;
	uint32_t *v;
	unsigned s;

	if (host_uid == 0 || foreign_touches(m, lo, hi))
		return -1;
	for (s = 1; s <= m->nslots; s++)
		if (bit_test((bitstr_t *)m->used, s - 1) &&
		    slot_lo(m, s) < hi && lo < slot_hi(m, s))
			return -1;
	if (m->nforeign == m->capforeign) {
		size_t cap = m->capforeign ? m->capforeign * 2 : 16;
		unsigned char *f;

		if ((v = reallocarray(m->foreign, cap, sizeof(*v))) == NULL)
			return -1;
		m->foreign = v;
		if ((f = realloc(m->fparked, cap)) == NULL)
			return -1;
		m->fparked = f;
		m->capforeign = cap;
	}
	m->fparked[m->nforeign] = 0;
	m->foreign[m->nforeign++] = host_uid;
	m->inuse++;
	return 0;
}

void
idmap_put_range(struct idmap *m, uint32_t host_uid)
{
	size_t i;

	for (i = 0; i < m->nforeign; i++)
		if (m->foreign[i] == host_uid) {
			if (pinned(m, host_uid, (uint64_t)host_uid +
			    IDMAP_SLOT_UIDS)) {
				m->fparked[i] = 1;
				return;
			}
			m->nforeign--;
			m->foreign[i] = m->foreign[m->nforeign];
			m->fparked[i] = m->fparked[m->nforeign];
			m->inuse--;
			return;
		}
}

int
idmap_pin(struct idmap *m, uint32_t host_uid)
{
	uint32_t *v;

	if (m->npins == m->cappins) {
		size_t cap = m->cappins ? m->cappins * 2 : 16;

		if ((v = reallocarray(m->pins, cap, sizeof(*v))) == NULL)
			return -1;
		m->pins = v;
		m->cappins = cap;
	}
	m->pins[m->npins++] = host_uid;
	return 0;
}

void
idmap_unpin(struct idmap *m, uint32_t host_uid)
{
	unsigned s;
	size_t i;

	for (i = 0; i < m->npins; i++)
		if (m->pins[i] == host_uid) {
			m->pins[i] = m->pins[--m->npins];
			break;
		}
	/* What was given back meanwhile, and is held by no pin now. */
	for (s = 1; s <= m->nslots; s++)
		if (bit_test((bitstr_t *)m->parked, s - 1))
			idmap_put(m, s);
	for (i = m->nforeign; i > 0; i--)
		if (m->fparked[i - 1])
			idmap_put_range(m, m->foreign[i - 1]);
}

uint32_t
idmap_host_uid(const struct idmap *m, unsigned slot, unsigned svc)
{
	return slot == 0 ? 0 : (uint32_t)(slot_lo(m, slot) +
	    (uint64_t)svc * IDMAP_SLOT_UIDS);
}
