/*
 * jobpool_stub.c - the job pool for fuzz_results: config_take.c, bind.c,
 * reload.c and metrics.c start jobs as well as check their results. No
 * job starts here; a job waited for at start (worker_spawn_wait) is
 * fuzz_worker's, the harness's stand-in for the worker, which writes the
 * fuzzer's bytes into the descriptor the job was given, as the worker
 * would. Linking the pool would bring in fork, exec and libseccomp.
 */
#include <stdlib.h>

#include "jobpool.h"
#include "jobpool_stub.h"

int (*fuzz_worker)(enum job_type, int keep_fd);

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
	(void)svcmask; (void)arg; (void)len; (void)deadline;
	if (fuzz_worker == NULL)
		abort();
	return fuzz_worker(type, keep_fd);
}
