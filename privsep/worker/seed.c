/*
 * seed.c - a seeded project's postgres, at its provision: the reload's
 * copy of its seed read, and the session child that runs it started
 * (seed_session.c); for an unseeded warm postgres, the one that makes its
 * first reset's copy ahead.
 * runs in: a provision's service children and JOB_WARM_START (root, runtime
 *   deny filter)
 *
 * The seed is read here: the reload's copy, root's, at most SEED_MAX
 * bytes and no NUL byte in it. The child gets it whole; its one report,
 * checked as a tenant's (session_recv), is the provision's answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "iox.h"
#include "job.h"
#include "log.h"
#include "seed.h"
#include "seed_session.h"
#include "seeds.h"
#include "slug.h"
#include "svc_session.h"

/* The reload's copy, whole and NUL-ended, or NULL with msg. */
static char *
seed_read(const struct sbx_config *cfg, const char *project, size_t *len,
    char *msg, size_t msglen)
{
	char path[CFG_STR + SBX_SLUG_MAX + 16];
	struct stat st;
	char *text = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s.sql", cfg->state_dir,
	    SEED_DIR, project);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 ||
	    !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (uint64_t)st.st_size > SEED_MAX ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL ||
	    read(fd, text, (size_t)st.st_size) != st.st_size) {
		log_warn("seed %s", path);
		snprintf(msg, msglen, "postgres: the project's seed cannot "
		    "be read (see the monitor's log).");
		free(text);
		if (fd != -1)
			close(fd);
		return NULL;
	}
	close(fd);
	text[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return text;
}

int
seed_apply(const struct sbx_config *cfg, const char *project,
    const char *seed, const struct svc_reach *r, int64_t deadline,
    uint32_t *res_code, char *msg, size_t msglen)
{
	struct seed_job j = { .name = seed };
	int64_t t0 = now_ms();
	struct session ss;
	struct data_result res;
	char *text;

	*res_code = SBX_E_SEED_FAILED;
	if (!slug_valid(project, strlen(project)) ||
	    (text = seed_read(cfg, project, &j.len, msg, msglen)) == NULL)
		return -1;
	j.text = text;
	if (memchr(text, '\0', j.len) != NULL) {
		snprintf(msg, msglen, "%s: holds a NUL byte.", seed);
		free(text);
		return -1;
	}
	if (session_start(&ss, r, seed_session, &j, deadline) == -1 ||
	    session_recv(&ss, &res, deadline) == -1) {
		res.code = SBX_E_RUNTIME_FAILED;
		snprintf(res.message, sizeof(res.message), "postgres: the "
		    "project's seed did not finish.");
	}
	session_end(&ss, now_ms() + 5000);
	free(text);
	if (res.code == SBX_OK)	/* bench/run.sh reads it (figure 8) */
		log_info("seed %s applied in %lld ms", seed,
		    (long long)(now_ms() - t0));
	*res_code = res.code;
	snprintf(msg, msglen, "%s", res.message);
	return res.code == SBX_OK ? 0 : -1;
}

void
seed_first_copy(const struct svc_reach *r, int64_t deadline)
{
	struct session ss;
	struct data_result res;

	if (session_start(&ss, r, seed_session_first_copy, NULL,
	    deadline) == -1 || session_recv(&ss, &res, deadline) == -1 ||
	    res.code != SBX_OK)
		log_warnx("%s: no copy made ahead for its first reset (it "
		    "makes its own)", r->s->name);
	session_end(&ss, now_ms() + 5000);
}
