/*
 * logger.h - JOB_LOG: the monitor's syslog(3) (logger.c).
 * runs in: sbx-worker's JOB_LOG, from its first call, which drops it to
 *   sbx-job (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_LOGGER_H
#define SBX_LOGGER_H

#include <stddef.h>

struct sbx_config;

/* JOB_LOG's body (main.c's table): the drop to sbx-job, then every line
 * of the pipe at fd logged until the monitor closes it; its return is its
 * exit. */
int	log_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
