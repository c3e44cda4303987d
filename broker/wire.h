/*
 * wire.h - the agent-facing msgpack protocol (docs/contract.md, "Wire protocol").
 * runs in: the broker's children (broker user, the broker allowlist and the
 *   child's stacked on it), and wire_reader_init in the broker (broker user,
 *   before its allowlist)
 *
 * The decoder, used by the broker child and the fuzzers; never linked into
 * the monitor, which packs replies (privsep/monitor/answer.c) and never unpacks.
 */
#ifndef SBX_WIRE_H
#define SBX_WIRE_H

#include <stddef.h>
#include <msgpack.h>

#include "msg.h"

#define WIRE_MAX_REQUEST	(64 * 1024)
#define WIRE_ERR_MAX		SBX_MESSAGE_MAX

enum wire_status {
	WIRE_OK,	/* one request decoded into the message */
	WIRE_MORE,	/* the map is not complete yet */
	WIRE_BAD,	/* malformed: err says why */
};

struct wire_reader {
	msgpack_unpacker up;
	size_t		 total;
};

int		 wire_reader_init(struct wire_reader *);
void		 wire_reader_free(struct wire_reader *);
/* Room for the next read(); NULL when the 64 KiB budget is spent. */
char		*wire_reader_space(struct wire_reader *, size_t *cap);
enum wire_status wire_reader_feed(struct wire_reader *, size_t n,
		    union sbx_req_any *out, size_t *outlen, char *err);

/* Whole-buffer form, for tests and fuzzers. */
enum wire_status wire_decode(const char *buf, size_t len,
		    union sbx_req_any *out, size_t *outlen, char *err);
enum wire_status wire_validate(const msgpack_object *obj,
		    union sbx_req_any *out, size_t *outlen, char *err);

#endif
