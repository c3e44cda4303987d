/*
 * projects.c - the project files: the opted-in services and the users of
 * each project, read for JOB_RELOAD (at start and on SIGHUP) and for the
 * check of sbx-monitor -t, from the descriptors root opened
 * (jobfiles.c).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * Files are admin-owned policy: a file that is not owned by root or is
 * writable by others is refused (an agent must not be able to opt itself
 * in). allow_users / allow_groups are resolved to uids here, so no NSS
 * lookup happens in the monitor. An invalid file's project stays in the
 * table, marked invalid, with why: the agent's reply says it.
 *
 * postgres_seed names a file of the same directory, held to the same
 * rules (seeds.c); the reload copies it where provisions read it.
 */
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

#include "config.h"
#include "config_parse.h"
#include "ini_check.h"
#include "jobfiles.h"
#include "log.h"
#include "project.h"
#include "projects.h"
#include "seeds.h"
#include "service.h"
#include "slug.h"

struct pparse {
	const struct sbx_config	*cfg;
	const struct job_files	*files;
	struct project		*p;
	const char		*key;		/* the entry's, for the message */
	bool			 services_seen;	/* sandbox_services parsed */
	char			*err;
	size_t			 errlen;
	int			 failed;
};

static int
pfail(struct pparse *pp, const char *msg, const char *what)
{
	if (!pp->failed)
		snprintf(pp->err, pp->errlen, "%s%s%s%s%s",
		    pp->key ? pp->key : "", pp->key ? ": " : "", msg,
		    what ? ": " : "", what ? what : "");
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

/* The project's set has a postgres service: a seed has a database. */
static bool
offers_postgres(const struct pparse *pp)
{
	const struct service_cfg *s;
	size_t i;

	for (i = 0; i < pp->p->nservices; i++)
		if ((s = config_service(pp->cfg, pp->p->services[i])) != NULL &&
		    s->probe == PROBE_POSTGRES)
			return true;
	return false;
}

static int
set_services(struct pparse *pp, const char *v)
{
	char buf[CFG_STR * 8], *w[SBX_MAX_SERVICES + 1];
	struct project *p = pp->p;
	size_t i, j, n;

	if (strlcpy(buf, v, sizeof(buf)) >= sizeof(buf))
		return pfail(pp, "too long", NULL);
	n = split_words(buf, w, SBX_MAX_SERVICES);
	if (n > SBX_MAX_SERVICES)
		return pfail(pp, "too many services", NULL);
	for (i = 0; i < n; i++) {
		if (config_service(pp->cfg, w[i]) == NULL)
			return pfail(pp, "not offered by sbx.conf",
			    w[i]);
		for (j = 0; j < i; j++)
			if (!strcmp(w[i], p->services[j]))
				return pfail(pp, "named twice", w[i]);
		strlcpy(p->services[i], w[i], SBX_SLUG_MAX);
	}
	p->nservices = n;
	pp->services_seen = true;
	if (p->seed[0] != '\0' && !offers_postgres(pp))
		return pfail(pp, "postgres_seed needs a service whose probe "
		    "is postgres", NULL);
	return 1;
}

/* name's entry in jf, or NULL. */
static const struct job_file *
file_find(const struct job_files *jf, const char *name)
{
	size_t i;

	for (i = 0; i < jf->n; i++)
		if (!strcmp(jf->v[i].name, name))
			return &jf->v[i];
	return NULL;
}

/* A seed's descriptor in jf, or -1 with why (as an open would say). */
static int
seed_fd(const struct job_files *jf, const char *name, char *err,
    size_t errlen)
{
	const struct job_file *f;

	if (!seed_name_valid(name)) {
		snprintf(err, errlen, "not a file name of the projects "
		    "directory (a slug, not *.conf)");
		return -1;
	}
	if ((f = file_find(jf, name)) == NULL || f->fd == -1) {
		snprintf(err, errlen, "%s: %s", name, f == NULL ?
		    strerror(ENOENT) : f->err == ELOOP ? "a symbolic link" :
		    strerror(f->err));
		return -1;
	}
	return f->fd;
}

/*
 * postgres_seed: a file of the projects directory, checked now so that
 * -t and the reload's log say what is wrong with it at this line; the
 * reload copies it (seeds.c), checked again as it reads it.
 */
static int
set_seed(struct pparse *pp, const char *v)
{
	char err[SBX_MESSAGE_MAX];
	uint64_t size;
	int fd;

	if (pp->p->seed[0] != '\0')
		return pfail(pp, "given twice", NULL);
	if ((fd = seed_fd(pp->files, v, err, sizeof(err))) == -1 ||
	    seed_check(fd, v, &size, err, sizeof(err)) == -1)
		return pfail(pp, err, NULL);
	strlcpy(pp->p->seed, v, sizeof(pp->p->seed));
	/* sandbox_services before this line: its set must take the seed */
	if (pp->services_seen && !offers_postgres(pp))
		return pfail(pp, "needs a service whose probe is postgres "
		    "in sandbox_services", NULL);
	return 1;
}

/* A whole number from lo to hi, or -1. */
static long
whole(const char *v, unsigned long lo, unsigned long hi)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n < lo ||
	    n > hi)
		return -1;
	return (long)n;
}

/* warm, warm_max: sandboxes of the whole set kept ready, and up to
 * which demand grows them (privsep/monitor/warm.c). */
static int
set_warm(struct pparse *pp, const char *v, unsigned *out)
{
	long n;

	if ((n = whole(v, 0, POOL_MAX_WARM)) == -1)
		return pfail(pp, "must be a whole number up to 64", NULL);
	*out = (unsigned)n;
	return 1;
}

/* warm_idle: seconds a peak of demand keeps the pool grown. */
static int
set_warm_idle(struct pparse *pp, const char *v)
{
	long n;

	if ((n = whole(v, 1, WARM_IDLE_MAX)) == -1)
		return pfail(pp, "must be seconds from 1 to 86400", NULL);
	pp->p->warm_idle = (unsigned)n;
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
	pp->key = NULL;
	if (strcmp(section, "project") != 0)
		return pfail(pp, "unknown section", section);
	pp->key = k;
	if (!strcmp(k, "sandbox_services"))
		return set_services(pp, v);
	if (!strcmp(k, "allow_users"))
		return for_each_word(pp, v, add_user);
	if (!strcmp(k, "allow_groups"))
		return for_each_word(pp, v, add_group);
	if (!strcmp(k, "postgres_seed"))
		return set_seed(pp, v);
	if (!strcmp(k, "warm"))
		return set_warm(pp, v, &pp->p->warm);
	if (!strcmp(k, "warm_max"))
		return set_warm(pp, v, &pp->p->warm_max);
	if (!strcmp(k, "warm_idle"))
		return set_warm_idle(pp, v);
	pp->key = NULL;
	return pfail(pp, "unknown key", k);
}

/*
 * The file root opened once: what is checked is what is parsed, whatever
 * is renamed over the path meanwhile. Opened non-blocking, so that a FIFO
 * put there does not hold us; it is refused as not a regular file.
 */
static FILE *
open_trusted(const struct job_file *jf, char *err, size_t errlen)
{
	struct stat st;
	FILE *f;
	int fd = -1;

	if (jf->fd == -1 || (fd = dup(jf->fd)) == -1 || fstat(fd, &st) == -1) {
		snprintf(err, errlen, "%s", strerror(jf->fd == -1 ? jf->err :
		    errno));
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
	if (lseek(fd, 0, SEEK_SET) == -1 || (f = fdopen(fd, "r")) == NULL) {
		snprintf(err, errlen, "%s", strerror(errno));
		close(fd);
		return NULL;
	}
	return f;
}

/* One file into p; -1 with err and *line (0: not a line's fault). */
static int
project_parse(const struct sbx_config *cfg, const struct job_files *jf,
    const struct job_file *file, struct project *p, char *err,
    size_t errlen, int *line)
{
	struct pparse pp = { .cfg = cfg, .files = jf, .p = p, .err = err,
	    .errlen = errlen };
	FILE *f;

	p->anyone = true;
	p->nservices = p->nuids = 0;
	p->seed[0] = '\0';
	p->warm_max = WARM_MAX_UNSET;
	p->warm_idle = 300;
	p->valid = false;
	*line = 0;
	if ((f = open_trusted(file, err, errlen)) == NULL)
		return -1;
	/* First: what such a line would do to the parse is not its cause. */
	if ((*line = indented_key(f, err, errlen)) == 0) {
		rewind(f);
		*line = ini_parse_file(f, on_pentry, &pp);
	}
	fclose(f);
	if (*line != 0 || pp.failed) {
		if (!pp.failed && err[0] == '\0')
			snprintf(err, errlen, "syntax error");
		return -1;
	}
	if (p->warm_max == WARM_MAX_UNSET)
		p->warm_max = p->warm;	/* a fixed pool */
	if (p->warm_max < p->warm) {
		snprintf(err, errlen, "warm_max (%u) is below warm (%u)",
		    p->warm_max, p->warm);
		return -1;
	}
	p->valid = true;
	return 0;
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

/* An invalid file's project: why, for the agent and the log. */
static void
project_invalid(struct project *p, const char *dir, const char *file,
    int line, const char *err, bool check)
{
	char at[16] = "";

	if (line > 0)
		snprintf(at, sizeof(at), ":%d", line);
	/* The agent's copy is bounded (a reply's message); -t's and the
	 * log's are whole. */
	snprintf(p->why, sizeof(p->why), "%.60s%s: %.80s", file, at, err);
	if (check)
		fprintf(stderr, "%s/%s%s: %s\n", dir, file, at, err);
	else
		log_warnx("project %s/%s%s: %s: ignored", dir, file, at, err);
}

int
projects_parse(const struct sbx_config *cfg, const struct job_files *jf,
    struct project_table *t, bool check)
{
	struct project *v = NULL, *nv;
	size_t n = 0, cap = 0, i;
	char err[SBX_MESSAGE_MAX], slug[SBX_SLUG_MAX];
	int line;

	t->n = 0;
	t->v = NULL;
	if (jf->dir_err != 0) {
		if (check)
			fprintf(stderr, "%s: %s\n", cfg->projects,
			    strerror(jf->dir_err));
		else
			log_warnx("projects %s: %s", cfg->projects,
			    strerror(jf->dir_err));
		return -1;
	}
	for (i = 0; i < jf->n; i++) {
		if (conf_slug(jf->v[i].name, slug) == NULL)
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				break;
			v = nv;
		}
		memset(&v[n], 0, sizeof(v[n]));
		strlcpy(v[n].slug, slug, sizeof(v[n].slug));
		err[0] = '\0';
		if (project_parse(cfg, jf, &jf->v[i], &v[n], err, sizeof(err),
		    &line) == -1)
			project_invalid(&v[n], cfg->projects, jf->v[i].name,
			    line, err, check);
		n++;
	}
	if (n > 0)
		qsort(v, n, sizeof(*v), project_slug_cmp);
	t->n = n;
	t->v = v;
	return 0;
}
