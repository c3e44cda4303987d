/*
 * config_take.h - sbx.conf, read by a worker, checked here.
 * runs in: the monitor at its start, and sbx-monitor -t and --purge (root,
 *   unfiltered)
 */
#ifndef SBX_CONFIG_TAKE_H
#define SBX_CONFIG_TAKE_H

#include <stdbool.h>

#include "config.h"

/* At start: path read by JOB_CONFIG, the result checked; -1 with err
 * (file:line: cause, as the worker said it). */
int	config_read(const char *path, struct sbx_config *, char *err,
	    size_t errlen);
/* sbx-monitor -t: sbx.conf and every project file checked by a worker,
 * each problem on stderr; 0 when there is none, else 1. */
int	config_test(const char *path);
/* What a worker sent holds together (the unit tests' too). */
bool	config_valid(const struct sbx_config *);

#endif
