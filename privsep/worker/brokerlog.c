/*
 * brokerlog.c - JOB_BROKERLOG: the broker's log lines, logged for it.
 * runs in: sbx-worker's JOB_BROKERLOG, from its first call, which drops it
 *   to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * Without -d, or with -d when stderr is the journal, the broker's stderr
 * is a pipe (log.c, LOG_TO_MONITOR) whose read end the monitor holds and
 * hands to this job, which lives as long as the monitor: the broker,
 * chrooted and filtered, could not connect to /dev/log again once the
 * syslog daemon restarts (glibc's syslog() makes a socket then, and the
 * filter kills it for that). Its lines are the broker's alone, written
 * by a process tenants talk to: they are read here, not in the monitor,
 * and logged where the monitor's go (stderr, the journal or syslog).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "brokerlog.h"
#include "jobuser.h"
#include "log.h"

/*
 * One of the broker's lines, "<PRI>PID message" (log.c), which it alone
 * wrote: untrusted. Every byte is made printable, the priority is one of
 * 2 to 7 (no emergency or alert a tenant's broker could make syslog
 * broadcast), and the line is logged under "sbx-broker[PID]: ", so that
 * it cannot pass for one of the monitor's, audit lines included.
 */
static void
brokerlog_line(char *line, size_t len)
{
	char *end;
	long pid;
	size_t i;

	/* Printable ASCII only: past 0x7f come C1 controls, bidirectional
	 * overrides and invalid UTF-8, which journald keeps as a blob. */
	for (i = 0; i < len; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e)
			line[i] = '?';
	line[len] = '\0';
	if (len > 4 && line[0] == '<' && line[1] >= '0' && line[1] <= '7' &&
	    line[2] == '>' && line[3] >= '1' && line[3] <= '9') {
		pid = strtol(line + 3, &end, 10);
		if (*end == ' ' && pid <= INT_MAX) {
			logit(line[1] - '0' < LOG_CRIT ? LOG_CRIT :
			    line[1] - '0', "sbx-broker[%ld]: %s", pid, end + 1);
			return;
		}
	}
	logit(LOG_WARNING, "sbx-broker[?]: %s", line);
}

/*
 * What the broker's pipe holds, line by line; at most LOG_READ_MAX bytes
 * a turn (the rest waits in the pipe, and past its 64 KiB the broker's
 * lines are dropped). A line longer than the buffer is logged in pieces.
 * -1: the pipe is closed (every writer gone) or broken.
 */
#define LOG_READ_MAX	(64 * 1024)
/* And no read once this many lines were logged: a flood of short lines
 * costs a turn at most these and what one read holds. */
#define LOG_LINES_MAX	256

int
brokerlog_read(struct brokerlog *l)
{
	size_t got = 0, room, lines = 0;
	ssize_t n;
	char *nl;

	while (got < LOG_READ_MAX && lines < LOG_LINES_MAX) {
		room = sizeof(l->buf) - 1 - l->len;
		if ((n = read(l->fd, l->buf + l->len, room)) == 0 ||
		    (n == -1 && errno != EAGAIN && errno != EINTR)) {
			if (l->len > 0)
				brokerlog_line(l->buf, l->len);
			l->len = 0;
			return -1;
		}
		if (n == -1)
			return 0;	/* EAGAIN: all read */
		got += (size_t)n;
		l->len += (size_t)n;
		while ((nl = memchr(l->buf, '\n', l->len)) != NULL) {
			brokerlog_line(l->buf, (size_t)(nl - l->buf));
			lines++;
			l->len -= (size_t)(nl - l->buf) + 1;
			memmove(l->buf, nl + 1, l->len);
		}
		if (l->len == sizeof(l->buf) - 1) {
			brokerlog_line(l->buf, l->len);
			l->len = 0;
		}
	}
	return 0;
}

int
brokerlog_until_eof(int fd)
{
	static struct brokerlog l;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };

	l.fd = fd;
	while (poll(&pfd, 1, -1) != -1 || errno == EINTR)
		if (brokerlog_read(&l) == -1)
			break;
	return 0;
}

/* The job: dropped to sbx-job, until the monitor is gone. */
int
brokerlog_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	(void)cfg;
	(void)job;
	(void)len;
	/* To syslog as the monitor's lines are (privsep/worker/logger.c). */
	if (jobuser_drop_syslog(!log_foreground()) == -1)
		return 1;
	return brokerlog_until_eof(fd);
}
