/*
 * seeds.c - postgres_seed files: their rules, and the copies that the
 * reload (JOB_RELOAD, at start and on SIGHUP) keeps in state_dir/seeds.
 * runs in: sbx-worker's JOB_RELOAD (root: the copies; seed_check also in
 *   its child that dropped to sbx-job, job allowlist), JOB_CONFIG's check
 *   and its runtime jobs (root, runtime deny filter)
 *
 * A seed is admin's policy like the project file that names it, and is
 * held to the same rules: a regular file, not a link, root's, written by
 * root alone. What a provision applies is the reload's copy, not the
 * file: a seed changed on disk applies after the next SIGHUP, and a
 * provision reads one file of root's that nobody else writes
 * (state_dir/seeds, 0700; each copy 0600, written to a temporary name
 * and renamed into place, so a provision reads a whole one).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "log.h"
#include "project.h"
#include "seeds.h"
#include "slug.h"

#define COPY_BUF	65536

bool
seed_name_valid(const char *name)
{
	size_t len = strlen(name);

	return slug_valid(name, len) && !(len >= 5 &&
	    strcmp(name + len - 5, ".conf") == 0);
}

int
seed_check(int fd, const char *name, uint64_t *size, char *err,
    size_t errlen)
{
	struct stat st;

	if (fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s: %s", name, strerror(errno));
		return -1;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "%s: not a root-owned file writable "
		    "only by root", name);
		return -1;
	}
	if ((uint64_t)st.st_size > SEED_MAX) {
		snprintf(err, errlen, "%s: larger than %u MiB", name,
		    SEED_MAX >> 20);
		return -1;
	}
	*size = (uint64_t)st.st_size;
	return 0;
}

int
seed_open(const char *dir, const char *name, uint64_t *size, char *err,
    size_t errlen)
{
	char path[CFG_STR + SBX_SLUG_MAX + 2];
	int fd;

	if (!seed_name_valid(name)) {
		snprintf(err, errlen, "not a file name of the projects "
		    "directory (a slug, not *.conf)");
		return -1;
	}
	if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir, name) >=
	    sizeof(path)) {
		snprintf(err, errlen, "path too long");
		return -1;
	}
	/* Non-blocking: a FIFO there must not hold the reload. */
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1) {
		snprintf(err, errlen, "%s: %s", name, errno == ELOOP ?
		    "a symbolic link" : strerror(errno));
		return -1;
	}
	if (seed_check(fd, name, size, err, errlen) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* state_dir/seeds, made root's and 0700 whatever it was, opened. */
static int
seeds_dir(const struct sbx_config *cfg)
{
	char path[CFG_STR + sizeof(SEED_DIR) + 1];
	struct stat st;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", cfg->state_dir,
	    SEED_DIR) >= sizeof(path))
		return -1;
	if (mkdir(path, 0700) == -1 && errno != EEXIST) {
		log_warn("seeds %s", path);
		return -1;
	}
	if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 ||
	    (st.st_uid != 0 && fchown(fd, 0, 0) == -1) ||
	    ((st.st_mode & 07777) != 0700 && fchmod(fd, 0700) == -1)) {
		log_warn("seeds %s", path);
		if (fd != -1)
			close(fd);
		return -1;
	}
	return fd;
}

/* The rest of buf to out, whatever a write takes at a time. */
static int
write_out(int out, const char *buf, size_t n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = write(out, buf, n)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

/* All of in to out, and its FNV-1a sum (warm.c empties a project's
 * pool when it changes); a file grown past SEED_MAX since its check is
 * refused. */
static int
copy_fd(int in, int out, uint64_t *sum)
{
	char *buf;
	uint64_t done = 0;
	ssize_t n, i;
	int rc = 0;

	*sum = 0xcbf29ce484222325ULL;

	if ((buf = malloc(COPY_BUF)) == NULL)
		return -1;
	while ((n = read(in, buf, COPY_BUF)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		for (i = 0; i < n; i++)
			*sum = (*sum ^ (unsigned char)buf[i]) *
			    0x100000001b3ULL;
		if (n == -1 || (done += (uint64_t)n) > SEED_MAX ||
		    write_out(out, buf, (size_t)n) == -1) {
			if (n != -1 && done > SEED_MAX)
				errno = EFBIG;
			rc = -1;
			break;
		}
	}
	free(buf);
	return rc;
}

/* One project's seed into dfd as <slug>.sql; -1 with err. */
static int
seed_copy(const struct sbx_config *cfg, int dfd, struct project *p,
    char *err, size_t errlen)
{
	char tmp[SBX_SLUG_MAX + 32], dst[SBX_SLUG_MAX + 8];
	uint64_t size;
	int in, out, rc = -1;

	if ((in = seed_open(cfg->projects, p->seed, &size, err,
	    errlen)) == -1)
		return -1;
	snprintf(tmp, sizeof(tmp), ".%s.sql.%ld", p->slug, (long)getpid());
	snprintf(dst, sizeof(dst), "%s.sql", p->slug);
	if ((out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) == -1) {
		snprintf(err, errlen, "%s: cannot copy it: %s", p->seed,
		    strerror(errno));
		close(in);
		return -1;
	}
	if (fchmod(out, 0600) == 0 && copy_fd(in, out, &p->seed_sum) == 0 &&
	    fsync(out) == 0 && renameat(dfd, tmp, dfd, dst) == 0)
		rc = 0;
	else
		snprintf(err, errlen, "%s: cannot copy it: %s", p->seed,
		    strerror(errno));
	close(out);
	close(in);
	if (rc == -1)
		unlinkat(dfd, tmp, 0);
	return rc;
}

/* An entry of the seeds directory that no valid project's seed names:
 * an old copy, or a temporary one a reload left. */
static bool
stale(const struct project_table *t, const char *name)
{
	size_t len = strlen(name), i;

	if (name[0] == '.')
		return strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
	if (len < 5 || strcmp(name + len - 4, ".sql") != 0)
		return true;
	for (i = 0; i < t->n; i++)
		if (t->v[i].valid && t->v[i].seed[0] != '\0' &&
		    strlen(t->v[i].slug) == len - 4 &&
		    strncmp(t->v[i].slug, name, len - 4) == 0)
			return false;
	return true;
}

static void
seeds_prune(int dfd, const struct project_table *t)
{
	DIR *d;
	struct dirent *de;
	int fd;

	if ((fd = dup(dfd)) == -1 || (d = fdopendir(fd)) == NULL) {
		if (fd != -1)
			close(fd);
		return;
	}
	while ((de = readdir(d)) != NULL)
		if (stale(t, de->d_name) && unlinkat(dfd, de->d_name, 0) == -1 &&
		    errno != ENOENT)
			log_warn("seeds: %s", de->d_name);
	closedir(d);
}

/* A seeded project that provisions could not seed: invalid, and why. */
static void
seed_refused(const struct sbx_config *cfg, struct project *p,
    const char *err)
{
	p->valid = false;
	snprintf(p->why, sizeof(p->why), "%.60s.conf: postgres_seed: %.70s",
	    p->slug, err);
	log_warnx("project %s/%s.conf: postgres_seed: %s: ignored",
	    cfg->projects, p->slug, err);
}

int
seeds_sync(const struct sbx_config *cfg, struct project_table *t)
{
	char err[SBX_MESSAGE_MAX];
	struct project *p;
	size_t i;
	int dfd = seeds_dir(cfg);

	/* Two reloads at once (a SIGHUP during the start's) take turns. */
	if (dfd != -1)
		(void)flock(dfd, LOCK_EX);
	for (i = 0; i < t->n; i++) {
		p = &t->v[i];
		if (!p->valid || p->seed[0] == '\0')
			continue;
		if (dfd == -1)
			seed_refused(cfg, p, "no copy can be kept (see the "
			    "log)");
		else if (seed_copy(cfg, dfd, p, err, sizeof(err)) == -1)
			seed_refused(cfg, p, err);
	}
	if (dfd == -1)
		return -1;
	seeds_prune(dfd, t);
	close(dfd);
	return 0;
}
