/*
 * idmap.c - host uid ranges for containers' user namespaces.
 * runs in: the monitor (root, unfiltered; no I/O)
 *
 * Every sandbox that starts a service gets a slot, IDMAP_SLOT_UIDS host
 * uids per configured service, that no other live sandbox has
 * (docs/contract.md, "Isolation": containers of different sandboxes never share a host uid;
 * nor do two services of one sandbox here). With podman its containers
 * run with --uidmap/--gidmap onto it; with either runtime, the last uid of
 * a service's range is its readiness prober's (rt_worker.c, prober_ids). podman could pick the range itself (--userns=auto), but podman
 * 4.3's allocation deadlocks when several runs allocate at once: eight
 * parallel provisions all hung until their deadline. A slot comes back
 * only when the runtime said its containers are gone (runtime_cli.c).
 */
#include <stdlib.h>

#include <bitstring.h>	/* libbsd */

#include "idmap.h"

int
idmap_init(struct idmap *m, unsigned nslots)
{
	m->nslots = nslots;
	m->inuse = 0;
	m->used = (unsigned char *)bit_alloc((int)nslots);
	return m->used == NULL ? -1 : 0;
}

unsigned
idmap_take(struct idmap *m)
{
	int bit;

	bit_ffc((bitstr_t *)m->used, (int)m->nslots, &bit);
	if (bit < 0)
		return 0;
	bit_set((bitstr_t *)m->used, bit);
	m->inuse++;
	return (unsigned)bit + 1;
}

int
idmap_claim(struct idmap *m, unsigned slot)
{
	if (slot == 0 || slot > m->nslots ||
	    bit_test((bitstr_t *)m->used, slot - 1))
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
	bit_clear((bitstr_t *)m->used, slot - 1);
	m->inuse--;
}

uint32_t
idmap_host_uid(uint32_t base, unsigned slot, unsigned nsvc, unsigned svc)
{
	return base + ((slot - 1) * nsvc + svc) * IDMAP_SLOT_UIDS;
}
