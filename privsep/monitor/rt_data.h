/*
 * rt_data.h - a reset's or snapshot's job (rt_data.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_RT_DATA_H
#define SBX_RT_DATA_H

#include "runtime.h"

int	rt_data(void *impl, struct sbx_sandbox *, enum sbx_req_type,
	    const char *snapshot);

#endif
