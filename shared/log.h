/*
 * log.h - one line per event, to stderr (-d), syslog, or the monitor.
 * runs in: the monitor (root, monitor allowlist once started), its forks of
 *   the broker (root, unfiltered) and of a worker (root, runtime deny filter)
 *   until their exec; sbx-worker jobs and their children (root, runtime deny
 *   filter), the prober and session children (root until their drop, then the
 *   sandbox's prober uid, probe or session allowlist); the broker (root until
 *   its drop, then broker user; unfiltered, then the broker allowlist) and
 *   its children (broker user, broker and child allowlists)
 */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <stdarg.h>

#define LOG_TO_SYSLOG	0
#define LOG_TO_STDERR	1
#define LOG_TO_MONITOR	2	/* the broker's: fd 2 is a pipe to the monitor */

void	log_init(const char *ident, int where);
/* Lines to stderr? Else syslog (an exec'd worker logs alike). */
int	log_foreground(void);
/* stderr is the journal: lines carry their priority, "<N>" (sd-daemon(3)). */
int	log_to_journal(void);
/* From now on, lines go as the broker's do ("<PRI>PID line") to fd, a
 * pipe that does not block: the monitor's to its logger (sbx-worker log),
 * which is the one to wait for syslog(3). */
void	log_relay(int fd);
/* Lines a relay's pipe did not take (it was full, or its reader gone). */
unsigned long	log_dropped(void);
/* A line at a syslog(3) priority: the broker's, relayed by the monitor. */
void	logit(int pri, const char *, ...) __attribute__((format(printf, 2, 3)));
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
