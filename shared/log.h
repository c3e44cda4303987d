/* log.h - one line per event, to stderr (-d) or syslog. */
#ifndef SBX_LOG_H
#define SBX_LOG_H

#include <stdarg.h>

void	log_init(const char *ident, int foreground);
/* Where lines go: 1 stderr, 0 syslog (an exec'd worker logs alike). */
int	log_foreground(void);
void	log_info(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warn(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_warnx(const char *, ...) __attribute__((format(printf, 1, 2)));
void	log_debug(const char *, ...) __attribute__((format(printf, 1, 2)));
void	fatal(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));
void	fatalx(const char *, ...)
	    __attribute__((format(printf, 1, 2), noreturn));

#endif
