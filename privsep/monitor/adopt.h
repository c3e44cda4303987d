/*
 * adopt.h - at start, the sandboxes that outlived the last monitor.
 * runs in: the monitor at its start (root, unfiltered)
 */
#ifndef SBX_ADOPT_H
#define SBX_ADOPT_H

#include "cache.h"
#include "config.h"
#include "project.h"
#include "runtime.h"

/* Adopt what is whole and alive, tear the rest down. -1: the runtime
 * could not list its containers (then nothing was touched, and the
 * monitor must not start: it could not tell which uid ranges are used). */
int	adopt_sandboxes(const struct sbx_config *, const struct project_table *,
	    struct cache *, struct rt_cli *);
/* An entry of JOB_ADOPT's answer, checked as hostile (unit tests too). */
bool	adopt_found_valid(const struct adopt_found *);
bool	adopt_gone_valid(const struct adopt_gone *);
/* JOB_ADOPT's whole answer in the memfd fd, mapped, its size exact and
 * every entry valid; *len is the mapping's (munmap it). NULL otherwise. */
const struct adopt_head *adopt_answer_take(int fd, size_t *len);

#endif
