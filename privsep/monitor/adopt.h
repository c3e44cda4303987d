/*
 * adopt.h - at start, the sandboxes that outlived the last monitor
 * (adopt.c; the checks of the worker's answer are adopt_check.h's).
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

#endif
