/*
 * datadir.h - a service's data directory laid over a host template
 * (datadir.c).
 * runs in: a provision's service children (root, runtime deny filter)
 */
#ifndef SBX_DATADIR_H
#define SBX_DATADIR_H

#include <stddef.h>
#include <stdint.h>

#include "config.h"

/*
 * Mount s's data beside the socket directory sockdir (a unit's
 * SOCKDIR_MOUNT, made empty just before): a tmpfs of s->data_size with
 * an overlay of s->data_template on it, idmapped onto the range that
 * starts at base (0: none). out: the overlay's path, the container's
 * volume. 0, or -1 with one line in err (what remains is the unit's, and
 * goes with it).
 */
int	datadir_make(const char *sockdir, const struct service_cfg *s,
	    uint32_t base, char *out, size_t cap, char *err, size_t ecap);

#endif
