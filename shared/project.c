/*
 * project.c - the opted-in services and the users of each project.
 * runs in: the monitor at start (root, unfiltered); on SIGHUP in an
 * exec'd worker (reload.c; root, runtime deny filter); lookups in the loop
 *
 * Files are admin-owned policy, read at start and on SIGHUP, never at
 * request time: a request only does a binary search. A file that is not
 * owned by root or is writable by others is refused (an agent must not be
 * able to opt itself in). allow_users / allow_groups are resolved to uids
 * at load time, so no NSS lookup happens on the request path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ini.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "project.h"
#include "slug.h"

struct pparse {
	const struct sbx_config	*cfg;
	struct project		*p;
	char			*err;
	size_t			 errlen;
	int			 failed;
};

static int
pfail(struct pparse *pp, const char *msg, const char *what)
{
	if (!pp->failed)
		snprintf(pp->err, pp->errlen, "%s%s%s", msg, what ? ": " : "",
		    what ? what : "");
	pp->failed = 1;
	return 0;
}

static int
add_uid(struct project *p, uid_t uid)
{
	size_t i;

	for (i = 0; i < p->nuids; i++)
		if (p->uids[i] == uid)
			return 0;
	if (p->nuids == PROJECT_MAX_UIDS)
		return -1;
	p->uids[p->nuids++] = uid;
	return 0;
}

static int
add_user(struct pparse *pp, const char *name)
{
	struct passwd *pw;
	char *end;
	unsigned long n;

	/* A number is a uid, digits only and below (uid_t)-1: strtoul would
	 * take "-1" and wrap past 2^32 into another uid. */
	errno = 0;
	n = strtoul(name, &end, 10);
	if (*name >= '0' && *name <= '9' && *end == '\0') {
		if (errno != 0 || n >= UINT32_MAX)
			return pfail(pp, "uid out of range", name);
		return add_uid(pp->p, (uid_t)n) == 0 ? 1 :
		    pfail(pp, "too many users", NULL);
	}
	if ((pw = getpwnam(name)) == NULL)
		return pfail(pp, "unknown user", name);
	return add_uid(pp->p, pw->pw_uid) == 0 ? 1 :
	    pfail(pp, "too many users", NULL);
}

/* Members of a group: its member list plus users whose primary group it is. */
static int
add_group(struct pparse *pp, const char *name)
{
	struct group *gr;
	struct passwd *pw;
	gid_t gid;
	char **m;

	if ((gr = getgrnam(name)) == NULL)
		return pfail(pp, "unknown group", name);
	gid = gr->gr_gid;
	for (m = gr->gr_mem; *m != NULL; m++)
		if ((pw = getpwnam(*m)) != NULL &&
		    add_uid(pp->p, pw->pw_uid) == -1)
			return pfail(pp, "too many users", NULL);
	setpwent();
	while ((pw = getpwent()) != NULL)
		if (pw->pw_gid == gid && add_uid(pp->p, pw->pw_uid) == -1) {
			endpwent();
			return pfail(pp, "too many users", NULL);
		}
	endpwent();
	return 1;
}

static int
set_services(struct pparse *pp, const char *v)
{
	char buf[CFG_STR * 8], *w[SBX_MAX_SERVICES + 1];
	struct project *p = pp->p;
	size_t i, j, n;

	if (strlcpy(buf, v, sizeof(buf)) >= sizeof(buf))
		return pfail(pp, "sandbox_services is too long", NULL);
	n = split_words(buf, w, SBX_MAX_SERVICES);
	if (n > SBX_MAX_SERVICES)
		return pfail(pp, "sandbox_services names too many services", NULL);
	for (i = 0; i < n; i++) {
		if (config_service(pp->cfg, w[i]) == NULL)
			return pfail(pp, "service not offered by sbx.conf", w[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(w[i], p->services[j]))
				return pfail(pp, "service named twice", w[i]);
		strlcpy(p->services[i], w[i], SBX_SLUG_MAX);
	}
	p->nservices = n;
	return 1;
}

static int
for_each_word(struct pparse *pp, const char *v,
    int (*fn)(struct pparse *, const char *))
{
	char buf[CFG_STR * 8], *w[PROJECT_MAX_UIDS + 1];
	size_t i, n;

	if (strlcpy(buf, v, sizeof(buf)) >= sizeof(buf))
		return pfail(pp, "list too long", NULL);
	n = split_words(buf, w, PROJECT_MAX_UIDS);
	if (n > PROJECT_MAX_UIDS)
		return pfail(pp, "list too long", NULL);
	pp->p->anyone = false;
	for (i = 0; i < n; i++)
		if (!fn(pp, w[i]))
			return 0;
	return 1;
}

static int
on_pentry(void *user, const char *section, const char *k, const char *v)
{
	struct pparse *pp = user;

	if (pp->failed)
		return 0;
	if (strcmp(section, "project") != 0)
		return pfail(pp, "unknown section", section);
	if (!strcmp(k, "sandbox_services"))
		return set_services(pp, v);
	if (!strcmp(k, "allow_users"))
		return for_each_word(pp, v, add_user);
	if (!strcmp(k, "allow_groups"))
		return for_each_word(pp, v, add_group);
	return pfail(pp, "unknown key", k);
}

/*
 * The file, opened once: what is checked is what is parsed, whatever is
 * renamed over the path meanwhile. Non-blocking, so that a FIFO put there
 * does not hold us; it is refused as not a regular file.
 */
static FILE *
open_trusted(const char *path, char *err, size_t errlen)
{
	struct stat st;
	FILE *f;
	int fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s", strerror(errno));
		if (fd != -1)
			close(fd);
		return NULL;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, errlen, "not a root-owned file writable only "
		    "by root");
		close(fd);
		return NULL;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
	}
	return f;
}

int
project_parse(const struct sbx_config *cfg, const char *path,
    struct project *p, char *err, size_t errlen)
{
	struct pparse pp = { .cfg = cfg, .p = p, .err = err, .errlen = errlen };
	FILE *f;
	int line;

	p->anyone = true;
	p->nservices = p->nuids = 0;
	p->valid = false;
	if ((f = open_trusted(path, err, errlen)) == NULL)
		return -1;
	line = ini_parse_file(f, on_pentry, &pp);
	fclose(f);
	if (line != 0 || pp.failed) {
		if (!pp.failed)
			snprintf(err, errlen, "line %d: syntax error", line);
		return -1;
	}
	p->valid = true;
	return 0;
}

static int
slug_cmp(const void *a, const void *b)
{
	return strcmp(((const struct project *)a)->slug,
	    ((const struct project *)b)->slug);
}

/* The slug of a "<slug>.conf" name, or NULL. */
static const char *
conf_slug(const char *name, char out[SBX_SLUG_MAX])
{
	size_t len = strlen(name);

	if (len < 6 || strcmp(name + len - 5, ".conf") != 0 ||
	    !slug_valid(name, len - 5))
		return NULL;
	memcpy(out, name, len - 5);
	out[len - 5] = '\0';
	return out;
}

int
projects_load(const struct sbx_config *cfg, struct project_table *t)
{
	DIR *d;
	struct dirent *de;
	struct project *v = NULL, *nv;
	size_t n = 0, cap = 0;
	char path[CFG_STR * 2], err[256];

	if ((d = opendir(cfg->projects)) == NULL) {
		log_warn("projects %s", cfg->projects);
		t->n = 0;
		t->v = NULL;
		return -1;
	}
	while ((de = readdir(d)) != NULL) {
		char slug[SBX_SLUG_MAX];

		if (conf_slug(de->d_name, slug) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				break;
			v = nv;
		}
		memset(&v[n], 0, sizeof(v[n]));
		strlcpy(v[n].slug, slug, sizeof(v[n].slug));
		snprintf(path, sizeof(path), "%s/%s", cfg->projects, de->d_name);
		if (project_parse(cfg, path, &v[n], err, sizeof(err)) == -1)
			log_warnx("project %s: %s: ignored", path, err);
		n++;
	}
	closedir(d);
	if (n > 0)
		qsort(v, n, sizeof(*v), slug_cmp);
	t->n = n;
	t->v = v;
	return 0;
}

void
projects_free(struct project_table *t)
{
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

const struct project *
project_find(const struct project_table *t, const char *slug)
{
	struct project key;

	if (t->n == 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	strlcpy(key.slug, slug, sizeof(key.slug));
	return bsearch(&key, t->v, t->n, sizeof(*t->v), slug_cmp);
}

bool
project_offers(const struct project *p, const char *service)
{
	size_t i;

	for (i = 0; i < p->nservices; i++)
		if (strcmp(p->services[i], service) == 0)
			return true;
	return false;
}

bool
project_allows(const struct project *p, uid_t uid)
{
	size_t i;

	if (p->anyone || uid == 0)
		return true;
	for (i = 0; i < p->nuids; i++)
		if (p->uids[i] == uid)
			return true;
	return false;
}
