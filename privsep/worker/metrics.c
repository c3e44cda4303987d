/*
 * metrics.c - JOB_METRICS: the monitor's counters (struct metrics_snap)
 * in Prometheus' text exposition format, as a file.
 * runs in: sbx-worker's JOB_METRICS (root: the open and the rename; the
 *   formatting in a child that drops to sbx-job, jobuser.c), runtime deny
 *   filter
 *
 * Root makes PATH.tmp; a child that dropped to sbx-job writes the
 * exposition into it (metrics_fmt.c); root renames it into place if the
 * child exited 0, so the collector never reads half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "iox.h"
#include "jobuser.h"
#include "log.h"
#include "metrics.h"
#include "metrics_fmt.h"
#include "metrics_snap.h"
#include "slug.h"

struct format_work {
	const struct metrics_snap	*m;
	int				 out;	/* PATH.tmp */
};

/* Every name a label: ended within its field and a slug's characters,
 * as the monitor's own services are. */
static int
snap_valid(const struct metrics_snap *m)
{
	uint32_t i;

	if (memchr(m->path, '\0', sizeof(m->path)) == NULL ||
	    m->path[0] != '/' || m->nservices > SBX_MAX_SERVICES)
		return 0;
	for (i = 0; i < m->nservices; i++)
		if (memchr(m->svc[i].name, '\0', SBX_SLUG_MAX) == NULL ||
		    strspn(m->svc[i].name, SLUG_BYTES) !=
		    strlen(m->svc[i].name))
			return 0;
	return 1;
}

/* As sbx-job: the exposition into the file root opened. */
static int
format_out(void *arg)
{
	const struct format_work *w = arg;
	FILE *f;
	int bad;

	if ((f = fdopen(w->out, "w")) == NULL)
		return 1;
	bad = metrics_format(f, w->m) == -1;
	return fclose(f) != 0 || bad;
}

int
metrics_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	static struct metrics_snap snap;
	struct format_work w = { .m = &snap, .out = -1 };
	const struct metrics_snap *m = &snap;
	char tmp[CFG_STR + 8];
	uint32_t code = SBX_E_INTERNAL;
	int rc;

	(void)cfg;
	/* Aligned: the body follows the job's head and env in the memfd. */
	memcpy(&snap, job, len);
	/* Root writes in the collector's directory: PATH.tmp is made anew,
	 * never followed if it is a link someone put there. */
	if (!snap_valid(m) || snprintf(tmp, sizeof(tmp), "%s.tmp",
	    m->path) >= (int)sizeof(tmp) || (unlink(tmp) == -1 &&
	    errno != ENOENT) || (w.out = open(tmp, O_WRONLY | O_CREAT |
	    O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) == -1) {
		log_debug("metrics: cannot write %s.tmp", m->path);
		return write_all(fd, &code, sizeof(code), now_ms() + 1000) ==
		    0 ? 0 : 1;
	}
	/* The child's exit says whether all of it was written; only then
	 * is it renamed into place. A child that did not drop said why, and
	 * the job fails. */
	if ((rc = jobuser_fork(fd, format_out, &w)) != 0)
		unlink(tmp);
	else if (rename(tmp, m->path) == -1) {
		log_warn("metrics: %s", m->path);
		unlink(tmp);
	} else
		code = SBX_OK;
	close(w.out);
	if (write_all(fd, &code, sizeof(code), now_ms() + 1000) == -1)
		return 1;
	return rc != 0;
}
