/* timing.h - the bench programs' clock and the sort behind their
 * percentiles. */
#ifndef SBX_BENCH_TIMING_H
#define SBX_BENCH_TIMING_H

#include <stdint.h>
#include <time.h>

static inline int64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* For qsort over int64_t. */
static inline int
cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

#endif
