/*
 * logger.c - JOB_LOG: the monitor's syslog(3).
 * runs in: sbx-worker's JOB_LOG, from its first call, which drops it to
 *   sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * A syslog daemon that is slow, or gone, makes syslog(3) wait; the
 * monitor's loop must not, so its lines come here through a pipe it writes
 * without waiting (a line the pipe does not take is counted there,
 * shared/log.c), and this process waits instead. It lives until the
 * monitor closes the pipe. Lines are "<PRI>PID text"; each is logged as
 * the monitor's own, under its pid.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "jobuser.h"
#include "logger.h"

static void
line_out(char *line)
{
	char *end = line;
	long pri = -1;

	if (line[0] == '<')
		pri = strtol(line + 1, &end, 10);
	if (pri < 0 || pri > LOG_DEBUG || *end != '>')
		return;		/* the monitor writes none such */
	if ((end = strchr(end, ' ')) == NULL)
		return;
	syslog((int)pri, "%s", end + 1);
}

int
log_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	char buf[4096], *nl;
	size_t have = 0;
	ssize_t n;

	(void)cfg;
	(void)job;
	(void)len;
	if (jobuser_drop_syslog(true) == -1)
		return 1;
	while ((n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		while ((nl = memchr(buf, '\n', have)) != NULL) {
			*nl = '\0';
			line_out(buf);
			have -= (size_t)(nl - buf) + 1;
			memmove(buf, nl + 1, have);
		}
		if (have == sizeof(buf) - 1)
			have = 0;	/* no line is that long */
	}
	return 0;
}
