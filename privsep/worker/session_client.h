/*
 * session_client.h - a session child's side of its session, after its
 * drop (session_client.c): libpq and hiredis to the service, its reports
 * to the parent and the parent's bytes.
 * runs in: a session child of JOB_DATA, JOB_RESIDENT, JOB_WARM_START and a
 *   provision's service children, after its drop: the sandbox's prober
 *   uid, not dumpable, session allowlist
 */
#ifndef SBX_SESSION_CLIENT_H
#define SBX_SESSION_CLIENT_H

#include <stdint.h>

#include <hiredis/hiredis.h>
#include <libpq-fe.h>

#include "job.h"

struct session_env;

/* A report to the parent; the parent's next byte (-1 on EOF: the parent
 * said all it will). */
int	session_report(uint32_t code, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
int	session_wait(void);
/* In a kept session: the next ask, whole and sound (op known, the
 * snapshot "" or a slug and not "" to save, max in range: svc_session.h's
 * data_ask_valid); -1 when the parent is gone or sent anything else. */
int	session_ask(struct data_ask *);

/* libpq (loaded now: pq.h) to dbname as r's user, or NULL (logged). */
PGconn	*session_pg(const struct session_env *, const char *dbname);
/* libpq to database postgres as the keeper role, or as r's user where
 * the server has no keeper (no socket directory), or NULL (logged). */
PGconn	*session_pg_keeper(const struct session_env *);
/* hiredis, authenticated as r's user, or NULL (logged). */
redisContext *session_redis(const struct session_env *);
/* hiredis on the keeper server (socket directory's keep/redis.sock), or
 * NULL (logged; none without a socket directory). */
redisContext *session_redis_keeper(const struct session_env *);

#endif
