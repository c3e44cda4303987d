/*
 * resident.h - a sandbox's data worker that stays (resident.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_RESIDENT_H
#define SBX_RESIDENT_H

#include "jobpool.h"
#include "runtime.h"

/*
 * Job j (a reset or a snapshot of sb, whose services svcmask names) for
 * sb's resident, started first if sb has none for this provision: as
 * worker_spawn_held, with its result, deadline and callbacks. 0, or -1
 * when sb has no postgres or its resident takes nothing (then none is
 * left: the caller starts a data worker of its own).
 */
int	resident_send(struct rt_cli *, struct sbx_sandbox *sb,
	    const struct job_data *j, uint32_t svcmask, size_t result_size,
	    int64_t deadline, worker_done, void *done_arg, worker_exited,
	    void *exited_arg);
/* sb released or provisioned again: its resident, if any, is told to
 * end (its channel closed); its ranges stay pinned until it has. */
void	resident_stop(struct sbx_sandbox *sb);

#endif
