/*
 * runtime_cli.c - podman (or docker) driven through its CLI.
 *
 * Every call is an execve of the configured runtime binary with an argv
 * built here from fixed templates: the only variable parts are the peer
 * uid (a number), slugs that dispatch.c and cache.c have validated, and
 * values from the admin's sbx.conf. Secrets never go into argv (argv is
 * world-readable in /proc): they are passed in the runtime's environment
 * and named with "-e NAME".
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "probe.h"
#include "runtime.h"
#include "scfilter.h"

#define MAX_ARGV	160
#define RUN_TRIES	3
#define LIVE_CONNECT_MS	250
#define LIVE_PORT_FRESH_MS 1000	/* see rt_is_live() */

struct argv_buf {
	char	*v[MAX_ARGV + 1];
	char	 store[16384];
	size_t	 n, used;
	int	 overflow;
};

struct svc_result {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};

struct prov_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;
	uint64_t		 generation;
};

static void
av_add(struct argv_buf *a, const char *s)
{
	size_t len = strlen(s) + 1;

	if (a->n == MAX_ARGV || a->used + len > sizeof(a->store)) {
		a->overflow = 1;
		return;
	}
	memcpy(a->store + a->used, s, len);
	a->v[a->n++] = a->store + a->used;
	a->v[a->n] = NULL;
	a->used += len;
}

static void
av_addf(struct argv_buf *a, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
av_addf(struct argv_buf *a, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	if (vsnprintf(buf, sizeof(buf), fmt, ap) >= (int)sizeof(buf))
		a->overflow = 1;
	va_end(ap);
	av_add(a, buf);
}

static void
av_runtime(struct argv_buf *a, const struct sbx_config *cfg)
{
	size_t i;

	memset(a, 0, sizeof(*a));
	av_add(a, cfg->runtime);
	for (i = 0; i < cfg->nruntime_args; i++)
		av_add(a, cfg->runtime_args[i]);
}

/* Expand {user}, {database} and (env only) {password} in a template. */
static int
expand(char *out, size_t cap, const char *tmpl, const struct sbx_conn *c,
    int allow_secret)
{
	static const char *const names[] = { "{user}", "{database}",
	    "{password}" };
	const char *vals[] = { c->user, c->database, c->password };
	size_t o = 0, i, n;

	while (*tmpl != '\0') {
		for (i = 0; i < 3; i++)
			if (!strncmp(tmpl, names[i], strlen(names[i])))
				break;
		if (i < 3 && (i < 2 || allow_secret)) {
			n = strlen(vals[i]);
			if (o + n >= cap)
				return -1;
			memcpy(out + o, vals[i], n);
			o += n;
			tmpl += strlen(names[i]);
			continue;
		}
		if (o + 1 >= cap)
			return -1;
		out[o++] = *tmpl++;
	}
	out[o] = '\0';
	return 0;
}

static const char *const base_env[] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LANG=C",
};
#define NBASE_ENV	(sizeof(base_env) / sizeof(base_env[0]))

static void
label_filters(struct argv_buf *a, const struct sbx_key *key)
{
	av_add(a, "--filter");
	av_addf(a, "label=sbx.uid=%u", (unsigned)key->uid);
	av_add(a, "--filter");
	av_addf(a, "label=sbx.agent=%s", key->agent);
}

/* runtime rm -f -t 0: remove now, no grace period for SIGTERM. */
static void
av_rm(struct argv_buf *a, const struct sbx_config *cfg)
{
	av_runtime(a, cfg);
	av_add(a, "rm");
	av_add(a, "-f");
	av_add(a, "-t");
	av_add(a, "0");
}

static int
remove_key(const struct sbx_config *cfg, const struct sbx_key *key,
    int64_t deadline, struct run_result *r)
{
	struct argv_buf a;

	av_rm(&a, cfg);
	label_filters(&a, key);
	if (a.overflow) {	/* the caller reports r->err */
		memset(r, 0, sizeof(*r));
		r->status = -1;
		strlcpy(r->err, "the runtime argument list is too long",
		    sizeof(r->err));
		return -1;
	}
	run_argv(a.v, (char *const *)(uintptr_t)base_env, deadline, r);
	return r->status == 0 ? 0 : -1;
}

static void
first_line(char *dst, size_t cap, const char *prefix, const char *text)
{
	size_t n = strcspn(text, "\n");

	if (n > 100)
		n = 100;
	snprintf(dst, cap, "%s%.*s", prefix, (int)n, text);
}

/*
 * podman's --replace removes a container of the same name in the same
 * call, so the first provision of a key (since the monitor started, which
 * reaped every orphan, or since the key's last teardown) skips the
 * separate label-wide removal: one runtime call, ~100 ms, off the cold
 * path. A re-provision (eviction, changed service set) still removes
 * everything labelled for the key first, as does any other runtime.
 */
static bool
runtime_replaces(const struct sbx_config *cfg)
{
	const char *base = strrchr(cfg->runtime, '/');

	return strcmp(base != NULL ? base + 1 : cfg->runtime, "podman") == 0;
}

static void
run_args(struct argv_buf *a, const struct sbx_config *cfg,
    const struct sbx_sandbox *sb, const struct service_cfg *s,
    const struct sbx_conn *c, const char *name)
{
	char buf[CFG_STR];
	size_t i;

	av_runtime(a, cfg);
	av_add(a, "run");
	av_add(a, "-d");
	av_add(a, "--name");
	av_add(a, name);
	if (runtime_replaces(cfg))
		av_add(a, "--replace");
	av_addf(a, "--label=sbx.uid=%u", (unsigned)sb->key.uid);
	av_addf(a, "--label=sbx.agent=%s", sb->key.agent);
	av_addf(a, "--label=sbx.project=%s", sb->project);
	av_addf(a, "--label=sbx.service=%s", s->name);
	av_addf(a, "--publish=127.0.0.1::%u", s->port);
	av_add(a, "--security-opt=no-new-privileges");
	av_add(a, "--cap-drop=all");
	av_addf(a, "--pids-limit=%u", s->pids);
	if (s->memory[0] != '\0')
		av_addf(a, "--memory=%s", s->memory);
	if (s->cpus[0] != '\0')
		av_addf(a, "--cpus=%s", s->cpus);
	for (i = 0; i < s->ntmpfs; i++)
		av_addf(a, "--tmpfs=%s", s->tmpfs[i]);
	for (i = 0; i < s->nenv; i++)
		av_addf(a, "--env=%.*s", (int)strcspn(s->env[i], "="),
		    s->env[i]);
	av_add(a, s->image);
	for (i = 0; i < s->nargs; i++) {
		if (expand(buf, sizeof(buf), s->args[i], c, 0) == -1)
			a->overflow = 1;
		av_add(a, buf);
	}
}

/* base_env plus NAME=value for each env template; secrets live only here. */
static int
run_env(char *envp[], char store[][CFG_STR * 2], const struct service_cfg *s,
    const struct sbx_conn *c)
{
	size_t i;

	for (i = 0; i < NBASE_ENV; i++)
		envp[i] = (char *)(uintptr_t)base_env[i];
	for (i = 0; i < s->nenv; i++) {
		if (expand(store[i], sizeof(store[i]), s->env[i], c, 1) == -1)
			return -1;
		envp[NBASE_ENV + i] = store[i];
	}
	envp[NBASE_ENV + s->nenv] = NULL;
	return 0;
}


/* "PID PORT ..." from inspect: both decimal, in range, nothing half-read. */
static int
parse_pid_port(const char *s, int *pid, int *port)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != ' ' || v <= 0 || v > INT_MAX)
		return -1;
	*pid = (int)v;
	s = end + 1;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || (*end != ' ' && *end != '\0' &&
	    *end != '\n') || v <= 0 || v > 65535)
		return -1;
	*port = (int)v;
	return 0;
}
static int
inspect(const struct sbx_config *cfg, const char *name, int64_t deadline,
    struct svc_result *res)
{
	struct argv_buf a;
	struct run_result r;
	int pid, port;

	av_runtime(&a, cfg);
	av_add(&a, "inspect");
	av_add(&a, "--format");
	av_add(&a, "{{.State.Pid}} {{range $p, $b := .NetworkSettings.Ports}}"
	    "{{range $b}}{{.HostPort}} {{end}}{{end}}");
	av_add(&a, name);
	run_argv(a.v, (char *const *)(uintptr_t)base_env, deadline, &r);
	if (r.status != 0 || parse_pid_port(r.out, &pid, &port) == -1) {
		first_line(res->message, sizeof(res->message),
		    "cannot read the container's pid and port: ", r.err);
		return -1;
	}
	res->pid = pid;
	res->port = (uint32_t)port;
	return 0;
}

static void
explain_run_failure(struct svc_result *res, const struct service_cfg *s,
    const struct run_result *r)
{
	if (r->status == 127)
		snprintf(res->message, sizeof(res->message),
		    "the container runtime could not be executed.");
	else if (r->status == -1)
		snprintf(res->message, sizeof(res->message),
		    "the container runtime did not answer in time.");
	else if (strstr(r->err, "image not known") != NULL ||
	    strstr(r->err, "No such image") != NULL ||
	    strstr(r->err, "initializing source") != NULL)
		snprintf(res->message, sizeof(res->message),
		    "image %.60s is missing (run make images).", s->image);
	else
		first_line(res->message, sizeof(res->message),
		    "runtime: ", r->err);
}

static void
svc_start(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    size_t idx, int64_t deadline, struct svc_result *res)
{
	const struct sbx_conn *c = &sb->svc[idx].conn;
	const struct service_cfg *s = config_service(cfg, c->name);
	char *envp[NBASE_ENV + CFG_MAX_ENV + 1];
	char envstore[CFG_MAX_ENV][CFG_STR * 2];
	struct sbx_conn full = *c;
	char name[SBX_SLUG_MAX * 3];
	struct argv_buf a;
	struct run_result r;
	struct probe_target t;
	int64_t run_deadline;
	int tries;

	res->code = SBX_E_RUNTIME_FAILED;
	if (s == NULL) {
		snprintf(res->message, sizeof(res->message),
		    "service %s is not configured.", c->name);
		return;
	}
	strlcpy(full.user, s->user, sizeof(full.user));
	strlcpy(full.database, s->database, sizeof(full.database));
	snprintf(name, sizeof(name), "sbx-%u-%s-%s", (unsigned)sb->key.uid,
	    sb->key.agent, s->name);
	run_args(&a, cfg, sb, s, &full, name);
	if (a.overflow || run_env(envp, envstore, s, &full) == -1) {
		snprintf(res->message, sizeof(res->message),
		    "service %s: arguments too long.", s->name);
		return;
	}
	run_deadline = now_ms() + (int64_t)cfg->runtime_timeout * 1000;
	if (run_deadline > deadline)
		run_deadline = deadline;
	for (tries = 0; tries < RUN_TRIES; tries++) {
		run_argv(a.v, envp, run_deadline, &r);
		if (r.status == 0 || strstr(r.err, "address already in use") == NULL)
			break;
		remove_key(cfg, &sb->key, run_deadline, &r);
	}
	explicit_bzero(envstore, sizeof(envstore));
	if (r.status != 0) {
		explain_run_failure(res, s, &r);
		return;
	}
	if (inspect(cfg, name, run_deadline, res) == -1)
		return;
	t = (struct probe_target){ .kind = s->probe, .port = (uint16_t)res->port,
	    .user = full.user, .database = full.database,
	    .password = full.password };
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
    size_t idx, int64_t deadline, int *rfd)
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
		close(p[0]);
		memset(&res, 0, sizeof(res));
		svc_start(cfg, sb, idx, deadline, &res);
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
	if ((sb->generation > 1 || !runtime_replaces(cfg)) &&
	    remove_key(cfg, &sb->key, deadline, &r) == -1) {
		o.code = SBX_E_RUNTIME_FAILED;
		first_line(o.message, sizeof(o.message),
		    "cannot remove leftover containers: ", r.status == 127 ?
		    "the runtime could not be executed" : r.err);
		goto out;
	}
	for (i = 0; i < sb->nservices; i++)
		pids[i] = svc_fork(cfg, sb, i, deadline, &fds[i]);
	collect(sb, pids, fds, deadline, &o);
	for (i = 0; i < sb->nservices; i++) {
		const struct service_cfg *s = config_service(cfg,
		    sb->svc[i].conn.name);

		strlcpy(o.svc[i].conn.name, s->name, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.host, "127.0.0.1", SBX_HOST_MAX);
		strlcpy(o.svc[i].conn.user, s->user, SBX_SLUG_MAX);
		strlcpy(o.svc[i].conn.database, s->database, SBX_SLUG_MAX);
	}
	if (o.code != SBX_OK)
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
	    now_ms() + (int64_t)j->rt->cfg->runtime_timeout * 1000, &r) == -1) {
		o.code = SBX_E_RUNTIME_FAILED;
		first_line(o.message, sizeof(o.message), "runtime: ", r.err);
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
	for (i = 0; i < nservices; i++)
		if (o->svc[i].pid <= 0 || o->svc[i].conn.port == 0 ||
		    o->svc[i].conn.port > 65535)
			return 0;
	return 1;
}

static void cleanup_spawn(struct rt_cli *, const struct sbx_key *);

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
		cleanup_spawn(j->rt, &sb->key);
	} else
		memcpy(&o, result, sizeof(o));
	for (i = 0; i < sb->nservices && o.code == SBX_OK; i++)
		if ((o.svc[i].pidfd = pidfd_open_pid(o.svc[i].pid)) == -1) {
			o.code = SBX_E_RUNTIME_FAILED;
			snprintf(o.message, sizeof(o.message),
			    "%s exited right after it became ready.",
			    sb->svc[i].conn.name);
			cleanup_spawn(j->rt, &sb->key);
		}
	if (o.code != SBX_OK)
		for (i = 0; i < sb->nservices; i++)
			if (o.svc[i].pidfd > 0)
				close(o.svc[i].pidfd);
	log_info("provision uid=%u agent=%s project=%s services=%zu: %s%s%s",
	    (unsigned)sb->key.uid, sb->key.agent, sb->project, sb->nservices,
	    sbx_code_name(o.code), o.code ? ": " : "",
	    o.code ? o.message : "");
	free(j);
	cache_provisioned(sb, &o);
	explicit_bzero(&o, sizeof(o));
}

static void
teardown_done(void *arg, const void *result, size_t len)
{
	struct prov_job *j = arg;
	const struct sbx_outcome *o = result;

	if (result == NULL || len != sizeof(*o) || o->code != SBX_OK)
		log_warnx("teardown uid=%u agent=%s: %s",
		    (unsigned)j->sb->key.uid, j->sb->key.agent,
		    result ? "the runtime refused" : "worker failed");
	else
		log_info("teardown uid=%u agent=%s project=%s: ok",
		    (unsigned)j->sb->key.uid, j->sb->key.agent, j->sb->project);
	if (j->sb != NULL)
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

	if (result == NULL || len != sizeof(o))
		log_warnx("cleanup uid=%u agent=%s: did not finish",
		    (unsigned)c->shadow.key.uid, c->shadow.key.agent);
	else {
		memcpy(&o, result, sizeof(o));
		o.message[sizeof(o.message) - 1] = '\0';
		if (o.code != SBX_OK)
			log_warnx("cleanup uid=%u agent=%s: %s",
			    (unsigned)c->shadow.key.uid, c->shadow.key.agent,
			    o.message);
	}
	free(c);
}

static void
cleanup_spawn(struct rt_cli *rt, const struct sbx_key *key)
{
	struct cleanup_job *c;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return;
	c->shadow.key = *key;
	c->job.rt = rt;
	c->job.sb = &c->shadow;
	if (worker_spawn(rt->pool, sizeof(struct sbx_outcome),
	    now_ms() + (int64_t)rt->cfg->runtime_timeout * 1000, teardown_body,
	    &c->job, cleanup_done, c) == -1)
		free(c);
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
	j->generation = sb->generation;
	if (worker_spawn(rt->pool, sizeof(struct sbx_outcome),
	    now_ms() + timeout_ms, body, j, done, j) == -1) {
		log_warn("cannot start a runtime worker");
		free(j);
		return -1;
	}
	sb->job = j;
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

static bool
pid_alive(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	/* A pidfd turns readable when its process exits. */
	return pidfd >= 0 && poll(&pfd, 1, 0) == 0;
}

static bool
port_open(uint32_t port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port),
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	struct timeval tv = { 0, (suseconds_t)LIVE_CONNECT_MS * 1000 };
	int fd, rc;

	/*
	 * Out of descriptors we cannot look; the pidfd said the container
	 * lives, and a live sandbox must not be evicted for our own lack.
	 */
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return errno == EMFILE || errno == ENFILE;
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	rc = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	close(fd);
	return rc == 0;
}

/*
 * A hit's liveness check. The pidfd, every time: a container killed, OOM-
 * killed or removed by hand is seen at once, for one poll(). The loopback
 * connect (through the runtime's port forwarding, waking the service) is
 * most of a hit's cost, so it is made when the last one that worked is
 * older than LIVE_PORT_FRESH_MS: a broken forwarding or a service that
 * stopped listening is found within that time (bench/README.md).
 */
static bool
rt_is_live(void *impl, struct sbx_sandbox *sb)
{
	int64_t now = now_ms();
	struct sbx_svc *s;
	size_t i;

	(void)impl;
	for (i = 0; i < sb->nservices; i++)
		if (!pid_alive(sb->svc[i].pidfd))
			return false;
	for (i = 0; i < sb->nservices; i++) {
		s = &sb->svc[i];
		if (now - s->port_seen_ms < LIVE_PORT_FRESH_MS)
			continue;
		if (!port_open(s->conn.port))
			return false;
		s->port_seen_ms = now;
	}
	return true;
}

static void
rt_forget(void *impl, struct sbx_sandbox *sb)
{
	size_t i;

	(void)impl;
	for (i = 0; i < sb->nservices; i++)
		if (sb->svc[i].pidfd > 0) {
			close(sb->svc[i].pidfd);
			sb->svc[i].pidfd = -1;
		}
}

const struct sbx_runtime_ops rt_cli_ops = {
	.provision = rt_provision,
	.is_live = rt_is_live,
	.teardown = rt_teardown,
	.forget = rt_forget,
};

int
runtime_reap_orphans(const struct sbx_config *cfg)
{
	struct argv_buf a;
	struct run_result r;
	pid_t pid;
	int status;

	av_rm(&a, cfg);
	av_add(&a, "--filter");
	av_add(&a, "label=sbx.uid");
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		worker_child_setup(-1);
		if (sc_load_deny("runtime") == -1)
			_exit(126);
		run_argv(a.v, (char *const *)(uintptr_t)base_env,
		    now_ms() + (int64_t)cfg->runtime_timeout * 1000, &r);
		if (r.status != 0)
			fprintf(stderr, "sbx-monitor: reaping orphans: %s\n",
			    r.err);
		_exit(r.status == 0 ? 0 : 1);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}
