/*
 * jobpool_stub.h - fuzz_results' stand-in for a worker waited for at
 * start (jobpool_stub.c).
 * runs in: the fuzz_results harness (tests/fuzz/fuzz_results.c)
 */
#ifndef SBX_JOBPOOL_STUB_H
#define SBX_JOBPOOL_STUB_H

#include "job.h"

/* The job of type was given keep_fd: write its answer there, and say
 * whether its worker exited 0 (0) or failed (-1). NULL: abort. */
extern int	(*fuzz_worker)(enum job_type, int keep_fd);

#endif
