/*
 * reload.c - SIGHUP's projects and subordinate uids, read in a worker.
 * runs in: reload_body in an exec'd worker (helper.c; root, runtime deny
 * filter); the rest in the monitor's loop
 *
 * The worker reads as start-up does (projects_load, subuid_load) and
 * sends both tables back as one fixed-size result; the monitor checks
 * every count and string before it takes them, as it would from anyone.
 */
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "reload.h"

#define RELOAD_DEADLINE_MS	60000

struct reload_job {
	reload_done		 done;
	void			*arg;
};

static bool
project_ok(const struct project *p, const struct project *prev)
{
	size_t i;

	if (memchr(p->slug, '\0', sizeof(p->slug)) == NULL ||
	    p->nservices > SBX_MAX_SERVICES || p->nuids > PROJECT_MAX_UIDS ||
	    (prev != NULL && strcmp(prev->slug, p->slug) >= 0))
		return false;	/* project_find() needs them sorted */
	for (i = 0; i < p->nservices; i++)
		if (memchr(p->services[i], '\0', SBX_SLUG_MAX) == NULL)
			return false;
	return true;
}

static bool
result_ok(const struct reload_result *r)
{
	uint32_t i;

	if (r->magic != RELOAD_MAGIC || r->nprojects > RELOAD_MAX_PROJECTS ||
	    r->nranges > SUBUID_MAX_RANGES ||
	    memchr(r->err, '\0', sizeof(r->err)) == NULL ||
	    (r->subuid_ok && !subrange_valid(r->ranges, r->nranges)))
		return false;
	for (i = 0; i < r->nprojects; i++)
		if (!project_ok(&r->projects[i], i ? &r->projects[i - 1] : NULL))
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

	if (r == NULL || len != sizeof(*r) || !result_ok(r)) {
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

int
reload_spawn(struct worker_pool *pool, reload_done done, void *arg)
{
	struct reload_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	*j = (struct reload_job){ done, arg };
	if (worker_spawn(pool, JOB_RELOAD, UINT32_MAX, NULL, 0,
	    sizeof(struct reload_result), now_ms() + RELOAD_DEADLINE_MS,
	    reloaded, j) == -1) {
		free(j);
		return -1;
	}
	return 0;
}
