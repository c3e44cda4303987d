/*
 * runtime_argv.c - the argv and environment of every runtime call.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter); pure
 *
 * The only variable parts are the peer uid (a number), slugs that
 * dispatch.c and cache.c have validated, paths the monitor made, and
 * values from the admin's sbx.conf. Secrets never go into argv (argv is
 * world-readable in /proc): they are passed in the runtime's environment
 * and named with "--env=NAME". tests/unit/test_argv.c holds every
 * template to that.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "job.h"
#include "rtname.h"
#include "runtime_argv.h"

const char *const rt_base_env[RT_NBASE_ENV + 1] = {
	"PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/root",
	"LANG=C",
	NULL,
};

static void
av_add(struct argv_buf *a, const char *s)
{
	size_t len = strlen(s) + 1;

	if (a->n == RT_MAX_ARGV || a->used + len > sizeof(a->store)) {
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

/*
 * Confinement (docs/contract.md, "Isolation"): with podman, a user
 * namespace of its own (a range of host uids no other live sandbox has,
 * the monitor's idmap.c); a read-only root with the configured tmpfs
 * as the only writable space (no /dev/shm), a capped log, no capabilities, and a network
 * of its own: none but loopback for unix; for tcp slirp4netns, whose only
 * way in is the port published on 127.0.0.1 (no bridge address that the
 * host or another container could reach).
 */
static void
confine(struct argv_buf *a, const struct sbx_config *cfg,
    const struct service_cfg *s, const struct run_spec *sp)
{
	bool podman = rt_is_podman(cfg);

	if (podman && sp->idmap_uid != 0) {
		av_addf(a, "--uidmap=0:%u:%u", (unsigned)sp->idmap_uid,
		    JOB_RANGE_UIDS);
		av_addf(a, "--gidmap=0:%u:%u", (unsigned)sp->idmap_uid,
		    JOB_RANGE_UIDS);
	}
	av_add(a, "--read-only");
	if (podman)
		av_add(a, "--read-only-tmpfs=false");
	/* No /dev/shm, a writable space beside the tmpfs (and, with a user
	 * namespace, what podman 4.3 cannot always unmount at rm: EBUSY). */
	av_add(a, "--ipc=none");
	av_addf(a, "--log-driver=%s", podman ? "k8s-file" : "json-file");
	av_addf(a, "--log-opt=max-size=%s", s->log_size);
	av_add(a, "--security-opt=no-new-privileges");
	av_add(a, "--cap-drop=all");
	av_addf(a, "--pids-limit=%u", s->pids);
	if (s->memory[0] != '\0')
		av_addf(a, "--memory=%s", s->memory);
	if (s->cpus[0] != '\0')
		av_addf(a, "--cpus=%s", s->cpus);
	if (s->transport & TRANSPORT_UNIX) {
		av_addf(a, "--volume=%s:" SBX_SOCKET_MOUNT "%s", sp->sockdir,
		    podman ? ":U" : "");
		av_add(a, "--env=SBX_SOCKET_DIR=" SBX_SOCKET_MOUNT);
	}
	if (sp->datadir != NULL)	/* no option: U would copy it all up */
		av_addf(a, "--volume=%s:%s", sp->datadir, s->data_path);
	if (s->transport & TRANSPORT_TCP) {
		if (podman)
			av_add(a, "--network=slirp4netns:port_handler=slirp4netns");
		av_addf(a, "--publish=127.0.0.1:%u:%u", sp->port, s->port);
		av_add(a, "--env=SBX_LISTEN_TCP=1");
	} else
		av_add(a, "--network=none");
}

void
rt_argv_run(struct argv_buf *a, const struct sbx_config *cfg,
    const struct service_cfg *s, const struct run_spec *sp)
{
	char buf[CFG_STR];
	size_t i;

	av_runtime(a, cfg);
	av_add(a, "run");
	av_add(a, "-d");
	av_add(a, "--name");
	av_add(a, sp->name);
	if (rt_is_podman(cfg))
		av_add(a, "--replace");
	else	/* a missing image is an error, not a pull from a registry */
		av_add(a, "--pull=never");
	if (rt_is_podman(cfg) && sp->pidfile != NULL)
		av_addf(a, "--pidfile=%s", sp->pidfile);
	/* A warm container's owner is not known yet; its labels say so,
	 * and stay (labels are fixed at run): sbx-monitor(8). */
	if (sp->agent == NULL) {
		av_addf(a, "--label=sbx.pool=%s", s->name);
		if (sp->project != NULL)	/* a project's pool */
			av_addf(a, "--label=sbx.project=%s", sp->project);
	} else {
		av_addf(a, "--label=sbx.uid=%u", (unsigned)sp->uid);
		av_addf(a, "--label=sbx.agent=%s", sp->agent);
		av_addf(a, "--label=sbx.project=%s", sp->project);
	}
	av_addf(a, "--label=sbx.service=%s", s->name);
	confine(a, cfg, s, sp);
	for (i = 0; i < s->ntmpfs; i++)
		av_addf(a, "--tmpfs=%s", s->tmpfs[i]);
	for (i = 0; i < s->nenv; i++)
		av_addf(a, "--env=%.*s", (int)strcspn(s->env[i], "="),
		    s->env[i]);
	if (sp->keeper)		/* its value in the environment alone */
		av_add(a, "--env=SBX_KEEPER_VERIFIER");
	av_add(a, s->image);
	for (i = 0; i < s->nargs; i++) {
		if (expand(buf, sizeof(buf), s->args[i], sp->conn, 0) == -1)
			a->overflow = 1;
		av_add(a, buf);
	}
}

/* rt_base_env plus NAME=value for each env template; secrets live only
 * here. */
int
rt_env_run(char *envp[], char store[][CFG_STR * 2],
    const struct service_cfg *s, const struct sbx_conn *c)
{
	size_t i;

	for (i = 0; i < RT_NBASE_ENV; i++)
		envp[i] = (char *)(uintptr_t)rt_base_env[i];
	for (i = 0; i < s->nenv; i++) {
		if (expand(store[i], sizeof(store[i]), s->env[i], c, 1) == -1)
			return -1;
		envp[RT_NBASE_ENV + i] = store[i];
	}
	envp[RT_NBASE_ENV + s->nenv] = NULL;
	return 0;
}

/* rm -f, and for podman -t 0: remove now, no grace period for SIGTERM. */
static void
av_rm(struct argv_buf *a, const struct sbx_config *cfg)
{
	av_runtime(a, cfg);
	av_add(a, "rm");
	av_add(a, "-f");
	if (rt_is_podman(cfg)) {
		av_add(a, "-t");
		av_add(a, "0");
	}
}

/* podman: rm every container of the key. docker's rm takes no filter:
 * this lists their ids (ps -aq), for rt_argv_rm_ids. */
void
rt_argv_rm_key(struct argv_buf *a, const struct sbx_config *cfg, uid_t uid,
    const char *agent)
{
	if (rt_is_docker(cfg)) {
		av_runtime(a, cfg);
		av_add(a, "ps");
		av_add(a, "-aq");
	} else
		av_rm(a, cfg);
	av_add(a, "--filter");
	av_addf(a, "label=sbx.uid=%u", (unsigned)uid);
	av_add(a, "--filter");
	av_addf(a, "label=sbx.agent=%s", agent);
}

void
rt_argv_rm_name(struct argv_buf *a, const struct sbx_config *cfg,
    const char *name)
{
	av_rm(a, cfg);
	av_add(a, name);
}

/* A claimed warm container has one of two names (renamed after the
 * reply): both go in one call, which podman resolves name by name. */
void
rt_argv_rm_names(struct argv_buf *a, const struct sbx_config *cfg,
    const char *const *names, size_t n)
{
	size_t i;

	av_rm(a, cfg);
	if (rt_is_podman(cfg))
		av_add(a, "--ignore");
	for (i = 0; i < n; i++)
		av_add(a, names[i]);
}

void
rt_argv_rename(struct argv_buf *a, const struct sbx_config *cfg,
    const char *from, const char *to)
{
	av_runtime(a, cfg);
	av_add(a, "rename");
	av_add(a, from);
	av_add(a, to);
}

/* docker: rm -f of the ids that rt_argv_rm_key's ps listed. */
void
rt_argv_rm_ids(struct argv_buf *a, const struct sbx_config *cfg,
    char *const ids[], size_t n)
{
	size_t i;

	av_rm(a, cfg);
	for (i = 0; i < n; i++)
		av_add(a, ids[i]);
}

/* podman: a container left in its storage under this name. docker has
 * no such state: the name's container, by name. */
void
rt_argv_rm_storage(struct argv_buf *a, const struct sbx_config *cfg,
    const char *name)
{
	if (rt_is_docker(cfg)) {
		rt_argv_rm_name(a, cfg, name);
		return;
	}
	av_runtime(a, cfg);
	av_add(a, "rm");
	av_add(a, "-f");
	av_add(a, "--storage");
	av_add(a, name);
}

/*
 * podman: "NAME PID UID AGENT [PORTS]", a line per sbx container
 * (adopt.c). docker's ps knows no pid: there this lists the containers'
 * ids, and rt_argv_list_ids inspects them into the same lines.
 */
void
rt_argv_list(struct argv_buf *a, const struct sbx_config *cfg)
{
	av_runtime(a, cfg);
	av_add(a, "ps");
	if (rt_is_docker(cfg)) {
		av_add(a, "-aq");
		av_add(a, "--filter");
		av_add(a, "label=sbx.uid");
		return;
	}
	av_add(a, "-a");
	av_add(a, "--filter");
	av_add(a, "label=sbx.service");
	av_add(a, "--format");
	/* u and a: a pool member's empty labels still make a field. */
	av_add(a, "{{.Names}} {{.Pid}} u{{index .Labels \"sbx.uid\"}} "
	    "a{{index .Labels \"sbx.agent\"}} {{.Ports}}");
}

/* docker: rt_argv_list's line for each id (inspect's name has a '/'). */
void
rt_argv_list_ids(struct argv_buf *a, const struct sbx_config *cfg,
    char *const ids[], size_t n)
{
	size_t i;

	av_runtime(a, cfg);
	av_add(a, "inspect");
	av_add(a, "--format");
	av_add(a, "{{slice .Name 1}} {{.State.Pid}} "
	    "u{{index .Config.Labels \"sbx.uid\"}} "
	    "a{{index .Config.Labels \"sbx.agent\"}} "
	    "{{range $p, $b := .NetworkSettings.Ports}}{{range $b}}"
	    "{{.HostIp}}:{{.HostPort}}->{{end}}{{end}}");
	for (i = 0; i < n; i++)
		av_add(a, ids[i]);
}

/* docker: the image's USER, who must own the socket directory (podman's
 * volume option U does that itself). */
void
rt_argv_image_user(struct argv_buf *a, const struct sbx_config *cfg,
    const char *image)
{
	av_runtime(a, cfg);
	av_add(a, "image");
	av_add(a, "inspect");
	av_add(a, "--format");
	av_add(a, "{{.Config.User}}");
	av_add(a, image);
}

/* "PID [PORT ]": the main process, and the published port if any. */
void
rt_argv_inspect(struct argv_buf *a, const struct sbx_config *cfg,
    const char *name)
{
	av_runtime(a, cfg);
	av_add(a, "inspect");
	av_add(a, "--format");
	av_add(a, "{{.State.Pid}} {{range $p, $b := .NetworkSettings.Ports}}"
	    "{{range $b}}{{.HostPort}} {{end}}{{end}}");
	av_add(a, name);
}
