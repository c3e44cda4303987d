/*
 * busy.h - the broker's own busy replies, for a connection past a limit:
 * {ok: false, error: "busy", message: ..., retry_after_ms: N}, encoded
 * once by hand-checked msgpack so the parent never runs the encoder
 * (test_wire unpacks both).
 * runs in: the broker (broker user, broker allowlist)
 *
 * The message names the limit, since only one of them is worth retrying
 * soon for this uid; retry_after_ms is the hint of docs/protocol.md,
 * "Errors": a connection of one's own ends within a request, the host's
 * within a few.
 */
#ifndef SBX_BUSY_H
#define SBX_BUSY_H

#define BUSY_ALL	"too many connections, try again soon"
#define BUSY_UID	"too many connections open for your uid, " \
			"close one or try again later"
#define BUSY_ALL_RETRY_MS	500
#define BUSY_UID_RETRY_MS	200
#define BUSY_HEAD	"\x84\xa2ok\xc2\xa5" "error" "\xa4" "busy" "\xa7" \
			"message" "\xd9"
#define BUSY_RETRY	"\xae" "retry_after_ms"

/* 500 as a msgpack uint16, 200 as a uint8 */
static const char busy_all_reply[] = BUSY_HEAD "\x24" BUSY_ALL BUSY_RETRY
	"\xcd\x01\xf4";
static const char busy_uid_reply[] = BUSY_HEAD "\x44" BUSY_UID BUSY_RETRY
	"\xcc\xc8";
_Static_assert(sizeof(BUSY_ALL) - 1 == 0x24, "str8 length of BUSY_ALL");
_Static_assert(sizeof(BUSY_UID) - 1 == 0x44, "str8 length of BUSY_UID");
_Static_assert(sizeof(BUSY_RETRY) - 1 == 15, "fixstr retry_after_ms");
_Static_assert(BUSY_ALL_RETRY_MS == 0x01f4, "busy_all_reply's uint16");
_Static_assert(BUSY_UID_RETRY_MS == 0xc8, "busy_uid_reply's uint8");

#endif
