/*
 * brokerlog.h - the broker's log lines, logged for it (JOB_BROKERLOG).
 * runs in: sbx-worker's JOB_BROKERLOG, after its drop to sbx-job (runtime
 *   deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_BROKERLOG_H
#define SBX_BROKERLOG_H

#include <stddef.h>

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

#endif
