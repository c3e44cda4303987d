/*
 * jobpool_stub.c - the job pool for fuzz_results: config_take.c and
 * reload.c start jobs as well as check their results, and a harness of
 * the checks starts none. Linking the pool would bring in libseccomp.
 */
#include <stdlib.h>

#include "jobpool.h"

int
worker_spawn(struct worker_pool *p, enum job_type type, uint32_t svcmask,
    const void *arg, size_t len, size_t result_size, int64_t deadline,
    worker_done done, void *done_arg)
{
	(void)p; (void)type; (void)svcmask; (void)arg; (void)len;
	(void)result_size; (void)deadline; (void)done; (void)done_arg;
	abort();
}

int
worker_spawn_wait(enum job_type type, uint32_t svcmask, const void *arg,
    size_t len, int keep_fd, int64_t deadline)
{
	(void)type; (void)svcmask; (void)arg; (void)len; (void)keep_fd;
	(void)deadline;
	abort();
}
