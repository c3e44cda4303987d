/*
 * answer.h - what the monitor answers, and the msgpack it writes to the
 * agent's socket for it (docs/contract.md, "Wire protocol").
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * The broker never sees an answer: one request per connection, the
 * monitor's write and its shutdown(2) are the last that happen on the
 * agent's socket.
 */
#ifndef SBX_ANSWER_H
#define SBX_ANSWER_H

#include <stddef.h>

#include "conn.h"
#include "msg.h"

struct sbx_ans {
	uint32_t	type;		/* the request's type */
	uint32_t	code;		/* enum sbx_code */
	uint32_t	released;	/* release: 1 if a sandbox was torn down */
	char		snapshot[SBX_SLUG_MAX];	/* snapshot: its name */
	char		message[SBX_MESSAGE_MAX];
	uint32_t	retry_after_ms;	/* an error: > 0, the reply's hint */
	uint32_t	nservices;	/* available, status: names only; sandbox,
					 * reset: full */
	struct sbx_conn	services[SBX_MAX_SERVICES];
	uint32_t	nstatus;	/* status: at most this many sandboxes */
	uint32_t	status_all;	/* status: of every uid (root asked) */
	uint32_t	status_uid;	/* status: else of this uid only */
	/* status: warm containers ready, for services[i].name (nservices) */
	uint32_t	warm[SBX_MAX_SERVICES];
};

/* One sandbox of a status answer: never a password. */
struct sbx_status_rec {
	uint32_t	uid;
	char		agent[SBX_SLUG_MAX];
	char		project[SBX_SLUG_MAX];
	uint32_t	nservices;
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	uint64_t	age_s;
	uint64_t	idle_s;
	int32_t		bind_pid;	/* 0: none */
};

/* An answer of code and message only (every reply: ok or an error). */
void	answer_init(struct sbx_ans *, enum sbx_req_type, enum sbx_code,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/*
 * The reply's msgpack in a malloc'd buffer (*buf, *len; the caller
 * explicit_bzero()s and frees it: it may hold passwords). -1: no memory.
 */
int	answer_pack(const struct sbx_ans *, const struct sbx_status_rec *recs,
	    size_t nrecs, char **buf, size_t *len);

#endif
