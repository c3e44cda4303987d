/*
 * rt_start.h - the runtime at start: the host's lock, removals, --purge (rt_start.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_RT_START_H
#define SBX_RT_START_H

#include "runtime.h"

/* At start, before anything else of the runtime's: the host's lock for
 * its sbx containers (one monitor per host and runtime); -1 with err. */
int	runtime_lock_host(const struct sbx_config *, char *err, size_t errlen);
/* After daemon(3): the lock is held still, under the daemon's pid. */
void	runtime_lock_moved(void);
int	runtime_remove(const struct sbx_config *, const struct rt_gone *,
	    size_t);
/* sbx-monitor --purge, with the host's lock: the exit status. */
int	runtime_purge(const struct sbx_config *);

#endif
