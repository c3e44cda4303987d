/*
 * redis_data.h - a reset or a snapshot of a sandbox's redis
 * (redis_data.c).
 * runs in: a session child of JOB_DATA (svc_session.c; the sandbox's prober
 *   uid, not dumpable, session allowlist), a client of the server as the
 *   agent's user, and of its keeper
 */
#ifndef SBX_REDIS_DATA_H
#define SBX_REDIS_DATA_H

struct session_env;

/* A session_fn (svc_session.h), arg a struct data_req (data.h). */
void	redis_data_session(const struct session_env *, void *arg);

#endif
