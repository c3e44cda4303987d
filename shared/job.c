/* job.c - the jobs' names: a worker's argv[1], checked against its job. */
#include <stddef.h>

#include "job.h"

static const char *const names[JOB_NTYPES] = {
	[JOB_PROVISION] = "provision", [JOB_TEARDOWN] = "teardown",
	[JOB_EVICT] = "evict", [JOB_WARM_START] = "warm-start",
	[JOB_WARM_REMOVE] = "warm-remove", [JOB_RENAME] = "rename",
	[JOB_RELOAD] = "reload", [JOB_REMOVE] = "remove", [JOB_LIST] = "list",
	[JOB_CONFIG] = "config",
};

const char *
job_name(unsigned type)
{
	return type > 0 && type < JOB_NTYPES ? names[type] : NULL;
}
