/*
 * record.c - a live sandbox's record: one root-only file per sandbox in
 * state_dir/sandboxes, named <uid>-<agent>.
 * (its format: shared/record_fmt.h; read at start by a worker, adopt.c)
 * runs in: the monitor (root, monitor allowlist once started): at its start
 *   and in its loop
 *
 * Why a file of our own rather than the runtime's record: the runtime
 * knows which containers run (adoption asks it), but not the sandbox
 * around them: its project, the order of its services, its uid range,
 * and the passwords, which podman keeps only inside each container's
 * environment, reachable through inspect's JSON. A fixed-form struct we
 * wrote ourselves is checked with a size compare and a memchr per
 * string, as the broker's messages are. The file is written (a temporary
 * file and rename) after the provision succeeded and before the agent is
 * answered, so no agent holds credentials that a restart cannot find;
 * it is removed at teardown; its mtime is the idle clock, touched at most
 * once a minute on hits. The passwords are on the disk here as they are
 * in podman's own container config: root-only, mode 0600 in a 0700
 * directory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "record.h"
#include "service.h"

#define TOUCH_EVERY_MS	60000

static int dirfd_records = -1;

int
record_dirfd(void)
{
	return dirfd_records;
}

int
record_open_dir(const struct sbx_config *cfg, char *err, size_t cap)
{
	char path[CFG_STR + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/sandboxes", cfg->state_dir);
	if ((mkdir(path, 0700) == -1 && errno != EEXIST) ||
	    (dirfd_records = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(dirfd_records, &st) == -1) {
		snprintf(err, cap, "cannot open %s: %s", path, strerror(errno));
		return -1;
	}
	if (st.st_uid != 0 || (st.st_mode & 077) != 0) {
		snprintf(err, cap, "%s must be root-owned, mode 0700", path);
		return -1;
	}
	return 0;
}

static int
record_name(char *out, size_t cap, uid_t uid, const char *agent)
{
	int n = snprintf(out, cap, "%u-%s", (unsigned)uid, agent);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The file, whole or not at all: a temporary file, then rename. */
static int
put_file(const char *name, const struct record *r)
{
	char tmp[SBX_SLUG_MAX * 2 + 24];
	size_t len = record_size(r->nservices);
	int fd, rc = -1;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	if ((fd = openat(dirfd_records, tmp, O_WRONLY | O_CREAT | O_TRUNC |
	    O_NOFOLLOW | O_CLOEXEC, 0600)) != -1) {
		rc = write_all(fd, r, len, now_ms() + 5000);
		if (close(fd) == -1)
			rc = -1;
		if (rc == 0 && renameat(dirfd_records, tmp, dirfd_records,
		    name) == -1)
			rc = -1;
		if (rc == -1)
			unlinkat(dirfd_records, tmp, 0);
	}
	return rc;
}

static void
record_init(struct record *r, uint32_t uid, uint32_t nservices,
    uint32_t idmap, const char *agent, const char *project)
{
	memset(r, 0, sizeof(*r));
	r->magic = RECORD_MAGIC;
	r->version = RECORD_VERSION;
	r->uid = uid;
	r->nservices = nservices;
	r->idmap = idmap;
	strlcpy(r->agent, agent, sizeof(r->agent));
	strlcpy(r->project, project, sizeof(r->project));
	r->created_wall_ms = wall_ms();
}

int
record_write(const struct sbx_config *cfg, const struct sbx_sandbox *sb,
    const struct sbx_outcome *o)
{
	char name[SBX_SLUG_MAX + 16];
	struct record r;
	size_t i;
	int rc;

	if (dirfd_records == -1 || sb->nservices > SBX_MAX_SERVICES ||
	    record_name(name, sizeof(name), sb->key.uid, sb->key.agent) == -1)
		return -1;
	record_init(&r, (uint32_t)sb->key.uid, (uint32_t)sb->nservices,
	    sb->idmap, sb->key.agent, sb->project);
	if (sb->created_ms != 0)	/* written again: made then */
		r.created_wall_ms -= now_ms() - sb->created_ms;
	if (sb->lease.pidfd >= 0) {
		r.bind_pid = (int32_t)sb->lease.pid;
		r.bind_start = sb->lease.start;
	}
	for (i = 0; i < sb->nservices; i++) {
		const struct service_cfg *s = config_service(cfg,
		    sb->svc[i].conn.name);

		r.svc[i].conn = o->svc[i].conn;
		memcpy(r.svc[i].conn.password, sb->svc[i].conn.password,
		    sizeof(r.svc[i].conn.password));
		r.svc[i].confhash = s != NULL ? s->hash : 0;
		r.svc[i].warm = o->svc[i].warm;
		r.svc[i].host_uid = o->svc[i].host_uid;
	}
	rc = put_file(name, &r);
	explicit_bzero(&r, sizeof(r));
	if (rc == -1)
		log_warn("cannot record sandbox uid=%u agent=%s",
		    (unsigned)sb->key.uid, sb->key.agent);
	return rc;
}

void
record_lease(const struct sbx_config *cfg, const struct sbx_sandbox *sb)
{
	struct sbx_outcome *o;
	size_t i;

	if (sb->state != SB_READY || (o = calloc(1, sizeof(*o))) == NULL)
		return;
	for (i = 0; i < sb->nservices; i++)
		o->svc[i] = sb->svc[i];
	(void)record_write(cfg, sb, o);
	explicit_bzero(o, sizeof(*o));
	free(o);
}

static int
pool_name(char *out, size_t cap, const char *service, unsigned slot)
{
	int n = snprintf(out, cap, "pool-%s-%u", service, slot);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
record_write_pool(const struct sbx_config *cfg, const struct sbx_svc *v,
    unsigned slot)
{
	const struct sbx_conn *c = &v->conn;
	const struct service_cfg *s = config_service(cfg, c->name);
	char name[SBX_SLUG_MAX + 16];
	struct record r;
	int rc;

	if (dirfd_records == -1 || s == NULL ||
	    pool_name(name, sizeof(name), c->name, slot) == -1)
		return -1;
	record_init(&r, RECORD_POOL_UID, 1, slot, "pool", c->name);
	r.svc[0].conn = *c;
	r.svc[0].confhash = s->hash;
	r.svc[0].warm = slot;
	r.svc[0].host_uid = v->host_uid;
	rc = put_file(name, &r);
	explicit_bzero(&r, sizeof(r));
	if (rc == -1)
		log_warn("cannot record warm container %s-%u", c->name, slot);
	return rc;
}

void
record_remove_pool(const char *service, unsigned slot)
{
	char name[SBX_SLUG_MAX + 16];

	if (dirfd_records != -1 &&
	    pool_name(name, sizeof(name), service, slot) == 0 &&
	    unlinkat(dirfd_records, name, 0) == -1 && errno != ENOENT)
		log_warn("cannot remove the record of warm container %s-%u",
		    service, slot);
}

void
record_remove(uid_t uid, const char *agent)
{
	char name[SBX_SLUG_MAX + 16];

	if (dirfd_records != -1 &&
	    record_name(name, sizeof(name), uid, agent) == 0 &&
	    unlinkat(dirfd_records, name, 0) == -1 && errno != ENOENT)
		log_warn("cannot remove the record of uid=%u agent=%s",
		    (unsigned)uid, agent);
}

void
record_touch(struct sbx_sandbox *sb, int64_t now)
{
	char name[SBX_SLUG_MAX + 16];

	if (now - sb->touched_ms < TOUCH_EVERY_MS || dirfd_records == -1 ||
	    record_name(name, sizeof(name), sb->key.uid, sb->key.agent) == -1)
		return;
	sb->touched_ms = now;
	utimensat(dirfd_records, name, NULL, 0);
}
