/*
 * idmap.h - host uid ranges for containers' user namespaces, handed out
 * by the monitor (podman 4.3's --userns=auto deadlocks when several runs
 * allocate at once; see idmap.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_IDMAP_H
#define SBX_IDMAP_H

#include <stddef.h>
#include <stdint.h>

#define IDMAP_SLOT_UIDS	65536u	/* uids 0-65535 inside the container */

struct idmap {
	unsigned char	*used;		/* a bitstring of nslots */
	unsigned	 nslots;
	unsigned	 inuse;
	uint32_t	 base;		/* userns_base */
	unsigned	 nsvc;		/* ranges per slot: the services */
	uint32_t	*foreign;	/* live ranges outside the slots' layout */
	size_t		 nforeign, capforeign;
	/* Ranges a process of the monitor's still runs in (a reset's
	 * worker): given back meanwhile, a range stays taken until the last
	 * pin on it goes. */
	uint32_t	*pins;		/* a host uid in the range, per pin */
	size_t		 npins, cappins;
	unsigned char	*parked;	/* a bitstring of nslots: given back */
	unsigned char	*fparked;	/* per foreign range: given back */
};

int		idmap_init(struct idmap *, uint32_t base, unsigned nslots,
		    unsigned nsvc);
/* A slot none of whose ranges any live range touches: 1..nslots, 0
 * when none. */
unsigned	idmap_take(struct idmap *);
void		idmap_put(struct idmap *, unsigned slot);
/* Take this very slot (an adopted sandbox's): -1 if out of range, taken,
 * or a live range touches it. */
int		idmap_claim(struct idmap *, unsigned slot);
/* A live range that is not where the layout puts its slot's (adopted
 * after sbx.conf changed): -1 if it touches any range held. */
int		idmap_claim_range(struct idmap *, uint32_t host_uid);
/* The range is gone (no-op for one inside a slot). */
void		idmap_put_range(struct idmap *, uint32_t host_uid);
/*
 * A process of the monitor's runs as a uid of the range that holds
 * host_uid: until idmap_unpin, a put of that range (a slot's or a
 * foreign one) keeps it taken, and the unpin gives it back. -1 if no
 * memory: nothing is pinned.
 */
int		idmap_pin(struct idmap *, uint32_t host_uid);
void		idmap_unpin(struct idmap *, uint32_t host_uid);
/*
 * The first host uid for service number svc (its index in sbx.conf) of
 * the sandbox holding slot: a slot is nsvc ranges of IDMAP_SLOT_UIDS,
 * laid from base.
 */
uint32_t	idmap_host_uid(const struct idmap *, unsigned slot,
		    unsigned svc);

#endif
