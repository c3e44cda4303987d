/*
 * audit.h - the audit trail: one log line per sandbox event, for an admin
 * to grep in syslog (or on stderr with -d).
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 *
 * For example:
 *
 *   audit event=provision uid=1000 agent=a1 project=demo
 *       services=postgres,redis result=ok ms=812
 *
 * Keys come in that order; every value is a slug, a number, a code name
 * of the contract or "-", so a line splits on spaces.  Events: provision,
 * hit, evict, release, expire, refuse (every error answer the monitor
 * gives), adopt and discard (at start: a sandbox that outlived the last
 * monitor is kept, or torn down with reason=...), revoke (SIGHUP: the
 * project no longer offers the sandbox, or some of its services, to its
 * uid).  A line never holds a password: none of these functions is ever
 * handed one.
 */
#ifndef SBX_AUDIT_H
#define SBX_AUDIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"
#include "msg.h"

enum audit_event {
	AUDIT_PROVISION,
	AUDIT_HIT,
	AUDIT_EVICT,
	AUDIT_RELEASE,
	AUDIT_EXPIRE,
	AUDIT_REFUSE,
	AUDIT_ADOPT,
	AUDIT_DISCARD,
	AUDIT_REVOKE,
	AUDIT_RESET,
	AUDIT_SNAPSHOT,
};

/*
 * One line.  agent and project may be NULL, services NULL with n == 0
 * (written as "-").  fmt (never NULL) adds " key=value..." after result.
 */
void	audit(enum audit_event, uid_t, const char *agent, const char *project,
	    const char (*services)[SBX_SLUG_MAX], size_t n, enum sbx_code,
	    const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* The same for a cache entry: its uid, agent, project and service set. */
void	audit_sandbox(enum audit_event, const struct sbx_sandbox *,
	    enum sbx_code, const char *fmt, ...)
	    __attribute__((format(printf, 4, 5)));

/* A refused request: audit(AUDIT_REFUSE, ...) with op=NAME. */
void	audit_refuse(enum sbx_req_type, uid_t, const char *agent,
	    const char *project, const char (*services)[SBX_SLUG_MAX],
	    size_t n, enum sbx_code);

/* From the loop: report the refusal lines a window dropped. */
void	audit_tick(int64_t now);

#endif /* SBX_AUDIT_H */
