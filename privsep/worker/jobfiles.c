/*
 * jobfiles.c - what JOB_RELOAD and sbx-monitor -t parse, opened by root
 * before the parse drops to sbx-job (jobuser.c): every project file and
 * seed of the projects directory, and the subordinate uids' file.
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 *
 * Root may keep these files 0600 in a directory of its own; sbx-job
 * reads them through these descriptors and no path. Root only lists the
 * directory and opens: every name that may be a project file
 * (<slug>.conf) or a seed (a slug), at most JOB_FILES_MAX of them. A
 * seed is opened without following a link (seeds.c's rule); the checks
 * of each file (a regular file of root's that only root writes) are the
 * parse's, on the descriptor.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "jobfiles.h"
#include "log.h"
#include "seeds.h"
#include "slug.h"

static bool
conf_name(const char *name)
{
	size_t len = strlen(name);

	return len > 5 && strcmp(name + len - 5, ".conf") == 0 &&
	    slug_valid(name, len - 5);
}

/* One descriptor per file: as many as the hard limit allows. */
static void
raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static int
add_file(struct job_files *jf, int dfd, const char *name)
{
	struct job_file *nv, *f;
	int flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC;

	if (jf->n == jf->cap) {
		jf->cap = jf->cap ? jf->cap * 2 : 32;
		if ((nv = reallocarray(jf->v, jf->cap, sizeof(*nv))) == NULL)
			return -1;
		jf->v = nv;
	}
	f = &jf->v[jf->n++];
	strlcpy(f->name, name, sizeof(f->name));
	if (!conf_name(name))
		flags |= O_NOFOLLOW;
	f->fd = openat(dfd, name, flags);
	f->err = f->fd == -1 ? errno : 0;
	return 0;
}

int
job_files_open(const char *projects, const char *subuid, struct job_files *jf)
{
	DIR *d;
	struct dirent *de;

	memset(jf, 0, sizeof(*jf));
	jf->subuid_fd = -1;
	raise_nofile();
	if (subuid != NULL && (jf->subuid_fd = open(subuid, O_RDONLY |
	    O_CLOEXEC)) == -1)
		jf->subuid_err = errno;
	if ((d = opendir(projects)) == NULL) {
		jf->dir_err = errno;
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		if (!conf_name(de->d_name) && !seed_name_valid(de->d_name))
			continue;
		if (jf->n == JOB_FILES_MAX) {
			log_warnx("projects %s: more than %d files: the rest "
			    "are not read", projects, JOB_FILES_MAX);
			break;
		}
		if (add_file(jf, dirfd(d), de->d_name) == -1)
			break;
	}
	closedir(d);
	return 0;
}

void
job_files_close(struct job_files *jf)
{
	size_t i;

	for (i = 0; i < jf->n; i++)
		if (jf->v[i].fd != -1)
			close(jf->v[i].fd);
	if (jf->subuid_fd != -1)
		close(jf->subuid_fd);
	free(jf->v);
	memset(jf, 0, sizeof(*jf));
	jf->subuid_fd = -1;
}
