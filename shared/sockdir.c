/*
 * sockdir.c - the directories that hold sandboxes' Unix sockets.
 * runs in: workers (root, runtime deny filter), and the monitor (see below)
 *
 * The monitor's: the paths, a sandbox's own directory (sockdir_make with
 * no service, for a key), a claim's move (sockdir_claim, unclaim) in its
 * loop, and sockdir_prune at start.
 *
 *   run_dir/                 root 0711: nobody can list it
 *     <uid>/                 root 0750, ACL u:<uid>:r-x: only that uid
 *                            (and root) can enter
 *       <agent>/             root 0755, one per sandbox
 *         <service>/         0755, given to the container's own host uid
 *                            by podman (-v ...:U), to the image's USER
 *                            with docker (lchown); the service makes
 *                            its socket here, mounted at SBX_SOCKET_MOUNT
 *     .pool/                 root 0700: nobody but root enters
 *       <service>-<slot>/    a warm container's <service>/, moved (one
 *                            rename, the container keeps its mount) to
 *                            <uid>/<agent>/<service> when it is claimed
 *
 * The kernel, not the password, keeps other uids out: they cannot enter
 * <uid>/. Nothing under run_dir is writable by a tenant, so nothing here
 * can be swapped for a symlink between our check and the runtime's use;
 * what a container made in its own directory is removed without following
 * links, after the container is gone.
 */
#include <sys/acl.h>
#include <sys/stat.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sockdir.h"

#define AGENT_NAME_MAX	30	/* longer slugs: a prefix and a hash */

/* FNV-1a, 64 bits: names a long agent slug within AGENT_NAME_MAX. */
static uint64_t
fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s != '\0') {
		h ^= (unsigned char)*s++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

static void
agent_component(char *out, size_t cap, const char *agent)
{
	if (strlen(agent) <= AGENT_NAME_MAX)
		snprintf(out, cap, "%s", agent);
	else
		snprintf(out, cap, "%.13s~%016llx", agent,
		    (unsigned long long)fnv1a(agent));
}

int
sockdir_key_path(const struct sbx_config *cfg, uid_t uid, const char *agent,
    char *out, size_t cap)
{
	char a[AGENT_NAME_MAX + 1];
	int n;

	agent_component(a, sizeof(a), agent);
	n = snprintf(out, cap, "%s/%u/%s", cfg->run_dir, (unsigned)uid, a);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
sockdir_path(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, char *out, size_t cap)
{
	char key[SBX_SOCKET_MAX];
	int n;

	if (sockdir_key_path(cfg, uid, agent, key, sizeof(key)) == -1)
		return -1;
	n = snprintf(out, cap, "%s/%s", key, service);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* mkdir that accepts an existing directory; then it must be ours. */
static int
own_dir(const char *path, mode_t mode, char *err, size_t cap)
{
	struct stat st;

	if (mkdir(path, mode) == -1 && errno != EEXIST)
		goto fail;
	if (lstat(path, &st) == -1)
		goto fail;
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
		snprintf(err, cap, "%s is not a root-owned directory", path);
		return -1;
	}
	if ((st.st_mode & 07777) != mode && chmod(path, mode) == -1)
		goto fail;
	return 0;
fail:
	snprintf(err, cap, "%s: %s", path, strerror(errno));
	return -1;
}

/* Only root and uid may enter: 0750 root:root plus u:<uid>:r-x. */
static int
uid_dir(const char *path, uid_t uid, char *err, size_t cap)
{
	char text[96];
	acl_t acl;
	int rc;

	if (own_dir(path, 0750, err, cap) == -1)
		return -1;
	snprintf(text, sizeof(text), "u::rwx,u:%u:r-x,g::---,m::r-x,o::---",
	    (unsigned)uid);
	if ((acl = acl_from_text(text)) == NULL) {
		snprintf(err, cap, "acl_from_text: %s", strerror(errno));
		return -1;
	}
	rc = acl_set_file(path, ACL_TYPE_ACCESS, acl);
	acl_free(acl);
	if (rc == -1)
		snprintf(err, cap, "cannot set the ACL of %s (the file "
		    "system needs POSIX ACLs): %s", path, strerror(errno));
	return rc;
}

static int
rm_entry(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	if (remove(path) == -1 && errno != ENOENT)
		log_warn("cannot remove %s", path);
	return 0;
}

/* rm -r without following links or crossing mounts. */
static void
rm_tree(const char *path)
{
	if (nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT) == -1 &&
	    errno != ENOENT)
		log_warn("cannot remove %s", path);
}

/* One try at <uid>/<agent>/ (key), each level checked; -1 with errno. */
static int
make_key(const struct sbx_config *cfg, uid_t uid, char *key, char *err,
    size_t cap)
{
	int rc;

	if (own_dir(cfg->run_dir, 0711, err, cap) == -1)
		return -1;
	*strrchr(key, '/') = '\0';
	rc = uid_dir(key, uid, err, cap);
	key[strlen(key)] = '/';
	return rc == -1 ? -1 : own_dir(key, 0755, err, cap);
}

/*
 * A teardown of this uid's last sandbox may rmdir <uid>/ between our
 * steps (ENOENT): start over, a bounded number of times. With service,
 * its directory too.
 */
int
sockdir_make(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, char *err, size_t cap)
{
	char dir[SBX_SOCKET_MAX], key[SBX_SOCKET_MAX];
	int tries;

	if (sockdir_key_path(cfg, uid, agent, key, sizeof(key)) == -1 ||
	    (service != NULL && sockdir_path(cfg, uid, agent, service, dir,
	    sizeof(dir)) == -1)) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	if (service != NULL)
		rm_tree(dir);	/* a leftover of the same key: never reused */
	for (tries = 0; tries < 3; tries++) {
		if (make_key(cfg, uid, key, err, cap) == 0 &&
		    (service == NULL || own_dir(dir, 0755, err, cap) == 0))
			return 0;
		if (errno != ENOENT)
			return -1;
	}
	return -1;
}

int
sockdir_pool_path(const struct sbx_config *cfg, const char *service,
    unsigned slot, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/.pool/%s-%u", cfg->run_dir, service,
	    slot);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
sockdir_pool_make(const struct sbx_config *cfg, const char *service,
    unsigned slot, char *err, size_t cap)
{
	char dir[SBX_SOCKET_MAX], pool[SBX_SOCKET_MAX];

	if (sockdir_pool_path(cfg, service, slot, dir, sizeof(dir)) == -1) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	snprintf(pool, sizeof(pool), "%s/.pool", cfg->run_dir);
	rm_tree(dir);
	return own_dir(cfg->run_dir, 0711, err, cap) == -1 ||
	    own_dir(pool, 0700, err, cap) == -1 ||
	    own_dir(dir, 0755, err, cap) == -1 ? -1 : 0;
}

void
sockdir_pool_remove(const struct sbx_config *cfg, const char *service,
    unsigned slot)
{
	char dir[SBX_SOCKET_MAX];

	if (sockdir_pool_path(cfg, service, slot, dir, sizeof(dir)) == 0)
		rm_tree(dir);
}

/* After sockdir_make without a service: one rename, or two past a
 * leftover. */
int
sockdir_claim(const struct sbx_config *cfg, const char *service,
    unsigned slot, uid_t uid, const char *agent, char *err, size_t cap)
{
	char from[SBX_SOCKET_MAX], to[SBX_SOCKET_MAX];
	int rc;

	if (sockdir_pool_path(cfg, service, slot, from, sizeof(from)) == -1 ||
	    sockdir_path(cfg, uid, agent, service, to, sizeof(to)) == -1) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	if ((rc = rename(from, to)) == -1 &&
	    (errno == ENOTEMPTY || errno == EEXIST || errno == ENOTDIR)) {
		rm_tree(to);	/* a leftover of the same key: never reused */
		rc = rename(from, to);
	}
	if (rc == -1)
		snprintf(err, cap, "rename %s to %s: %s", from, to,
		    strerror(errno));
	return rc;
}

void
sockdir_unclaim(const struct sbx_config *cfg, const char *service,
    unsigned slot, uid_t uid, const char *agent)
{
	char from[SBX_SOCKET_MAX], to[SBX_SOCKET_MAX];

	if (sockdir_pool_path(cfg, service, slot, to, sizeof(to)) == 0 &&
	    sockdir_path(cfg, uid, agent, service, from, sizeof(from)) == 0 &&
	    rename(from, to) == -1)
		log_warn("cannot move %s back to %s", from, to);
}

void
sockdir_remove(const struct sbx_config *cfg, uid_t uid, const char *agent)
{
	char key[SBX_SOCKET_MAX];

	if (sockdir_key_path(cfg, uid, agent, key, sizeof(key)) == -1)
		return;
	rm_tree(key);
	*strrchr(key, '/') = '\0';
	rmdir(key);	/* <uid>/, when this was its last sandbox */
}

void
sockdir_remove_service(const struct sbx_config *cfg, uid_t uid,
    const char *agent, const char *service)
{
	char path[SBX_SOCKET_MAX];

	if (sockdir_path(cfg, uid, agent, service, path, sizeof(path)) == 0)
		rm_tree(path);
}

/* One <uid> directory: every sandbox directory that keep() does not
 * want goes, then the directory itself if that left it empty. */
static void
prune_uid(const char *uidpath, bool (*keep)(void *, const char *), void *arg)
{
	char path[SBX_SOCKET_MAX];
	struct dirent *d;
	DIR *dir;

	if ((dir = opendir(uidpath)) == NULL) {
		rm_tree(uidpath);	/* not a directory: not ours */
		return;
	}
	while ((d = readdir(dir)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    snprintf(path, sizeof(path), "%s/%s", uidpath,
		    d->d_name) >= (int)sizeof(path))
			continue;
		if (!keep(arg, path))
			rm_tree(path);
	}
	closedir(dir);
	rmdir(uidpath);
}

/*
 * At start, once the sandboxes that outlived the last monitor were
 * adopted: everything under run_dir that keep() does not name (a
 * sandbox directory, run_dir/<uid>/<agent>) is a leftover.
 */
void
sockdir_prune(const struct sbx_config *cfg,
    bool (*keep)(void *, const char *path), void *arg)
{
	char path[SBX_SOCKET_MAX];
	struct dirent *d;
	DIR *dir;

	if ((dir = opendir(cfg->run_dir)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    snprintf(path, sizeof(path), "%s/%s", cfg->run_dir,
		    d->d_name) >= (int)sizeof(path))
			continue;
		prune_uid(path, keep, arg);
	}
	closedir(dir);
}
