/* brokerlog.h - the broker's log lines, logged by the monitor for it. */
#ifndef SBX_BROKERLOG_H
#define SBX_BROKERLOG_H

#include <stddef.h>

struct brokerlog {
	int	fd, w;		/* our end, the broker's fd 2; -1: none (-d) */
	size_t	len;
	char	buf[2304];	/* a broker line whole (log.c: to_monitor) */
};

int	brokerlog_open(struct brokerlog *);
void	brokerlog_read(struct brokerlog *);

#endif
