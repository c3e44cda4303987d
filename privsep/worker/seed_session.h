/*
 * seed_session.h - the session child that runs a provision's seed and
 * keeps that state for resets, and the one that makes an unseeded warm
 * postgres's copy for its first reset (seed_session.c); seed.c starts
 * them.
 * runs in: the session child of a seed or a first copy (seed.c), after its
 *   drop: the sandbox's prober uid, not dumpable, session allowlist
 */
#ifndef SBX_SEED_SESSION_H
#define SBX_SEED_SESSION_H

#include <stdbool.h>
#include <stddef.h>

struct session_env;

/* What seed_session is given: the reload's copy of the seed, read by
 * seed.c. */
struct seed_job {
	const char	*name;		/* the seed file's, for the message */
	const char	*text;		/* NUL-ended */
	size_t		 len;
};

/* The line (from 1) of a 1-based character position in text: what
 * PG_DIAG_STATEMENT_POSITION counts, in characters of UTF-8 (bytes when
 * bytes is set: a SQL_ASCII server); 0 if pos is not in text. */
unsigned long seed_line(const char *text, size_t len, unsigned long pos,
	    bool bytes);

/* A session_fn (svc_session.h), arg a struct seed_job: the seed run as one
 * implicit transaction by the agent's role in its database, then copied
 * to sbx_origin and sbx_next_origin as the keeper role; one report, "seeded"
 * or the failure. */
void	seed_session(const struct session_env *, void *arg);
/* A session_fn, arg unused: sbx_next_origin copied from template1 as the
 * keeper role; one report, SBX_OK or not. */
void	seed_session_first_copy(const struct session_env *, void *arg);

#endif
