/*
 * main.c - sbx-worker: one job of the monitor's, then exit.
 * runs in: every sbx-worker job (root, runtime deny filter)
 *
 * The monitor forks, loads the runtime deny filter, puts the job in a
 * sealed memfd on our stdin and executes us from the descriptor it opened
 * at start, with the job's name in argv[1] and its result pipe, if any,
 * at fd 3 (privsep/monitor/jobpool.c); a reset's or a snapshot's worker
 * may be a spare, executed ahead, that gets them later (spare.c). We hold
 * that one job and nothing else of the monitor's: a provision's passwords, needed to start and probe its
 * services, and no other tenant's. The memfd's sizes are checked against
 * the job's row before anything of it is used; the filter loaded before
 * the exec stays loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "adopt.h"
#include "bind.h"
#include "brokerlog.h"
#include "config.h"
#include "config_job.h"
#include "data.h"
#include "job.h"
#include "log.h"
#include "logger.h"
#include "login.h"
#include "metrics.h"
#include "metrics_snap.h"
#include "provision.h"
#include "purge.h"
#include "reload.h"
#include "resident.h"
#include "rt_run.h"
#include "spare.h"

typedef int (*job_body)(int fd, const struct sbx_config *, const void *job,
    size_t len);

/* Each job: its body's exact size (one element's, for a job of many),
 * and its body. */
static const struct {
	size_t		 size;
	int		 many;
	job_body	 body;
} jobs[JOB_NTYPES] = {
	[JOB_PROVISION] = { sizeof(struct job_sandbox), 0, provision_body },
	[JOB_TEARDOWN] = { sizeof(struct job_sandbox), 0, teardown_body },
	[JOB_EVICT] = { sizeof(struct job_evict), 0, evict_body },
	[JOB_WARM_START] = { sizeof(struct job_warm), 0, warm_start_body },
	[JOB_WARM_REMOVE] = { sizeof(struct job_warm), 0, warm_remove_body },
	[JOB_RENAME] = { sizeof(struct job_renames), 0, rename_body },
	[JOB_RELOAD] = { 0, 0, reload_body },
	[JOB_REMOVE] = { sizeof(struct rt_gone), 1, remove_gone_body },
	[JOB_ADOPT] = { 0, 0, adopt_body },
	[JOB_CONFIG] = { sizeof(struct job_config), 0, config_body },
	[JOB_METRICS] = { sizeof(struct metrics_snap), 0, metrics_body },
	[JOB_LOG] = { 0, 0, log_body },
	[JOB_PURGE] = { 0, 0, purge_body },
	[JOB_LOGIN] = { sizeof(struct job_login), 0, login_body },
	[JOB_DATA] = { sizeof(struct job_data), 0, data_body },
	[JOB_BROKERLOG] = { 0, 0, brokerlog_body },
	[JOB_BIND] = { sizeof(struct job_bind), 0, bind_body },
	[JOB_CLAIM] = { sizeof(struct job_claims), 0, claim_body },
	[JOB_RESIDENT] = { sizeof(struct job_data), 0, resident_body },
};

/* The memfd on stdin, whole, if it is sealed and at most max bytes. */
static char *
read_memfd(size_t *len)
{
	struct stat st;
	char *buf;
	int seals = fcntl(STDIN_FILENO, F_GET_SEALS);

	if (seals == -1 || (seals & JOB_SEALS) != JOB_SEALS ||
	    fstat(STDIN_FILENO, &st) == -1 || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)(sizeof(struct job_head) +
	    sizeof(struct job_env)) || st.st_size > (off_t)JOB_MAX ||
	    (buf = malloc((size_t)st.st_size)) == NULL)
		return NULL;
	if (pread(STDIN_FILENO, buf, (size_t)st.st_size, 0) != st.st_size) {
		free(buf);
		return NULL;
	}
	*len = (size_t)st.st_size;
	return buf;
}

/* The config the job's env and services make: what the bodies read. */
static int
job_config(struct sbx_config *cfg, const struct job_env *e,
    const char *svc, size_t left)
{
	size_t i;

	if (e->nservices > SBX_MAX_SERVICES ||
	    e->nruntime_args > CFG_MAX_RTARGS ||
	    left < e->nservices * sizeof(struct service_cfg) ||
	    !memchr(e->runtime, '\0', sizeof(e->runtime)) ||
	    !memchr(e->run_dir, '\0', sizeof(e->run_dir)) ||
	    !memchr(e->state_dir, '\0', sizeof(e->state_dir)) ||
	    !memchr(e->projects, '\0', sizeof(e->projects)) ||
	    !memchr(e->subuid_file, '\0', sizeof(e->subuid_file)))
		return -1;
	for (i = 0; i < e->nruntime_args; i++)
		if (!memchr(e->runtime_args[i], '\0', CFG_STR))
			return -1;
	memset(cfg, 0, sizeof(*cfg));
	memcpy(cfg->runtime, e->runtime, sizeof(cfg->runtime));
	cfg->nruntime_args = e->nruntime_args;
	memcpy(cfg->runtime_args, e->runtime_args, sizeof(cfg->runtime_args));
	memcpy(cfg->run_dir, e->run_dir, sizeof(cfg->run_dir));
	memcpy(cfg->state_dir, e->state_dir, sizeof(cfg->state_dir));
	memcpy(cfg->projects, e->projects, sizeof(cfg->projects));
	memcpy(cfg->subuid_file, e->subuid_file, sizeof(cfg->subuid_file));
	cfg->runtime_timeout = e->runtime_timeout;
	cfg->nservices = e->nservices;
	memcpy(cfg->services, svc, e->nservices * sizeof(struct service_cfg));
	return 0;
}

/* The job's head, config and body, checked against its row. */
static int
job_take(const char *name, char *buf, size_t len, struct sbx_config *cfg,
    enum job_type *type, const char **body, size_t *blen)
{
	struct job_head h;
	struct job_env e;
	size_t off = sizeof(h) + sizeof(e);

	memcpy(&h, buf, sizeof(h));
	memcpy(&e, buf + sizeof(h), sizeof(e));
	if (h.magic != JOB_MAGIC || job_name(h.type) == NULL ||
	    strcmp(job_name(h.type), name) != 0 ||
	    job_config(cfg, &e, buf + off, len - off) == -1)
		return -1;
	off += e.nservices * sizeof(struct service_cfg);
	if (h.len != len - off || (jobs[h.type].many ?
	    (h.len == 0 || h.len % jobs[h.type].size != 0) :
	    h.len != jobs[h.type].size))
		return -1;
	*type = (enum job_type)h.type;
	*body = buf + off;
	*blen = (size_t)h.len;
	log_init(JOB_ARGV0, (int)e.foreground);
	return 0;
}

int
main(int argc, char *argv[])
{
	static struct sbx_config cfg;	/* 245 KB: not on the stack */
	enum job_type type;
	const char *body;
	size_t len, blen;
	char *buf;
	int null, rc, spare;

	/* Executed from a descriptor, we would be named after its number
	 * in ps -e and top. */
	(void)prctl(PR_SET_NAME, JOB_ARGV0, 0, 0, 0);
	log_init(JOB_ARGV0, 1);
	spare = argc == 3 && strcmp(argv[1], job_name(JOB_DATA)) == 0 &&
	    strcmp(argv[2], JOB_SPARE_ARG) == 0;
	if (spare && (rc = spare_wait()) != 0)
		return rc == 1 ? 0 : 1;
	if ((argc != 2 && !spare) || (buf = read_memfd(&len)) == NULL ||
	    job_take(argv[1], buf, len, &cfg, &type, &body, &blen) == -1)
		fatalx("%s: no job of the monitor's on stdin", JOB_ARGV0);
	if ((null = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(null, STDIN_FILENO) == -1)
		fatal("/dev/null");
	/* A job with no result pipe: /dev/null (read-only) holds fd 3, so
	 * that nothing the job opens lands where a result would go. */
	if (fcntl(3, F_GETFD) == -1 && dup2(null, 3) == -1)
		fatal("fd 3");
	if (null != STDIN_FILENO && null != 3)
		close(null);
	/* Not inherited by the runtime's commands the job runs. */
	if (fcntl(3, F_GETFD) != -1 && fcntl(3, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fd 3");
	rc = jobs[type].body(3, &cfg, body, blen);
	explicit_bzero(buf, len);
	explicit_bzero(&cfg, sizeof(cfg));
	return rc;
}
