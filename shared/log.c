/*
 * log.c - logging in the OpenBSD daemons' style: log_warn appends
 * strerror(errno), log_warnx does not; fatal* log and exit 1.
 * Foreground mode writes "ident: message" to stderr, otherwise syslog.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "sbx";
static int log_to_stderr = 1;
static int log_verbose;

void
log_init(const char *ident, int foreground)
{
	log_ident = ident;
	log_to_stderr = foreground;
	log_verbose = getenv("SBX_DEBUG") != NULL;
	if (!foreground)
		openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int
log_foreground(void)
{
	return log_to_stderr;
}

static void vlog(int, const char *, va_list, int)
    __attribute__((format(printf, 2, 0)));

static void
vlog(int pri, const char *fmt, va_list ap, int with_errno)
{
	char msg[2048];	/* an audit line with 16 services */
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_to_stderr) {
		if (with_errno)
			fprintf(stderr, "%s: %s: %s\n", log_ident, msg,
			    strerror(saved));
		else
			fprintf(stderr, "%s: %s\n", log_ident, msg);
	} else if (with_errno)
		syslog(pri, "%s: %s", msg, strerror(saved));
	else
		syslog(pri, "%s", msg);
	errno = saved;
}

void
log_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_INFO, fmt, ap, 0);
	va_end(ap);
}

void
log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, 1);
	va_end(ap);
}

void
log_warnx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_WARNING, fmt, ap, 0);
	va_end(ap);
}

void
log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog(LOG_DEBUG, fmt, ap, 0);
	va_end(ap);
}

void
fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, 1);
	va_end(ap);
	exit(1);
}

void
fatalx(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(LOG_CRIT, fmt, ap, 0);
	va_end(ap);
	exit(1);
}
