/*
 * handle_stub.c - the request handlers, for the tests and the fuzzer of
 * dispatch_valid() alone: dispatch.c's table names them, but nothing there
 * calls one (a call would be a bug in the test, so it aborts).
 */
#include <stdlib.h>

#include "handle.h"

#define STUB(name)							\
void									\
name(const struct handler_env *e, uid_t uid,				\
    const union sbx_req_any *rq, struct sbx_reply r)			\
{									\
	(void)e; (void)uid; (void)rq; (void)r;				\
	abort();							\
}

STUB(handle_ping)
STUB(handle_available)
STUB(handle_sandbox)
STUB(handle_release)
STUB(handle_status)
STUB(handle_reset)
STUB(handle_snapshot)
