/*
 * code.h - the contract's names for error codes and request ops (code.c).
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_METRICS (root, runtime deny filter), the broker (broker user, broker
 *   allowlist) and its children (broker user, broker and child allowlists)
 */
#ifndef SBX_CODE_H
#define SBX_CODE_H

#include "msg.h"

const char	*sbx_code_name(enum sbx_code);
const char	*sbx_req_name(int type);	/* the op's wire name */

#endif
