/*
 * session_keeper.h - the keeper's password as a session child reads it
 * (session_keeper.c).
 * runs in: a session child (svc_session.c's session_child), after its drop
 *   and before its session allowlist: the sandbox's prober uid, not
 *   dumpable
 */
#ifndef SBX_SESSION_KEEPER_H
#define SBX_SESSION_KEEPER_H

#include <stddef.h>

struct session_env;

/* e's keeper_pw from the socket directory's keep/pg.secret, for a
 * postgres reached in its socket directory; "" if there is none, or if
 * it is not a password of ours (logged). */
void	session_keeper_read(struct session_env *e);
/* The keeper's password as read from fd's text (n bytes): exactly
 * KEEPER_PW_LEN lowercase hex digits, a newline allowed after. 0 and
 * out filled, or -1 and out "". */
int	keeper_pw_parse(const char *text, size_t n, char *out, size_t cap);

#endif
