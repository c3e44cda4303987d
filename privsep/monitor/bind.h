/*
 * bind.h - the agent socket, bound by a worker, checked here.
 * runs in: the monitor at its start (root, unfiltered)
 */
#ifndef SBX_BIND_H
#define SBX_BIND_H

#include <sys/types.h>

#include "config.h"
#include "fdpass.h"
#include "job.h"

/* At start: state_dir and the socket by JOB_BIND; the listening socket,
 * or -1 with err (the worker's sentence, or that it failed). */
int	bind_agent_socket(const struct sbx_config *, char *err, size_t errlen);
/* Its answer (n bytes of r, rx beside them), checked: the socket, or -1
 * with err; rx's descriptors are closed unless one is returned. */
int	bind_result_take(const struct bind_result *r, ssize_t n,
	    struct fdpass_rx *rx, const char *path, char *err, size_t errlen);

#endif
