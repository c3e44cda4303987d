/*
 * reload.c - JOB_RELOAD: the projects and the subordinate uids, read as
 * root's files and sent back as one fixed-size reload_result, which the
 * monitor checks before it takes anything of it (privsep/monitor/reload.c).
 * runs in: sbx-worker's JOB_RELOAD (root: the opens, the seeds' copies and
 *   the result; the parse in a child that drops to sbx-job, jobuser.c),
 *   runtime deny filter
 *
 * Root opens the files (jobfiles.c); a child that dropped to sbx-job
 * parses them, with the NSS lookups of allow_groups and allow_users, out
 * of the loop, into memory shared with us. Root then makes the copies of
 * the projects' seeds that provisions apply (seeds.c): a project whose
 * seed cannot be copied goes to the monitor invalid.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "config.h"
#include "iox.h"
#include "job.h"
#include "jobfiles.h"
#include "jobuser.h"
#include "log.h"
#include "project.h"
#include "projects.h"
#include "reload.h"
#include "seeds.h"
#include "slug.h"
#include "subuid.h"
#include "subuid_parse.h"

#define RELOAD_DEADLINE_MS	60000

struct reload_work {
	const struct sbx_config	*cfg;
	struct job_files	 files;
	struct reload_result	*r;	/* shared with the child */
};

/* As sbx-job: the files into the shared result. */
static int
reload_parse(void *arg)
{
	struct reload_work *w = arg;
	struct reload_result *r = w->r;
	struct project_table pt;
	struct subuid_table st;

	r->projects_ok = projects_parse(w->cfg, &w->files, &pt, false) == 0;
	if (pt.n > RELOAD_MAX_PROJECTS) {
		log_warnx("reload: %zu projects, more than %d", pt.n,
		    RELOAD_MAX_PROJECTS);
		return 1;	/* a short result */
	}
	r->nprojects = (uint32_t)pt.n;
	if (pt.n > 0)
		memcpy(r->projects, pt.v, pt.n * sizeof(*pt.v));
	projects_free(&pt);
	if (subuid_parse(&w->files, w->cfg->subuid_file, &st, r->err,
	    sizeof(r->err)) == 0 && st.n <= SUBUID_MAX_RANGES) {
		r->subuid_ok = 1;
		r->nranges = (uint32_t)st.n;
		r->skipped = st.skipped;
		if (st.n > 0)
			memcpy(r->ranges, st.v, st.n * sizeof(*st.v));
	}
	subuid_free(&st);
	return 0;
}

/* What root makes file names of, from the child: slugs, seeds' names
 * that end. The monitor checks the rest. */
static int
table_sound(const struct reload_result *r)
{
	const struct project *p;
	uint32_t i;

	if (r->nprojects > RELOAD_MAX_PROJECTS)
		return 0;
	for (i = 0, p = r->projects; i < r->nprojects; i++, p++)
		if (!memchr(p->slug, '\0', sizeof(p->slug)) ||
		    !slug_valid(p->slug, strlen(p->slug)) ||
		    !memchr(p->seed, '\0', sizeof(p->seed)))
			return 0;
	return 1;
}

int
reload_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct reload_work w = { .cfg = cfg };
	struct reload_result *r;
	struct project_table pt;
	int rc;

	(void)job;
	(void)len;
	if ((r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return 1;	/* a short result: the monitor says so */
	w.r = r;
	(void)job_files_open(cfg->projects, cfg->subuid_file, &w.files);
	rc = jobuser_fork(fd, reload_parse, &w);
	job_files_close(&w.files);
	if (rc != 0 || !table_sound(r)) {
		munmap(r, sizeof(*r));
		return 1;	/* a short result; the child said why */
	}
	pt.n = r->nprojects;
	pt.v = r->projects;
	if (r->projects_ok && seeds_sync(cfg, &pt) == -1)
		log_warnx("reload: no copy of any project's seed: provisions "
		    "of seeded projects fail");
	r->magic = RELOAD_MAGIC;
	write_all(fd, r, sizeof(*r), now_ms() + RELOAD_DEADLINE_MS);
	munmap(r, sizeof(*r));
	return 0;
}
