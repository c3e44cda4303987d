/*
 * monitor.h - sbx-monitor's state, shared by its loop (monitor.c) and its
 * start (start.c).
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
#include "reload.h"
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

/*
 * Descriptors the budget keeps free beyond those counted: syslog's
 * socket, a hit's liveness connect, the two ends of a worker's pipe
 * before it closes one, /proc reads, a sandbox's socket directory being
 * made, a metrics file being written.
 */
#define FD_SPARE	8

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

/* What the start hands on from the loop's file (monitor.c): the first
 * read of the projects and ranges, a sandbox's owner and a lease taken,
 * as callbacks, so that start.c calls nothing of monitor.c's. */
struct monitor_hooks {
	reload_done	  start_take;
	uid_t		(*owner_of)(void *arg, uid_t);
	void		(*leased)(void *arg, struct sbx_sandbox *);
};

/* start.c */
void	beside_self(const char *name, char *out, size_t cap);
void	monitor_setup(struct monitor *, const char *path, int fg,
	    const struct monitor_hooks *);
void	monitor_daemonize(void);
void	monitor_confine(struct monitor *);
void	monitor_fd_budget(struct monitor *);
int	monitor_purge(const char *path);
/* Descriptors open now (the budget's, the metrics'). */
size_t	open_fds(void);

#endif
