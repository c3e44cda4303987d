/*
 * seed.h - a project's postgres_seed: the file's rules and the copies the
 * reload keeps (seeds.c), and its application at a provision (seed.c;
 * its session child's side is seed_session.h).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter)
 */
#ifndef SBX_SEED_H
#define SBX_SEED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "job.h"
#include "project.h"

#define SEED_MAX	(64u << 20)	/* a seed file, at most */
#define SEED_DIR	"seeds"		/* in state_dir, root's, 0700 */

/* A seed file's name: a slug (no slash, no dot first) that cannot be
 * taken for a project file (<slug>.conf). */
bool	seed_name_valid(const char *name);
/* dir/name opened for reading if it is held to a project file's rules
 * (a regular file, not a link, root's, written by root alone) and at most
 * SEED_MAX bytes; its size in *size. -1 with one cause in err. */
int	seed_open(const char *dir, const char *name, uint64_t *size,
	    char *err, size_t errlen);
/* The same rules on a file already open (fd), named name in err. */
int	seed_check(int fd, const char *name, uint64_t *size, char *err,
	    size_t errlen);
/* The reload's copies: state_dir/seeds/<project>.sql for each valid
 * project with a seed, none for the others. A project whose seed cannot
 * be copied is made invalid, with why. 0, or -1 (the directory). */
int	seeds_sync(const struct sbx_config *, struct project_table *);

struct svc_reach;

/*
 * The provision's seed (seed.c): state_dir/seeds/<project>.sql run as
 * one implicit transaction by the agent's role in its database, then
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
