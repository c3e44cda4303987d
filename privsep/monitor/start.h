/*
 * start.h - sbx-monitor's start, before its loop, and --purge (start.c).
 * runs in: the monitor at start (root, unfiltered)
 */
#ifndef SBX_START_H
#define SBX_START_H

#include <stddef.h>
#include <sys/types.h>

#include "reload.h"

/*
 * Descriptors the budget keeps free beyond those counted: syslog's
 * socket, a hit's liveness connect, the two ends of a worker's pipe
 * before it closes one, /proc reads, a sandbox's socket directory being
 * made, a metrics file being written.
 */
#define FD_SPARE	8

struct monitor;
struct sbx_sandbox;

/* What the start hands on from the loop's file (monitor.c): the first
 * read of the projects and ranges, a sandbox's owner and a lease taken,
 * as callbacks, so that start.c calls nothing of monitor.c's. */
struct monitor_hooks {
	reload_done	  start_take;
	uid_t		(*owner_of)(void *arg, uid_t);
	void		(*leased)(void *arg, struct sbx_sandbox *);
};

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
