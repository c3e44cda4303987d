/*
 * reload.c - JOB_RELOAD: the projects and the subordinate uids, read as
 * root's files and sent back as one fixed-size reload_result, which the
 * monitor checks before it takes anything of it (privsep/monitor/reload.c).
 * runs in: sbx-worker's JOB_RELOAD (root, runtime deny filter)
 *
 * Here run the NSS lookups of allow_groups and allow_users, out of the
 * loop, and the copies of the projects' seeds that provisions apply
 * (seeds.c): a project whose seed cannot be copied goes to the monitor
 * invalid.
 */
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "seed.h"
#include "work.h"

#define RELOAD_DEADLINE_MS	60000

int
reload_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct reload_result *r;
	struct project_table pt;
	struct subuid_table st;

	(void)job;
	(void)len;
	if ((r = calloc(1, sizeof(*r))) == NULL)
		return 1;	/* a short result: the monitor says so */
	r->projects_ok = projects_load(cfg, &pt, false) == 0;
	if (r->projects_ok && seeds_sync(cfg, &pt) == -1)
		log_warnx("reload: no copy of any project's seed: provisions "
		    "of seeded projects fail");
	if (pt.n > RELOAD_MAX_PROJECTS) {
		log_warnx("reload: %zu projects, more than %d", pt.n,
		    RELOAD_MAX_PROJECTS);
		projects_free(&pt);
		free(r);
		return 1;	/* a short result */
	}
	r->magic = RELOAD_MAGIC;
	r->nprojects = (uint32_t)pt.n;
	if (pt.n > 0)
		memcpy(r->projects, pt.v, pt.n * sizeof(*pt.v));
	if (subuid_load(cfg->subuid_file, &st, r->err, sizeof(r->err)) == 0 &&
	    st.n <= SUBUID_MAX_RANGES) {
		r->subuid_ok = 1;
		r->nranges = (uint32_t)st.n;
		r->skipped = st.skipped;
		if (st.n > 0)
			memcpy(r->ranges, st.v, st.n * sizeof(*st.v));
	}
	write_all(fd, r, sizeof(*r), now_ms() + RELOAD_DEADLINE_MS);
	projects_free(&pt);
	subuid_free(&st);
	free(r);
	return 0;
}
