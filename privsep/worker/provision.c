/*
 * provision.c - the runtime jobs: start and probe, remove, rename.
 * runs in: sbx-worker's runtime jobs and a provision's service children
 *   (root, runtime deny filter)
 *
 * Each body here is a job of main.c's table; it gets its job and the
 * [service] sections it is about, and writes one fixed-size result to
 * fd, which the monitor checks before use. A provision starts each
 * service in a child of its own (svc_fork), so that they come up in
 * parallel; each runs the container and waits for the readiness prober
 * (probe.c), which it forks and which drops to a uid no other process has
 * (prober_ids) before it reads a tenant's bytes. A seeded project's
 * postgres then gets its seed (seed.c), applied as that same uid.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "datadir.h"
#include "guard.h"
#include "iox.h"
#include "job.h"
#include "keeper.h"
#include "log.h"
#include "probe.h"
#include "provision.h"
#include "rt_run.h"
#include "run.h"
#include "runtime_argv.h"
#include "seed.h"
#include "seeds.h"
#include "service.h"
#include "slug.h"
#include "sockdir.h"
#include "svc_session.h"

#define RUN_TRIES	3

struct svc_result {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};

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
	struct run_result r = { .status = -1 };
	int pid, port;

	rt_argv_inspect(&a, cfg, name);
	if (a.overflow || run_logged(a.v, (char *const *)(uintptr_t)rt_base_env, deadline,
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
	struct run_result r = { .status = -1 };
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
	uint32_t		 host_uid;	/* its range's first, 0 none */
	unsigned		 warm;		/* warm: its slot */
	const char		*seed;		/* postgres_seed's name, or "" */
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

/* SBX_KEEPER_VERIFIER=..., put at *slot with the list's end after it:
 * the container's keeper role, which the agent cannot log in as; the
 * container gets its verifier, never its password (keeper.c). */
static int
keeper_env(const struct sbx_config *cfg, const struct sbx_conn *c,
    char *buf, size_t cap, char **slot)
{
	char pw[KEEPER_PW_LEN + 1], v[KEEPER_VERIFIER_MAX];
	int rc = -1;

	if (keeper_derive(cfg, c->password, pw) == 0 &&
	    keeper_verifier(pw, v, sizeof(v)) == 0) {
		snprintf(buf, cap, "SBX_KEEPER_VERIFIER=%s", v);
		slot[0] = buf;
		slot[1] = NULL;
		rc = 0;
	}
	explicit_bzero(pw, sizeof(pw));
	return rc;
}

static int
run_container(const struct sbx_config *cfg, const struct place *pl,
    const struct service_cfg *s, const struct sbx_conn *full,
    const char *name, unsigned port, int64_t deadline,
    struct svc_result *res)
{
	char *envp[RT_NBASE_ENV + CFG_MAX_ENV + 2];
	char keeper[sizeof("SBX_KEEPER_VERIFIER=") + KEEPER_VERIFIER_MAX];
	char envstore[CFG_MAX_ENV][CFG_STR * 2];
	char dir[SBX_SOCKET_MAX], err[SBX_MESSAGE_MAX], data[SBX_SOCKET_MAX];
	char pidfile[CFG_STR + SBX_SLUG_MAX * 3 + 8];
	struct run_spec sp = { .uid = pl->key != NULL ? pl->key->uid : 0,
	    .agent = pl->key != NULL ? pl->key->agent : NULL,
	    .project = pl->project, .name = name, .sockdir = dir,
	    .pidfile = pidfile_path(cfg, s, name, pidfile,
	    sizeof(pidfile)) == 0 ? pidfile : NULL,
	    .conn = full, .idmap_uid = pl->host_uid, .port = port,
	    .keeper = s->probe == PROBE_POSTGRES };
	struct argv_buf a;
	struct run_result r;
	int tries, rc = -1;

	if (service_has_unit(s) && (place_make_dir(cfg, pl,
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
	if (s->data_path[0] != '\0') {
		if (datadir_make(dir, s, pl->host_uid, data, sizeof(data),
		    err, sizeof(err)) == -1) {
			log_warnx("data directory of %s: %s", name, err);
			snprintf(res->message, sizeof(res->message), "%s: "
			    "cannot make its data directory (see the "
			    "monitor's log).", s->name);
			return -1;
		}
		sp.datadir = data;
	}
	rt_argv_run(&a, cfg, s, &sp);
	if (a.overflow || rt_env_run(envp, envstore, s, full) == -1) {
		snprintf(res->message, sizeof(res->message),
		    "service %s: arguments too long.", s->name);
		return -1;
	}
	if (sp.keeper && keeper_env(cfg, full, keeper, sizeof(keeper),
	    &envp[RT_NBASE_ENV + s->nenv]) == -1) {
		snprintf(res->message, sizeof(res->message), "%s: no password "
		    "for sbx's keeper role (see the monitor's log).", s->name);
		return -1;
	}
	for (tries = 0; tries < RUN_TRIES; tries++) {
		if ((rc = run_logged(a.v, envp, deadline, full->password,
		    &r)) == 0)
			break;
		/* a tcp port was free and ruled (guard_open): in use now,
		 * another process took it, and the start fails rather than
		 * remove the key's other services, starting beside it */
		if (strstr(r.err, "address already in use") != NULL &&
		    pl->key != NULL && !(s->transport & TRANSPORT_TCP))
			remove_key(cfg, pl->key, deadline, &r);
		else if (strstr(r.err, "is already in use") != NULL)
			remove_storage(cfg, name, deadline);
		else
			break;
	}
	explicit_bzero(envstore, sizeof(envstore));
	explicit_bzero(keeper, sizeof(keeper));
	if (rc == -1)
		explain(res->message, sizeof(res->message), s->name, s->image,
		    &r);
	return rc;
}

/*
 * Whom the readiness prober runs as: the last uid of the service's own
 * host range (uid 65535 in the container, which the images never use),
 * so the process that reads a tenant's bytes shares its uid with no
 * other process on the host: not the broker's, not another sandbox's.
 * With docker the range maps no container (no user namespace of its
 * own), and its last uid is the prober's all the same. Every service
 * started has a range (the monitor's decision): without one, no probe
 * runs.
 */
static int
prober_ids(const struct place *pl, uid_t *uid, gid_t *gid)
{
	if (pl->host_uid == 0)
		return -1;
	*uid = *gid = pl->host_uid + JOB_RANGE_UIDS - 1;
	return 0;
}

/*
 * A tcp service's port: picked free, and guarded for its owner (a warm
 * one's: for nobody yet) before the runtime publishes it (guard.c). Its
 * rule goes with the container: by key, or by warm slot.
 */
static int
port_open(const struct sbx_config *cfg, const struct place *pl,
    const struct service_cfg *s, uid_t prober, unsigned *port,
    struct svc_result *res)
{
	char note[GUARD_NOTE_MAX];

	*port = 0;
	if (!(s->transport & TRANSPORT_TCP))
		return 0;
	if (pl->key != NULL)
		guard_note_key(note, sizeof(note), pl->key->uid, pl->key->agent,
		    s->name);
	else
		guard_note_pool(note, sizeof(note), s->name, pl->warm);
	if (guard_open(cfg, note, pl->key != NULL ? pl->key->uid :
	    GUARD_NO_OWNER, prober, port) == -1) {
		snprintf(res->message, sizeof(res->message), "%s: cannot keep "
		    "other users off its port (see the monitor's log).",
		    s->name);
		return -1;
	}
	return 0;
}

/* A ready postgres of a seeded project: its seed, as its prober's uid.
 * A failure is the service's (the provision removes what it started). */
static void
svc_seed(const struct sbx_config *cfg, const struct place *pl,
    const struct service_cfg *s, const struct probe_target *t, uid_t uid,
    int64_t deadline, struct svc_result *res)
{
	struct svc_reach r = { .s = s, .dir = t->dir, .port = t->port,
	    .uid = uid, .gid = (gid_t)uid, .user = t->user,
	    .password = t->password, .database = t->database };

	if (s->probe != PROBE_POSTGRES)
		return;
	(void)keeper_derive(cfg, t->password, r.keeper_pw);
	/* A warm one's time is nobody's wait: its first reset's copy now. */
	if (pl->seed == NULL || pl->seed[0] == '\0') {
		if (pl->key == NULL)
			seed_first_copy(&r, deadline);
		return;
	}
	if (seed_apply(cfg, pl->project, pl->seed, &r, deadline, &res->code,
	    res->message, sizeof(res->message)) == 0)
		snprintf(res->message, sizeof(res->message), "ready");
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
	unsigned port;
	uid_t uid;
	gid_t gid;

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
	if (prober_ids(pl, &uid, &gid) == -1) {
		snprintf(res->message, sizeof(res->message),
		    "%s: no uid for its readiness probe.", s->name);
		return;
	}
	if (place_name(pl, s->name, name, sizeof(name)) == -1 ||
	    port_open(cfg, pl, s, uid, &port, res) == -1 ||
	    run_container(cfg, pl, s, &full, name, port, run_deadline,
	    res) == -1 || (read_pidfile(cfg, s, name, res) == -1 &&
	    inspect(cfg, s, name, run_deadline, res) == -1))
		return;
	if (port != 0 && res->port != port) {
		log_warnx("runtime inspect %s: port %u, not %u", name,
		    res->port, port);
		snprintf(res->message, sizeof(res->message), "%s: the runtime "
		    "published another port than it was given.", s->name);
		return;
	}
	t = (struct probe_target){ .kind = s->probe,
	    .port = (uint16_t)res->port, .user = full.user,
	    .database = full.database, .password = full.password };
	if ((s->transport & TRANSPORT_UNIX) &&
	    place_dir(cfg, pl, s->name, dir, sizeof(dir)) == 0) {
		t.dir = dir;
		t.socket_name = s->socket_name;
	}
	switch (probe_ready(&t, uid, gid,
	    now_ms() + (int64_t)s->ready_timeout * 1000)) {
	case PROBE_READY:
		res->code = SBX_OK;
		snprintf(res->message, sizeof(res->message), "ready");
		svc_seed(cfg, pl, s, &t, uid, deadline, res);
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

/* Start each service in its own process: they come up in parallel. */
static pid_t
svc_fork(const struct sbx_config *cfg, const struct job_sandbox *sb,
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
		    .host_uid = sb->svc[idx].host_uid, .seed = sb->seed };

		memset(&res, 0, sizeof(res));
		svc_start(cfg, &pl, &sb->svc[idx].conn, deadline, &res);
		_exit(write_all(p[1], &res, sizeof(res), deadline) == 0 ? 0 : 1);
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

static void
collect(const struct job_sandbox *sb, const pid_t *pids, const int *fds,
    int64_t deadline, struct job_outcome *o)
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
		o->svc[i].port = res.port;
	}
}

/* A failed start's removal: one runtime call's time more, within the
 * monitor's backstop for the worker. */
static int64_t
cleanup_deadline(const struct sbx_config *cfg)
{
	return now_ms() + (int64_t)cfg->runtime_timeout * 1000;
}

/* Warm containers' jobs (the monitor's warm.c decides). */
int
warm_start_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct job_warm j;
	const struct service_cfg *s;
	struct place pl;
	struct svc_result res;
	struct warm_started out;
	char name[SBX_SLUG_MAX * 3];

	memcpy(&j, job, len);
	if (!memchr(j.conn.name, '\0', sizeof(j.conn.name)) ||
	    !memchr(j.conn.password, '\0', sizeof(j.conn.password)) ||
	    !memchr(j.project, '\0', sizeof(j.project)) ||
	    !memchr(j.seed, '\0', sizeof(j.seed)) ||
	    (j.project[0] != '\0' && !slug_valid(j.project,
	    strlen(j.project))) ||
	    (j.seed[0] != '\0' && (j.project[0] == '\0' ||
	    !seed_name_valid(j.seed))) ||
	    (s = config_service(cfg, j.conn.name)) == NULL)
		return 1;
	/* A project's pool: its label, and its seed applied. */
	pl = (struct place){ .host_uid = j.host_uid, .warm = j.slot,
	    .project = j.project[0] != '\0' ? j.project : NULL,
	    .seed = j.seed };
	memset(&res, 0, sizeof(res));
	svc_start(cfg, &pl, &j.conn, now_ms() + ((int64_t)cfg->runtime_timeout +
	    s->ready_timeout) * 1000, &res);
	explicit_bzero(j.conn.password, sizeof(j.conn.password));
	if (res.code != SBX_OK && rt_pool_name(name, sizeof(name), s->name,
	    j.slot) == 0) {
		if (remove_names(cfg, name, NULL, cleanup_deadline(cfg)) == 0)
			guard_del_pool(cfg, s->name, j.slot);
		sockdir_pool_remove(cfg, s->name, j.slot);
	}
	memset(&out, 0, sizeof(out));
	out.code = res.code;
	memcpy(out.message, res.message, sizeof(out.message));
	out.message[sizeof(out.message) - 1] = '\0';
	out.pid = res.pid;
	out.port = res.port;
	return write_all(fd, &out, sizeof(out), now_ms() + 5000) == 0 ? 0 : 1;
}

int
warm_remove_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	const struct job_warm *j = job;
	char name[SBX_SLUG_MAX * 3];
	uint32_t code = SBX_E_RUNTIME_FAILED;

	(void)len;
	if (memchr(j->conn.name, '\0', sizeof(j->conn.name)) != NULL &&
	    rt_pool_name(name, sizeof(name), j->conn.name, j->slot) == 0 &&
	    remove_names(cfg, name, NULL, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000) == 0 &&
	    guard_del_pool(cfg, j->conn.name, j->slot) == 0) {
		sockdir_pool_remove(cfg, j->conn.name, j->slot);
		code = SBX_OK;
	}
	return write_all(fd, &code, sizeof(code), now_ms() + 5000) == 0 ? 0 : 1;
}

/* Every rename pending, one after the other: one worker for a burst;
 * none while a removal of a claimed container runs (names_lock). */
int
rename_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	const struct job_renames *j = job;
	struct argv_buf a;
	struct run_result r;
	uint32_t code = SBX_OK;
	size_t i;
	int lock;

	(void)len;
	for (i = 0; i < j->n && i < WARM_RENAMES; i++) {
		rt_argv_rename(&a, cfg, j->v[i].from, j->v[i].to);
		lock = names_lock(cfg);
		if (a.overflow || run_logged(a.v, (char *const *)(uintptr_t)
		    rt_base_env, now_ms() + (int64_t)cfg->runtime_timeout *
		    1000, NULL, &r) == -1)
			code = SBX_E_RUNTIME_FAILED;
		names_unlock(lock);
	}
	return write_all(fd, &code, sizeof(code), now_ms() + 5000) == 0 ? 0 : 1;
}

/* A provision's or teardown's job: every count in range, every string
 * ended within its field. */
static int
job_valid(const struct job_sandbox *j)
{
	size_t i;

	if (j->nservices > SBX_MAX_SERVICES || j->nprev > SBX_MAX_SERVICES ||
	    !memchr(j->key.agent, '\0', sizeof(j->key.agent)) ||
	    !memchr(j->project, '\0', sizeof(j->project)) ||
	    !memchr(j->seed, '\0', sizeof(j->seed)))
		return -1;
	/* A seed is a file name, of a project's by its slug. */
	if (j->seed[0] != '\0' && (!seed_name_valid(j->seed) ||
	    !slug_valid(j->project, strlen(j->project))))
		return -1;
	for (i = 0; i < j->nservices; i++)
		if (!memchr(j->svc[i].conn.name, '\0', SBX_SLUG_MAX) ||
		    !memchr(j->svc[i].conn.password, '\0', SBX_SECRET_MAX))
			return -1;
	for (i = 0; i < j->nprev; i++)
		if (!memchr(j->prev[i].conn.name, '\0', SBX_SLUG_MAX))
			return -1;
	return 0;
}

int
provision_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct job_sandbox *sb;
	struct job_outcome o;
	struct run_result r;
	pid_t pids[SBX_MAX_SERVICES] = { 0 };
	int fds[SBX_MAX_SERVICES] = { 0 };
	int64_t deadline;
	size_t i;
	int rc;

	if ((sb = malloc(sizeof(*sb))) == NULL)
		return 1;
	memcpy(sb, job, len);
	if (job_valid(sb) == -1) {
		free(sb);
		return 1;
	}
	deadline = now_ms() + ((int64_t)cfg->runtime_timeout +
	    sb->ready_timeout) * 1000;
	memset(&o, 0, sizeof(o));
	/* podman's run --replace removes a container of the same name in
	 * the same call: a key's first provision skips the label-wide rm. A
	 * reshape removes only what the sandbox no longer has, once what it
	 * gained is ready (below). */
	if (!sb->reshape && (sb->generation > 1 || !rt_is_podman(cfg)) &&
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
	/* A failed reshape leaves the sandbox as it was: the monitor keeps
	 * the services it had, so none of them is removed. */
	if (o.code == SBX_OK && sb->reshape)
		o.dropped_gone = remove_dropped(cfg, sb, cleanup_deadline(cfg));
	else if (o.code != SBX_OK && sb->reshape) {
		for (i = 0; i < sb->nservices; i++)
			if (!sb->svc[i].keep)
				remove_service(cfg, &sb->key,
				    sb->svc[i].conn.name, 0,
				    cleanup_deadline(cfg));
	} else if (o.code != SBX_OK)
		o.removed = remove_key(cfg, &sb->key, cleanup_deadline(cfg),
		    &r) == 0;
out:
	rc = write_all(fd, &o, sizeof(o), now_ms() + 5000) == 0 ? 0 : 1;
	explicit_bzero(sb, sizeof(*sb));
	free(sb);
	return rc;
}

int
teardown_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct job_sandbox *sb;
	struct run_result r;
	struct job_outcome o;

	if ((sb = malloc(sizeof(*sb))) == NULL)
		return 1;
	memcpy(sb, job, len);
	memset(&o, 0, sizeof(o));
	/* The claimed containers first: the key's removal takes its port
	 * rules and socket directories, which they use while they run. */
	if (job_valid(sb) == -1)
		o.code = SBX_E_INTERNAL;
	else if (remove_claimed(cfg, &sb->key, sb->svc, sb->nservices,
	    now_ms() + (int64_t)cfg->runtime_timeout * 1000) == -1) {
		/* run_logged() logged the runtime's words */
		o.code = SBX_E_RUNTIME_FAILED;
		strlcpy(o.message, "teardown: a claimed warm container could "
		    "not be removed.", sizeof(o.message));
	} else if (remove_key(cfg, &sb->key, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000, &r) == -1) {
		o.code = SBX_E_RUNTIME_FAILED;
		explain(o.message, sizeof(o.message), "teardown", NULL, &r);
	}
	explicit_bzero(sb, sizeof(*sb));
	free(sb);
	return write_all(fd, &o, sizeof(o), now_ms() + 5000) == 0 ? 0 : 1;
}

/*
 * One claim of a JOB_CLAIM, checked before any of it is used: its
 * owner's agent and each service a slug (they go into iptables-restore's
 * text), each service a tcp one of the job's, each slot, range and port
 * set. Its ports are added to h; the range each was started in gives its
 * prober's uid.
 */
static int
claim_hands(const struct sbx_config *cfg, const struct job_claim *c,
    struct guard_hand *h, size_t *n)
{
	const struct job_claim_port *p;
	const struct service_cfg *s[SBX_MAX_SERVICES];
	size_t i;

	if (!memchr(c->key.agent, '\0', sizeof(c->key.agent)) ||
	    !slug_valid(c->key.agent, strlen(c->key.agent)) ||
	    c->nports == 0 || c->nports > SBX_MAX_SERVICES)
		return -1;
	for (i = 0; i < c->nports; i++) {
		p = &c->port[i];
		if (!memchr(p->service, '\0', sizeof(p->service)) ||
		    (s[i] = config_service(cfg, p->service)) == NULL ||
		    (s[i]->transport & TRANSPORT_TCP) == 0 || p->slot == 0 ||
		    p->host_uid == 0 ||
		    p->host_uid > UINT32_MAX - (JOB_RANGE_UIDS - 1) ||
		    p->port == 0 || p->port > 65535)
			return -1;
	}
	for (i = 0; i < c->nports; i++) {
		p = &c->port[i];
		h[(*n)++] = (struct guard_hand){ .key = &c->key,
		    .service = s[i]->name, .slot = p->slot, .port = p->port,
		    .prober = p->host_uid + JOB_RANGE_UIDS - 1 };
	}
	return 0;
}

/*
 * Claims of warm tcp containers, those that came together: each port
 * its new owner's, the owner's rule before the pool's goes, all in one
 * transaction (guard.c). A claim that is not well formed is left out
 * (SBX_E_INTERNAL); the others stand or fall together.
 */
int
claim_body(int fd, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	struct job_claims *j;
	struct guard_hand *h;
	struct claim_results r;
	uint32_t code = SBX_E_RUNTIME_FAILED;
	size_t i, n = 0;

	memset(&r, 0, sizeof(r));
	if ((j = malloc(sizeof(*j))) == NULL)
		return 1;
	memcpy(j, job, len);
	r.n = j->n <= CLAIM_BATCH ? j->n : 0;
	if ((h = calloc(CLAIM_BATCH * SBX_MAX_SERVICES, sizeof(*h))) != NULL) {
		for (i = 0; i < r.n; i++)
			r.code[i] = claim_hands(cfg, &j->v[i], h, &n) == -1 ?
			    SBX_E_INTERNAL : SBX_OK;
		if (guard_claim(cfg, h, n) == 0)
			code = SBX_OK;
		else
			log_warnx("claim: %zu ports of %u claims could not be "
			    "given to their owners", n, (unsigned)r.n);
	}
	for (i = 0; i < r.n; i++)
		if (r.code[i] == SBX_OK)
			r.code[i] = code;
	free(h);
	free(j);
	return write_all(fd, &r, sizeof(r), now_ms() + 5000) == 0 ? 0 : 1;
}

int
evict_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	const struct job_evict *j = job;
	uint32_t code = SBX_E_RUNTIME_FAILED;

	(void)len;
	if (memchr(j->key.agent, '\0', sizeof(j->key.agent)) != NULL &&
	    memchr(j->service, '\0', sizeof(j->service)) != NULL &&
	    remove_svc_names(cfg, &j->key, j->service, j->slot, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000) == 0)
		code = SBX_OK;
	return write_all(fd, &code, sizeof(code), now_ms() + 5000) == 0 ? 0 : 1;
}
