/*
 * helper.c - a worker is the monitor's own binary, executed anew.
 * runs in: helper_exec in a fork of the monitor (root, runtime deny
 * filter), helper_main in that fork once executed as sbx-worker (the same)
 *
 * A fork holds a copy of all the monitor holds: every tenant's passwords,
 * the cache, the pool. So a worker is a plain fork only until it has put
 * its job in a sealed memfd; then it executes /proc/self/exe (the inode
 * the monitor runs, whatever was installed since) as "sbx-worker JOB"
 * with the memfd as stdin and its result pipe, if any, at fd 3. There it
 * reads the config and the one job, checks their sizes against the job's
 * table row, and runs the job's body: it holds the job's own secrets
 * (a provision's passwords, needed to start and probe its services) and
 * none other. The filter loaded before the exec stays loaded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "helper.h"
#include "log.h"
#include "reload.h"
#include "rt_internal.h"

#define HELPER_MAGIC	0x73627877u	/* "sbxw" */
#define HELPER_SEALS	(F_SEAL_SEAL | F_SEAL_SHRINK | F_SEAL_GROW | \
	F_SEAL_WRITE)

struct helper_head {
	uint32_t	magic;
	uint32_t	job;
	uint32_t	foreground;	/* the monitor's log: stderr, else syslog */
	uint32_t	pad;
	uint64_t	cfg_size;
	uint64_t	len;
};

typedef int (*helper_body)(int fd, const struct sbx_config *,
    const void *job, size_t len);

/* Each job: its name in argv[1], its exact size (one element's, when a
 * job is an array of many), and its body. */
static const struct {
	const char	*name;
	size_t		 size;
	int		 many;
	helper_body	 body;
} jobs[HELPER_NJOBS] = {
	[HELPER_PROVISION] = { "provision", sizeof(struct job_sandbox), 0,
	    provision_body },
	[HELPER_TEARDOWN] = { "teardown", sizeof(struct job_sandbox), 0,
	    teardown_body },
	[HELPER_EVICT] = { "evict", sizeof(struct job_evict), 0, evict_body },
	[HELPER_WARM_START] = { "warm-start", sizeof(struct job_warm), 0,
	    rt_warm_start_body },
	[HELPER_WARM_REMOVE] = { "warm-remove", sizeof(struct job_warm), 0,
	    rt_warm_remove_body },
	[HELPER_RENAME] = { "rename", sizeof(struct job_renames), 0,
	    rt_rename_body },
	[HELPER_RELOAD] = { "reload", 0, 0, reload_body },
	[HELPER_REMOVE_GONE] = { "remove", sizeof(struct rt_gone), 1,
	    remove_gone_body },
	[HELPER_LIST] = { "list", 0, 0, list_body },
};

static int
write_job(int fd, const struct helper_head *h, const struct sbx_config *cfg,
    const void *job)
{
	const struct { const void *p; size_t n; } part[] = {
	    { h, sizeof(*h) }, { cfg, sizeof(*cfg) }, { job, h->len } };
	const char *p;
	size_t i, left;
	ssize_t n;

	for (i = 0; i < sizeof(part) / sizeof(part[0]); i++)
		for (p = part[i].p, left = part[i].n; left > 0; p += n,
		    left -= (size_t)n)
			if ((n = write(fd, p, left)) <= 0)
				return -1;
	return fcntl(fd, F_ADD_SEALS, HELPER_SEALS) == -1 ||
	    lseek(fd, 0, SEEK_SET) == -1 ? -1 : 0;
}

void
helper_exec(const struct sbx_config *cfg, enum helper_job job,
    const void *arg, size_t len)
{
	struct helper_head h = { .magic = HELPER_MAGIC, .job = job,
	    .foreground = (uint32_t)log_foreground(), .cfg_size = sizeof(*cfg),
	    .len = len };
	char *argv[] = { (char *)(uintptr_t)HELPER_ARGV0,
	    (char *)(uintptr_t)jobs[job].name, NULL };
	char *envp[] = { (char *)(uintptr_t)"SBX_DEBUG=1", NULL };
	int fd, exe;

	if ((fd = memfd_create("sbx-job", MFD_CLOEXEC |
	    MFD_ALLOW_SEALING)) == -1 || write_job(fd, &h, cfg, arg) == -1 ||
	    dup2(fd, STDIN_FILENO) == -1) {
		log_warn("worker %s: cannot hand its job over", jobs[job].name);
		_exit(127);
	}
	/* The result pipe stays open across this exec only. */
	if (fcntl(3, F_GETFD) != -1 && fcntl(3, F_SETFD, 0) == -1)
		_exit(127);
	if ((exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC)) != -1)
		fexecve(exe, argv, getenv("SBX_DEBUG") != NULL ? envp :
		    envp + 1);
	log_warn("worker %s: cannot execute the monitor's binary",
	    jobs[job].name);
	_exit(127);
}

/* The job on stdin: the memfd helper_exec sealed, its sizes as the
 * table says. NULL, logged, otherwise. */
static void *
read_job(const char *name, struct helper_head *h, enum helper_job *job)
{
	struct stat st;
	char *buf;
	size_t want;
	int seals = fcntl(STDIN_FILENO, F_GET_SEALS);

	if (seals == -1 || (seals & HELPER_SEALS) != HELPER_SEALS ||
	    fstat(STDIN_FILENO, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (size_t)st.st_size < sizeof(*h) ||
	    (buf = malloc((size_t)st.st_size)) == NULL)
		return NULL;
	if (pread(STDIN_FILENO, buf, (size_t)st.st_size, 0) != st.st_size)
		goto bad;
	memcpy(h, buf, sizeof(*h));
	if (h->magic != HELPER_MAGIC || h->job == 0 || h->job >= HELPER_NJOBS ||
	    strcmp(jobs[h->job].name, name) != 0 ||
	    h->cfg_size != sizeof(struct sbx_config) ||
	    h->len > (uint64_t)st.st_size)
		goto bad;
	want = sizeof(*h) + sizeof(struct sbx_config) + (size_t)h->len;
	if ((size_t)st.st_size != want || (jobs[h->job].many ?
	    (h->len == 0 || h->len % jobs[h->job].size != 0) :
	    h->len != jobs[h->job].size))
		goto bad;
	*job = (enum helper_job)h->job;
	return buf;
bad:
	explicit_bzero(buf, (size_t)st.st_size);
	free(buf);
	return NULL;
}

int
helper_main(int argc, char *argv[])
{
	struct helper_head h;
	enum helper_job job;
	const struct sbx_config *cfg;
	char *buf;
	int null, rc;

	if (argc < 1 || strcmp(argv[0], HELPER_ARGV0) != 0)
		return 0;
	/* fexecve names the process after its descriptor: "sbx-worker"
	 * in ps -e and top, as in ps -ef. */
	(void)prctl(PR_SET_NAME, HELPER_ARGV0, 0, 0, 0);
	log_init("sbx-monitor", 1);
	if (argc != 2 || (buf = read_job(argv[1], &h, &job)) == NULL)
		fatalx("%s: no job of the monitor's on stdin", HELPER_ARGV0);
	if (!h.foreground)
		log_init("sbx-monitor", 0);
	if ((null = open("/dev/null", O_RDONLY)) == -1 ||
	    dup2(null, STDIN_FILENO) == -1)
		fatal("/dev/null");
	if (null != STDIN_FILENO)
		close(null);
	/* Not inherited by the runtime's commands the job runs. */
	if (fcntl(3, F_GETFD) != -1 && fcntl(3, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fd 3");
	cfg = (const struct sbx_config *)(void *)(buf + sizeof(h));
	rc = jobs[job].body(3, cfg, buf + sizeof(h) + sizeof(*cfg),
	    (size_t)h.len);
	explicit_bzero(buf, sizeof(h) + sizeof(*cfg) + (size_t)h.len);
	_exit(rc);
}
