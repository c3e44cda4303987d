/*
 * brokerlog.h - the broker's log lines, logged for it (JOB_BROKERLOG).
 * runs in: sbx-worker's JOB_BROKERLOG, after its drop to sbx-job (runtime
 *   deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_BROKERLOG_H
#define SBX_BROKERLOG_H

#include <stddef.h>

struct sbx_config;

struct brokerlog {
	int	fd;		/* the read end of the broker's fd 2 */
	size_t	len;
	char	buf[2304];	/* a broker line whole (log.c: to_monitor) */
};

/* What the pipe holds now, logged; -1 once it is closed. */
int	brokerlog_read(struct brokerlog *);
/* All the pipe at fd will hold, logged, until the monitor, its last
 * writer, is gone; 0. JOB_BROKERLOG's, once it dropped. */
int	brokerlog_until_eof(int fd);

/* JOB_BROKERLOG's body (main.c's table): the drop to sbx-job, then
 * brokerlog_until_eof of fd, the pipe the monitor handed it; its return
 * is its exit. */
int	brokerlog_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
