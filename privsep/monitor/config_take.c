/*
 * config_take.c - sbx.conf as the monitor takes it: read and checked by a
 * worker (JOB_CONFIG, privsep/worker/config_parse.c), so that libinih and
 * NSS never run here, and the result checked again as anything another
 * process sends is: every string ends within its field, every count and
 * enum is in range, the names are slugs and no two sections share one.
 * runs in: the monitor at its start, and sbx-monitor -t and --purge (root,
 *   unfiltered)
 */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "iox.h"
#include "log.h"
#include "config_take.h"
#include "service.h"
#include "slug.h"
#include "jobpool.h"

#define CONFIG_DEADLINE_MS	30000

#define ENDS(f)		(memchr((f), '\0', sizeof(f)) != NULL)

static bool
strings_end(const char (*v)[CFG_STR], size_t n, size_t max)
{
	size_t i;

	if (n > max)
		return false;
	for (i = 0; i < n; i++)
		if (memchr(v[i], '\0', CFG_STR) == NULL)
			return false;
	return true;
}

/* A path for the runtime's volume option: absolute, no "." component,
 * no ':' or ','. */
static bool
volume_path_valid(const char *p)
{
	return p[0] == '/' && strpbrk(p, ":,") == NULL &&
	    strstr(p, "/.") == NULL;
}

/* data, data_template, data_size: none, or all three, as config_parse.c
 * takes them (a size is 1-6 digits, not starting with 0, and k, m or g). */
static bool
data_valid(const struct service_cfg *s)
{
	size_t n = strspn(s->data_size, "0123456789");

	if (s->data_path[0] == '\0')
		return s->data_template[0] == '\0' && s->data_size[0] == '\0';
	return volume_path_valid(s->data_path) &&
	    volume_path_valid(s->data_template) && n > 0 && n <= 6 &&
	    s->data_size[0] != '0' && s->data_size[n] != '\0' &&
	    strchr("kmg", s->data_size[n]) != NULL &&
	    s->data_size[n + 1] == '\0';
}

static bool
service_valid(const struct service_cfg *s)
{
	return slug_field_valid(s->name, sizeof(s->name)) &&
	    strlen(s->name) <= SBX_SOCKDIR_SVC_MAX && ENDS(s->image) &&
	    s->port > 0 && s->port <= 65535 && s->probe <= PROBE_REDIS &&
	    ENDS(s->user) && ENDS(s->database) && ENDS(s->memory) &&
	    ENDS(s->cpus) && ENDS(s->socket_name) && ENDS(s->log_size) &&
	    ENDS(s->data_path) && ENDS(s->data_template) &&
	    ENDS(s->data_size) && data_valid(s) &&
	    strings_end(s->env, s->nenv, CFG_MAX_ENV) &&
	    strings_end(s->tmpfs, s->ntmpfs, CFG_MAX_TMPFS) &&
	    strings_end(s->args, s->nargs, CFG_MAX_ARGS) &&
	    s->transport >= TRANSPORT_UNIX && s->transport <= TRANSPORT_BOTH &&
	    s->warm <= s->warm_max && s->warm_max <= POOL_MAX_WARM &&
	    s->warm_idle > 0 && s->warm_idle <= WARM_IDLE_MAX &&
	    s->warm_mib > 0 && s->warm_mib <= WARM_MIB_MAX &&
	    s->ready_timeout > 0;
}

bool
config_valid(const struct sbx_config *c)
{
	size_t i;

	if (!ENDS(c->socket) || !ENDS(c->broker_user) || !ENDS(c->projects) ||
	    !ENDS(c->runtime) || !ENDS(c->state_dir) || !ENDS(c->run_dir) ||
	    !ENDS(c->metrics_file) || !ENDS(c->subuid_file) ||
	    c->socket[0] != '/' || c->state_dir[0] != '/' ||
	    c->run_dir[0] != '/' || c->runtime[0] != '/' ||
	    c->socket_mode > 07777 || c->subuid > SUBUID_REFUSE ||
	    !strings_end(c->runtime_args, c->nruntime_args, CFG_MAX_RTARGS) ||
	    c->nservices > SBX_MAX_SERVICES || c->max_children == 0 ||
	    c->max_workers == 0 || c->runtime_timeout == 0 ||
	    c->userns_base == 0 || c->userns_slots == 0 ||
	    c->warm_memory > WARM_MEMORY_MAX ||
	    (uint64_t)c->userns_base + (uint64_t)c->userns_slots *
	    (c->nservices ? c->nservices : 1) * 65536 > UINT32_MAX)
		return false;
	for (i = 0; i < c->nservices; i++)
		if (!service_valid(&c->services[i]) ||
		    config_service(c, c->services[i].name) != &c->services[i])
			return false;
	return true;
}

int
config_read(const char *path, struct sbx_config *cfg, char *err,
    size_t errlen)
{
	struct job_config j;
	struct config_result *r = MAP_FAILED;
	struct stat st;
	int fd, rc = -1;

	memset(&j, 0, sizeof(j));
	if (strlcpy(j.path, path, sizeof(j.path)) >= sizeof(j.path)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	if ((fd = memfd_create("sbx-config", MFD_CLOEXEC)) == -1)
		fatal("memfd_create");
	snprintf(err, errlen, "%s: the worker that reads it failed", path);
	if (worker_spawn_wait(JOB_CONFIG, 0, &j, sizeof(j), fd, now_ms() +
	    CONFIG_DEADLINE_MS) == 0 && fstat(fd, &st) == 0 &&
	    st.st_size == (off_t)sizeof(*r))
		r = mmap(NULL, sizeof(*r), PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		return -1;
	if (r->magic != CONFIG_MAGIC || !ENDS(r->err))
		snprintf(err, errlen, "%s: its worker answered no config", path);
	else if (!r->ok)
		strlcpy(err, r->err, errlen);
	else if (!config_valid(&r->cfg))
		snprintf(err, errlen, "%s: its worker answered a config that "
		    "does not hold together", path);
	else {
		memcpy(cfg, &r->cfg, sizeof(*cfg));
		rc = 0;
		if (!r->proc_hidden)
			log_warnx("/proc does not hide processes from other "
			    "uids (mount it with hidepid=invisible): any local "
			    "user can read which uid and agent each sandbox "
			    "serves from the runtime's arguments");
	}
	munmap(r, sizeof(*r));
	return rc;
}

int
config_test(const char *path)
{
	struct job_config j;

	memset(&j, 0, sizeof(j));
	if (strlcpy(j.path, path, sizeof(j.path)) >= sizeof(j.path)) {
		fprintf(stderr, "%s: path too long\n", path);
		return 1;
	}
	j.check = 1;
	return worker_spawn_wait(JOB_CONFIG, 0, &j, sizeof(j), -1, now_ms() +
	    CONFIG_DEADLINE_MS) == 0 ? 0 : 1;
}
