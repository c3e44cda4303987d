/*
 * job.c - the jobs' names: a worker's argv[1], checked against its job.
 * runs in: the monitor (root, monitor allowlist once started) and a worker's
 *   fork before its exec (root, runtime deny filter), every sbx-worker job
 *   (root, runtime deny filter)
 */
#include <stddef.h>

#include "job.h"

static const char *const names[JOB_NTYPES] = {
	[JOB_PROVISION] = "provision", [JOB_TEARDOWN] = "teardown",
	[JOB_EVICT] = "evict", [JOB_WARM_START] = "warm-start",
	[JOB_WARM_REMOVE] = "warm-remove", [JOB_RENAME] = "rename",
	[JOB_RELOAD] = "reload", [JOB_REMOVE] = "remove", [JOB_ADOPT] = "adopt",
	[JOB_CONFIG] = "config", [JOB_METRICS] = "metrics",
	[JOB_LOG] = "log", [JOB_DATA] = "data", [JOB_LOGIN] = "login",
	[JOB_PURGE] = "purge", [JOB_BROKERLOG] = "brokerlog",
	[JOB_BIND] = "bind", [JOB_CLAIM] = "claim",
	[JOB_RESIDENT] = "resident",
};

const char *
job_name(unsigned type)
{
	return type > 0 && type < JOB_NTYPES ? names[type] : NULL;
}

static const char *const whys[ADOPT_NWHY] = {
	[ADOPT_WHOLE] = "whole", [ADOPT_SERVICE_GONE] = "service_gone",
	[ADOPT_SERVICE_CHANGED] = "service_changed",
	[ADOPT_CONTAINER_MISSING] = "container_missing",
	[ADOPT_CONTAINER_STOPPED] = "container_stopped",
	[ADOPT_PORT_CHANGED] = "port_changed",
	[ADOPT_NOT_LISTENING] = "not_listening",
	[ADOPT_RANGE_CHANGED] = "range_changed",
	[ADOPT_LEASE_ENDED] = "bind_pid_exited",
	[ADOPT_NO_RECORD] = "no_record",
	[ADOPT_NOT_IN_SANDBOX] = "not_in_sandbox",
	[ADOPT_POOL_NO_RECORD] = "no_record",
};

const char *
adopt_why_name(unsigned why)
{
	return why < ADOPT_NWHY ? whys[why] : NULL;
}
