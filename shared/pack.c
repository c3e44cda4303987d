/*
 * pack.c - msgpack strings and the error reply (docs/contract.md, "Errors").
 * runs in: the monitor's loop (root, monitor allowlist) and the broker's
 *   children (broker user, broker and child allowlists)
 */
#include <string.h>

#include "code.h"
#include "pack.h"

void
pack_str(msgpack_packer *pk, const char *s)
{
	size_t n = strlen(s);

	msgpack_pack_str(pk, n);
	msgpack_pack_str_body(pk, s, n);
}

void
pack_kv_str(msgpack_packer *pk, const char *k, const char *v)
{
	pack_str(pk, k);
	pack_str(pk, v);
}

static void
pack_error_head(msgpack_packer *pk, size_t nkeys, enum sbx_code code,
    const char *message)
{
	msgpack_pack_map(pk, nkeys);
	pack_str(pk, "ok");
	msgpack_pack_false(pk);
	pack_kv_str(pk, "error", sbx_code_name(code));
	pack_kv_str(pk, "message", message);
}

void
pack_error(msgpack_packer *pk, enum sbx_code code, const char *message)
{
	pack_error_head(pk, 3, code, message);
}

void
pack_error_retry(msgpack_packer *pk, enum sbx_code code, const char *message,
    uint32_t retry_after_ms)
{
	pack_error_head(pk, 4, code, message);
	pack_str(pk, "retry_after_ms");
	msgpack_pack_uint32(pk, retry_after_ms);
}
