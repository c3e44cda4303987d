/*
 * rt_seen.h - the runtime's listing of sbx's containers, as fixed entries
 * (rt_seen.c).
 * runs in: sbx-worker's JOB_ADOPT and JOB_PURGE, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_RT_SEEN_H
#define SBX_RT_SEEN_H

#include <stddef.h>

struct rt_seen;

/* The runtime's listing as rt_seen entries, into an array to free; -1,
 * logged, if a line is not sound. */
int	rt_seen_parse(char *text, struct rt_seen **, size_t *);

#endif
