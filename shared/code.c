/*
 * code.c - the contract's names for error codes and request ops.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_METRICS (root, runtime deny filter), the broker (broker user, broker
 *   allowlist) and its children (broker user, broker and child allowlists)
 */
#include <stddef.h>

#include "code.h"
#include "msg.h"

static const char *const code_names[SBX_CODE_MAX] = {
	[SBX_OK] = "ok",
	[SBX_E_BAD_REQUEST] = "bad_request",
	[SBX_E_DISABLED] = "disabled",
	[SBX_E_UNKNOWN_PROJECT] = "unknown_project",
	[SBX_E_NOT_OPTED_IN] = "not_opted_in",
	[SBX_E_FORBIDDEN] = "forbidden",
	[SBX_E_CONFLICT] = "conflict",
	[SBX_E_RUNTIME_FAILED] = "runtime_failed",
	[SBX_E_TIMEOUT] = "timeout",
	[SBX_E_BUSY] = "busy",
	[SBX_E_INTERNAL] = "internal",
	[SBX_E_NO_SANDBOX] = "no_sandbox",
	[SBX_E_UNKNOWN_SNAPSHOT] = "unknown_snapshot",
	[SBX_E_SEED_FAILED] = "seed_failed",
};

const char *
sbx_code_name(enum sbx_code code)
{
	if ((unsigned)code >= SBX_CODE_MAX)
		return "internal";
	return code_names[code];
}

static const char *const req_names[SBX_REQ_MAX] = {
	[SBX_REQ_PING] = "ping",
	[SBX_REQ_AVAILABLE] = "available",
	[SBX_REQ_SANDBOX] = "request_sandbox",
	[SBX_REQ_RELEASE] = "release",
	[SBX_REQ_STATUS] = "status",
	[SBX_REQ_RESET] = "reset",
	[SBX_REQ_SNAPSHOT] = "snapshot",
};

const char *
sbx_req_name(int type)
{
	if (type <= 0 || type >= SBX_REQ_MAX)
		return "unknown";
	return req_names[type];
}
