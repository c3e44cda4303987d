/*
 * config_job.c - JOB_CONFIG: sbx.conf for the monitor's start, read here
 * so that libinih, NSS (broker_user) and the parser never run in the
 * monitor, which checks the result it is sent (privsep/monitor/config_take.c); or,
 * for sbx-monitor -t, sbx.conf and every project file checked, each
 * problem said on stderr as file:line: cause.
 * runs in: sbx-worker's JOB_CONFIG (root, runtime deny filter)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "work.h"

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

/* sbx-monitor -t: every file, every problem; 0 when there is none. */
static int
check_all(const struct sbx_config *cfg)
{
	struct project_table pt;
	struct subuid_table st;
	char err[256];
	size_t i;
	int rc = 0;

	if (projects_load(cfg, &pt, true) == -1)
		rc = 1;
	for (i = 0; i < pt.n; i++)
		if (!pt.v[i].valid)
			rc = 1;
	projects_free(&pt);
	if (subuid_load(cfg->subuid_file, &st, err, sizeof(err)) == -1) {
		fprintf(stderr, "%s\n", err);
		rc = 1;
	}
	subuid_free(&st);
	return rc;
}

int
config_body(int fd, const struct sbx_config *env, const void *job,
    size_t len)
{
	struct job_config j;
	struct config_result *r;
	int rc;

	(void)env;
	memcpy(&j, job, len);
	if (memchr(j.path, '\0', sizeof(j.path)) == NULL ||
	    (r = calloc(1, sizeof(*r))) == NULL)
		return 1;
	r->magic = CONFIG_MAGIC;
	r->ok = config_load(j.path, &r->cfg, r->err, sizeof(r->err)) == 0;
	r->proc_hidden = proc_hidden();
	if (j.check) {
		if (!r->ok)
			fprintf(stderr, "%s\n", r->err);
		rc = !r->ok || check_all(&r->cfg);
	} else
		rc = write_all(fd, r, sizeof(*r), now_ms() + 5000) == 0 ? 0 : 1;
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}
