/*
 * supervise.h - start the broker, and start it again when it dies.
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_SUPERVISE_H
#define SBX_SUPERVISE_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "spawner.h"
#include "subrange.h"

struct broker_proc {
	pid_t		pid;		/* 0: not running */
	int		chan;		/* our end of the SEQPACKET channel */
	int64_t		started_ms;
	int64_t		restart_at;	/* 0: no restart pending */
	unsigned	failures;
	struct spawn_broker exe;	/* its path, and sbx.conf */
	int		foreground;
	/* Without -d, its stderr: a pipe for every broker we start, so that
	 * a line written just before one died is still read, by a worker
	 * of its own (JOB_BROKERLOG, 0: none running), never by us. */
	int		log_r, log_w;
	pid_t		logger;
	/* Handed to the broker at start, so that it counts a subordinate
	 * uid's connections toward the user who owns the range. */
	const struct subuid_range *subuids;
	size_t		nsubuids;
};

int	broker_start(struct broker_proc *, int listen_fd, int64_t now);
void	broker_died(struct broker_proc *, int64_t now, int stopping);
void	broker_kill(struct broker_proc *, const char *why);
/* The worker that logs the broker's lines: started if there is a pipe
 * (no -d) and none runs. */
void	broker_logger(struct broker_proc *);

#endif
