/*
 * reload.c - the projects and the subordinate uids, read by a worker
 * (JOB_RELOAD): waited for at start, in the loop's background on SIGHUP.
 * runs in: the monitor (root, monitor allowlist once started): at its start,
 *   and in its loop on SIGHUP
 *
 * The worker sends both tables back as one fixed-size result; the
 * monitor checks every count and string before it takes them, as it
 * would from anyone: a project names only slugs, and only services that
 * sbx.conf offers.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "reload.h"
#include "service.h"
#include "slug.h"

#define RELOAD_DEADLINE_MS	60000

struct reload_job {
	const struct sbx_config	*cfg;
	reload_done		 done;
	void			*arg;
};

static bool
project_valid(const struct sbx_config *cfg, const struct project *p,
    const struct project *prev)
{
	size_t i;

	static const char none[SBX_SLUG_MAX];

	if (!slug_field_valid(p->slug, sizeof(p->slug)) ||
	    memchr(p->why, '\0', sizeof(p->why)) == NULL ||
	    (memcmp(p->seed, none, sizeof(none)) != 0 &&
	    !slug_field_valid(p->seed, sizeof(p->seed))) ||
	    p->nservices > SBX_MAX_SERVICES || p->nuids > PROJECT_MAX_UIDS ||
	    (p->valid && (p->warm > p->warm_max ||
	    p->warm_max > POOL_MAX_WARM || p->warm_idle == 0 ||
	    p->warm_idle > WARM_IDLE_MAX)) ||
	    (prev != NULL && strcmp(prev->slug, p->slug) >= 0))
		return false;	/* project_find() needs them sorted */
	for (i = 0; i < p->nservices; i++)
		if (!slug_field_valid(p->services[i], SBX_SLUG_MAX) ||
		    config_service(cfg, p->services[i]) == NULL)
			return false;
	return true;
}

bool
reload_result_valid(const struct sbx_config *cfg, const struct reload_result *r)
{
	uint32_t i;

	if (r->magic != RELOAD_MAGIC || r->nprojects > RELOAD_MAX_PROJECTS ||
	    r->nranges > SUBUID_MAX_RANGES ||
	    memchr(r->err, '\0', sizeof(r->err)) == NULL ||
	    (r->subuid_ok && !subrange_valid(r->ranges, r->nranges)))
		return false;
	for (i = 0; i < r->nprojects; i++)
		if (!project_valid(cfg, &r->projects[i],
		    i ? &r->projects[i - 1] : NULL))
			return false;
	return true;
}

static void *
copy_of(const void *v, size_t n, size_t size)
{
	void *c;

	if (n == 0 || (c = calloc(n, size)) == NULL)
		return NULL;
	return memcpy(c, v, n * size);
}

static void
reloaded(void *arg, const void *result, size_t len)
{
	struct reload_job *j = arg;
	const struct reload_result *r = result;
	struct project_table pt = { 0 }, *pp = NULL;
	struct subuid_table st = { 0 }, *sp = NULL;

	if (r == NULL || len != sizeof(*r) || !reload_result_valid(j->cfg, r)) {
		log_warnx("reload: its worker gave no valid result");
		j->done(j->arg, NULL, NULL, NULL);
		free(j);
		return;
	}
	/* Out of memory for a copy is "not read": never an empty table. */
	pt.n = r->nprojects;
	if (r->projects_ok && (pt.n == 0 ||
	    (pt.v = copy_of(r->projects, pt.n, sizeof(*pt.v))) != NULL))
		pp = &pt;
	st.n = st.cap = r->nranges;
	st.skipped = (size_t)r->skipped;
	if (r->subuid_ok && (st.n == 0 ||
	    (st.v = copy_of(r->ranges, st.n, sizeof(*st.v))) != NULL))
		sp = &st;
	j->done(j->arg, pp, sp, sp == NULL && r->subuid_ok ? "out of memory" :
	    r->err);
	free(j);
}

static struct reload_job *
job_new(const struct sbx_config *cfg, reload_done done, void *arg)
{
	struct reload_job *j;

	if ((j = calloc(1, sizeof(*j))) != NULL)
		*j = (struct reload_job){ cfg, done, arg };
	return j;
}

int
reload_spawn(struct worker_pool *pool, const struct sbx_config *cfg,
    reload_done done, void *arg)
{
	struct reload_job *j;

	if ((j = job_new(cfg, done, arg)) == NULL)
		return -1;
	if (worker_spawn(pool, JOB_RELOAD, UINT32_MAX, NULL, 0,
	    sizeof(struct reload_result), now_ms() + RELOAD_DEADLINE_MS,
	    reloaded, j) == -1) {
		free(j);
		return -1;
	}
	return 0;
}

void
reload_wait(const struct sbx_config *cfg, reload_done done, void *arg)
{
	struct reload_job *j;
	struct stat st;
	void *r = NULL;
	int fd;

	if ((j = job_new(cfg, done, arg)) == NULL)
		fatal("reload");
	if ((fd = memfd_create("sbx-reload", MFD_CLOEXEC)) == -1)
		fatal("memfd_create");
	if (worker_spawn_wait(JOB_RELOAD, UINT32_MAX, NULL, 0, fd, now_ms() +
	    RELOAD_DEADLINE_MS) == 0 && fstat(fd, &st) == 0 &&
	    st.st_size == (off_t)sizeof(struct reload_result) &&
	    (r = mmap(NULL, sizeof(struct reload_result), PROT_READ,
	    MAP_PRIVATE, fd, 0)) == MAP_FAILED)
		r = NULL;
	close(fd);
	reloaded(j, r, r != NULL ? sizeof(struct reload_result) : 0);
	if (r != NULL)
		munmap(r, sizeof(struct reload_result));
}
