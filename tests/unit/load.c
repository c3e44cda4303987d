/*
 * load.c - the unit tests' loaders. sbx-worker opens these files as root
 * and parses them in a child that dropped to sbx-job (jobfiles.c,
 * jobuser.c); a test of the parse does both in its own process.
 * runs in: the unit tests (root or the tester, unfiltered)
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "config.h"
#include "config_parse.h"
#include "jobfiles.h"
#include "load.h"
#include "projects.h"
#include "subuid_parse.h"

int
config_load(const char *path, struct sbx_config *cfg, char *err,
    size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	rc = config_parse(fd, errno, path, cfg, err, errlen);
	if (fd != -1)
		close(fd);
	return rc;
}

int
projects_load(const struct sbx_config *cfg, struct project_table *t,
    bool check)
{
	struct job_files jf;
	int rc;

	(void)job_files_open(cfg->projects, NULL, &jf);
	rc = projects_parse(cfg, &jf, t, check);
	job_files_close(&jf);
	return rc;
}

int
subuid_load(const char *path, struct subuid_table *t, char *err,
    size_t errlen)
{
	struct job_files jf = { .subuid_fd = -1 };
	int rc;

	if ((jf.subuid_fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		jf.subuid_err = errno;
	rc = subuid_parse(&jf, path, t, err, errlen);
	if (jf.subuid_fd != -1)
		close(jf.subuid_fd);
	return rc;
}
