/*
 * seed.h - a seeded project's postgres at its provision, and an unseeded
 * warm one's first copy (seed.c; the rules of the seed files and the
 * reload's copies are seeds.h's, the session child's side
 * seed_session.h's).
 * runs in: a provision's service children and JOB_WARM_START (root, runtime
 *   deny filter)
 */
#ifndef SBX_SEED_H
#define SBX_SEED_H

#include <stddef.h>
#include <stdint.h>

struct sbx_config;
struct svc_reach;

/*
 * The provision's seed: state_dir/seeds/<project>.sql run as one
 * implicit transaction by the agent's role in its database, then
 * copied to sbx_origin, the hand-out state a reset returns to. On
 * failure res_code is SBX_E_SEED_FAILED (or another code) and msg says
 * "<seed>:<line>: <postgres's primary message>".
 */
int	seed_apply(const struct sbx_config *, const char *project,
	    const char *seed, const struct svc_reach *, int64_t deadline,
	    uint32_t *res_code, char *msg, size_t msglen);

/* A warm postgres with no seed: the copy of template1 its first reset
 * swaps in (pg_data.c makes it for the next ones). A failure is logged:
 * that reset makes its own copy. */
void	seed_first_copy(const struct svc_reach *, int64_t deadline);

#endif
