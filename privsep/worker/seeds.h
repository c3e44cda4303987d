/*
 * seeds.h - postgres_seed files: their rules, and the copies that the
 * reload keeps in state_dir/seeds (seeds.c).
 * runs in: sbx-worker's JOB_RELOAD (root: the copies; seed_check also in
 *   its child that dropped to sbx-job, job allowlist), JOB_CONFIG's check
 *   and its runtime jobs (root, runtime deny filter)
 */
#ifndef SBX_SEEDS_H
#define SBX_SEEDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SEED_MAX	(64u << 20)	/* a seed file, at most */
#define SEED_DIR	"seeds"		/* in state_dir, root's, 0700 */

struct project_table;
struct sbx_config;

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

#endif
