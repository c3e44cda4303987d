/*
 * runtime_cli.c - podman (or docker) driven through its CLI.
 *
 * Provisions and teardowns run in forked workers (worker.c); each calls
 * the runtime with an argv from runtime_argv.c and reports one fixed-size
 * outcome, which the monitor checks before use. A runtime failure is
 * logged with the call's verb, its exit status and the runtime's own
 * words (any secret scrubbed), and the agent gets one sentence naming
 * the cause.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "probe.h"
#include "record.h"
#include "runtime.h"
#include "runtime_argv.h"
#include "scfilter.h"
#include "sockdir.h"

#define RUN_TRIES	3
#define LIVE_PORT_FRESH_MS 1000	/* see rt_is_live() */

struct svc_result {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};

struct prov_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;
};

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
static int
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
static void
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

static int
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
static void
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
static int
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
static int
remove_svc_names(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	char names[2][SBX_SLUG_MAX * 3];
	size_t n = rt_svc_names(key->uid, key->agent, service, warm, names);

	return n == 0 ? -1 : remove_names(cfg, names[0], n == 2 ? names[1] :
	    NULL, deadline);
}

/* One service of a sandbox: its container and its socket directory. */
static int
remove_service(const struct sbx_config *cfg, const struct sbx_key *key,
    const char *service, unsigned warm, int64_t deadline)
{
	if (remove_svc_names(cfg, key, service, warm, deadline) == -1)
		return -1;
	sockdir_remove_service(cfg, key->uid, key->agent, service);
	return 0;
}

/* The claimed warm containers of a sandbox: no label names their key. */
static int
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
static bool
dropped(const struct sbx_sandbox *sb, size_t i)
{
	size_t j;

	for (j = 0; j < sb->nservices; j++)
		if (strcmp(sb->prev[i].conn.name, sb->svc[j].conn.name) == 0)
			return false;
	return true;
}

/* A reshape: the services the sandbox had and no longer has. */
static void
remove_dropped(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    int64_t deadline)
{
	size_t i;

	for (i = 0; i < sb->nprev; i++)
		if (dropped(sb, i))
			remove_service(cfg, &sb->key, sb->prev[i].conn.name,
			    sb->prev[i].warm, deadline);
}

/* "PID [PORT ...]" from inspect: decimal, in range, nothing half-read. */
static int
parse_pid_port(const char *s, bool want_port, int *pid, int *port)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != ' ' || v <= 0 || v > INT_MAX)
		return -1;
	*pid = (int)v;
	*port = 0;
	if (!want_port)
		return 0;
	s = end + 1;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || (*end != ' ' && *end != '\0' &&
	    *end != '\n') || v <= 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}

static int
inspect(const struct sbx_config *cfg, const struct service_cfg *s,
    const char *name, int64_t deadline, struct svc_result *res)
{
	struct argv_buf a;
	struct run_result r;
	int pid, port;

	rt_argv_inspect(&a, cfg, name);
	if (run_logged(a.v, (char *const *)(uintptr_t)rt_base_env, deadline,
	    NULL, &r) == -1) {
		explain(res->message, sizeof(res->message), s->name, NULL, &r);
		return -1;
	}
	if (parse_pid_port(r.out, (s->transport & TRANSPORT_TCP) != 0, &pid,
	    &port) == -1) {
		log_warnx("runtime inspect %s: unexpected answer: %.80s", name,
		    r.out);
		snprintf(res->message, sizeof(res->message), "%s: the runtime "
		    "did not say the container's pid and port.", s->name);
		return -1;
	}
	res->pid = pid;
	res->port = (uint32_t)port;
	return 0;
}

/*
 * Where podman writes a container's main pid (--pidfile): with nothing
 * published, that is all inspect would tell, and one runtime call less
 * is ~50 ms less on the cold path (bench/README.md). tcp needs the port
 * the runtime picked: inspect.
 */
static int
pidfile_path(const struct sbx_config *cfg, const struct service_cfg *s,
    const char *name, char *out, size_t cap)
{
	int n;

	if (!rt_is_podman(cfg) || (s->transport & TRANSPORT_TCP))
		return -1;
	/* run_dir: on /run, a tmpfs, and made by sockdir_make already;
	 * a leftover is pruned at start like any stray entry there. */
	n = snprintf(out, cap, "%s/.pid.%s", cfg->run_dir, name);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

static int
read_pidfile(const struct sbx_config *cfg, const struct service_cfg *s,
    const char *name, struct svc_result *res)
{
	char path[CFG_STR + SBX_SLUG_MAX * 3 + 8], buf[16];
	ssize_t n = -1;
	char *end;
	long v;
	int fd;

	if (pidfile_path(cfg, s, name, path, sizeof(path)) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) != -1) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	unlink(path);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	v = strtol(buf, &end, 10);
	if (errno != 0 || end == buf || (*end != '\0' && *end != '\n') ||
	    v <= 0 || v > INT_MAX)
		return -1;
	res->pid = (int32_t)v;
	res->port = 0;
	return 0;
}

/* A decimal id below 2^31 at s; *end is what follows it. */
static int
parse_id(const char *s, char **end, unsigned long *id)
{
	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	*id = strtoul(s, end, 10);
	return errno != 0 || *id > INT_MAX ? -1 : 0;
}

/* docker's {{.Config.User}}: "uid[:gid]"; empty is root. A USER of a
 * uid alone runs with that gid here (the images' users have their own). */
static int
parse_user(const char *s, unsigned long *uid, unsigned long *gid)
{
	char *end;

	*uid = *gid = 0;
	if (*s == '\n' || *s == '\0')
		return 0;
	if (parse_id(s, &end, uid) == -1)
		return -1;
	*gid = *uid;
	if (*end == ':' && parse_id(end + 1, &end, gid) == -1)
		return -1;
	return *end == '\n' || *end == '\0' ? 0 : -1;
}

/*
 * docker: the socket directory goes to the image's USER, whom the
 * service runs as (podman's volume option U does this in its run). A
 * numeric uid[:gid] only: the monitor never reads an image's passwd.
 * The directory is ours, under run_dir where no tenant writes: no link
 * can be there, and lchown would not follow one.
 */
static int
give_sockdir(const struct sbx_config *cfg, const struct service_cfg *s,
    const char *dir, int64_t deadline, struct svc_result *res)
{
	struct argv_buf a;
	struct run_result r;
	unsigned long uid, gid;

	rt_argv_image_user(&a, cfg, s->image);
	if (a.overflow || run_logged(a.v, (char *const *)(uintptr_t)
	    rt_base_env, deadline, NULL, &r) == -1) {
		explain(res->message, sizeof(res->message), s->name, s->image,
		    &r);
		return -1;
	}
	if (parse_user(r.out, &uid, &gid) == -1) {
		snprintf(res->message, sizeof(res->message), "%s: on docker "
		    "the image's USER must be numeric (uid[:gid]).", s->name);
		return -1;
	}
	if (lchown(dir, (uid_t)uid, (gid_t)gid) == -1) {
		log_warn("socket directory %s", dir);
		snprintf(res->message, sizeof(res->message), "%s: cannot give "
		    "its socket directory to the image's user.", s->name);
		return -1;
	}
	return 0;
}

/*
 * Where a container runs: a sandbox's service, or a warm container (no
 * key: its owner is not known yet) in a directory of the pool's own.
 */
struct place {
	const struct sbx_key	*key;		/* NULL: warm */
	const char		*project;
	unsigned		 idmap;		/* uid range slot, 0 none */
	unsigned		 warm;		/* warm: its slot */
};

static int
place_dir(const struct sbx_config *cfg, const struct place *pl,
    const char *service, char *out, size_t cap)
{
	return pl->key != NULL ? sockdir_path(cfg, pl->key->uid,
	    pl->key->agent, service, out, cap) :
	    sockdir_pool_path(cfg, service, pl->warm, out, cap);
}

static int
place_name(const struct place *pl, const char *service, char *out, size_t cap)
{
	return pl->key != NULL ? rt_container_name(out, cap, pl->key->uid,
	    pl->key->agent, service) : rt_pool_name(out, cap, service, pl->warm);
}

static int
place_make_dir(const struct sbx_config *cfg, const struct place *pl,
    const char *service, char *err, size_t cap)
{
	return pl->key != NULL ? sockdir_make(cfg, pl->key->uid,
	    pl->key->agent, service, err, cap) :
	    sockdir_pool_make(cfg, service, pl->warm, err, cap);
}

static int
run_container(const struct sbx_config *cfg, const struct place *pl,
    const struct service_cfg *s, const struct sbx_conn *full,
    const char *name, int64_t deadline, struct svc_result *res)
{
	char *envp[RT_NBASE_ENV + CFG_MAX_ENV + 1];
	char envstore[CFG_MAX_ENV][CFG_STR * 2];
	char dir[SBX_SOCKET_MAX], err[SBX_MESSAGE_MAX];
	char pidfile[CFG_STR + SBX_SLUG_MAX * 3 + 8];
	struct run_spec sp = { .uid = pl->key != NULL ? pl->key->uid : 0,
	    .agent = pl->key != NULL ? pl->key->agent : NULL,
	    .project = pl->project, .name = name, .sockdir = dir,
	    .pidfile = pidfile_path(cfg, s, name, pidfile,
	    sizeof(pidfile)) == 0 ? pidfile : NULL,
	    .conn = full, .idmap_uid = pl->idmap == 0 ? 0 :
	    idmap_host_uid(cfg->userns_base, pl->idmap,
	    (unsigned)cfg->nservices, (unsigned)(s - cfg->services)) };
	struct argv_buf a;
	struct run_result r;
	int tries, rc = -1;

	if ((s->transport & TRANSPORT_UNIX) && (place_make_dir(cfg, pl,
	    s->name, err, sizeof(err)) == -1 || place_dir(cfg, pl, s->name,
	    dir, sizeof(dir)) == -1)) {
		log_warnx("socket directory of %s: %s", name, err);
		snprintf(res->message, sizeof(res->message), "%s: cannot make "
		    "its socket directory (see the monitor's log).", s->name);
		return -1;
	}
	if ((s->transport & TRANSPORT_UNIX) && rt_is_docker(cfg) &&
	    give_sockdir(cfg, s, dir, deadline, res) == -1)
		return -1;
	rt_argv_run(&a, cfg, s, &sp);
	if (a.overflow || rt_env_run(envp, envstore, s, full) == -1) {
		snprintf(res->message, sizeof(res->message),
		    "service %s: arguments too long.", s->name);
		return -1;
	}
	for (tries = 0; tries < RUN_TRIES; tries++) {
		if ((rc = run_logged(a.v, envp, deadline, full->password,
		    &r)) == 0)
			break;
		if (strstr(r.err, "address already in use") != NULL &&
		    pl->key != NULL)
			remove_key(cfg, pl->key, deadline, &r);
		else if (strstr(r.err, "is already in use") != NULL)
			remove_storage(cfg, name, deadline);
		else
			break;
	}
	explicit_bzero(envstore, sizeof(envstore));
	if (rc == -1)
		explain(res->message, sizeof(res->message), s->name, s->image,
		    &r);
	return rc;
}

static void
svc_start(const struct sbx_config *cfg, const struct place *pl,
    const struct sbx_conn *c, int64_t deadline, struct svc_result *res)
{
	const struct service_cfg *s = config_service(cfg, c->name);
	struct sbx_conn full = *c;
	char name[SBX_SLUG_MAX * 3], dir[SBX_SOCKET_MAX];
	struct probe_target t;
	int64_t run_deadline;

	res->code = SBX_E_RUNTIME_FAILED;
	if (s == NULL) {
		snprintf(res->message, sizeof(res->message),
		    "service %s is not configured.", c->name);
		return;
	}
	strlcpy(full.user, s->user, sizeof(full.user));
	strlcpy(full.database, s->database, sizeof(full.database));
	run_deadline = now_ms() + (int64_t)cfg->runtime_timeout * 1000;
	if (run_deadline > deadline)
		run_deadline = deadline;
	if (place_name(pl, s->name, name, sizeof(name)) == -1 ||
	    run_container(cfg, pl, s, &full, name, run_deadline, res) == -1 ||
	    (read_pidfile(cfg, s, name, res) == -1 &&
	    inspect(cfg, s, name, run_deadline, res) == -1))
		return;
	t = (struct probe_target){ .kind = s->probe,
	    .port = (uint16_t)res->port, .user = full.user,
	    .database = full.database, .password = full.password };
	if ((s->transport & TRANSPORT_UNIX) &&
	    place_dir(cfg, pl, s->name, dir, sizeof(dir)) == 0) {
		t.dir = dir;
		t.socket_name = s->socket_name;
	}
	switch (probe_ready(&t, cfg->broker_user,
	    now_ms() + (int64_t)s->ready_timeout * 1000)) {
	case PROBE_READY:
		res->code = SBX_OK;
		snprintf(res->message, sizeof(res->message), "ready");
		break;
	case PROBE_TIMEOUT:
		snprintf(res->message, sizeof(res->message),
		    "%s was not ready within %u s.", s->name, s->ready_timeout);
		break;
	default:
		snprintf(res->message, sizeof(res->message),
		    "%s: the readiness probe could not run.", s->name);
		break;
	}
}

/* The longest ready_timeout of sb's services; 0 if one is not configured. */
static unsigned
max_ready_timeout(const struct sbx_config *cfg, const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	unsigned max = 0;
	size_t i;

	for (i = 0; i < sb->nservices; i++) {
		if ((s = config_service(cfg, sb->svc[i].conn.name)) == NULL)
			return 0;
		if (s->ready_timeout > max)
			max = s->ready_timeout;
	}
	return max;
}

/* Start each service in its own process: they come up in parallel. */
static pid_t
svc_fork(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    size_t idx, int64_t deadline, int worker_fd, int *rfd)
{
	struct svc_result res;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		/* Only the worker holds its result pipe: if it dies, the
		 * monitor sees EOF at once, not when this child ends. */
		close(worker_fd);
		close(p[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		struct place pl = { .key = &sb->key, .project = sb->project,
		    .idmap = sb->idmap };

		memset(&res, 0, sizeof(res));
		svc_start(cfg, &pl, &sb->svc[idx].conn, deadline, &res);
		_exit(write_all(p[1], &res, sizeof(res), deadline) == 0 ? 0 : 1);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static void
collect(const struct sbx_sandbox *sb, const pid_t *pids, const int *fds,
    int64_t deadline, struct sbx_outcome *o)
{
	struct svc_result res;
	size_t i;
	int status;

	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].keep) {	/* running already */
			o->svc[i].pid = sb->svc[i].pid;
			continue;
		}
		memset(&res, 0, sizeof(res));
		if (pids[i] == -1 || read_full(fds[i], &res, sizeof(res),
		    deadline) == -1) {
			res.code = SBX_E_RUNTIME_FAILED;
			snprintf(res.message, sizeof(res.message),
			    "%s: provisioning did not finish.",
			    sb->svc[i].conn.name);
		}
		if (pids[i] != -1) {
			close(fds[i]);
			kill(pids[i], SIGKILL);
			waitpid(pids[i], &status, 0);
		}
		if (res.code != SBX_OK && o->code == SBX_OK) {
			o->code = res.code >= SBX_CODE_MAX ?
			    SBX_E_RUNTIME_FAILED : res.code;
			memcpy(o->message, res.message, sizeof(o->message));
			o->message[sizeof(o->message) - 1] = '\0';
		}
		o->svc[i].pid = res.pid;
		o->svc[i].conn.port = res.port;
	}
}

/* How the agent reaches service s: CONTRACT.md, "Reaching a sandbox". */
static void
reach(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    const struct service_cfg *s, struct sbx_conn *c)
{
	char dir[SBX_SOCKET_MAX];
	uint32_t published = c->port;

	c->host[0] = c->socket[0] = '\0';
	c->port = 0;
	if ((s->transport & TRANSPORT_UNIX) && sockdir_path(cfg, sb->key.uid,
	    sb->key.agent, s->name, dir, sizeof(dir)) == 0) {
		if (snprintf(c->socket, sizeof(c->socket), "%s/%s", dir,
		    s->socket_name) >= (int)sizeof(c->socket))
			c->socket[0] = '\0';	/* config.c bounds it */
		else if (s->probe == PROBE_POSTGRES) {
			strlcpy(c->host, dir, sizeof(c->host));
			c->port = s->port;
		}
	}
	if (s->transport & TRANSPORT_TCP) {
		strlcpy(c->host, "127.0.0.1", sizeof(c->host));
		c->port = published;
	}
}

/*
 * A miss served by warm containers (warm.c), in the loop: each service's
 * socket directory moves into the owner's (the container keeps its mount),
 * the record is written, and the reply can go. No runtime call: the
 * rename that shows the owner in the runtime's ps comes after the reply.
 */
static int
claim_one(struct rt_cli *rt, struct sbx_sandbox *sb, size_t i,
    struct warm_member *m, struct sbx_outcome *o)
{
	const struct service_cfg *s = config_service(rt->cfg,
	    sb->svc[i].conn.name);
	char err[SBX_MESSAGE_MAX];

	if (s == NULL || ((s->transport & TRANSPORT_UNIX) &&
	    sockdir_claim(rt->cfg, s->name, m->slot, sb->key.uid,
	    sb->key.agent, err, sizeof(err)) == -1)) {
		log_warnx("claim uid=%u agent=%s of warm %s-%u: %s",
		    (unsigned)sb->key.uid, sb->key.agent, sb->svc[i].conn.name,
		    m->slot, s == NULL ? "not configured" : err);
		return -1;
	}
	sb->svc[i] = m->svc;
	sb->svc[i].warm = m->slot;
	strlcpy(sb->svc[i].conn.user, s->user, sizeof(sb->svc[i].conn.user));
	strlcpy(sb->svc[i].conn.database, s->database,
	    sizeof(sb->svc[i].conn.database));
	sb->svc[i].port_seen_ms = 0;	/* the first hit connects */
	reach(rt->cfg, sb, s, &sb->svc[i].conn);
	o->svc[i] = sb->svc[i];
	return 0;
}

static void
unclaim(struct rt_cli *rt, struct sbx_sandbox *sb, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct service_cfg *s = config_service(rt->cfg,
		    sb->svc[i].conn.name);

		if (s != NULL && (s->transport & TRANSPORT_UNIX))
			sockdir_unclaim(rt->cfg, s->name, sb->svc[i].warm,
			    sb->key.uid, sb->key.agent);
		explicit_bzero(&sb->svc[i].conn.password,
		    sizeof(sb->svc[i].conn.password));
		sb->svc[i].pidfd = -1;	/* still the pool's */
		sb->svc[i].warm = 0;
	}
}

static int
rt_claim(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;
	struct warm_member *m[SBX_MAX_SERVICES];
	char names[2][SBX_SLUG_MAX * 3];
	struct sbx_outcome o;
	size_t i, n;

	if (sb->prev != NULL || sb->nservices > SBX_MAX_SERVICES)
		return -1;
	for (i = 0; i < sb->nservices; i++)
		if ((m[i] = warm_take(rt, sb->svc[i].conn.name)) == NULL)
			return -1;
	memset(&o, 0, sizeof(o));
	for (n = 0; n < sb->nservices; n++)
		if (claim_one(rt, sb, n, m[n], &o) == -1)
			break;
	if (n < sb->nservices || record_write(rt->cfg, sb, &o) == -1) {
		unclaim(rt, sb, n);
		explicit_bzero(&o, sizeof(o));
		return -1;
	}
	explicit_bzero(&o, sizeof(o));
	for (i = 0; i < sb->nservices; i++) {
		warm_taken(rt, m[i]);
		if (rt_svc_names(sb->key.uid, sb->key.agent,
		    sb->svc[i].conn.name, sb->svc[i].warm, names) == 2)
			warm_rename_later(rt, names[0], names[1]);
	}
	log_info("provision uid=%u agent=%s project=%s services=%zu (warm): ok",
	    (unsigned)sb->key.uid, sb->key.agent, sb->project, sb->nservices);
	return 0;
}

/* Warm containers' jobs (warm.c decides, workers do). */
void
rt_warm_start_body(int fd, void *arg)
{
	struct warm_job *j = arg;
	const struct sbx_config *cfg = j->rt->cfg;
	const struct service_cfg *s = &cfg->services[j->svc];
	struct place pl = { .idmap = j->slot, .warm = j->slot };
	struct svc_result res;
	struct warm_started out;
	char name[SBX_SLUG_MAX * 3];

	memset(&res, 0, sizeof(res));
	svc_start(cfg, &pl, &j->conn, now_ms() + ((int64_t)cfg->runtime_timeout +
	    s->ready_timeout) * 1000, &res);
	explicit_bzero(j->conn.password, sizeof(j->conn.password));
	if (res.code != SBX_OK && rt_pool_name(name, sizeof(name), s->name,
	    j->slot) == 0) {
		remove_names(cfg, name, NULL, now_ms() + 30000);
		sockdir_pool_remove(cfg, s->name, j->slot);
	}
	memset(&out, 0, sizeof(out));
	out.code = res.code;
	memcpy(out.message, res.message, sizeof(out.message));
	out.message[sizeof(out.message) - 1] = '\0';
	out.pid = res.pid;
	out.port = res.port;
	write_all(fd, &out, sizeof(out), now_ms() + 5000);
}

void
rt_warm_remove_body(int fd, void *arg)
{
	struct warm_job *j = arg;
	const struct sbx_config *cfg = j->rt->cfg;
	char name[SBX_SLUG_MAX * 3];
	uint32_t code = SBX_E_RUNTIME_FAILED;

	if (rt_pool_name(name, sizeof(name), j->conn.name, j->slot) == 0 &&
	    remove_names(cfg, name, NULL, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000) == 0) {
		sockdir_pool_remove(cfg, j->conn.name, j->slot);
		code = SBX_OK;
	}
	write_all(fd, &code, sizeof(code), now_ms() + 5000);
}

/* Every rename pending, one after the other: one fork for a burst. */
void
rt_rename_body(int fd, void *arg)
{
	struct warm_job *j = arg;
	struct argv_buf a;
	struct run_result r;
	uint32_t code = SBX_OK;
	size_t i;

	for (i = 0; i < j->nrenames; i++) {
		rt_argv_rename(&a, j->rt->cfg, j->renames[i].from,
		    j->renames[i].to);
		if (a.overflow || run_logged(a.v, (char *const *)(uintptr_t)
		    rt_base_env, now_ms() + (int64_t)j->rt->cfg->runtime_timeout *
		    1000, NULL, &r) == -1)
			code = SBX_E_RUNTIME_FAILED;
	}
	write_all(fd, &code, sizeof(code), now_ms() + 5000);
}

static void
provision_body(int fd, void *arg)
{
	struct prov_job *j = arg;
	const struct sbx_config *cfg = j->rt->cfg;
	const struct sbx_sandbox *sb = j->sb;
	struct sbx_outcome o;
	struct run_result r;
	pid_t pids[SBX_MAX_SERVICES] = { 0 };
	int fds[SBX_MAX_SERVICES] = { 0 };
	int64_t deadline = now_ms() + ((int64_t)cfg->runtime_timeout +
	    max_ready_timeout(cfg, sb)) * 1000;
	size_t i;

	memset(&o, 0, sizeof(o));
	/* podman's run --replace removes a container of the same name in
	 * the same call: a key's first provision skips the label-wide rm. A
	 * reshape removes only what the sandbox no longer has. */
	if (sb->prev != NULL)
		remove_dropped(cfg, sb, deadline);
	else if ((sb->generation > 1 || !rt_is_podman(cfg)) &&
	    remove_key(cfg, &sb->key, deadline, &r) == -1) {
		o.code = SBX_E_RUNTIME_FAILED;
		explain(o.message, sizeof(o.message), "removing leftover "
		    "containers", NULL, &r);
		goto out;
	}
	for (i = 0; i < sb->nservices; i++)
		if (!sb->svc[i].keep)
			pids[i] = svc_fork(cfg, sb, i, deadline, fd, &fds[i]);
	collect(sb, pids, fds, deadline, &o);
	for (i = 0; i < sb->nservices; i++) {
		const struct service_cfg *s = config_service(cfg,
		    sb->svc[i].conn.name);

		if (sb->svc[i].keep) {	/* as the agent has it */
			o.svc[i].conn = sb->svc[i].conn;
			explicit_bzero(o.svc[i].conn.password,
			    sizeof(o.svc[i].conn.password));
			continue;
		}
		strlcpy(o.svc[i].conn.name, s->name, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.user, s->user, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.database, s->database, SBX_SLUG_MAX);
		reach(cfg, sb, s, &o.svc[i].conn);
	}
	if (o.code != SBX_OK && sb->prev != NULL) {
		for (i = 0; i < sb->nservices; i++)
			if (!sb->svc[i].keep)
				remove_service(cfg, &sb->key,
				    sb->svc[i].conn.name, 0, now_ms() + 30000);
	} else if (o.code != SBX_OK)
		remove_key(cfg, &sb->key, now_ms() + 30000, &r);
out:
	write_all(fd, &o, sizeof(o), now_ms() + 5000);
}

static void
teardown_body(int fd, void *arg)
{
	struct prov_job *j = arg;
	struct run_result r;
	struct sbx_outcome o;

	memset(&o, 0, sizeof(o));
	if (remove_key(j->rt->cfg, &j->sb->key,
	    now_ms() + (int64_t)j->rt->cfg->runtime_timeout * 1000, &r) == -1 ||
	    remove_claimed(j->rt->cfg, &j->sb->key, j->sb->svc,
	    j->sb->nservices, now_ms() +
	    (int64_t)j->rt->cfg->runtime_timeout * 1000) == -1) {
		o.code = SBX_E_RUNTIME_FAILED;
		explain(o.message, sizeof(o.message), "teardown", NULL, &r);
	}
	write_all(fd, &o, sizeof(o), now_ms() + 5000);
}

static int
pidfd_open_pid(pid_t pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* The worker is our child, but still: check what it says before use. */
static int
outcome_valid(const struct sbx_outcome *o, size_t nservices)
{
	size_t i;

	if (o->code >= SBX_CODE_MAX ||
	    memchr(o->message, '\0', sizeof(o->message)) == NULL)
		return 0;
	if (o->code != SBX_OK)
		return 1;
	for (i = 0; i < nservices; i++) {
		const struct sbx_conn *c = &o->svc[i].conn;

		if (o->svc[i].pid <= 0 || c->port > 65535 ||
		    !memchr(c->socket, '\0', sizeof(c->socket)) ||
		    !memchr(c->host, '\0', sizeof(c->host)) ||
		    (c->socket[0] == '\0' && c->port == 0))
			return 0;
	}
	return 1;
}

static void cleanup_spawn(struct rt_cli *, struct sbx_sandbox *);

/*
 * A provision failed after its containers may have started: remove them.
 * A whole sandbox by its labels; a reshape only what it started (the
 * kept services run on, the agent still uses them), by the worker that
 * already tried, so here it is only logged.
 */
static void
failed_cleanup(struct rt_cli *rt, struct sbx_sandbox *sb)
{
	if (sb->prev == NULL)
		cleanup_spawn(rt, sb);
	else
		log_warnx("reshape uid=%u agent=%s: its new containers may be "
		    "left; the next provision of the key replaces them",
		    (unsigned)sb->key.uid, sb->key.agent);
}

/* The pidfds: kept services bring theirs, new ones get one now. */
static void
open_pidfds(struct rt_cli *rt, struct sbx_sandbox *sb, struct sbx_outcome *o)
{
	size_t i;

	for (i = 0; i < sb->nservices && o->code == SBX_OK; i++) {
		if (sb->svc[i].keep) {
			o->svc[i].pidfd = sb->svc[i].pidfd;
			o->svc[i].port_seen_ms = sb->svc[i].port_seen_ms;
		} else if ((o->svc[i].pidfd = pidfd_open_pid(o->svc[i].pid)) ==
		    -1) {
			o->code = SBX_E_RUNTIME_FAILED;
			snprintf(o->message, sizeof(o->message),
			    "%s exited right after it became ready.",
			    sb->svc[i].conn.name);
			failed_cleanup(rt, sb);
		}
	}
}

/* Close what the outcome no longer needs: on failure the new services'
 * pidfds, on a reshape's success those of the services it dropped. */
static void
close_pidfds(struct sbx_sandbox *sb, struct sbx_outcome *o)
{
	size_t i;

	if (o->code != SBX_OK) {
		for (i = 0; i < sb->nservices; i++)
			if (!sb->svc[i].keep && o->svc[i].pidfd > 0)
				close(o->svc[i].pidfd);
		return;
	}
	for (i = 0; i < sb->nprev; i++)
		if (dropped(sb, i) && sb->prev[i].pidfd >= 0) {
			close(sb->prev[i].pidfd);
			sb->prev[i].pidfd = -1;
		}
}

static void
provision_done(void *arg, const void *result, size_t len)
{
	struct prov_job *j = arg;
	struct sbx_sandbox *sb = j->sb;
	struct sbx_outcome o;
	size_t i;

	if (result == NULL || len != sizeof(o) ||
	    !outcome_valid(result, sb->nservices)) {
		memset(&o, 0, sizeof(o));
		o.code = SBX_E_RUNTIME_FAILED;
		snprintf(o.message, sizeof(o.message),
		    "provisioning did not finish within the deadline.");
		failed_cleanup(j->rt, sb);
	} else
		memcpy(&o, result, sizeof(o));
	open_pidfds(j->rt, sb, &o);
	if (o.code == SBX_OK && record_write(j->rt->cfg, sb, &o) == -1) {
		o.code = SBX_E_INTERNAL;
		snprintf(o.message, sizeof(o.message), "the monitor could not "
		    "record the sandbox (see its log).");
		failed_cleanup(j->rt, sb);
	}
	/* A failed reshape leaves the sandbox as it was, its record too. */
	if (o.code != SBX_OK && sb->prev == NULL)
		record_remove(sb->key.uid, sb->key.agent);
	close_pidfds(sb, &o);
	for (i = 0; i < sb->nservices; i++)
		o.svc[i].keep = false;
	log_info("provision uid=%u agent=%s project=%s services=%zu%s: %s%s%s",
	    (unsigned)sb->key.uid, sb->key.agent, sb->project, sb->nservices,
	    sb->prev != NULL ? " (reshape)" : "", sbx_code_name(o.code),
	    o.code ? ": " : "", o.code ? o.message : "");
	free(j);
	cache_provisioned(sb, &o);
	explicit_bzero(&o, sizeof(o));
}

/*
 * A uid range comes back once the runtime said the containers that used
 * it are gone; otherwise it stays taken (one sandbox's worth of uids)
 * rather than risk two sandboxes sharing host uids.
 */
static void
slot_done(struct rt_cli *rt, const struct sbx_sandbox *sb, unsigned slot,
    bool removed)
{
	if (slot == 0)
		return;
	if (removed)
		idmap_put(&rt->idmap, slot);
	else
		log_warnx("uid range %u of uid=%u agent=%s stays taken: its "
		    "containers may still exist", slot,
		    (unsigned)sb->key.uid, sb->key.agent);
}

/* The sandbox's range, and those of the warm containers it claimed. */
static void
idmap_done(struct rt_cli *rt, struct sbx_sandbox *sb, bool removed)
{
	size_t i;

	slot_done(rt, sb, sb->idmap, removed);
	sb->idmap = 0;
	for (i = 0; sb->svc != NULL && i < sb->nservices; i++) {
		slot_done(rt, sb, sb->svc[i].warm, removed);
		sb->svc[i].warm = 0;
	}
}

static void
teardown_done(void *arg, const void *result, size_t len)
{
	struct prov_job *j = arg;
	const struct sbx_outcome *o = result;
	bool ok = result != NULL && len == sizeof(*o) && o->code == SBX_OK;

	if (!ok)
		log_warnx("teardown uid=%u agent=%s: %s",
		    (unsigned)j->sb->key.uid, j->sb->key.agent,
		    result ? "the runtime refused" : "worker failed");
	else
		log_info("teardown uid=%u agent=%s project=%s: ok",
		    (unsigned)j->sb->key.uid, j->sb->key.agent, j->sb->project);
	if (ok)
		record_remove(j->sb->key.uid, j->sb->key.agent);
	idmap_done(j->rt, j->sb, ok);
	cache_torn_down(j->sb);
	free(j);
}

/* A fire-and-forget teardown after a failed provision. */
struct cleanup_job {
	struct prov_job		 job;
	struct sbx_sandbox	 shadow;
};

static void
cleanup_done(void *arg, const void *result, size_t len)
{
	struct cleanup_job *c = arg;
	struct sbx_outcome o;

	memset(&o, 0, sizeof(o));
	if (result == NULL || len != sizeof(o)) {
		o.code = SBX_E_RUNTIME_FAILED;
		log_warnx("cleanup uid=%u agent=%s: did not finish",
		    (unsigned)c->shadow.key.uid, c->shadow.key.agent);
	} else {
		memcpy(&o, result, sizeof(o));
		o.message[sizeof(o.message) - 1] = '\0';
		if (o.code != SBX_OK)
			log_warnx("cleanup uid=%u agent=%s: %s",
			    (unsigned)c->shadow.key.uid, c->shadow.key.agent,
			    o.message);
	}
	idmap_done(c->job.rt, &c->shadow, o.code == SBX_OK);
	free(c);
}

/* The cleanup takes sb's uid range with it: the next provision of the
 * key gets another while the old containers may still be there. */
static void
cleanup_spawn(struct rt_cli *rt, struct sbx_sandbox *sb)
{
	struct cleanup_job *c;

	if ((c = calloc(1, sizeof(*c))) == NULL) {
		idmap_done(rt, sb, false);
		return;
	}
	c->shadow.key = sb->key;
	c->shadow.idmap = sb->idmap;
	sb->idmap = 0;
	c->job.rt = rt;
	c->job.sb = &c->shadow;
	if (worker_spawn(rt->pool, sizeof(struct sbx_outcome),
	    now_ms() + (int64_t)rt->cfg->runtime_timeout * 1000, teardown_body,
	    &c->job, cleanup_done, c) == -1) {
		idmap_done(rt, &c->shadow, false);
		free(c);
	}
}

static int
start_job(struct rt_cli *rt, struct sbx_sandbox *sb, worker_body body,
    worker_done done, int64_t timeout_ms)
{
	struct prov_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return -1;
	j->rt = rt;
	j->sb = sb;
	if (worker_spawn(rt->pool, sizeof(struct sbx_outcome),
	    now_ms() + timeout_ms, body, j, done, j) == -1) {
		log_warn("cannot start a runtime worker");
		free(j);
		return -1;
	}
	return 0;
}

static int
rt_provision(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;
	/* Every service is configured: ready_timeout is never 0 (config.c). */
	unsigned max_ready = max_ready_timeout(rt->cfg, sb);

	if (max_ready == 0)
		return -1;
	if (sb->idmap == 0 && rt_is_podman(rt->cfg) &&
	    (sb->idmap = idmap_take(&rt->idmap)) == 0) {
		log_warnx("provision uid=%u agent=%s: every one of the %u uid "
		    "ranges (userns_slots) is taken", (unsigned)sb->key.uid,
		    sb->key.agent, rt->idmap.nslots);
		return -1;
	}
	/* The worker's own deadlines end first; this one is the backstop. */
	return start_job(rt, sb, provision_body, provision_done,
	    ((int64_t)rt->cfg->runtime_timeout * 3 + max_ready + 10) * 1000);
}

static int
rt_teardown(void *impl, struct sbx_sandbox *sb)
{
	struct rt_cli *rt = impl;

	return start_job(rt, sb, teardown_body, teardown_done,
	    ((int64_t)rt->cfg->runtime_timeout + 10) * 1000);
}

bool
rt_pid_alive(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	/* A pidfd turns readable when its process exits. */
	return pidfd >= 0 && poll(&pfd, 1, 0) == 0;
}

/*
 * A warm container at a claim: its process lives (the pidfd) and, on
 * unix, its socket file is there. No connect: it was probed ready when it
 * joined the pool, and a connect makes a postmaster fork a backend, which
 * eight claims at once pay for on the host's cores. A service that has
 * stopped listening is found by the sandbox's first hit (its port check
 * is due: port_seen_ms 0).
 */
bool
rt_warm_alive(const struct sbx_svc *s)
{
	struct stat st;

	if (!rt_pid_alive(s->pidfd))
		return false;
	return s->conn.socket[0] == '\0' ||
	    (stat(s->conn.socket, &st) == 0 && S_ISSOCK(st.st_mode));
}

/*
 * Does something listen there? A non-blocking connect, from the loop: it
 * either completes (loopback and Unix connects are made in the call),
 * is refused, or is still pending because the backlog is full, which
 * says that a listener is there. Nothing a tenant does makes it wait.
 */
bool
rt_listening(const struct sbx_conn *c)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)c->port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	bool unix = c->socket[0] != '\0';
	int fd, rc;

	/*
	 * Out of descriptors we cannot look; the pidfd said the container
	 * lives, and a live sandbox must not be evicted for our own lack.
	 */
	if ((fd = socket(unix ? AF_UNIX : AF_INET,
	    SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return errno == EMFILE || errno == ENFILE;
	if (unix) {
		strlcpy(sun.sun_path, c->socket, sizeof(sun.sun_path));
		rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	} else
		rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (rc == -1 && (errno == EINPROGRESS || errno == EAGAIN))
		rc = 0;
	close(fd);
	return rc == 0;
}

/*
 * A hit's liveness check. The pidfd, every time: a container killed, OOM-
 * killed or removed by hand is seen at once, for one poll(). The connect
 * (to the Unix socket, or through the runtime's port forwarding, waking
 * the service) is most of a hit's cost, so it is made when the last one
 * that worked is older than LIVE_PORT_FRESH_MS: a broken forwarding or a
 * service that stopped listening is found within that time
 * (bench/README.md).
 */
static bool
rt_is_live(void *impl, struct sbx_sandbox *sb)
{
	int64_t now = now_ms();
	struct sbx_svc *s;
	size_t i;

	(void)impl;
	for (i = 0; i < sb->nservices; i++)
		if (!rt_pid_alive(sb->svc[i].pidfd))
			return false;
	for (i = 0; i < sb->nservices; i++) {
		s = &sb->svc[i];
		if (now - s->port_seen_ms < LIVE_PORT_FRESH_MS)
			continue;
		if (!rt_listening(&s->conn))
			return false;
		s->port_seen_ms = now;
	}
	record_touch(sb, now);
	return true;
}

/* A claimed warm container of an evicted sandbox: by its names only
 * (the key's new containers and directories are the new provision's). */
struct evict_job {
	struct rt_cli	*rt;
	struct sbx_key	 key;
	char		 service[SBX_SLUG_MAX];
	unsigned	 slot;
};

static void
evict_body(int fd, void *arg)
{
	const struct evict_job *j = arg;
	uint32_t code = remove_svc_names(j->rt->cfg, &j->key, j->service,
	    j->slot, now_ms() + (int64_t)j->rt->cfg->runtime_timeout * 1000) ==
	    0 ? SBX_OK : SBX_E_RUNTIME_FAILED;

	write_all(fd, &code, sizeof(code), now_ms() + 5000);
}

static void
evict_done(void *arg, const void *result, size_t len)
{
	struct evict_job *j = arg;
	const uint32_t *code = result;

	if (result != NULL && len == sizeof(*code) && *code == SBX_OK)
		idmap_put(&j->rt->idmap, j->slot);
	else
		log_warnx("uid=%u agent=%s: the evicted warm container of %s "
		    "could not be removed; uid range %u stays taken",
		    (unsigned)j->key.uid, j->key.agent, j->service, j->slot);
	free(j);
}

static void
evict_claimed(struct rt_cli *rt, const struct sbx_sandbox *sb,
    const struct sbx_svc *svc)
{
	struct evict_job *j;

	if ((j = calloc(1, sizeof(*j))) == NULL)
		return;
	j->rt = rt;
	j->key = sb->key;
	strlcpy(j->service, svc->conn.name, sizeof(j->service));
	j->slot = svc->warm;
	if (worker_spawn(rt->pool, sizeof(uint32_t), now_ms() +
	    (int64_t)rt->cfg->runtime_timeout * 1000, evict_body, j,
	    evict_done, j) == -1) {
		log_warnx("uid=%u agent=%s: cannot start the removal of its "
		    "evicted warm container of %s", (unsigned)sb->key.uid,
		    sb->key.agent, svc->conn.name);
		free(j);
	}
}

/* Closes the pidfds; a claimed container still held was evicted (a
 * teardown gives its slot back and clears warm before this). */
static void
rt_forget(void *impl, struct sbx_sandbox *sb)
{
	size_t i;

	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].pidfd > 0) {
			close(sb->svc[i].pidfd);
			sb->svc[i].pidfd = -1;
		}
		if (sb->svc[i].warm != 0) {
			evict_claimed(impl, sb, &sb->svc[i]);
			sb->svc[i].warm = 0;
		}
	}
}

/* The entry is freed after a failed provision (the worker removed what
 * it started) or after its teardown (the range is back already). */
static void
rt_gone(void *impl, struct sbx_sandbox *sb)
{
	idmap_done(impl, sb, true);
}

const struct sbx_runtime_ops rt_cli_ops = {
	.provision = rt_provision,
	.is_live = rt_is_live,
	.teardown = rt_teardown,
	.forget = rt_forget,
	.gone = rt_gone,
	.claim = rt_claim,
};

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

/* One line of rt_argv_list's output; 0 when every field is sound. */
static int
parse_seen(char *line, struct rt_seen *c)
{
	char *f[5] = { NULL }, *save = NULL, *end, *p;
	long v;
	int i;

	for (i = 0; i < 5; i++)
		if ((f[i] = strtok_r(i ? NULL : line, " ", &save)) == NULL)
			break;
	if (i < 4 || f[2][0] != 'u' || f[3][0] != 'a' ||
	    strlcpy(c->name, f[0], sizeof(c->name)) >= sizeof(c->name) ||
	    strlcpy(c->agent, f[3] + 1, sizeof(c->agent)) >= sizeof(c->agent))
		return -1;
	errno = 0;
	v = strtol(f[1], &end, 10);
	if (errno || *end != '\0' || v < 0 || v > INT_MAX)
		return -1;
	c->pid = (int)v;
	/* A warm container has neither label (runtime_argv.c). */
	c->pool = f[2][1] == '\0' && f[3][1] == '\0';
	v = c->pool ? 0 : strtol(f[2] + 1, &end, 10);
	if (!c->pool && (errno || *end != '\0' || v < 0 || v > INT_MAX))
		return -1;
	c->uid = c->pool ? (uid_t)-1 : (uid_t)v;
	c->port = 0;
	if (f[4] != NULL && (p = strstr(f[4], "127.0.0.1:")) != NULL) {
		v = strtol(p + 10, &end, 10);
		if (errno || strncmp(end, "->", 2) != 0 || v <= 0 || v > 65535)
			return -1;
		c->port = (int)v;
	}
	return 0;
}

static int
parse_list(char *text, struct rt_seen **out, size_t *n)
{
	struct rt_seen *v = NULL, *nv;
	char *line, *save = NULL;
	size_t cap = 0;

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		if (parse_seen(line, &v[*n]) == -1) {
			log_warnx("runtime ps: an unexpected line: %.80s", line);
			goto fail;
		}
		(*n)++;
	}
	*out = v;
	return 0;
fail:
	free(v);
	return -1;
}

#define LIST_MAX	(16u << 20)	/* 16 MiB: far beyond any host */

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

int
runtime_list(const struct sbx_config *cfg, struct rt_seen **out, size_t *n)
{
	struct argv_buf a;
	char *text = NULL, *lines;
	int fd, rc = -1;

	rt_argv_list(&a, cfg);
	if ((fd = memfd_create("sbx-ps", MFD_CLOEXEC)) == -1)
		return -1;
	if (list_run(cfg, a.v, "ps", fd) == 0)
		text = fd_text(fd);
	close(fd);
	if (text != NULL && rt_is_docker(cfg)) {
		lines = docker_lines(cfg, text);
		free(text);
		text = lines;
	}
	if (text != NULL)
		rc = parse_list(text, out, n);
	free(text);
	return rc;
}

/* Remove what adoption discarded, with its directories. */
int
runtime_remove(const struct sbx_config *cfg, const struct rt_gone *gone,
    size_t n)
{
	struct run_result r;
	int64_t deadline;
	pid_t pid;
	size_t i;
	int status, failed = 0;

	if (n == 0)
		return 0;
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		worker_child_setup(-1);
		if (sc_load_deny("runtime") == -1)
			_exit(126);
		for (i = 0; i < n; i++) {
			deadline = now_ms() + (int64_t)cfg->runtime_timeout *
			    1000;
			if ((gone[i].name[0] != '\0' ? remove_names(cfg,
			    gone[i].name, NULL, deadline) :
			    gone[i].service[0] != '\0' ? remove_service(cfg,
			    &gone[i].key, gone[i].service, 0, deadline) :
			    remove_key(cfg, &gone[i].key, deadline, &r)) == -1)
				failed = 1;
		}
		_exit(failed);
	}
	status = wait_child(pid, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000 * (int64_t)(n + 1));
	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ?
	    0 : -1;
}
