/*
 * subuid_parse.c - /etc/subuid: "owner:start:count" per line, owner a user name
 * or a uid (subuid(5)).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * A user with a range can connect from a user namespace as any uid in
 * it; the monitor counts those uids toward the owner's quotas or refuses
 * them (sbx.conf(5), subuid). The file is read here for JOB_RELOAD, at
 * start and on SIGHUP, from the descriptor root opened (jobfiles.c); a
 * request only looks its uid up (shared/subuid.c).
 *
 * The file is root's (it must be root-owned and writable by root alone,
 * or it is not used); still, every line is checked, a bad one is skipped
 * and counted, and a range that overlaps one before it is skipped too,
 * so that a uid has one owner.
 */
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jobfiles.h"
#include "subuid.h"
#include "subuid_parse.h"

#define LINE_MAX_LEN	512

static int
parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > UINT32_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/*
 * An owner that names no user still gets one quota for its whole range:
 * keyed by the range's first uid, never by each uid in it.
 */
static uid_t
owner_uid(const char *name, uint32_t start)
{
	struct passwd *pw;
	uint32_t v;

	if (parse_u32(name, &v) == 0)
		return (uid_t)v;
	if ((pw = getpwnam(name)) != NULL)
		return pw->pw_uid;
	return (uid_t)start;
}

/* One line into r; -1 if it is not "owner:start:count" with a range the
 * broker takes too (subrange_valid: no uid 0, count > 0, below 2^32 - 1):
 * a table the broker refuses would stop it from serving at all. */
static int
parse_line(char *line, struct subuid_range *r)
{
	char *name, *start, *count;

	line[strcspn(line, "\n")] = '\0';
	if ((name = strtok(line, ":")) == NULL ||
	    (start = strtok(NULL, ":")) == NULL ||
	    (count = strtok(NULL, ":")) == NULL || strtok(NULL, ":") != NULL)
		return -1;
	if (parse_u32(start, &r->start) == -1 ||
	    parse_u32(count, &r->count) == -1 || !subrange_valid(r, 1))
		return -1;
	r->owner = owner_uid(name, r->start);
	return 0;
}

static int
by_start(const void *a, const void *b)
{
	const struct subuid_range *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Sort, then drop each range that overlaps the one kept before it. */
static void
sort_unique(struct subuid_table *t)
{
	size_t i, k = 0;

	qsort(t->v, t->n, sizeof(*t->v), by_start);
	for (i = 0; i < t->n; i++) {
		if (k > 0 && (uint64_t)t->v[k - 1].start + t->v[k - 1].count >
		    t->v[i].start) {
			t->skipped++;
			continue;
		}
		t->v[k++] = t->v[i];
	}
	t->n = k;
}

static int
grow(struct subuid_table *t, char *err, size_t errlen)
{
	struct subuid_range *v;
	size_t cap = t->cap == 0 ? 16 : t->cap * 2;

	if (t->n < t->cap)
		return 0;
	if (t->n == SUBUID_MAX_RANGES) {
		snprintf(err, errlen, "more than %d ranges", SUBUID_MAX_RANGES);
		return -1;
	}
	if ((v = reallocarray(t->v, cap, sizeof(*v))) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	t->v = v;
	t->cap = cap;
	return 0;
}

static int
read_ranges(FILE *f, struct subuid_table *t, char *err, size_t errlen)
{
	char line[LINE_MAX_LEN];
	struct subuid_range r;

	while (fgets(line, sizeof(line), f) != NULL) {
		if (strchr(line, '\n') == NULL && !feof(f)) {
			int ch;	/* an overlong line: skip the rest of it */

			while ((ch = fgetc(f)) != EOF && ch != '\n')
				;
			t->skipped++;
			continue;
		}
		if (line[0] == '#' || line[strspn(line, " \t\n")] == '\0')
			continue;
		if (parse_line(line, &r) == -1) {
			t->skipped++;
			continue;
		}
		if (grow(t, err, errlen) == -1)
			return -1;
		t->v[t->n++] = r;
	}
	return 0;
}

int
subuid_parse(const struct job_files *jf, const char *path,
    struct subuid_table *t, char *err, size_t errlen)
{
	struct stat st;
	FILE *f;
	int fd, rc;

	memset(t, 0, sizeof(*t));
	if (jf->subuid_fd == -1) {
		if (jf->subuid_err == ENOENT)
			return 0;
		snprintf(err, errlen, "%s: %s", path, strerror(jf->subuid_err));
		return -1;
	}
	if ((fd = dup(jf->subuid_fd)) == -1 || (f = fdopen(fd, "r")) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_uid != 0 || (st.st_mode & 022) != 0) {
		snprintf(err, errlen, "%s must be a root-owned file that only "
		    "root may write", path);
		fclose(f);
		return -1;
	}
	rc = read_ranges(f, t, err, errlen);
	fclose(f);
	if (rc == -1) {
		subuid_free(t);
		return -1;
	}
	sort_unique(t);
	return 0;
}
