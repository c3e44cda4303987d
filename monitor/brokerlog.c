/*
 * brokerlog.c - the broker's log lines, logged by the monitor for it.
 * runs in: the monitor (root, unfiltered)
 *
 * Without -d, or with -d when stderr is the journal, the broker's stderr
 * is a pipe to us (log.c, LOG_TO_MONITOR),
 * as OpenSSH's privilege-separated child logs through its monitor: the
 * broker, chrooted and filtered, could not connect to /dev/log again
 * once the syslog daemon restarts (glibc's syslog() makes a socket then,
 * and the filter kills it for that).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "brokerlog.h"
#include "log.h"

/* One pipe for every broker we start: a line written just before a
 * broker died is still read. Non-blocking at both ends: the broker
 * drops a line rather than wait for us. */
int
brokerlog_open(struct brokerlog *l)
{
	int p[2];

	if (l->fd != -1)
		return 0;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) == -1)
		return -1;
	l->fd = p[0];
	l->w = p[1];
	l->len = 0;
	return 0;
}

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
 * a turn, so that a flooding broker costs the loop a bounded time (the
 * rest waits in the pipe, and past its 64 KiB the broker's lines are
 * dropped). A line longer than the buffer is logged in pieces.
 */
#define LOG_READ_MAX	(64 * 1024)
/* And no read once this many lines were logged: a flood of short lines
 * costs a turn at most these and what one read holds. */
#define LOG_LINES_MAX	256

void
brokerlog_read(struct brokerlog *l)
{
	size_t got = 0, room, lines = 0;
	ssize_t n;
	char *nl;

	while (got < LOG_READ_MAX && lines < LOG_LINES_MAX) {
		room = sizeof(l->buf) - 1 - l->len;
		if ((n = read(l->fd, l->buf + l->len, room)) <= 0)
			return;		/* EAGAIN: all read */
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
}
