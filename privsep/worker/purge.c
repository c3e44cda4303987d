/*
 * purge.c - JOB_PURGE, for sbx-monitor --purge: every container of this
 * host's sbx (those the runtime lists with sbx's labels: sandboxes' and
 * warm ones), then every record in state_dir/sandboxes, then everything
 * under run_dir.
 * runs in: sbx-worker's JOB_PURGE (root, runtime deny filter)
 *
 * The monitor holds the host lock, so no monitor serves meanwhile. Each
 * removal is one line on fd 3, the admin's stdout; what failed is said on
 * stderr, and the exit status is 1 if anything did. Containers go first:
 * then nothing writes in the socket directories.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "iox.h"
#include "runtime_argv.h"
#include "sockdir.h"
#include "job.h"
#include "purge.h"
#include "rt_run.h"
#include "run.h"
#include "config.h"

static int64_t
call_deadline(const struct sbx_config *cfg)
{
	return now_ms() + (int64_t)cfg->runtime_timeout * 1000;
}

/* One rm of up to PURGE_BATCH names; each said once the runtime said
 * they went. 0, or -1. */
static int
rm_batch(int out, const struct sbx_config *cfg, const char *const *names,
    size_t n)
{
	struct argv_buf a;
	struct run_result r;
	size_t i;

	rt_argv_rm_names(&a, cfg, names, n);
	if (a.overflow || run_logged(a.v, (char *const *)(uintptr_t)
	    rt_base_env, call_deadline(cfg), NULL, &r) == -1)
		return -1;
	for (i = 0; i < n; i++)
		dprintf(out, "removed container %s\n", names[i]);
	return 0;
}

static int
purge_containers(int out, const struct sbx_config *cfg)
{
	const char *names[PURGE_BATCH];
	struct rt_seen *v = NULL;
	size_t n = 0, i, k = 0;
	int rc = 0;

	if (rt_list(cfg, &v, &n) == -1) {
		log_warnx("cannot list the runtime's containers (%s ps): "
		    "nothing removed", cfg->runtime);
		return -1;
	}
	for (i = 0; i < n; i++) {
		names[k++] = v[i].name;
		if (k == PURGE_BATCH || i + 1 == n) {
			if (rm_batch(out, cfg, names, k) == -1)
				rc = -1;
			k = 0;
		}
	}
	free(v);
	if (rc == -1)
		log_warnx("some containers could not be removed (the runtime's "
		    "words are above): their records and directories go all "
		    "the same, run --purge again");
	return rc;
}

/* Every file in state_dir/sandboxes: records, pool records, and the
 * temporary files of a write cut short. */
static int
purge_records(int out, const struct sbx_config *cfg)
{
	char path[CFG_STR + 16];
	struct dirent *d;
	DIR *dir;
	int rc = 0;

	snprintf(path, sizeof(path), "%s/sandboxes", cfg->state_dir);
	if ((dir = opendir(path)) == NULL) {
		if (errno == ENOENT)
			return 0;
		log_warn("%s", path);
		return -1;
	}
	while ((d = readdir(dir)) != NULL) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (unlinkat(dirfd(dir), d->d_name, 0) == -1) {
			log_warn("cannot remove %s/%s", path, d->d_name);
			rc = -1;
		} else
			dprintf(out, "removed record %s/%s\n", path, d->d_name);
	}
	closedir(dir);
	return rc;
}

/* sockdir_prune's keep(): nothing is kept, each directory is said. */
static bool
say_dir(void *arg, const char *path)
{
	dprintf(*(const int *)arg, "removed directory %s\n", path);
	return false;
}

int
purge_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	int rc;

	(void)job;
	(void)len;
	rc = purge_containers(fd, cfg);
	if (purge_records(fd, cfg) == -1)
		rc = -1;
	sockdir_prune(cfg, say_dir, &fd);
	return rc == 0 ? 0 : 1;
}
