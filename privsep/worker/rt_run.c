/*
 * rt_run.c - the removals and the listing, built on run_logged (run.c).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and a listing's child until its exec (root, runtime deny
 *   filter)
 *
 * JOB_LIST and JOB_REMOVE are adoption's, at the monitor's
 * start: the listing holds agents' names, so it is parsed in a worker,
 * by a child of it that dropped to sbx-job (rt_seen.c), and the monitor
 * only checks the fixed entries written.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "guard.h"
#include "iox.h"
#include "job.h"
#include "jobuser.h"
#include "log.h"
#include "proc.h"
#include "rt_run.h"
#include "rt_seen.h"
#include "run.h"
#include "runtime_argv.h"
#include "scfilter.h"
#include "sockdir.h"

/* A failure of ours, not the runtime's, for the caller to report. */
static int
own_failure(struct run_result *r, const char *why)
{
	memset(r, 0, sizeof(*r));
	r->status = -1;
	strlcpy(r->err, why, sizeof(r->err));
	return -1;
}

#define RT_MAX_IDS	128	/* ids per docker call: within RT_MAX_ARGV */

/*
 * The next ids (at most cap) of what docker's ps -q printed, one a line,
 * from *cursor on. Each is 12-64 lowercase hex digits before it goes
 * into an argv. The count; 0 at the end; -1 on anything else.
 */
static int
take_ids(char **cursor, char *ids[], size_t cap)
{
	char *id;
	size_t n = 0, len;

	while (n < cap && (id = strsep(cursor, "\n")) != NULL) {
		if ((len = strlen(id)) == 0)
			continue;
		if (len < 12 || len > 64 ||
		    strspn(id, "0123456789abcdef") != len)
			return -1;
		ids[n++] = id;
	}
	return (int)n;
}

/* docker: rm -f every container whose id its ps printed in text. */
static int
rm_listed(const struct sbx_config *cfg, const char *text, int64_t deadline,
    struct run_result *r)
{
	char copy[sizeof(r->out)], *cursor = copy, *ids[RT_MAX_IDS];
	struct argv_buf a;
	int n;

	strlcpy(copy, text, sizeof(copy));
	while ((n = take_ids(&cursor, ids, RT_MAX_IDS)) != 0) {
		if (n == -1)
			return own_failure(r, "unexpected runtime ps output");
		rt_argv_rm_ids(&a, cfg, ids, (size_t)n);
		if (a.overflow)
			return own_failure(r, "the runtime argument list is "
			    "too long");
		if (run_logged(a.v, (char *const *)(uintptr_t)rt_base_env,
		    deadline, NULL, r) == -1)
			return -1;
	}
	return 0;
}

int
remove_key(const struct sbx_config *cfg, const struct sbx_key *key,
    int64_t deadline, struct run_result *r)
{
	struct argv_buf a;

	rt_argv_rm_key(&a, cfg, key->uid, key->agent);
	if (a.overflow)		/* the caller reports r->err */
		return own_failure(r, "the runtime argument list is too long");
	if (run_logged(a.v, (char *const *)(uintptr_t)rt_base_env, deadline,
	    NULL, r) == -1)
		return -1;
	/* docker: that was ps -q of the key's containers; rm them now. */
	if (rt_is_docker(cfg) && rm_listed(cfg, r->out, deadline, r) == -1)
		return -1;
	/* The containers are gone: nothing writes in their directories,
	 * and their ports may be another's next. */
	sockdir_remove(cfg, key->uid, key->agent);
	return guard_del(cfg, key->uid, key->agent, NULL) == -1 ? -1 : 0;
}

/*
 * A podman killed in the middle of a run (its worker died with the
 * monitor) can leave the name taken by a container that is only in its
 * storage, which neither ps -a nor rm by label sees.
 */
void
remove_storage(const struct sbx_config *cfg, const char *name,
    int64_t deadline)
{
	struct argv_buf a;
	struct run_result r;

	rt_argv_rm_storage(&a, cfg, name);
	if (!a.overflow)
		run_logged(a.v, (char *const *)(uintptr_t)rt_base_env,
		    deadline, NULL, &r);
}

/* rm of one name, or two (n): a missing one is no error. */
int
remove_names(const struct sbx_config *cfg, const char *first,
    const char *second, int64_t deadline)
{
	const char *v[2] = { first, second };
	struct argv_buf a;
	struct run_result r;

	rt_argv_rm_names(&a, cfg, v, second != NULL ? 2 : 1);
	return a.overflow || run_logged(a.v, (char *const *)(uintptr_t)
	    rt_base_env, deadline, NULL, &r) == -1 ? -1 : 0;
}

/*
 * podman does not make a rename and a removal of one container atomic
 * with each other: a rename that lands while rm of that container is at
 * work leaves the new name taken with no container under it (rm frees
 * the name it looked the container up by), and no later container can
 * have that name (podman 4.3). So the renames of claimed warm
 * containers (rename_body) and their removals take turns on one lock:
 * run_dir/.pool's, root's alone. -1: no lock (no .pool, so nothing was
 * claimed from it).
 */
int
names_lock(const struct sbx_config *cfg)
{
	char pool[SBX_SOCKET_MAX];
	int fd, n;

	n = snprintf(pool, sizeof(pool), "%s/.pool", cfg->run_dir);
	if (n < 0 || (size_t)n >= sizeof(pool) ||
	    (fd = open(pool, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return -1;
	if (flock(fd, LOCK_EX) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

void
names_unlock(int fd)
{
	if (fd != -1)
		close(fd);
}

/* The one or two names of rt_svc_names; a claimed one's (warm) under
 * names_lock. */
int
remove_svc_names(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	char names[2][SBX_SLUG_MAX * 3];
	size_t n = rt_svc_names(key->uid, key->agent, service, warm, names);
	int lock, rc;

	if (n == 0)
		return -1;
	lock = warm != 0 ? names_lock(cfg) : -1;
	rc = remove_names(cfg, names[0], n == 2 ? names[1] : NULL, deadline);
	names_unlock(lock);
	return rc;
}

/* One service of a sandbox: its container and its socket directory. */
int
remove_service(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	if (remove_svc_names(cfg, key, service, warm, deadline) == -1)
		return -1;
	sockdir_remove_service(cfg, key->uid, key->agent, service);
	/* A claimed one's pool rule, should its claim have left it. */
	if (warm != 0 && guard_del_pool(cfg, service, warm) == -1)
		return -1;
	return guard_del(cfg, key->uid, key->agent, service);
}

/* The claimed warm containers of a sandbox: no label names their key. */
int
remove_claimed(const struct sbx_config *cfg, const struct sbx_key *key,
    const struct job_svc *svc, size_t n, int64_t deadline)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++)
		if (svc[i].warm != 0 && remove_service(cfg, key,
		    svc[i].conn.name, svc[i].warm, deadline) == -1)
			rc = -1;
	return rc;
}

/* A reshape: the services the sandbox had and no longer has. Bit i set:
 * the runtime said sb->prev[i]'s container is gone. */
uint32_t
remove_dropped(const struct sbx_config *cfg, const struct job_sandbox *sb,
    int64_t deadline)
{
	uint32_t gone = 0;
	size_t i;

	for (i = 0; i < sb->nprev; i++)
		if (sb->prev[i].dropped && remove_service(cfg, &sb->key,
		    sb->prev[i].conn.name, sb->prev[i].warm, deadline) == 0)
			gone |= 1U << i;
	return gone;
}


/* Run a listing with its stdout appended to fd (a memfd). 0 on exit 0. */
static int
list_run(const struct sbx_config *cfg, char *const argv[], const char *verb,
    int fd)
{
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		proc_child_setup(-1, fd, -1);
		if (dup2(3, STDOUT_FILENO) == -1 || sc_load_deny("runtime") == -1)
			_exit(126);
		execve(argv[0], argv, (char *const *)(uintptr_t)rt_base_env);
		_exit(127);
	}
	status = proc_wait(pid, now_ms() + (int64_t)cfg->runtime_timeout * 1000);
	if (status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	log_warnx("runtime %s %s: %s %d (its own words are on the monitor's "
	    "stderr)", argv[0], verb, status != -1 && WIFEXITED(status) ?
	    "exit status" : "killed by signal", status == -1 ? -1 :
	    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return -1;
}

/* All that fd holds, as a string to free; NULL if unreadable or huge. */
static char *
fd_text(int fd)
{
	struct stat st;
	char *text;

	if (fstat(fd, &st) == -1 || st.st_size >= JOB_LIST_MAX ||
	    (text = calloc(1, (size_t)st.st_size + 1)) == NULL)
		return NULL;
	if (pread(fd, text, (size_t)st.st_size, 0) != st.st_size) {
		free(text);
		return NULL;
	}
	return text;
}

/* docker: its ps printed ids; inspect them, RT_MAX_IDS at a time, into
 * the lines podman's ps prints. */
static char *
docker_lines(const struct sbx_config *cfg, char *ids_text)
{
	char *ids[RT_MAX_IDS], *cursor = ids_text, *text = NULL;
	struct argv_buf a;
	int fd, n;

	if ((fd = memfd_create("sbx-inspect", MFD_CLOEXEC)) == -1)
		return NULL;
	while ((n = take_ids(&cursor, ids, RT_MAX_IDS)) > 0) {
		rt_argv_list_ids(&a, cfg, ids, (size_t)n);
		if (a.overflow || list_run(cfg, a.v, "inspect", fd) == -1)
			break;
	}
	if (n == 0)
		text = fd_text(fd);
	else if (n == -1)
		log_warnx("runtime ps -q: a line that is not a container id");
	close(fd);
	return text;
}

/*
 * The listing holds agents' names: a child that dropped to sbx-job
 * (jobuser.c) parses it (rt_seen.c) into memory shared with us, at most
 * an entry a line. Root takes the entries whose strings end; what each
 * may be, adoption and the monitor check.
 */
struct seen_out {
	size_t		n;
	struct rt_seen	v[];
};
struct seen_work {
	char		*text;
	size_t		 cap;
	struct seen_out	*out;
};

static int
seen_parse(void *arg)
{
	struct seen_work *w = arg;
	struct rt_seen *v;
	size_t n;

	if (rt_seen_parse(w->text, &v, &n) == -1)
		return 1;
	if (n <= w->cap && n > 0)
		memcpy(w->out->v, v, n * sizeof(*v));
	w->out->n = n;
	free(v);
	return n <= w->cap ? 0 : 1;
}

static int
seen_take(char *text, struct rt_seen **v, size_t *n)
{
	struct seen_work w = { .text = text, .cap = 1 };
	const char *p;
	size_t len, i;
	int rc = -1;

	for (p = text; *p != '\0'; p++)
		w.cap += *p == '\n';
	len = sizeof(*w.out) + w.cap * sizeof(w.out->v[0]);
	if ((w.out = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED |
	    MAP_ANONYMOUS, -1, 0)) == MAP_FAILED)
		return -1;
	/* The job's result pipe, fd 3 (main.c), is not the child's. */
	if (jobuser_fork(3, seen_parse, &w) == 0 && w.out->n <= w.cap &&
	    (*v = reallocarray(NULL, w.out->n + 1, sizeof(**v))) != NULL) {
		*n = w.out->n;
		memcpy(*v, w.out->v, *n * sizeof(**v));
		for (i = 0; i < *n; i++)
			if (!memchr((*v)[i].name, '\0', sizeof((*v)[i].name)) ||
			    !memchr((*v)[i].agent, '\0', sizeof((*v)[i].agent)))
				break;
		if (i == *n)
			rc = 0;
		else
			free(*v);
	}
	munmap(w.out, len);
	return rc;
}

int
rt_list(const struct sbx_config *cfg, struct rt_seen **v, size_t *n)
{
	struct argv_buf a;
	char *text = NULL, *lines;
	int ps, rc = -1;

	rt_argv_list(&a, cfg);
	if ((ps = memfd_create("sbx-ps", MFD_CLOEXEC)) == -1)
		return -1;
	if (list_run(cfg, a.v, "ps", ps) == 0)
		text = fd_text(ps);
	close(ps);
	if (text != NULL && rt_is_docker(cfg)) {
		lines = docker_lines(cfg, text);
		free(text);
		text = lines;
	}
	if (text != NULL && seen_take(text, v, n) == 0)
		rc = 0;
	free(text);
	return rc;
}

/* One discarded container (by name), service or key: -1 if it is not
 * all strings, or did not go. */
static int
remove_one(const struct sbx_config *cfg, const struct rt_gone *g,
    int64_t deadline)
{
	struct run_result r;

	if (memchr(g->name, '\0', sizeof(g->name)) == NULL ||
	    memchr(g->service, '\0', sizeof(g->service)) == NULL ||
	    memchr(g->key.agent, '\0', sizeof(g->key.agent)) == NULL)
		return -1;
	if (g->name[0] != '\0')
		return remove_names(cfg, g->name, NULL, deadline);
	if (g->service[0] != '\0')
		return remove_service(cfg, &g->key, g->service, 0, deadline);
	return remove_key(cfg, &g->key, deadline, &r);
}

/* JOB_REMOVE: 0 when every one went. */
int
remove_gone_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	const struct rt_gone *gone = job;
	int64_t deadline;
	size_t i;
	int failed = 0;

	(void)fd;
	for (i = 0; i < len / sizeof(*gone); i++) {
		deadline = now_ms() + (int64_t)cfg->runtime_timeout * 1000;
		if (remove_one(cfg, &gone[i], deadline) == -1)
			failed = 1;
	}
	return failed;
}

