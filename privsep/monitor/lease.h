/*
 * lease.h - a sandbox bound to a process of its owner's (lease.c).
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 */
#ifndef SBX_LEASE_H
#define SBX_LEASE_H

#include <stdint.h>
#include <sys/types.h>

#include "cache.h"

/* pid, if it is a live process whose real uid is uid (and, start not 0,
 * the process that started then): a pidfd of it in l; -1, nothing held,
 * otherwise. */
int		lease_open(pid_t, uid_t, uint64_t start, struct sbx_lease *);

#endif
