/*
 * test_jobuser.c - the parsing jobs run as sbx-job (privsep/worker/jobuser.c),
 * proven on the real sbx-worker: a JOB_CONFIG whose sbx.conf is a FIFO only
 * root may open is caught mid-parse, and the process reading it is sbx-job,
 * filtered and without capabilities, while its parent stays root; a reload
 * reads a directory and files that only root may read; the metrics file is
 * made where only root may write; the runtime's listing is parsed. Without
 * the user, or with a user sbx-job of uid 0, a job fails with one line
 * that says so and answers nothing. And sbx.conf keeps sbx-job's uid
 * apart from the broker's and the sandboxes'.
 * runs in: the unit tests (root, unfiltered), and the sbx-worker they start
 */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "job.h"
#include "load.h"
#include "metrics_snap.h"

#ifndef SBX_WORKER
#error "SBX_WORKER: the built sbx-worker's path, from tests.mk"
#endif

/* ASan's exit path makes calls (sigaltstack) no allowlist has: a job
 * that gets past its drop is killed there. Failing closed needs no
 * filter, and is tested anyway. */
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() cr_skip_test("the job allowlist kills ASan's exit")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static char dir[64];
static uid_t job_uid;

static void
setup(void)
{
	struct passwd *pw;

	if (geteuid() != 0)
		cr_skip_test("the drop needs root");
	if ((pw = getpwnam(JOB_USER)) == NULL)
		cr_skip_test("no user %s (contrib/setup-host.sh makes it)",
		    JOB_USER);
	job_uid = pw->pw_uid;
	strlcpy(dir, "/tmp/sbx-jobuser.XXXXXX", sizeof(dir));
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0700), 0);
}

static void
teardown(void)
{
	char cmd[128];

	if (dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		cr_assert_eq(system(cmd), 0);
	}
}

static void
mkfile(const char *name, mode_t mode, const char *text)
{
	char p[256];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	cr_assert_neq(fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, mode), -1);
	cr_assert_eq(write_all(fd, text, strlen(text), INT64_MAX), 0);
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

struct worker {
	pid_t	pid;
	int	result;		/* its fd 3's read end */
	int	err;		/* its stderr's read end */
};

/* passwd over /etc/passwd in a mount namespace of the child's own. */
static void
swap_passwd(const char *passwd)
{
	if (unshare(CLONE_NEWNS) == -1 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == -1 ||
	    mount(passwd, "/etc/passwd", NULL, MS_BIND, NULL) == -1)
		_exit(120);
}

/* sbx-worker with the job on stdin as the monitor hands it (jobpool.c):
 * a sealed memfd, no service, its log on stderr. */
static struct worker
spawn(enum job_type type, const void *body, size_t len,
    const struct job_env *env, const char *passwd)
{
	struct job_head h = { .magic = JOB_MAGIC, .type = type, .len = len };
	char *argv[] = { (char *)JOB_ARGV0, (char *)job_name(type), NULL };
	struct worker w;
	int res[2], err[2], mfd;

	cr_assert_eq(pipe(res), 0);
	cr_assert_eq(pipe(err), 0);
	cr_assert_neq(mfd = memfd_create("job", MFD_ALLOW_SEALING), -1);
	cr_assert_eq(write_all(mfd, &h, sizeof(h), INT64_MAX), 0);
	cr_assert_eq(write_all(mfd, env, sizeof(*env), INT64_MAX), 0);
	cr_assert_eq(write_all(mfd, body, len, INT64_MAX), 0);
	cr_assert_eq(fcntl(mfd, F_ADD_SEALS, JOB_SEALS), 0);
	cr_assert_eq(lseek(mfd, 0, SEEK_SET), 0);
	cr_assert_neq(w.pid = fork(), -1);
	if (w.pid == 0) {
		if (passwd != NULL)
			swap_passwd(passwd);
		if (dup2(mfd, 0) == -1 || dup2(err[1], 2) == -1 ||
		    dup2(res[1], 3) == -1)
			_exit(121);
		closefrom(4);
#if defined(__SANITIZE_ADDRESS__)
		/* What the worker holds at its exit is not what is tested:
		 * a leak report would be a second line on its stderr. */
		setenv("ASAN_OPTIONS", "detect_leaks=0", 1);
#endif
		execv(SBX_WORKER, argv);
		_exit(122);
	}
	close(mfd);
	close(res[1]);
	close(err[1]);
	w.result = res[0];
	w.err = err[0];
	return w;
}

static int
finish(struct worker *w, char *err, size_t errlen)
{
	ssize_t n, got = 0;
	int status;

	while ((size_t)got < errlen - 1 && (n = read(w->err, err + got,
	    errlen - 1 - (size_t)got)) > 0)
		got += n;
	err[got] = '\0';
	cr_assert_eq(waitpid(w->pid, &status, 0), w->pid);
	close(w->err);
	close(w->result);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

static void
env_for(struct job_env *e)
{
	memset(e, 0, sizeof(*e));
	e->foreground = 1;
	snprintf(e->projects, sizeof(e->projects), "%s/projects", dir);
	snprintf(e->subuid_file, sizeof(e->subuid_file), "%s/subuid", dir);
	snprintf(e->state_dir, sizeof(e->state_dir), "%s/state", dir);
}

/* A line of /proc/pid/status: its value. */
static int
status_of(pid_t pid, const char *key, char *out, size_t len)
{
	char p[64], line[256];
	size_t klen = strlen(key);
	FILE *f;
	int found = 0;

	snprintf(p, sizeof(p), "/proc/%d/status", (int)pid);
	if ((f = fopen(p, "re")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ':') {
			strlcpy(out, line + klen + 1 + strspn(line + klen + 1,
			    " \t"), len);
			out[strcspn(out, "\n")] = '\0';
			found = 1;
		}
	fclose(f);
	return found;
}

/* A child of parent whose real, effective, saved and file uids are all
 * uid, within 5 s; 0 if none. */
static pid_t
child_as(pid_t parent, uid_t uid)
{
	char want[64], got[64], p[64], stat[512], *rp;
	struct dirent *de;
	DIR *d;
	FILE *f;
	int i;
	pid_t pid, found = 0;

	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)uid,
	    (unsigned)uid, (unsigned)uid, (unsigned)uid);
	for (i = 0; i < 500 && found == 0; i++) {
		cr_assert_not_null(d = opendir("/proc"));
		while (found == 0 && (de = readdir(d)) != NULL) {
			if ((pid = (pid_t)atoi(de->d_name)) <= 0)
				continue;
			snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
			if ((f = fopen(p, "re")) == NULL)
				continue;
			if (fgets(stat, sizeof(stat), f) != NULL &&
			    (rp = strrchr(stat, ')')) != NULL &&
			    atoi(rp + 4) == parent &&
			    status_of(pid, "Uid", got, sizeof(got)) &&
			    strcmp(got, want) == 0)
				found = pid;
			fclose(f);
		}
		closedir(d);
		if (found == 0)
			usleep(10000);
	}
	return found;
}

/* The drop (shared/drop.c) sets the uids, then no_new_privs, then loads
 * the filter: a child found by its uid may not have reached the rest.
 * Its state is read once its filter is loaded, within 5 s. */
static bool
filtered(pid_t pid)
{
	char got[64];
	int i;

	for (i = 0; i < 500; i++) {
		if (status_of(pid, "Seccomp_filters", got, sizeof(got)) &&
		    strcmp(got, "0") != 0)
			return true;
		usleep(10000);
	}
	return false;
}

TestSuite(jobuser, .init = setup, .fini = teardown);

/*
 * sbx.conf is a FIFO only root may open: root opens it, and the child
 * that reads and parses it, caught waiting for its bytes, is sbx-job with
 * no capability, no_new_privs and two filters (the runtime deny list, the
 * job allowlist); the parent that will write the answer is still root.
 */
Test(jobuser, config_parsed_by_sbx_job)
{
	struct job_config j = { .check = 0 };
	struct config_result *r;
	struct job_env e;
	struct worker w;
	char got[64], err[1024], *text;
	size_t len;
	pid_t child;
	int fifo;
	FILE *f;

	SKIP_UNDER_ASAN();

	env_for(&e);
	snprintf(j.path, sizeof(j.path), "%s/sbx.conf", dir);
	cr_assert_eq(mkfifo(j.path, 0600), 0);
	w = spawn(JOB_CONFIG, &j, sizeof(j), &e, NULL);
	cr_assert_neq(fifo = open(j.path, O_WRONLY | O_CLOEXEC), -1);
	child = child_as(w.pid, job_uid);
	cr_assert_neq(child, 0, "no child of the worker runs as %s", JOB_USER);
	cr_assert(filtered(child), "its drop never loaded a filter");
	cr_assert(status_of(child, "CapEff", got, sizeof(got)));
	cr_assert_str_eq(got, "0000000000000000");
	cr_assert(status_of(child, "NoNewPrivs", got, sizeof(got)));
	cr_assert_str_eq(got, "1");
	cr_assert(status_of(child, "Seccomp_filters", got, sizeof(got)));
	cr_assert_str_eq(got, "1", "the job allowlist (the test loads no "
	    "runtime deny list): %s", got);
	cr_assert(status_of(w.pid, "Uid", got, sizeof(got)));
	cr_assert_str_eq(got, "0\t0\t0\t0", "the parent: %s", got);

	cr_assert_not_null(f = fopen("policy/local.conf", "re"));
	cr_assert_not_null(text = malloc(65536));
	len = fread(text, 1, 65536, f);
	fclose(f);
	cr_assert_eq(write_all(fifo, text, len, INT64_MAX), 0);
	close(fifo);
	free(text);
	cr_assert_not_null(r = calloc(1, sizeof(*r)));
	cr_assert_eq(read_full(w.result, r, sizeof(*r), now_ms() + 10000), 0);
	cr_assert_eq(r->magic, CONFIG_MAGIC);
	cr_assert(r->ok, "%s", r->err);
	cr_assert_str_eq(r->cfg.broker_user, "nobody");
	cr_assert_eq(finish(&w, err, sizeof(err)), 0, "%s", err);
	free(r);
}

/* A reload of a projects directory and files that only root may read:
 * root opens them, sbx-job parses them. */
Test(jobuser, reload_reads_roots_files)
{
	struct reload_result *r;
	struct job_env e;
	struct worker w;
	char p[256], err[1024];

	SKIP_UNDER_ASAN();

	env_for(&e);
	snprintf(p, sizeof(p), "%s/projects", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	mkfile("projects/demo.conf", 0600, "[project]\nallow_users = 0\n");
	mkfile("subuid", 0600, "root:100000:65536\n");
	snprintf(p, sizeof(p), "%s/state", dir);
	cr_assert_eq(mkdir(p, 0700), 0);
	w = spawn(JOB_RELOAD, "", 0, &e, NULL);
	cr_assert_not_null(r = calloc(1, sizeof(*r)));
	cr_assert_eq(read_full(w.result, r, sizeof(*r), now_ms() + 10000), 0);
	cr_assert_eq(finish(&w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(r->magic, RELOAD_MAGIC);
	cr_assert(r->projects_ok);
	cr_assert_eq(r->nprojects, 1);
	cr_assert_str_eq(r->projects[0].slug, "demo");
	cr_assert(r->projects[0].valid, "%s", r->projects[0].why);
	cr_assert(r->subuid_ok, "%s", r->err);
	cr_assert_eq(r->nranges, 1);
	free(r);
}

/* The metrics file, in a directory only root may write to: root makes
 * it, sbx-job fills it, root renames it into place. */
Test(jobuser, metrics_written_through_roots_file)
{
	struct metrics_snap *m;
	struct job_env e;
	struct worker w;
	struct stat st;
	char err[1024], line[256];
	uint32_t code = 0;
	FILE *f;
	int seen = 0;

	SKIP_UNDER_ASAN();

	env_for(&e);
	cr_assert_not_null(m = calloc(1, sizeof(*m)));
	snprintf(m->path, sizeof(m->path), "%s/sbx.prom", dir);
	m->sandboxes = 7;
	w = spawn(JOB_METRICS, m, sizeof(*m), &e, NULL);
	cr_assert_eq(read_full(w.result, &code, sizeof(code), now_ms() +
	    10000), 0);
	cr_assert_eq(finish(&w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(code, SBX_OK);
	cr_assert_eq(stat(m->path, &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_not_null(f = fopen(m->path, "re"));
	while (fgets(line, sizeof(line), f) != NULL)
		seen |= strcmp(line, "sbx_sandboxes 7\n") == 0;
	fclose(f);
	cr_assert(seen, "no sbx_sandboxes line");
	free(m);
}

/* The host's /etc/passwd with sbx-job's line dropped (uid NULL) or its
 * uid made uid, as dir/passwd. */
static char *
passwd_without(const char *uid)
{
	static char path[128];
	char line[1024], *text = NULL;
	size_t cap = 0, len = 0, n;
	FILE *f;

	cr_assert_not_null(f = fopen("/etc/passwd", "re"));
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, JOB_USER ":", strlen(JOB_USER) + 1) == 0) {
			if (uid == NULL)
				continue;
			snprintf(line, sizeof(line), "%s:x:%s:%s::/:"
			    "/usr/sbin/nologin\n", JOB_USER, uid, uid);
		}
		n = strlen(line);
		if (len + n + 1 > cap)
			cr_assert_not_null(text = realloc(text, cap = cap * 2 +
			    n + 4096));
		memcpy(text + len, line, n + 1);
		len += n;
	}
	fclose(f);
	mkfile("passwd", 0644, text != NULL ? text : "");
	free(text);
	snprintf(path, sizeof(path), "%s/passwd", dir);
	return path;
}

/* One job of each kind that drops, on a host whose sbx-job is as
 * passwd says: each must fail with err's one line, answering nothing. */
static void
fails_closed(const char *passwd, const char *want)
{
	struct job_config j = { .check = 0 };
	struct metrics_snap *m;
	struct job_env e;
	struct worker w;
	char err[2048], c;
	uint32_t code;
	ssize_t n;
	size_t i;

	env_for(&e);
	snprintf(j.path, sizeof(j.path), "%s/policy/local.conf",
	    getcwd(err, sizeof(err)));
	cr_assert_not_null(m = calloc(1, sizeof(*m)));
	snprintf(m->path, sizeof(m->path), "%s/sbx.prom", dir);
	for (i = 0; i < 3; i++) {
		if (i == 0)
			w = spawn(JOB_CONFIG, &j, sizeof(j), &e, passwd);
		else if (i == 1)
			w = spawn(JOB_RELOAD, "", 0, &e, passwd);
		else
			w = spawn(JOB_METRICS, m, sizeof(*m), &e, passwd);
		/* The metrics job answers a code, not SBX_OK; the others
		 * nothing at all. */
		code = SBX_OK;
		if (i == 2)
			(void)read_full(w.result, &code, sizeof(code),
			    now_ms() + 10000);
		n = read(w.result, &c, 1);
		cr_assert_neq(finish(&w, err, sizeof(err)), 0, "%s", err);
		cr_assert_eq(n, 0, "%s answered", job_name(i == 0 ?
		    JOB_CONFIG : i == 1 ? JOB_RELOAD : JOB_METRICS));
		if (i == 2) {
			cr_assert_neq(code, SBX_OK, "%s", err);
			cr_assert_eq(access(m->path, F_OK), -1);
		}
		cr_assert_not_null(strstr(err, want), "said: %s", err);
		cr_assert_eq(strchr(err, '\n'), err + strlen(err) - 1,
		    "not one line: %s", err);
	}
	free(m);
}

Test(jobuser, a_missing_user_fails_closed)
{
	fails_closed(passwd_without(NULL), "user sbx-job does not exist: "
	    "create it with `useradd --system --no-create-home --shell "
	    "/usr/sbin/nologin sbx-job`");
}

Test(jobuser, a_root_user_fails_closed)
{
	fails_closed(passwd_without("0"), "user sbx-job is root");
}

/*
 * The runtime's listing is parsed as sbx-job too (rt_run.c's rt_list): a
 * purge with a stand-in runtime, which lists two containers and removes
 * what it is told, removes both by the names the listing gave.
 */
Test(jobuser, the_listing_parsed_by_sbx_job)
{
	struct job_env e;
	struct worker w;
	char out[1024], err[1024];
	ssize_t n, got = 0;

	SKIP_UNDER_ASAN();
	env_for(&e);
	snprintf(e.runtime, sizeof(e.runtime), "%s/podman", dir);
	strlcpy(e.run_dir, dir, sizeof(e.run_dir));	/* its limit is short */
	e.runtime_timeout = 10;
	mkfile("podman", 0700, "#!/bin/sh\n"
	    "case \"$1\" in\n"
	    "ps) echo 'sbx-0-a1-postgres 42 u0 aa1 127.0.0.1:5544->5432/tcp'\n"
	    "    echo 'sbx-pool-redis-1 0 u a' ;;\n"
	    "esac\n");
	w = spawn(JOB_PURGE, "", 0, &e, NULL);
	while ((size_t)got < sizeof(out) - 1 && (n = read(w.result, out + got,
	    sizeof(out) - 1 - (size_t)got)) > 0)
		got += n;
	out[got] = '\0';
	cr_assert_eq(finish(&w, err, sizeof(err)), 0, "%s", err);
	cr_assert_not_null(strstr(out, "removed container sbx-0-a1-postgres\n"),
	    "%s", out);
	cr_assert_not_null(strstr(out, "removed container sbx-pool-redis-1\n"),
	    "%s", out);
}

/* policy/local.conf with its line starting with key replaced by line,
 * checked by config_load: its error, or "" if it passes. */
static const char *
local_conf_with(const char *key, const char *line)
{
	static struct sbx_config cfg;
	static char err[512];
	char in[1024], path[128];
	FILE *f, *out;

	snprintf(path, sizeof(path), "%s/sbx.conf", dir);
	cr_assert_not_null(f = fopen("policy/local.conf", "re"));
	cr_assert_not_null(out = fopen(path, "we"));
	while (fgets(in, sizeof(in), f) != NULL)
		fputs(strncmp(in, key, strlen(key)) == 0 ? line : in, out);
	fclose(f);
	cr_assert_eq(fclose(out), 0);
	if (config_load(path, &cfg, err, sizeof(err)) == 0)
		err[0] = '\0';
	return err;
}

/* The parsing jobs' uid is theirs alone: sbx.conf may give it neither to
 * the broker nor to the sandboxes' ranges. */
Test(jobuser, the_config_keeps_sbx_job_apart)
{
	char line[64];

	cr_assert_str_empty(local_conf_with("broker_user", "broker_user = "
	    "nobody\n"));
	cr_assert_not_null(strstr(local_conf_with("broker_user",
	    "broker_user = sbx-job\n"), "broker_user must not be sbx-job"));
	snprintf(line, sizeof(line), "[sbx]\nuserns_base = %u\n",
	    (unsigned)job_uid);
	cr_assert_not_null(strstr(local_conf_with("[sbx]", line),
	    "holds the uid of sbx-job"));
}
