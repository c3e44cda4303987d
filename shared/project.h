/*
 * project.h - project policies from projects.d/<slug>.conf.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 */
#ifndef SBX_PROJECT_H
#define SBX_PROJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "msg.h"

#define PROJECT_MAX_UIDS	256

struct project {
	char		slug[SBX_SLUG_MAX];
	bool		valid;		/* false: file unreadable or invalid */
	char		why[SBX_MESSAGE_MAX];	/* invalid: file:line: cause */
	size_t		nservices;	/* the opted-in set, config order */
	char		services[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	/* postgres_seed: its file's name in the projects directory (a slug),
	 * or "". The reload that read it copied it to
	 * state_dir/seeds/<slug>.sql, which provisions apply. */
	char		seed[SBX_SLUG_MAX];
	uint64_t	seed_sum;	/* its copy's content, for pools */
	unsigned	warm;		/* sandboxes of the full set kept ready */
	unsigned	warm_max;	/* up to which demand grows it */
	unsigned	warm_idle;	/* seconds a peak of demand is kept */
	bool		anyone;		/* no allow_users / allow_groups */
	size_t		nuids;		/* allowed uids */
	uid_t		uids[PROJECT_MAX_UIDS];
};

struct project_table {
	size_t		 n;
	struct project	*v;		/* sorted by slug */
};

void	projects_free(struct project_table *);
/* The table's order (by slug), for qsort and bsearch. */
int	project_slug_cmp(const void *, const void *);
const struct project *project_find(const struct project_table *,
	    const char *slug);
bool	project_allows(const struct project *, uid_t);
/* service is in the project's opted-in set. */
bool	project_offers(const struct project *, const char *service);

#endif
