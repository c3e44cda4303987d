/*
 * metrics.h - counters for the fleet view, written for node_exporter's
 * textfile collector (metrics_file in sbx.conf). The monitor opens no
 * network port for them.
 */
#ifndef SBX_METRICS_H
#define SBX_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "audit.h"
#include "msg.h"

void	metrics_answer(enum sbx_req_type, enum sbx_code);
void	metrics_event(enum audit_event, enum sbx_code);
void	metrics_provision(const char (*services)[SBX_SLUG_MAX], size_t n,
	    enum sbx_code, int64_t ms);

struct metrics_gauges {
	size_t		sandboxes;
	size_t		fds_open, fds_limit;
	unsigned	warm[SBX_MAX_SERVICES];	/* ready, per service */
	unsigned	uid_ranges, uid_ranges_max;	/* idmap.c's slots */
};
/* Every few seconds from the loop: PATH.tmp, then rename. */
void	metrics_write(const char *path, const char *const *services,
	    size_t nservices, const struct metrics_gauges *);

#endif
