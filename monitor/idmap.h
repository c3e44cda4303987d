/*
 * idmap.h - host uid ranges for containers' user namespaces, handed out
 * by the monitor (podman 4.3's --userns=auto deadlocks when several runs
 * allocate at once; see idmap.c).
 */
#ifndef SBX_IDMAP_H
#define SBX_IDMAP_H

#include <stdint.h>

#define IDMAP_SLOT_UIDS	65536u	/* uids 0-65535 inside the container */

struct idmap {
	unsigned char	*used;		/* a bitstring of nslots */
	unsigned	 nslots;
	unsigned	 inuse;
};

int		idmap_init(struct idmap *, unsigned nslots);
unsigned	idmap_take(struct idmap *);	/* 1..nslots, 0 when none */
void		idmap_put(struct idmap *, unsigned slot);
/* Take this very slot (an adopted sandbox's): -1 if out of range or taken. */
int		idmap_claim(struct idmap *, unsigned slot);
/*
 * The first host uid for service number svc (its index in sbx.conf, of
 * nsvc) of the sandbox holding slot: a slot is nsvc ranges of
 * IDMAP_SLOT_UIDS, laid from base, so no two containers share a uid.
 */
uint32_t	idmap_host_uid(uint32_t base, unsigned slot, unsigned nsvc,
		    unsigned svc);

#endif
