/*
 * msg.h - the fixed-form messages from a broker child to the monitor
 * (types alone; the codes' and ops' names are code.h's).
 * runs in: the broker's children (broker user, broker and child allowlists),
 *   which build these messages, and the monitor's loop (root, monitor
 *   allowlist), which checks them; their limits and codes also in the broker
 *   (broker user, broker allowlist), sbx-worker jobs and their children
 *   (root, runtime deny filter) and session children (the sandbox's prober
 *   uid, session allowlist)
 *
 * Nothing here is msgpack: the broker child decodes the agent's request and
 * hands over one of these structs. Every field is fixed width and every
 * string is NUL-terminated inside its array, so the monitor can validate a
 * message with a size compare and a memchr per field, and never follows a
 * length it did not check.
 *
 * Request (child -> monitor, SOCK_SEQPACKET broker channel):
 *   struct sbx_msg_hdr + type-specific body, exactly sizeof() bytes,
 *   plus exactly one fd: the agent's socket. The child exits then.
 *
 * Answer: none to the child. The monitor packs the msgpack reply itself,
 * writes it to the agent's socket and shuts that socket down (one request
 * per connection, privsep/monitor/answer.h), so no password passes the broker.
 */
#ifndef SBX_MSG_H
#define SBX_MSG_H

#include <stdint.h>

/* -DSBX_VERSION='"x.y.z"': GNUmakefile's VERSION, sbx's only one. */
#ifndef SBX_VERSION
#error "SBX_VERSION is GNUmakefile's VERSION, passed with -D"
#endif

#define SBX_SLUG_MAX		64	/* 63 chars + NUL */
#define SBX_MAX_SERVICES	16
#define SBX_HOST_MAX		108	/* 127.0.0.1, or a socket directory */
#define SBX_SOCKET_MAX		108	/* sun_path */
#define SBX_SECRET_MAX		64	/* 128-bit secrets, hex: 32 chars */
#define SBX_MESSAGE_MAX		160
#define SBX_REQ_FDS		1	/* the agent's socket */

#define SBX_MSG_MAGIC		0x73627831u	/* "sbx1" */

enum sbx_req_type {
	SBX_REQ_PING = 1,
	SBX_REQ_AVAILABLE,
	SBX_REQ_SANDBOX,
	SBX_REQ_RELEASE,
	SBX_REQ_STATUS,
	SBX_REQ_RESET,
	SBX_REQ_SNAPSHOT,
	SBX_REQ_MAX
};

/* Error codes of the contract, in its order; SBX_OK is success. */
enum sbx_code {
	SBX_OK = 0,
	SBX_E_BAD_REQUEST,
	SBX_E_DISABLED,
	SBX_E_UNKNOWN_PROJECT,
	SBX_E_NOT_OPTED_IN,
	SBX_E_FORBIDDEN,
	SBX_E_CONFLICT,
	SBX_E_RUNTIME_FAILED,
	SBX_E_TIMEOUT,
	SBX_E_BUSY,
	SBX_E_INTERNAL,
	SBX_E_NO_SANDBOX,	/* reset, snapshot: none held for that agent */
	SBX_E_UNKNOWN_SNAPSHOT,
	SBX_E_SEED_FAILED,
	SBX_CODE_MAX
};

struct sbx_msg_hdr {
	uint32_t	magic;
	uint32_t	type;		/* enum sbx_req_type */
};

struct sbx_req_ping {
	struct sbx_msg_hdr hdr;
};

struct sbx_req_available {
	struct sbx_msg_hdr hdr;
	char		project[SBX_SLUG_MAX];
};

struct sbx_req_sandbox {
	struct sbx_msg_hdr hdr;
	char		agent[SBX_SLUG_MAX];
	char		project[SBX_SLUG_MAX];
	uint32_t	nservices;
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	int32_t		bind_pid;	/* a process of the caller's, or 0 */
};

struct sbx_req_release {
	struct sbx_msg_hdr hdr;
	char		agent[SBX_SLUG_MAX];
};

struct sbx_req_status {
	struct sbx_msg_hdr hdr;
};

/* Every session ended; back to the hand-out state, or to snapshot "to". */
struct sbx_req_reset {
	struct sbx_msg_hdr hdr;
	char		agent[SBX_SLUG_MAX];
	char		to[SBX_SLUG_MAX];	/* a snapshot's name, or "" */
};

/* The sandbox's state saved under name (replacing one of that name). */
struct sbx_req_snapshot {
	struct sbx_msg_hdr hdr;
	char		agent[SBX_SLUG_MAX];
	char		name[SBX_SLUG_MAX];
};

/* The largest request; the monitor's receive buffer is one byte larger so
 * that an oversized message is seen as such rather than truncated. */
union sbx_req_any {
	struct sbx_msg_hdr	 hdr;
	struct sbx_req_ping	 ping;
	struct sbx_req_available available;
	struct sbx_req_sandbox	 sandbox;
	struct sbx_req_release	 release;
	struct sbx_req_status	 status;
	struct sbx_req_reset	 reset;
	struct sbx_req_snapshot	 snapshot;
};

#endif /* SBX_MSG_H */
