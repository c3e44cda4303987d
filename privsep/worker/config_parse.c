/*
 * config_parse.c - read sbx.conf with libinih, then check every value once, for
 * the monitor's start (JOB_CONFIG) and for sbx-monitor -t, so the daemon
 * never meets a bad setting later. The file comes as the descriptor root
 * opened (config_job.c).
 * runs in: sbx-worker's JOB_CONFIG, and JOB_RELOAD's project files, in
 *   their child that dropped to sbx-job (runtime deny filter and job
 *   allowlist: jobuser.c)
 *
 * Unknown sections and keys are errors: a typo should not silently
 * change nothing. SIGHUP does not read sbx.conf again (only the projects
 * and /etc/subuid): what workers and the loop see is fixed for the run.
 */
#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stddef.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "config.h"
#include "config_parse.h"
#include "ini_check.h"
#include "job.h"
#include "slug.h"

struct parse {
	struct sbx_config *cfg;
	char		  *err;
	size_t		   errlen;
	int		   failed;
};

static int
perr(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->failed) {
		va_start(ap, fmt);
		vsnprintf(p->err, p->errlen, fmt, ap);
		va_end(ap);
	}
	p->failed = 1;
	return 0;
}

static int
parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on") ||
	    !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") ||
	    !strcmp(v, "off") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

static int
parse_uint(const char *v, unsigned base, unsigned max, unsigned *out)
{
	char *end;
	unsigned long n;

	if (*v == '\0' || *v == '-')
		return -1;
	errno = 0;
	n = strtoul(v, &end, (int)base);
	if (errno != 0 || *end != '\0' || n > max)
		return -1;
	*out = (unsigned)n;
	return 0;
}

static int
copy(char *dst, size_t size, const char *v)
{
	return strlcpy(dst, v, size) >= size ? -1 : 0;
}

size_t
split_words(char *s, char **out, size_t max)
{
	size_t n = 0;
	char *tok, *save = NULL;

	for (tok = strtok_r(s, " \t", &save); tok != NULL;
	    tok = strtok_r(NULL, " \t", &save)) {
		if (n == max)
			return max + 1;
		out[n++] = tok;
	}
	return n;
}

static int
set_uint(struct parse *p, const char *k, const char *v, unsigned max,
    unsigned *out)
{
	if (parse_uint(v, 10, max, out) == -1)
		return perr(p, "%s must be a whole number up to %u", k, max);
	return 1;
}

static int
set_warm_idle(struct parse *p, const char *k, const char *v, unsigned *out)
{
	if (parse_uint(v, 10, WARM_IDLE_MAX, out) == -1 || *out == 0)
		return perr(p, "%s must be seconds from 1 to %u", k,
		    WARM_IDLE_MAX);
	return 1;
}

static int
set_warm_mib(struct parse *p, const char *k, const char *v, unsigned *out)
{
	if (parse_uint(v, 10, WARM_MIB_MAX, out) == -1 || *out == 0)
		return perr(p, "%s must be MiB from 1 to %u", k, WARM_MIB_MAX);
	return 1;
}

static int
set_str(struct parse *p, const char *k, const char *v, char *dst, size_t n)
{
	if (copy(dst, n, v) == -1)
		return perr(p, "%s is too long", k);
	return 1;
}

static int
set_runtime_args(struct parse *p, const char *v)
{
	char buf[CFG_STR * 4], *w[CFG_MAX_RTARGS + 1];
	size_t i, n;

	if (copy(buf, sizeof(buf), v) == -1)
		return perr(p, "runtime_args is too long");
	n = split_words(buf, w, CFG_MAX_RTARGS);
	if (n > CFG_MAX_RTARGS)
		return perr(p, "runtime_args has more than %d words",
		    CFG_MAX_RTARGS);
	for (i = 0; i < n; i++)
		if (copy(p->cfg->runtime_args[i], CFG_STR, w[i]) == -1)
			return perr(p, "runtime_args word too long");
	p->cfg->nruntime_args = n;
	return 1;
}

/* The limits of issue #15: who may hold how much of the monitor. */
static int
limit_key(struct parse *p, const char *k, const char *v)
{
	struct sbx_config *c = p->cfg;

	if (!strcmp(k, "max_open_files"))
		return set_uint(p, k, v, 1U << 30, &c->max_open_files);
	if (!strcmp(k, "max_sandboxes"))
		return set_uint(p, k, v, 1000000, &c->max_sandboxes);
	if (!strcmp(k, "max_requests"))
		return set_uint(p, k, v, 100000, &c->max_requests);
	if (!strcmp(k, "max_requests_per_uid"))
		return set_uint(p, k, v, 100000, &c->max_requests_per_uid);
	if (!strcmp(k, "max_waiters"))
		return set_uint(p, k, v, 100000, &c->max_waiters);
	if (!strcmp(k, "max_provisions"))
		return set_uint(p, k, v, 256, &c->max_provisions);
	if (!strcmp(k, "max_provisions_per_uid"))
		return set_uint(p, k, v, 256, &c->max_provisions_per_uid);
	if (!strcmp(k, "max_snapshots"))
		return set_uint(p, k, v, SBX_MAX_SNAPSHOTS,
		    &c->max_snapshots);
	if (!strcmp(k, "subuid_file"))
		return set_str(p, k, v, c->subuid_file, sizeof(c->subuid_file));
	if (!strcmp(k, "subuid")) {
		if (!strcmp(v, "count"))
			c->subuid = SUBUID_COUNT;
		else if (!strcmp(v, "refuse"))
			c->subuid = SUBUID_REFUSE;
		else
			return perr(p, "subuid must be count or refuse");
		return 1;
	}
	return perr(p, "unknown key [sbx] %s", k);
}

static int
sbx_key(struct parse *p, const char *k, const char *v)
{
	struct sbx_config *c = p->cfg;
	unsigned mode;

	if (!strcmp(k, "enabled")) {
		if (parse_bool(v, &c->enabled) == -1)
			return perr(p, "enabled must be yes or no");
		return 1;
	}
	if (!strcmp(k, "socket_mode")) {
		if (parse_uint(v, 8, 0777, &mode) == -1)
			return perr(p, "socket_mode must be octal, e.g. 0666");
		c->socket_mode = (mode_t)mode;
		return 1;
	}
	if (!strcmp(k, "socket"))
		return set_str(p, k, v, c->socket, sizeof(c->socket));
	if (!strcmp(k, "broker_user"))
		return set_str(p, k, v, c->broker_user, sizeof(c->broker_user));
	if (!strcmp(k, "projects"))
		return set_str(p, k, v, c->projects, sizeof(c->projects));
	if (!strcmp(k, "runtime"))
		return set_str(p, k, v, c->runtime, sizeof(c->runtime));
	if (!strcmp(k, "runtime_args"))
		return set_runtime_args(p, v);
	if (!strcmp(k, "state_dir"))
		return set_str(p, k, v, c->state_dir, sizeof(c->state_dir));
	if (!strcmp(k, "run_dir")) {
		if (strlen(v) > SBX_RUN_DIR_MAX)	/* sun_path is 108 */
			return perr(p, "run_dir is longer than %d characters",
			    SBX_RUN_DIR_MAX);
		return set_str(p, k, v, c->run_dir, sizeof(c->run_dir));
	}
	if (!strcmp(k, "idle_ttl"))
		return set_uint(p, k, v, 30 * 86400, &c->idle_ttl);
	if (!strcmp(k, "max_sandboxes_per_uid"))
		return set_uint(p, k, v, 100000, &c->max_sandboxes_per_uid);
	if (!strcmp(k, "max_children"))
		return set_uint(p, k, v, 4096, &c->max_children);
	if (!strcmp(k, "max_connections_per_uid")) {
		/* 0 is "unset" inside: check_per_uid() fills it in. */
		if (parse_uint(v, 10, 2048, &c->max_connections_per_uid) == -1 ||
		    c->max_connections_per_uid == 0)
			return perr(p, "%s must be a whole number from 1 to "
			    "2048", k);
		return 1;
	}
	if (!strcmp(k, "max_workers"))
		return set_uint(p, k, v, 256, &c->max_workers);
	if (!strcmp(k, "request_timeout"))
		return set_uint(p, k, v, 600, &c->request_timeout);
	if (!strcmp(k, "runtime_timeout"))
		return set_uint(p, k, v, 3600, &c->runtime_timeout);
	if (!strcmp(k, "metrics_file")) {
		if (v[0] != '\0' && v[0] != '/')
			return perr(p, "metrics_file must be an absolute path");
		return set_str(p, k, v, c->metrics_file,
		    sizeof(c->metrics_file));
	}
	if (!strcmp(k, "userns_base"))
		return set_uint(p, k, v, UINT32_MAX, &c->userns_base);
	if (!strcmp(k, "userns_slots"))
		return set_uint(p, k, v, 65535, &c->userns_slots);
	if (!strcmp(k, "warm_memory"))
		return set_uint(p, k, v, WARM_MEMORY_MAX, &c->warm_memory);
	return limit_key(p, k, v);
}

static struct service_cfg *
service_for(struct parse *p, const char *name)
{
	struct sbx_config *c = p->cfg;
	size_t i;

	for (i = 0; i < c->nservices; i++)
		if (!strcmp(c->services[i].name, name))
			return &c->services[i];
	if (c->nservices == SBX_MAX_SERVICES)
		return NULL;
	memset(&c->services[c->nservices], 0, sizeof(c->services[0]));
	strlcpy(c->services[c->nservices].name, name, SBX_SLUG_MAX);
	c->services[c->nservices].ready_timeout = 30;
	c->services[c->nservices].pids = 512;
	c->services[c->nservices].warm_max = WARM_MAX_UNSET;
	c->services[c->nservices].warm_idle = 300;
	c->services[c->nservices].warm_mib = 64;
	c->services[c->nservices].transport = TRANSPORT_UNIX;
	strlcpy(c->services[c->nservices].log_size, "1m",
	    sizeof(c->services[0].log_size));
	return &c->services[c->nservices++];
}

static int
set_probe(struct parse *p, struct service_cfg *s, const char *v)
{
	if (!strcmp(v, "postgres"))
		s->probe = PROBE_POSTGRES;
	else if (!strcmp(v, "redis"))
		s->probe = PROBE_REDIS;
	else if (!strcmp(v, "tcp"))
		s->probe = PROBE_TCP;
	else
		return perr(p, "[service %s] probe must be postgres, redis or tcp",
		    s->name);
	return 1;
}

static int
set_transport(struct parse *p, struct service_cfg *s, const char *v)
{
	if (!strcmp(v, "unix"))
		s->transport = TRANSPORT_UNIX;
	else if (!strcmp(v, "tcp"))
		s->transport = TRANSPORT_TCP;
	else if (!strcmp(v, "both"))
		s->transport = TRANSPORT_BOTH;
	else
		return perr(p, "[service %s] transport must be unix, tcp or both",
		    s->name);
	return 1;
}

static bool
env_name_valid(const char *e)
{
	const char *eq = strchr(e, '=');
	const char *q;

	if (eq == NULL || eq == e)
		return false;
	for (q = e; q < eq; q++)
		if (!(*q == '_' || (*q >= 'A' && *q <= 'Z') ||
		    (*q >= '0' && *q <= '9' && q != e)))
			return false;
	return true;
}

static int
set_args(struct parse *p, struct service_cfg *s, const char *v)
{
	char buf[CFG_STR * 4], *w[CFG_MAX_ARGS + 1];
	size_t i, n;

	if (strstr(v, "{password}") != NULL)
		return perr(p, "[service %s] args may not contain {password}: "
		    "argv is visible to every user; use env", s->name);
	if (copy(buf, sizeof(buf), v) == -1)
		return perr(p, "[service %s] args is too long", s->name);
	n = split_words(buf, w, CFG_MAX_ARGS);
	if (n > CFG_MAX_ARGS)
		return perr(p, "[service %s] too many args", s->name);
	for (i = 0; i < n; i++)
		if (copy(s->args[i], CFG_STR, w[i]) == -1)
			return perr(p, "[service %s] arg too long", s->name);
	s->nargs = n;
	return 1;
}

/* An absolute path, of no "." or ".." and no ':' or ',' (the runtime's
 * volume syntax). */
static int
set_abs(struct parse *p, struct service_cfg *s, const char *k, const char *v,
    char *dst)
{
	if (v[0] != '/' || strpbrk(v, ":,") != NULL || strstr(v, "/.") != NULL)
		return perr(p, "[service %s] %s must be an absolute path without "
		    "'.' components, ':' or ','", s->name, k);
	return set_str(p, k, v, dst, CFG_STR);
}

/* A tmpfs size: digits and one of k, m, g. */
static int
set_size(struct parse *p, struct service_cfg *s, const char *k, const char *v)
{
	size_t n = strspn(v, "0123456789");

	if (n == 0 || n > 6 || v[n] == '\0' || strchr("kmg", v[n]) == NULL ||
	    v[n + 1] != '\0' || v[0] == '0')
		return perr(p, "[service %s] %s must be a size such as 256m "
		    "(digits and k, m or g)", s->name, k);
	return set_str(p, k, v, s->data_size, sizeof(s->data_size));
}

static int
service_key(struct parse *p, struct service_cfg *s, const char *k,
    const char *v)
{
	if (!strcmp(k, "image"))
		return set_str(p, k, v, s->image, sizeof(s->image));
	if (!strcmp(k, "port"))
		return set_uint(p, k, v, 65535, &s->port);
	if (!strcmp(k, "probe"))
		return set_probe(p, s, v);
	if (!strcmp(k, "transport"))
		return set_transport(p, s, v);
	if (!strcmp(k, "log_size")) {
		if (strspn(v, "0123456789") == 0 ||
		    strspn(v, "0123456789kmgKMG") != strlen(v))
			return perr(p, "[service %s] log_size must be a size "
			    "such as 1m", s->name);
		return set_str(p, k, v, s->log_size, sizeof(s->log_size));
	}
	if (!strcmp(k, "user"))
		return set_str(p, k, v, s->user, sizeof(s->user));
	if (!strcmp(k, "database"))
		return set_str(p, k, v, s->database, sizeof(s->database));
	if (!strcmp(k, "memory"))
		return set_str(p, k, v, s->memory, sizeof(s->memory));
	if (!strcmp(k, "cpus"))
		return set_str(p, k, v, s->cpus, sizeof(s->cpus));
	if (!strcmp(k, "pids"))
		return set_uint(p, k, v, 1000000, &s->pids);
	if (!strcmp(k, "ready_timeout"))
		return set_uint(p, k, v, 3600, &s->ready_timeout);
	if (!strcmp(k, "warm"))
		return set_uint(p, k, v, POOL_MAX_WARM, &s->warm);
	if (!strcmp(k, "warm_max"))
		return set_uint(p, k, v, POOL_MAX_WARM, &s->warm_max);
	if (!strcmp(k, "warm_idle"))
		return set_warm_idle(p, k, v, &s->warm_idle);
	if (!strcmp(k, "warm_mib"))
		return set_warm_mib(p, k, v, &s->warm_mib);
	if (!strcmp(k, "args"))
		return set_args(p, s, v);
	if (!strcmp(k, "env")) {
		if (s->nenv == CFG_MAX_ENV || !env_name_valid(v))
			return perr(p, "[service %s] env must be NAME=value "
			    "(at most %d)", s->name, CFG_MAX_ENV);
		return set_str(p, k, v, s->env[s->nenv++], CFG_STR);
	}
	if (!strcmp(k, "data") || !strcmp(k, "data_template"))
		return set_abs(p, s, k, v, k[4] == '\0' ? s->data_path :
		    s->data_template);
	if (!strcmp(k, "data_size"))
		return set_size(p, s, k, v);
	if (!strcmp(k, "tmpfs")) {
		if (s->ntmpfs == CFG_MAX_TMPFS || v[0] != '/')
			return perr(p, "[service %s] tmpfs must be an absolute "
			    "path (at most %d)", s->name, CFG_MAX_TMPFS);
		return set_str(p, k, v, s->tmpfs[s->ntmpfs++], CFG_STR);
	}
	return perr(p, "unknown key [service %s] %s", s->name, k);
}

static int
on_entry(void *user, const char *section, const char *k, const char *v)
{
	struct parse *p = user;
	struct service_cfg *s;
	const char *name;

	if (p->failed)
		return 0;
	if (!strcmp(section, "sbx"))
		return sbx_key(p, k, v);
	if (strncmp(section, "service ", 8) != 0)
		return perr(p, "unknown section [%s]", section);
	name = section + 8;
	if (!slug_valid(name, strlen(name)))
		return perr(p, "[%s]: service name is not a valid slug", section);
	if ((s = service_for(p, name)) == NULL)
		return perr(p, "more than %d services", SBX_MAX_SERVICES);
	return service_key(p, s, k, v);
}

static void
defaults(struct sbx_config *c)
{
	memset(c, 0, sizeof(*c));
	c->enabled = true;
	strlcpy(c->socket, "/run/sbx.sock", sizeof(c->socket));
	c->socket_mode = 0666;
	strlcpy(c->broker_user, "nobody", sizeof(c->broker_user));
	strlcpy(c->projects, "/etc/sbx/projects.d", sizeof(c->projects));
	strlcpy(c->runtime, "podman", sizeof(c->runtime));
	strlcpy(c->state_dir, "/var/lib/sbx", sizeof(c->state_dir));
	strlcpy(c->run_dir, "/run/sbx", sizeof(c->run_dir));
	c->idle_ttl = 4 * 3600;
	c->max_sandboxes_per_uid = 16;
	c->max_children = 128;
	c->max_workers = 32;
	c->request_timeout = 5;
	c->runtime_timeout = 120;
	c->userns_base = 2147483648u;	/* setup-host.sh's "containers" */
	c->userns_slots = 1024;	/* 2^30 uids with SBX_MAX_SERVICES */
	c->max_sandboxes = 512;
	c->max_requests = 256;
	c->max_requests_per_uid = 32;
	c->max_waiters = 16;
	c->max_provisions = 24;	/* of max_workers: the rest tear down */
	c->max_provisions_per_uid = 4;
	c->max_snapshots = 4;
	c->subuid = SUBUID_COUNT;
	strlcpy(c->subuid_file, "/etc/subuid", sizeof(c->subuid_file));
}

/* Resolve a runtime name through PATH, as execvp would, once. */
static int
resolve_runtime(char *rt, size_t size)
{
	const char *path = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
	char buf[CFG_STR * 2], cand[PATH_MAX], *dir, *save = NULL;

	if (strchr(rt, '/') != NULL)
		return access(rt, X_OK);
	strlcpy(buf, path, sizeof(buf));
	for (dir = strtok_r(buf, ":", &save); dir != NULL;
	    dir = strtok_r(NULL, ":", &save)) {
		snprintf(cand, sizeof(cand), "%s/%s", dir, rt);
		if (access(cand, X_OK) == 0)
			return strlcpy(rt, cand, size) < size ? 0 : -1;
	}
	return -1;
}

static void
socket_name(struct service_cfg *s)
{
	if (s->probe == PROBE_POSTGRES)
		snprintf(s->socket_name, sizeof(s->socket_name),
		    ".s.PGSQL.%u", s->port);
	else if (s->probe == PROBE_REDIS)
		strlcpy(s->socket_name, "redis.sock", sizeof(s->socket_name));
	else
		strlcpy(s->socket_name, "service.sock", sizeof(s->socket_name));
}

#define FNV_OFFSET	0xcbf29ce484222325ULL
#define FNV_PRIME	0x100000001b3ULL

static uint64_t
fnv(uint64_t h, const char *s)
{
	for (; *s != '\0'; s++)
		h = (h ^ (unsigned char)*s) * FNV_PRIME;
	return h;
}

static uint64_t
fnv_kv(uint64_t h, const char *key, const char *val)
{
	return fnv(fnv(fnv(fnv(h, key), "="), val), "\n");
}

static uint64_t
fnv_num(uint64_t h, const char *key, unsigned long long v)
{
	char b[24];

	snprintf(b, sizeof(b), "%llu", v);
	return fnv_kv(h, key, b);
}

/*
 * What a sandbox's containers were started with, key by key: FNV-1a
 * over "key=value\n". Not the struct's bytes: a later version whose
 * struct differs, or a section whose lines moved, hashes the same, so
 * a restart after an upgrade adopts (docs/contract.md, "Restarts and upgrades"). warm and
 * ready_timeout are left out: neither changes a running container. A
 * key added later must be fed only when set away from its default.
 * test_limits.c pins the value of one section.
 */
static uint64_t
service_hash(const struct service_cfg *s)
{
	static const char *const probes[] = { "tcp", "postgres", "redis" };
	uint64_t h = FNV_OFFSET;
	size_t i;

	h = fnv_kv(h, "service", s->name);
	h = fnv_kv(h, "image", s->image);
	h = fnv_num(h, "port", s->port);
	h = fnv_kv(h, "probe", probes[s->probe]);
	h = fnv_kv(h, "user", s->user);
	h = fnv_kv(h, "database", s->database);
	for (i = 0; i < s->nenv; i++)
		h = fnv_kv(h, "env", s->env[i]);
	for (i = 0; i < s->ntmpfs; i++)
		h = fnv_kv(h, "tmpfs", s->tmpfs[i]);
	for (i = 0; i < s->nargs; i++)
		h = fnv_kv(h, "args", s->args[i]);
	h = fnv_kv(h, "memory", s->memory);
	h = fnv_kv(h, "cpus", s->cpus);
	h = fnv_num(h, "pids", s->pids);
	h = fnv_num(h, "transport", s->transport);
	if (s->data_path[0] != '\0') {
		h = fnv_kv(h, "data", s->data_path);
		h = fnv_kv(h, "data_template", s->data_template);
		h = fnv_kv(h, "data_size", s->data_size);
	}
	return fnv_kv(h, "log_size", s->log_size);
}

/* The hash records of version 2 and older hold: every byte of the
 * section's struct up to the hash, as this version still lays it out.
 * defaults() zeroes the struct first, so the padding is zero too. */
static uint64_t
service_hash_v2(const struct service_cfg *s)
{
	const unsigned char *b = (const unsigned char *)s;
	uint64_t h = FNV_OFFSET;
	size_t i;

	for (i = 0; i < offsetof(struct service_cfg, hash); i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

/* data, data_template and data_size go together, on no path a tmpfs
 * has. 0, or -1 said. */
static int
check_data(struct parse *p, struct service_cfg *s)
{
	size_t i, n = strlen(s->data_path);

	if (n == 0 && s->data_template[0] == '\0' && s->data_size[0] == '\0')
		return 0;
	if (n == 0 || s->data_template[0] == '\0' || s->data_size[0] == '\0') {
		perr(p, "[service %s] data, data_template and data_size go "
		    "together", s->name);
		return -1;
	}
	for (i = 0; i < s->ntmpfs; i++)
		if (!strncmp(s->tmpfs[i], s->data_path, n) &&
		    (s->tmpfs[i][n] == ':' || s->tmpfs[i][n] == '\0')) {
			perr(p, "[service %s] data %s is a tmpfs's path too",
			    s->name, s->data_path);
			return -1;
		}
	return 0;
}

static int
check_service(struct parse *p, struct service_cfg *s)
{
	socket_name(s);
	s->hash = service_hash(s);
	s->hash_v2 = service_hash_v2(s);
	if (strlen(s->name) > SBX_SOCKDIR_SVC_MAX)
		return perr(p, "[service %s] a service name is at most %d "
		    "characters (it is part of socket paths)", s->name,
		    SBX_SOCKDIR_SVC_MAX);
	if (s->image[0] == '\0')
		return perr(p, "[service %s] needs image", s->name);
	if (s->port == 0)
		return perr(p, "[service %s] needs port (1-65535)", s->name);
	if (s->ready_timeout == 0)
		return perr(p, "[service %s] ready_timeout must be > 0", s->name);
	if (check_data(p, s) == -1)
		return 0;
	if (s->warm_max == WARM_MAX_UNSET)
		s->warm_max = s->warm;	/* a fixed pool */
	if (s->warm_max < s->warm)
		return perr(p, "[service %s] warm_max (%u) is below warm (%u)",
		    s->name, s->warm_max, s->warm);
	return 1;
}

/*
 * One uid may hold at most half the broker's children: each idle
 * connection lasts request_timeout, so a uid allowed all of them could
 * keep everyone else out by reconnecting. Unset, it is 16, or half of a
 * smaller max_children.
 */
#define PER_UID_DEFAULT	16

static int
check_per_uid(struct parse *p)
{
	struct sbx_config *c = p->cfg;

	if (c->max_connections_per_uid == 0)
		c->max_connections_per_uid = c->max_children / 2 <
		    PER_UID_DEFAULT ? c->max_children / 2 : PER_UID_DEFAULT;
	if (c->max_connections_per_uid == 0 ||
	    c->max_connections_per_uid > c->max_children / 2)
		return perr(p, "max_connections_per_uid must be from 1 to half "
		    "of max_children (%u)", c->max_children);
	return 1;
}

/*
 * Teardowns must always find a worker: provisions may take at most all
 * but one of them. A per-uid share above its total would mean nothing.
 */
static int
check_limits(struct parse *p)
{
	struct sbx_config *c = p->cfg;

	if (c->max_requests == 0 || c->max_requests_per_uid == 0 ||
	    c->max_waiters == 0 || c->max_provisions == 0 ||
	    c->max_provisions_per_uid == 0)
		return perr(p, "max_requests, max_requests_per_uid, max_waiters, "
		    "max_provisions and max_provisions_per_uid must be > 0");
	if (c->max_provisions >= c->max_workers)
		return perr(p, "max_provisions (%u) must be below max_workers "
		    "(%u): teardowns need workers too", c->max_provisions,
		    c->max_workers);
	if (c->max_requests_per_uid > c->max_requests ||
	    c->max_provisions_per_uid > c->max_provisions ||
	    (c->max_sandboxes != 0 &&
	    c->max_sandboxes_per_uid > c->max_sandboxes))
		return perr(p, "a per-uid limit is above its total "
		    "(max_requests, max_provisions, max_sandboxes)");
	if (c->max_open_files != 0 && c->max_open_files < 32)
		return perr(p, "max_open_files must be 0 (the hard limit) or "
		    "at least 32");
	if (c->subuid_file[0] != '/')
		return perr(p, "subuid_file must be an absolute path");
	return 1;
}

/* The parsing jobs' uid (jobuser.c) is theirs alone: not the broker's,
 * not in a sandbox's range. A host without the user fails at the drop. */
static int
check_job_user(struct parse *p, uid_t broker)
{
	const struct sbx_config *c = p->cfg;
	struct passwd *pw;
	uint64_t end;

	if (!strcmp(c->broker_user, JOB_USER))
		return perr(p, "broker_user must not be %s, the parsing jobs' "
		    "user", JOB_USER);
	if ((pw = getpwnam(JOB_USER)) == NULL)
		return 1;
	if (pw->pw_uid == broker)
		return perr(p, "broker_user %s has the uid of %s, the parsing "
		    "jobs' user", c->broker_user, JOB_USER);
	end = (uint64_t)c->userns_base + (uint64_t)c->userns_slots *
	    (c->nservices ? c->nservices : 1) * 65536;
	if (pw->pw_uid >= c->userns_base && pw->pw_uid < end)
		return perr(p, "userns_base and userns_slots make a range that "
		    "holds the uid of %s (%u)", JOB_USER, (unsigned)pw->pw_uid);
	return 1;
}

static int
check(struct parse *p)
{
	struct sbx_config *c = p->cfg;
	struct passwd *pw;
	unsigned warm, floors;
	size_t i;

	if (c->socket[0] != '/')
		return perr(p, "socket must be an absolute path");
	if (c->state_dir[0] != '/' || c->projects[0] != '/' ||
	    c->run_dir[0] != '/')
		return perr(p, "state_dir, run_dir and projects must be absolute "
		    "paths");
	if ((pw = getpwnam(c->broker_user)) == NULL)
		return perr(p, "broker_user %s does not exist", c->broker_user);
	if (pw->pw_uid == 0)
		return perr(p, "broker_user %s is root", c->broker_user);
	if (!check_job_user(p, pw->pw_uid))
		return 0;
	if (c->max_children == 0 || c->max_workers == 0 ||
	    c->request_timeout == 0 || c->runtime_timeout == 0)
		return perr(p, "max_children, max_workers, request_timeout and "
		    "runtime_timeout must be > 0");
	if (!check_per_uid(p) || !check_limits(p))
		return 0;
	if (c->userns_base == 0 || c->userns_slots == 0 ||
	    (uint64_t)c->userns_base + (uint64_t)c->userns_slots *
	    (c->nservices ? c->nservices : 1) * 65536 > UINT32_MAX)
		return perr(p, "userns_base and userns_slots must be > 0 and "
		    "userns_base + userns_slots * services * 65536 below 2^32");
	for (i = 0, warm = floors = 0; i < c->nservices; i++) {
		if (!check_service(p, &c->services[i]))
			return 0;
		warm += c->services[i].warm_max;
		floors += c->services[i].warm * c->services[i].warm_mib;
	}
	/* A pool never goes below its floor: the budget holds them. */
	if (c->warm_memory != 0 && floors > c->warm_memory)
		return perr(p, "warm_memory (%u MiB) is below the services' "
		    "warm containers at warm_mib (%u MiB)", c->warm_memory,
		    floors);
	/* Each warm container holds a uid range (userns_slots) of its own. */
	if (warm > c->userns_slots / 2)
		return perr(p, "the services' warm containers (%u, at "
		    "warm_max) may take "
		    "at most half of userns_slots (%u)", warm, c->userns_slots);
	/* A warm start waits for a worker beyond every provision and one
	 * teardown (warm.c): with no such worker the pool never fills. */
	if (warm > 0 && c->max_provisions + 2 > c->max_workers)
		return perr(p, "with warm containers, max_provisions (%u) must "
		    "be at most max_workers - 2 (%u): the pool starts its "
		    "containers only with a worker no provision or teardown "
		    "may need", c->max_provisions, c->max_workers - 2);
	if (resolve_runtime(c->runtime, sizeof(c->runtime)) == -1)
		return perr(p, "runtime %s not found or not executable",
		    c->runtime);
	return 1;
}

/* All of fd, at most CONFIG_MAX bytes, as a stream that rewinds. */
#define CONFIG_MAX	(1u << 20)
static FILE *
slurp(int fd, char **buf, const char *path, char *err, size_t errlen)
{
	size_t len = 0;
	ssize_t n;
	FILE *f;

	if ((*buf = malloc(CONFIG_MAX + 1)) == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	while (len <= CONFIG_MAX && (n = read(fd, *buf + len,
	    CONFIG_MAX + 1 - len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return NULL;
		}
		len += (size_t)n;
	}
	if (len > CONFIG_MAX) {
		snprintf(err, errlen, "%s: larger than %u KiB", path,
		    CONFIG_MAX >> 10);
		return NULL;
	}
	/* fmemopen takes no empty buffer: an empty file is a blank line. */
	if (len == 0)
		(*buf)[len++] = '\n';
	if ((f = fmemopen(*buf, len, "r")) == NULL)
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	return f;
}

int
config_parse(int fd, int open_errno, const char *path,
    struct sbx_config *cfg, char *err, size_t errlen)
{
	struct parse p = { .cfg = cfg, .err = err, .errlen = errlen };
	char first[CFG_STR * 2], *buf = NULL;
	FILE *f;
	int line;

	err[0] = '\0';
	defaults(cfg);
	if (fd == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(open_errno));
		return -1;
	}
	if ((f = slurp(fd, &buf, path, err, errlen)) == NULL) {
		free(buf);
		return -1;
	}
	/* First: what such a line would do to the parse is not its cause. */
	if ((line = indented_key(f, err, errlen)) == 0) {
		rewind(f);
		line = ini_parse_file(f, on_entry, &p);
	}
	fclose(f);
	free(buf);
	if (line != 0 || p.failed) {
		strlcpy(first, p.failed || err[0] != '\0' ? err :
		    "syntax error", sizeof(first));
		snprintf(err, errlen, "%s:%d: %s", path, line, first);
		return -1;
	}
	if (!check(&p)) {
		strlcpy(first, err, sizeof(first));
		snprintf(err, errlen, "%s: %s", path, first);
		return -1;
	}
	return 0;
}
