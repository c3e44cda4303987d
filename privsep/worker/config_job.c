/*
 * config_job.c - JOB_CONFIG: sbx.conf for the monitor's start, read here
 * so that libinih, NSS (broker_user) and the parser never run in the
 * monitor, which checks the result it is sent (privsep/monitor/config_take.c); or,
 * for sbx-monitor -t, sbx.conf and every project file checked, each
 * problem said on stderr as file:line: cause.
 * runs in: sbx-worker's JOB_CONFIG (root: the opens and the result; the
 *   parse in a child that drops to sbx-job, jobuser.c), runtime deny filter
 *
 * Root opens sbx.conf and, for -t, what it names; each parse is a child
 * that dropped to sbx-job first and leaves its answer in memory shared
 * with us. Root only writes that answer to the monitor, which checks it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "config_job.h"
#include "config_parse.h"
#include "iox.h"
#include "job.h"
#include "jobfiles.h"
#include "jobuser.h"
#include "project.h"
#include "projects.h"
#include "subuid.h"
#include "subuid_parse.h"

struct config_work {
	const char		*path;
	int			 fd, open_errno;
	uint32_t		 check;
	struct config_result	*r;	/* shared with the child */
	struct job_files	 files;	/* -t: what sbx.conf names */
};

/* Does /proc hide every uid's processes from the others (hidepid=2,
 * invisible)? podman's and conmon's arguments name a sandbox's uid and
 * agent. */
static uint32_t
proc_hidden(void)
{
	char line[512];
	FILE *f;
	uint32_t hidden = 0;

	if ((f = fopen("/proc/mounts", "re")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "proc /proc proc ", 16) == 0)
			hidden = strstr(line, "hidepid=2") != NULL ||
			    strstr(line, "hidepid=invisible") != NULL;
	fclose(f);
	return hidden;
}

/* As sbx-job: sbx.conf into the shared result. */
static int
parse_conf(void *arg)
{
	struct config_work *w = arg;
	struct config_result *r = w->r;

	r->ok = config_parse(w->fd, w->open_errno, w->path, &r->cfg, r->err,
	    sizeof(r->err)) == 0;
	r->proc_hidden = proc_hidden();
	if (w->check && !r->ok)
		fprintf(stderr, "%s\n", r->err);
	return 0;
}

/* As sbx-job, for -t: every file, every problem; 0 when there is none. */
static int
check_all(void *arg)
{
	struct config_work *w = arg;
	const struct sbx_config *cfg = &w->r->cfg;
	struct project_table pt;
	struct subuid_table st;
	char err[256];
	size_t i;
	int rc = 0;

	if (projects_parse(cfg, &w->files, &pt, true) == -1)
		rc = 1;
	for (i = 0; i < pt.n; i++)
		if (!pt.v[i].valid)
			rc = 1;
	projects_free(&pt);
	if (subuid_parse(&w->files, cfg->subuid_file, &st, err,
	    sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		rc = 1;
	}
	subuid_free(&st);
	return rc;
}

/* -t, once sbx.conf is sound: what it names, opened here, parsed there.
 * The paths come from sbx.conf, root's file, and only end and start at /
 * here: the child that read them checked the rest. */
static int
check_files(int fd, struct config_work *w)
{
	struct sbx_config *cfg = &w->r->cfg;
	int rc;

	if (!memchr(cfg->projects, '\0', sizeof(cfg->projects)) ||
	    !memchr(cfg->subuid_file, '\0', sizeof(cfg->subuid_file)) ||
	    cfg->projects[0] != '/' || cfg->subuid_file[0] != '/')
		return 1;
	(void)job_files_open(cfg->projects, cfg->subuid_file, &w->files);
	rc = jobuser_fork(fd, check_all, w);
	job_files_close(&w->files);
	return rc != 0;
}

int
config_body(int fd, const struct sbx_config *env, const void *job,
    size_t len)
{
	struct job_config j;
	struct config_work w = { .fd = -1 };
	int rc = 1;

	(void)env;
	memcpy(&j, job, len);
	if (memchr(j.path, '\0', sizeof(j.path)) == NULL)
		return 1;
	w.path = j.path;
	w.check = j.check;
	if ((w.r = mmap(NULL, sizeof(*w.r), PROT_READ | PROT_WRITE,
	    MAP_SHARED | MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return 1;
	if ((w.fd = open(j.path, O_RDONLY | O_CLOEXEC)) == -1)
		w.open_errno = errno;
	/* A child that did not answer leaves a short result: the monitor
	 * says so, and the child's line said why. */
	if (jobuser_fork(fd, parse_conf, &w) == 0) {
		w.r->magic = CONFIG_MAGIC;
		if (j.check)
			rc = !w.r->ok || check_files(fd, &w);
		else
			rc = write_all(fd, w.r, sizeof(*w.r), now_ms() +
			    5000) == 0 ? 0 : 1;
	}
	if (w.fd != -1)
		close(w.fd);
	explicit_bzero(w.r, sizeof(*w.r));
	munmap(w.r, sizeof(*w.r));
	return rc;
}
