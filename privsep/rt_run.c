/*
 * rt_run.c - one call of the runtime's CLI, and what to say when it fails.
 * runs in: workers (root, runtime deny filter), and the monitor at start
 *
 * A worker body (rt_worker.c) calls the runtime through run_logged: a
 * failure is logged with the call's verb, its exit status and the
 * runtime's own words, any secret scrubbed, and explain() turns it into
 * the agent's one sentence. The removals here are the workers' too.
 *
 * runtime_list and runtime_remove are adoption's (adopt.c), in the
 * monitor at start, before the loop, when waiting is allowed: each runs
 * its job in an exec'd worker (list_body, remove_gone_body) and waits
 * for it. The listing holds agents' names, so the worker parses it
 * (rt_seen.c) and the monitor only checks the fixed entries it wrote.
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

#include "iox.h"
#include "log.h"
#include "rt_internal.h"
#include "runtime.h"
#include "runtime_argv.h"
#include "scfilter.h"
#include "sockdir.h"

/* Replace every occurrence of secret in s by "***". */
static void
scrub(char *s, const char *secret)
{
	size_t n = strlen(secret);
	char *p;

	if (n < 3)	/* secrets are 32 hex digits */
		return;
	while ((p = strstr(s, secret)) != NULL) {
		memmove(p + 3, p + n, strlen(p + n) + 1);	/* n >= 3 */
		p[0] = p[1] = p[2] = '*';
	}
}

/* The runtime's first non-empty line of err, at most 100 bytes. */
static void
first_line(char *dst, size_t cap, const char *prefix, const char *text)
{
	size_t n;

	text += strspn(text, "\n");
	if ((n = strcspn(text, "\n")) > 100)
		n = 100;
	snprintf(dst, cap, "%s%.*s", prefix, (int)n, text);
}

/*
 * One line in the log for a failed runtime call: what ran, how it ended,
 * what the runtime said (its stderr, newlines folded, already scrubbed).
 */
static void
log_runtime_failure(char *const argv[], const struct run_result *r)
{
	const char *verb = argv[1] != NULL ? argv[1] : "?";
	char said[sizeof(r->err)];
	size_t i;

	strlcpy(said, r->err, sizeof(said));
	for (i = 0; said[i] != '\0'; i++)
		if (said[i] == '\n' || said[i] == '\r')
			said[i] = said[i + 1] == '\0' ? '\0' : ' ';
	if (r->exec_errno != 0)
		log_warnx("runtime %s %s: cannot execute: %s", argv[0], verb,
		    strerror(r->exec_errno));
	else if (r->status == -1)
		log_warnx("runtime %s %s: killed at its deadline; said: %s",
		    argv[0], verb, said[0] ? said : "nothing");
	else
		log_warnx("runtime %s %s: exit status %d; said: %s", argv[0],
		    verb, r->status, said[0] ? said : "nothing");
}

/* Run argv; on failure log it. 0 when the runtime exited 0. */
int
run_logged(char *const argv[], char *const envp[], int64_t deadline,
    const char *secret, struct run_result *r)
{
	run_argv(argv, envp, deadline, r);
	if (secret != NULL) {
		scrub(r->err, secret);
		scrub(r->out, secret);
	}
	if (r->status != 0)
		log_runtime_failure(argv, r);
	return r->status == 0 ? 0 : -1;
}

/* The agent's sentence for a failed runtime call. */
void
explain(char *msg, size_t cap, const char *what, const char *image,
    const struct run_result *r)
{
	if (r->exec_errno != 0)
		snprintf(msg, cap, "%s: the container runtime could not be "
		    "executed (%s).", what, strerror(r->exec_errno));
	else if (r->status == -1)
		snprintf(msg, cap, "%s: the container runtime did not answer "
		    "in time.", what);
	else if (image != NULL && (strstr(r->err, "image not known") != NULL ||
	    strstr(r->err, "No such image") != NULL ||
	    strstr(r->err, "initializing source") != NULL))
		snprintf(msg, cap, "%s: image %.60s is missing (run make "
		    "images).", what, image);
	else if (strstr(r->err, "netavark") != NULL ||
	    strstr(r->err, "slirp4netns") != NULL ||
	    strstr(r->err, "iptables") != NULL ||
	    strstr(r->err, "network namespace") != NULL) {
		char line[SBX_MESSAGE_MAX];

		first_line(line, sizeof(line), "", r->err);
		snprintf(msg, cap, "%s: the runtime's network back-end "
		    "failed: %.100s", what, line);
	} else {
		char pfx[64];

		snprintf(pfx, sizeof(pfx), "%s: the runtime failed: ", what);
		first_line(msg, cap, pfx, r->err);
	}
}

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
	/* The containers are gone: nothing writes in their directories. */
	sockdir_remove(cfg, key->uid, key->agent);
	return 0;
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

/* The one or two names of rt_svc_names. */
int
remove_svc_names(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	char names[2][SBX_SLUG_MAX * 3];
	size_t n = rt_svc_names(key->uid, key->agent, service, warm, names);

	return n == 0 ? -1 : remove_names(cfg, names[0], n == 2 ? names[1] :
	    NULL, deadline);
}

/* One service of a sandbox: its container and its socket directory. */
int
remove_service(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	if (remove_svc_names(cfg, key, service, warm, deadline) == -1)
		return -1;
	sockdir_remove_service(cfg, key->uid, key->agent, service);
	return 0;
}

/* The claimed warm containers of a sandbox: no label names their key. */
int
remove_claimed(const struct sbx_config *cfg, const struct sbx_key *key,
    const struct sbx_svc *svc, size_t n, int64_t deadline)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n; i++)
		if (svc[i].warm != 0 && remove_service(cfg, key,
		    svc[i].conn.name, svc[i].warm, deadline) == -1)
			rc = -1;
	return rc;
}

/* A reshape: did it drop sb->prev[i] (the new set lacks that service)? */
bool
dropped(const struct sbx_sandbox *sb, size_t i)
{
	size_t j;

	for (j = 0; j < sb->nservices; j++)
		if (strcmp(sb->prev[i].conn.name, sb->svc[j].conn.name) == 0)
			return false;
	return true;
}

/* A reshape: the services the sandbox had and no longer has. Bit i set:
 * the runtime said sb->prev[i]'s container is gone. */
uint32_t
remove_dropped(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    int64_t deadline)
{
	uint32_t gone = 0;
	size_t i;

	for (i = 0; i < sb->nprev; i++)
		if (dropped(sb, i) && remove_service(cfg, &sb->key,
		    sb->prev[i].conn.name, sb->prev[i].warm, deadline) == 0)
			gone |= 1U << i;
	return gone;
}

/* Wait for a child of ours until deadline, then kill it. Its status. */
static int
wait_child(pid_t pid, int64_t deadline)
{
	int pidfd = pidfd_open_pid(pid), status;
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };
	int64_t left;

	while (pidfd != -1 && (left = deadline - now_ms()) > 0 &&
	    poll(&pfd, 1, (int)(left > 1000 ? 1000 : left)) == 0)
		;
	if (pidfd == -1 || deadline - now_ms() <= 0)
		kill(pid, SIGKILL);
	if (pidfd != -1)
		close(pidfd);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return status;
}

#define LIST_MAX	(16u << 20)	/* 16 MiB: far beyond any host */
#define LIST_CALLS_MAX	8	/* the list worker: runtime_timeouts */

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
		worker_child_setup(fd);
		if (dup2(3, STDOUT_FILENO) == -1 || sc_load_deny("runtime") == -1)
			_exit(126);
		execve(argv[0], argv, (char *const *)(uintptr_t)rt_base_env);
		_exit(127);
	}
	status = wait_child(pid, now_ms() + (int64_t)cfg->runtime_timeout * 1000);
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

	if (fstat(fd, &st) == -1 || st.st_size >= LIST_MAX ||
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
 * At start, from the monitor: one job in an exec'd worker under the
 * runtime deny filter (keep_fd at its fd 3, or -1), waited for until
 * deadline. 0 when the worker exited 0.
 */
static int
run_worker(const struct sbx_config *cfg, enum helper_job job, const void *arg,
    size_t len, int keep_fd, int64_t deadline)
{
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		worker_child_setup(keep_fd);
		if (sc_load_deny("runtime") == -1)
			_exit(126);
		helper_exec(cfg, job, arg, len);
	}
	status = wait_child(pid, deadline);
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
	    0 : -1;
}

/* HELPER_LIST, in the exec'd worker: the runtime's listing, parsed, as
 * rt_seen entries written to fd (the monitor's memfd). */
int
list_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	struct argv_buf a;
	struct rt_seen *v = NULL;
	char *text = NULL, *lines;
	size_t n = 0;
	int ps, rc = 1;

	(void)job;
	(void)len;
	rt_argv_list(&a, cfg);
	if ((ps = memfd_create("sbx-ps", MFD_CLOEXEC)) == -1)
		return 1;
	if (list_run(cfg, a.v, "ps", ps) == 0)
		text = fd_text(ps);
	close(ps);
	if (text != NULL && rt_is_docker(cfg)) {
		lines = docker_lines(cfg, text);
		free(text);
		text = lines;
	}
	if (text != NULL && rt_seen_parse(text, &v, &n) == 0 &&
	    write_all(fd, v, n * sizeof(*v), now_ms() + 1000) == 0)
		rc = 0;
	free(text);
	free(v);
	return rc;
}

/* What the list worker wrote to fd, every entry checked; -1 otherwise. */
static int
seen_take(int fd, struct rt_seen **out, size_t *n)
{
	struct stat st;
	struct rt_seen *v;
	size_t i, k;

	if (fstat(fd, &st) == -1 || st.st_size < 0 || st.st_size >= LIST_MAX ||
	    (size_t)st.st_size % sizeof(*v) != 0)
		return -1;
	k = (size_t)st.st_size / sizeof(*v);
	if ((v = calloc(k + 1, sizeof(*v))) == NULL)	/* + 1: never 0 */
		return -1;
	if (pread(fd, v, (size_t)st.st_size, 0) != st.st_size)
		goto bad;
	for (i = 0; i < k; i++)
		if (!rt_seen_sound(&v[i]))
			goto bad;
	*out = v;
	*n = k;
	return 0;
bad:
	free(v);
	return -1;
}

int
runtime_list(const struct sbx_config *cfg, struct rt_seen **out, size_t *n)
{
	int fd, rc = -1;

	if ((fd = memfd_create("sbx-seen", MFD_CLOEXEC)) == -1)
		return -1;
	/* ps, and with docker an inspect per RT_MAX_IDS containers. */
	if (run_worker(cfg, HELPER_LIST, NULL, 0, fd, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000 * LIST_CALLS_MAX) == -1)
		log_warnx("runtime ps: the list worker failed (see above)");
	else if ((rc = seen_take(fd, out, n)) == -1)
		log_warnx("runtime ps: the list worker wrote what no listing "
		    "parses to");
	close(fd);
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

/* HELPER_REMOVE_GONE, in the exec'd worker: 0 when every one went. */
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

/*
 * Container names, labels and adoption's sweep of orphans take every sbx
 * container the runtime lists to be this monitor's: a second monitor on
 * the host (another config, another state_dir) would discard the first's
 * sandboxes as orphans at its start. So one monitor per host and
 * runtime: a lock in /run (root's alone; /run/lock is anyone's), held
 * for the monitor's life on a descriptor no child keeps past its exec,
 * waited for a few seconds for a monitor that is still exiting.
 */
#define HOST_LOCK_WAIT	50	/* tries, 100 ms apart */

static int	host_lock = -1;		/* held open: the lock */
static char	host_lock_path[64];

/* Our pid in the lock, for the line a second monitor is refused with. */
static void
host_lock_pid(void)
{
	char pid[16];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	if (ftruncate(host_lock, 0) == -1 ||
	    pwrite(host_lock, pid, (size_t)n, 0) != n)
		log_warn("%s: cannot write our pid", host_lock_path);
}

int
runtime_lock_host(const struct sbx_config *cfg, char *err, size_t errlen)
{
	const char *flavour = rt_is_docker(cfg) ? "docker" : "podman";
	const char *path = host_lock_path;
	char pid[16] = "";
	int fd, i;

	snprintf(host_lock_path, sizeof(host_lock_path),
	    "/run/sbx-monitor.%s.lock", flavour);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < HOST_LOCK_WAIT; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			host_lock = fd;
			host_lock_pid();
			return 0;
		}
		if (errno != EWOULDBLOCK)
			break;
		usleep(100000);
	}
	if (pread(fd, pid, sizeof(pid) - 1, 0) <= 0)
		strlcpy(pid, "?", sizeof(pid));
	pid[strcspn(pid, "\n")] = '\0';
	snprintf(err, errlen, "another sbx-monitor (pid %s) manages the %s "
	    "containers of this host (%s); one monitor per host and runtime, "
	    "or the second would discard the first's sandboxes", pid, flavour,
	    path);
	close(fd);
	return -1;
}

/* The lock's descriptor came through fork(): the lock is ours still
 * (it belongs to the open file), only the pid in it changes. */
void
runtime_lock_moved(void)
{
	if (host_lock != -1)
		host_lock_pid();
}

/* Remove what adoption discarded, with its directories, in a worker. */
int
runtime_remove(const struct sbx_config *cfg, const struct rt_gone *gone,
    size_t n)
{
	if (n == 0)
		return 0;
	return run_worker(cfg, HELPER_REMOVE_GONE, gone, n * sizeof(*gone), -1,
	    now_ms() + (int64_t)cfg->runtime_timeout * 1000 * (int64_t)(n + 1));
}
