/*
 * pack.h - the few msgpack writes both processes make: the broker child's
 * error reply to a request it could not decode, and every reply of the
 * monitor (privsep/monitor/answer.c).
 * runs in: the monitor's loop (root, monitor allowlist) and the broker's
 *   children (broker user, broker and child allowlists)
 *
 * msgpack-c's packer is inline code in its headers: neither links the
 * library for it, and the monitor links no msgpack-c object at all, so it
 * has no unpacker to call.
 */
#ifndef SBX_PACK_H
#define SBX_PACK_H

#include <msgpack/pack.h>
#include <msgpack/sbuffer.h>

#include "msg.h"

void	pack_str(msgpack_packer *, const char *);
void	pack_kv_str(msgpack_packer *, const char *key, const char *value);
/* {ok: false, error: CODE, message: "..."} */
void	pack_error(msgpack_packer *, enum sbx_code, const char *message);
/* The same with retry_after_ms: how long to wait before asking again
 * (busy; docs/protocol.md, "Errors"). */
void	pack_error_retry(msgpack_packer *, enum sbx_code, const char *message,
	    uint32_t retry_after_ms);

#endif
