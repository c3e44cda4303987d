/*
 * sockdir.c - the directories that hold sandboxes' Unix sockets.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and the monitor (root, unfiltered; see below)
 *
 * The monitor's: the paths, a sandbox's own directory (sockdir_make with
 * no service, for a key), a claim's move (sockdir_claim, unclaim) in its
 * loop, and sockdir_prune at start.
 *
 *   run_dir/                 root 0711: nobody can list it
 *     <uid>/                 root 0750, ACL u:<uid>:r-x: only that uid
 *                            (and root) can enter
 *       <agent>/             root 0755, one per sandbox
 *         <service>/         root 0755, what a claim moves
 *           s/               SOCKDIR_MOUNT: a tmpfs (SOCKDIR_TMPFS) the
 *                            worker mounts before the container starts,
 *                            given to the container's own host uid by
 *                            podman (-v ...:U), to the image's USER with
 *                            docker (lchown); the service makes its
 *                            socket here, mounted at SBX_SOCKET_MOUNT
 *     .pool/                 root 0700: nobody but root enters
 *       <service>-<slot>/    a warm container's <service>/, moved (one
 *                            rename, the container keeps its mount) to
 *                            <uid>/<agent>/<service> when it is claimed
 *
 * The kernel, not the password, keeps other uids out: they cannot enter
 * <uid>/. A container writes only in its tmpfs, which is bounded and is
 * no file system of the host's; root never walks it (a removal detaches
 * it). Every removal goes by descriptors and follows no link, should a
 * container ever reach a directory root walks.
 */
#include <sys/acl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <linux/magic.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sockdir.h"

#define AGENT_NAME_MAX	30	/* longer slugs: a prefix and a hash */
#define RM_TRIES	4	/* looks at one name that keeps changing */
#define RM_DEPTH_MAX	16	/* deeper than sbx ever makes: not ours */

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

/* run_dir/<uid>/<agent>/<service>: what a claim moves, root's. */
static int
unit_path(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, char *out, size_t cap)
{
	char key[SBX_SOCKET_MAX];
	int n;

	if (sockdir_key_path(cfg, uid, agent, key, sizeof(key)) == -1)
		return -1;
	n = snprintf(out, cap, "%s/%s", key, service);
	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* run_dir/.pool/<service>-<slot>: the same, of a warm container. */
static int
pool_unit_path(const struct sbx_config *cfg, const char *service,
    unsigned slot, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/.pool/%s-%u", cfg->run_dir, service,
	    slot);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* A unit's SOCKDIR_MOUNT: the container's directory. */
static int
mount_path(const char *unit, char *out, size_t cap)
{
	int n = snprintf(out, cap, "%s/" SOCKDIR_MOUNT, unit);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

int
sockdir_path(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, char *out, size_t cap)
{
	char unit[SBX_SOCKET_MAX];

	return unit_path(cfg, uid, agent, service, unit, sizeof(unit)) ==
	    -1 ? -1 : mount_path(unit, out, cap);
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

void	(*sockdir_walk_hook)(int dirfd, const char *name);

/* A tmpfs of ours where the walk met another file system: detached
 * (the container, if it still runs, keeps its copy, which no path on the
 * host reaches any more). Anything else is left alone: -1. */
static int
detach(int dfd, const char *name)
{
	char proc[32];
	struct statfs sf;
	int fd, rc = -1;

	if ((fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_DIRECTORY |
	    O_CLOEXEC)) == -1)
		return -1;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fstatfs(fd, &sf) == 0 && sf.f_type == TMPFS_MAGIC)
		rc = umount2(proc, MNT_DETACH);
	close(fd);
	return rc;
}

/* A listing of the directory open at fd, which stays open. */
static DIR *
list_fd(int fd)
{
	int copy = dup(fd);
	DIR *dir;

	if (copy == -1)
		return NULL;
	if ((dir = fdopendir(copy)) == NULL)
		close(copy);
	return dir;
}

/* One directory of a removal's path: name, in its parent's pfd. */
struct rm_level {
	int		 pfd;
	DIR		*dir;		/* open once entered */
	unsigned	 tries;		/* looks at a name that changed */
	bool		 failed;	/* an entry stays */
	char		 name[NAME_MAX + 1];
};

/*
 * What name is now: removed (0), a directory of dev opened (1), or
 * something that stays (-1). No link is followed (a link is removed, not
 * entered) and no other file system entered (a tmpfs of ours is
 * detached); a name swapped between our look and our open is looked at
 * again, a bounded number of times.
 */
static int
rm_enter(struct rm_level *l, dev_t dev)
{
	struct stat st;
	int fd;

	for (; l->tries < RM_TRIES; l->tries++) {
		if (fstatat(l->pfd, l->name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			return errno == ENOENT ? 0 : -1;
		if (!S_ISDIR(st.st_mode)) {
			if (unlinkat(l->pfd, l->name, 0) == 0 || errno == ENOENT)
				return 0;
			if (errno == EISDIR)	/* swapped for a directory */
				continue;
			return -1;
		}
		if (st.st_dev != dev) {
			if (detach(l->pfd, l->name) == -1) {
				errno = EXDEV;
				return -1;
			}
			continue;
		}
		fd = openat(l->pfd, l->name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1 && errno != ENOTDIR && errno != ELOOP)
			return errno == ENOENT ? 0 : -1;
		if (fd == -1)
			continue;	/* swapped for a link or a file */
		if (fstat(fd, &st) == -1 || st.st_dev != dev ||
		    (l->dir = fdopendir(fd)) == NULL) {
			close(fd);	/* swapped for another mount */
			continue;
		}
		return 1;
	}
	errno = EAGAIN;
	return -1;
}

/* A directory listed to its end: removed (0), to be listed again, for
 * what was made meanwhile (1), its name to be looked at again (2), or it
 * stays (-1). */
static int
rm_leave(struct rm_level *l)
{
	if (!l->failed) {
		if (unlinkat(l->pfd, l->name, AT_REMOVEDIR) == 0 ||
		    errno == ENOENT) {
			closedir(l->dir);
			return 0;
		}
		if ((errno == ENOTEMPTY || errno == EEXIST) &&
		    ++l->tries < RM_TRIES) {
			rewinddir(l->dir);
			return 1;
		}
		if (errno == ENOTDIR && ++l->tries < RM_TRIES) {
			closedir(l->dir);
			return 2;
		}
	}
	closedir(l->dir);
	return -1;
}

/* rm -r of name in dfd, one level of lv[] per directory deep. */
static int
rm_at(int dfd, const char *name, dev_t dev)
{
	struct rm_level lv[RM_DEPTH_MAX], *l;
	struct dirent *d;
	int top = 0, r;

	lv[0] = (struct rm_level){ .pfd = dfd };
	strlcpy(lv[0].name, name, sizeof(lv[0].name));
	if ((r = rm_enter(&lv[0], dev)) != 1)
		return r;
	for (;;) {
		l = &lv[top];
		if ((d = readdir(l->dir)) != NULL) {
			if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
				continue;
			if (sockdir_walk_hook != NULL)
				sockdir_walk_hook(dirfd(l->dir), d->d_name);
			if (top + 1 == RM_DEPTH_MAX) {	/* not sbx's */
				l->failed = true;
				continue;
			}
			lv[top + 1] = (struct rm_level){ .pfd = dirfd(l->dir) };
			strlcpy(lv[top + 1].name, d->d_name,
			    sizeof(lv[top + 1].name));
			if ((r = rm_enter(&lv[top + 1], dev)) == 1)
				top++;
			else if (r == -1)
				l->failed = true;
			continue;
		}
		if ((r = rm_leave(l)) == 1 || (r == 2 &&
		    (r = rm_enter(l, dev)) == 1))
			continue;
		if (top == 0)
			return r == -1 ? -1 : 0;
		if (r == -1)
			lv[top - 1].failed = true;
		top--;
	}
}

/*
 * rm -r of path: its parent, under run_dir, is root's and opened by
 * name; everything from path on is removed relative to descriptors on
 * the parent's file system. 0 when nothing is left.
 */
int
sockdir_rm_tree(const char *path)
{
	char parent[SBX_SOCKET_MAX + 16];
	const char *name;
	struct stat st;
	int dfd, rc;

	if (strlcpy(parent, path, sizeof(parent)) >= sizeof(parent) ||
	    (name = strrchr(path, '/')) == NULL || name[1] == '\0') {
		errno = ENAMETOOLONG;
		return -1;
	}
	name++;
	parent[name - path - 1 > 0 ? name - path - 1 : 1] = '\0';
	if ((dfd = open(parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(dfd, &st) == -1)
		rc = -1;
	else
		rc = rm_at(dfd, name, st.st_dev);
	close(dfd);
	return rc;
}

/* The same, said in the log when something stays. */
static void
rm_tree(const char *path)
{
	if (sockdir_rm_tree(path) == -1)
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
 * The unit (root's, 0755) and, mounted on its SOCKDIR_MOUNT, a tmpfs of
 * SOCKDIR_SIZE: all the container can write on the host. A claim
 * renames the unit, which is no mount point; a removal detaches the
 * tmpfs (rm_at) and never reads what the container wrote.
 */
static int
make_unit(const char *unit, char *err, size_t cap)
{
	char mnt[SBX_SOCKET_MAX];

	if (mount_path(unit, mnt, sizeof(mnt)) == -1) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	if (own_dir(unit, 0755, err, cap) == -1 ||
	    own_dir(mnt, 0755, err, cap) == -1)
		return -1;
	if (mount("sbx", mnt, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    SOCKDIR_TMPFS) == -1) {
		snprintf(err, cap, "mount a tmpfs on %s: %s", mnt,
		    strerror(errno));
		return -1;
	}
	return 0;
}

/*
 * A teardown of this uid's last sandbox may rmdir <uid>/ between our
 * steps (ENOENT): start over, a bounded number of times. With service,
 * its unit too; a leftover of the same key is removed first (never
 * reused), and if it cannot be, the service gets no directory.
 */
int
sockdir_make(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, char *err, size_t cap)
{
	char unit[SBX_SOCKET_MAX], key[SBX_SOCKET_MAX];
	int tries;

	if (sockdir_key_path(cfg, uid, agent, key, sizeof(key)) == -1 ||
	    (service != NULL && (unit_path(cfg, uid, agent, service, unit,
	    sizeof(unit)) == -1 || mount_path(unit, err, cap) == -1))) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	if (service != NULL && sockdir_rm_tree(unit) == -1) {
		snprintf(err, cap, "cannot remove %s: %s", unit,
		    strerror(errno));
		return -1;
	}
	for (tries = 0; tries < 3; tries++) {
		if (make_key(cfg, uid, key, err, cap) == 0 &&
		    (service == NULL || make_unit(unit, err, cap) == 0))
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
	char unit[SBX_SOCKET_MAX];

	return pool_unit_path(cfg, service, slot, unit, sizeof(unit)) ==
	    -1 ? -1 : mount_path(unit, out, cap);
}

int
sockdir_pool_make(const struct sbx_config *cfg, const char *service,
    unsigned slot, char *err, size_t cap)
{
	char unit[SBX_SOCKET_MAX], pool[SBX_SOCKET_MAX];

	if (pool_unit_path(cfg, service, slot, unit, sizeof(unit)) == -1 ||
	    mount_path(unit, pool, sizeof(pool)) == -1) {
		snprintf(err, cap, "the socket path is too long");
		return -1;
	}
	snprintf(pool, sizeof(pool), "%s/.pool", cfg->run_dir);
	if (sockdir_rm_tree(unit) == -1) {
		snprintf(err, cap, "cannot remove %s: %s", unit,
		    strerror(errno));
		return -1;
	}
	return own_dir(cfg->run_dir, 0711, err, cap) == -1 ||
	    own_dir(pool, 0700, err, cap) == -1 ||
	    make_unit(unit, err, cap) == -1 ? -1 : 0;
}

void
sockdir_pool_remove(const struct sbx_config *cfg, const char *service,
    unsigned slot)
{
	char unit[SBX_SOCKET_MAX];

	if (pool_unit_path(cfg, service, slot, unit, sizeof(unit)) == 0)
		rm_tree(unit);
}

/* After sockdir_make without a service: one rename of the unit (its
 * tmpfs goes with it), or two past a leftover. */
int
sockdir_claim(const struct sbx_config *cfg, const char *service,
    unsigned slot, uid_t uid, const char *agent, char *err, size_t cap)
{
	char from[SBX_SOCKET_MAX], to[SBX_SOCKET_MAX];
	int rc;

	if (pool_unit_path(cfg, service, slot, from, sizeof(from)) == -1 ||
	    unit_path(cfg, uid, agent, service, to, sizeof(to)) == -1) {
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

	if (pool_unit_path(cfg, service, slot, to, sizeof(to)) == 0 &&
	    unit_path(cfg, uid, agent, service, from, sizeof(from)) == 0 &&
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
	char unit[SBX_SOCKET_MAX];

	if (unit_path(cfg, uid, agent, service, unit, sizeof(unit)) == 0)
		rm_tree(unit);
}

/* One <uid> directory (or .pool), open at fd: every sandbox directory
 * (or warm unit) that keep() does not want goes. keep() is asked about a
 * warm unit by its sockdir_pool_path. */
static void
prune_uid(int fd, const char *uidpath, bool pool, dev_t dev,
    bool (*keep)(void *, const char *), void *arg)
{
	char path[SBX_SOCKET_MAX];
	struct dirent *d;
	DIR *dir;
	int n;

	if ((dir = list_fd(fd)) == NULL)
		return;
	while ((d = readdir(dir)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, ".."))
			continue;
		n = snprintf(path, sizeof(path), pool ? "%s/%s/" SOCKDIR_MOUNT :
		    "%s/%s", uidpath, d->d_name);
		if (n > 0 && n < (int)sizeof(path) && keep(arg, path))
			continue;
		if (rm_at(fd, d->d_name, dev) == -1)
			log_warn("cannot remove %s/%s", uidpath, d->d_name);
	}
	closedir(dir);
}

/*
 * At start, once the sandboxes that outlived the last monitor were
 * adopted: everything under run_dir that keep() does not name (a
 * sandbox directory, run_dir/<uid>/<agent>, or a warm container's) is a
 * leftover. Each <uid>/ goes when that left it empty.
 */
void
sockdir_prune(const struct sbx_config *cfg,
    bool (*keep)(void *, const char *path), void *arg)
{
	char path[SBX_SOCKET_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int run, fd;

	if ((run = open(cfg->run_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) ==
	    -1 || fstat(run, &st) == -1 || (dir = list_fd(run)) == NULL) {
		if (run != -1)
			close(run);
		return;
	}
	while ((d = readdir(dir)) != NULL) {
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    snprintf(path, sizeof(path), "%s/%s", cfg->run_dir,
		    d->d_name) >= (int)sizeof(path))
			continue;
		fd = openat(run, d->d_name, O_RDONLY | O_DIRECTORY |
		    O_NOFOLLOW | O_CLOEXEC);
		if (fd == -1) {		/* not a directory: not ours */
			if (rm_at(run, d->d_name, st.st_dev) == -1)
				log_warn("cannot remove %s", path);
			continue;
		}
		prune_uid(fd, path, strcmp(d->d_name, ".pool") == 0,
		    st.st_dev, keep, arg);
		close(fd);
		/* gone once empty, .pool too: made again when needed */
		unlinkat(run, d->d_name, AT_REMOVEDIR);
	}
	closedir(dir);
	close(run);
}
