/*
 * log.c - logging in the OpenBSD daemons' style: log_warn appends
 * strerror(errno), log_warnx does not; fatal* log and exit 1.
 * runs in: the monitor (root, monitor allowlist once started), its forks of
 *   the broker (root, unfiltered) and of a worker (root, runtime deny filter)
 *   until their exec; sbx-worker jobs and their children (root, runtime deny
 *   filter), the prober and session children (root until their drop, then the
 *   sandbox's prober uid, probe or session allowlist), the parsing jobs (root
 *   until their drop, then sbx-job, job allowlist); the broker (root until
 *   its drop, then broker user; unfiltered, then the broker allowlist) and
 *   its children (broker user, broker and child allowlists)
 *
 * Lines go to stderr as "ident: message" (-d), to syslog, or, for the
 * broker, to the monitor (LOG_TO_MONITOR).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "sbx";
static int log_to = LOG_TO_STDERR;
static int log_journal;
static int log_verbose;
static int log_said_fallback;

/*
 * Is a syslog daemon listening? Without one, glibc's syslog() makes a
 * socket and connects again for every line, and a seccomp filter without
 * socket(2) (the broker's, its children's) kills the process for it.
 */
static int
syslog_listens(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd, ok;

	strlcpy(sun.sun_path, _PATH_LOG, sizeof(sun.sun_path));
	if ((fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	ok = connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0;
	close(fd);
	return ok;
}

/*
 * Is stderr the journal? systemd names the stream it gave us in
 * JOURNAL_STREAM (systemd.exec(5)); on it, "<N>" before a line is the
 * line's priority (sd-daemon(3)), which journalctl -p filters on.
 */
static int
stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;
	char *end;

	if (js == NULL || fstat(STDERR_FILENO, &st) == -1)
		return 0;
	dev = strtoull(js, &end, 10);
	if (end == js || *end != ':')
		return 0;
	js = end + 1;
	ino = strtoull(js, &end, 10);
	return end != js && *end == '\0' &&
	    (unsigned long long)st.st_dev == dev &&
	    (unsigned long long)st.st_ino == ino;
}

/*
 * To syslog: connected now (before any filter), or to stderr when
 * nothing listens there (a daemon's is /dev/null), said once on stderr
 * so that whoever starts the process learns where its lines go. To the monitor: the
 * broker's stderr is a pipe the monitor reads (supervise.c), as OpenSSH's
 * privsep child logs through its monitor; a chrooted, filtered process
 * could not connect to /dev/log again when the syslog daemon restarts.
 */
void
log_init(const char *ident, int where)
{
	log_ident = ident;
	log_to = where;
	log_verbose = getenv("SBX_DEBUG") != NULL;
	if (log_to == LOG_TO_SYSLOG && !syslog_listens()) {
		log_to = LOG_TO_STDERR;
		if (!log_said_fallback)
			fprintf(stderr, "%s: no syslog daemon listens on %s: "
			    "logging to stderr\n", ident, _PATH_LOG);
		log_said_fallback = 1;
	}
	log_journal = log_to == LOG_TO_STDERR && stderr_is_journal();
	if (log_to != LOG_TO_SYSLOG)
		return;
	/* syslog()'s timestamp reads the zone file at its first line: read
	 * it now, before the broker's chroot and filter (openat). */
	tzset();
	openlog(ident, LOG_PID | LOG_NDELAY, LOG_DAEMON);
}

int
log_foreground(void)
{
	return log_to == LOG_TO_STDERR;
}

int
log_to_journal(void)
{
	return log_journal;
}

/*
 * "<PRI>PID message\n" in one write(2): shorter than PIPE_BUF, so lines
 * of the broker and its children never interleave. The pipe does not
 * block: when the monitor lags, a line is lost, the broker is not held.
 */
static int		log_fd = STDERR_FILENO;	/* LOG_TO_MONITOR's */
static unsigned long	log_lost;		/* lines it did not take */

void
log_relay(int fd)
{
	log_to = LOG_TO_MONITOR;
	log_fd = fd;
}

unsigned long
log_dropped(void)
{
	return log_lost;
}

static void
to_monitor(int pri, const char *msg, const char *err)
{
	char line[2300];
	int n;

	n = snprintf(line, sizeof(line), "<%d>%ld %s%s%s\n", pri,
	    (long)getpid(), msg, err ? ": " : "", err ? err : "");
	if (n < 0)
		return;
	if ((size_t)n >= sizeof(line)) {
		n = (int)sizeof(line) - 1;
		line[n - 1] = '\n';
	}
	if (write(log_fd, line, (size_t)n) != n)
		log_lost++;
}

static void vlog(int, const char *, va_list, int)
    __attribute__((format(printf, 2, 0)));

static void
vlog(int pri, const char *fmt, va_list ap, int with_errno)
{
	char msg[2400];	/* an audit line with 16 services; a broker line */
	char pfx[8] = "";
	int saved = errno;

	vsnprintf(msg, sizeof(msg), fmt, ap);
	if (log_to == LOG_TO_MONITOR)
		to_monitor(pri, msg, with_errno ? strerror(saved) : NULL);
	else if (log_to == LOG_TO_STDERR) {
		if (log_journal)
			snprintf(pfx, sizeof(pfx), "<%d>", pri);
		fprintf(stderr, "%s%s: %s%s%s\n", pfx, log_ident, msg,
		    with_errno ? ": " : "", with_errno ? strerror(saved) : "");
	} else if (with_errno)
		syslog(pri, "%s: %s", msg, strerror(saved));
	else
		syslog(pri, "%s", msg);
	errno = saved;
}

void
logit(int pri, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog(pri, fmt, ap, 0);
	va_end(ap);
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
