/*
 * monitor.h - sbx-monitor's state, shared by its loop (monitor.c) and its
 * start (start.c, whose functions start.h declares).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_MONITOR_H
#define SBX_MONITOR_H

#include <stdbool.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "cache.h"
#include "config.h"
#include "handle.h"
#include "jobpool.h"
#include "project.h"
#include "runtime.h"
#include "subuid.h"
#include "supervise.h"

struct outq {
	TAILQ_ENTRY(outq) entry;
	int		 fd;
	char		*buf;
	size_t		 len, off;
	int64_t		 deadline;
};

struct monitor {
	struct sbx_config	cfg;
	struct project_table	projects;
	struct cache		cache;
	struct worker_pool	pool;
	struct rt_cli		rt;
	int64_t			metrics_at;	/* next metrics_file write */
	struct broker_proc	broker;
	bool			syslog;		/* lines go to a logger */
	pid_t			logger;		/* syslog's writer (JOB_LOG) */
	unsigned long		log_lost;	/* dropped lines, said */
	struct handler_env	env;
	struct subuid_table	subuids;
	int			listen_fd;
	int			sigfd;
	int			lease_ep;	/* leases' pidfds (lease.c) */
	/* Agents' sockets held (a request waiting, or its reply being
	 * written), and how many the descriptor budget allows: past it the
	 * broker channel is not read (fd_budget()). */
	unsigned		nagents, max_agents;
	int			stopping;
	/* SIGHUP: a reload runs in a worker; another is wanted after it. */
	bool			reloading, reload_wanted;
	TAILQ_HEAD(, outq)	outq;
};

#endif
