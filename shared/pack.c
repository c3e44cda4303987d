/* pack.c - msgpack strings and the error reply (docs/contract.md, "Errors"). */
#include <string.h>

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

void
pack_error(msgpack_packer *pk, enum sbx_code code, const char *message)
{
	msgpack_pack_map(pk, 3);
	pack_str(pk, "ok");
	msgpack_pack_false(pk);
	pack_kv_str(pk, "error", sbx_code_name(code));
	pack_kv_str(pk, "message", message);
}
