/*
 * datadir.c - a service's data directory laid over a host template.
 * runs in: a provision's service children (root, runtime deny filter)
 *
 * A service with data (sbx.conf(5)) gets, instead of a copy of its
 * image's template in a tmpfs of the container's, an overlay mounted on
 * the host beside its socket directory, in the unit sockdir.c made:
 *
 *   unit/d		a tmpfs of data_size, root's, 0700: all the
 *			sandbox may write there, and no host user enters
 *   unit/d/u, d/w	the overlay's upper and work directories
 *   unit/d/m		the overlay: data_template (read only, shared
 *			with every sandbox of the service) under d/u
 *
 * The container gets unit/d/m as a volume at data_path. Only what the
 * sandbox changes is copied up into its tmpfs; the template's unchanged
 * files are read from the host's page cache, once for all sandboxes.
 * With a user namespace, the template is seen through an idmapped mount
 * that shifts its owners onto the sandbox's range, so its service user
 * owns its files and no other range's does.
 *
 * The template's parent must be root's and shut to everyone else: its
 * files belong to the image's service uid, which on the host is nobody's
 * to change. A removal detaches the tmpfs with the overlay on it
 * (sockdir.c's rm_tree) and never reads what the container wrote.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "datadir.h"
#include "job.h"
#include "sockdir.h"

#define DATA_MOUNT	"d"

/* unit/d from the socket directory unit/SOCKDIR_MOUNT. */
static int
data_root(const char *sockdir, char *out, size_t cap)
{
	size_t n = strlen(sockdir), m = strlen("/" SOCKDIR_MOUNT);

	if (n <= m || strcmp(sockdir + n - m, "/" SOCKDIR_MOUNT) != 0 ||
	    n - m + strlen("/" DATA_MOUNT "/m") >= cap)
		return -1;
	snprintf(out, cap, "%.*s/" DATA_MOUNT, (int)(n - m), sockdir);
	return 0;
}

/* The template, opened; its parent checked: root's, shut to others. */
static int
template_open(const char *path, char *err, size_t cap)
{
	char proc[32], real[PATH_MAX];
	struct stat st;
	ssize_t n;
	int fd;

	if ((fd = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC)) == -1) {
		snprintf(err, cap, "data_template %s: %s", path,
		    strerror(errno));
		return -1;
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if ((n = readlink(proc, real, sizeof(real) - 1)) <= 0) {
		snprintf(err, cap, "data_template %s: %s", path,
		    strerror(errno));
		close(fd);
		return -1;
	}
	real[n] = '\0';
	if (stat(dirname(real), &st) == -1 || st.st_uid != 0 ||
	    (st.st_mode & 077) != 0) {
		snprintf(err, cap, "data_template %s: its directory %s must "
		    "be root's with mode 0700", path, real);
		close(fd);
		return -1;
	}
	return fd;
}

/* Write "0 base JOB_RANGE_UIDS" to /proc/pid/<file>. */
static int
write_map(pid_t pid, const char *file, uint32_t base)
{
	char path[64], map[64];
	int fd, n, rc;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	n = snprintf(map, sizeof(map), "0 %u %u", (unsigned)base,
	    (unsigned)JOB_RANGE_UIDS);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) == -1)
		return -1;
	rc = write(fd, map, (size_t)n) == n ? 0 : -1;
	close(fd);
	return rc;
}

/* A user namespace mapping 0.. onto base..: a child's, made to hold the
 * map and gone once its namespace is opened. */
static int
userns_of(uint32_t base)
{
	char path[64];
	int hold[2], fd = -1;
	pid_t pid;
	char c;

	if (pipe2(hold, O_CLOEXEC) == -1)
		return -1;
	pid = (pid_t)syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL,
	    NULL, NULL);
	if (pid == 0) {
		close(hold[1]);
		(void)!read(hold[0], &c, 1);
		_exit(0);
	}
	close(hold[0]);
	if (pid > 0 && write_map(pid, "uid_map", base) == 0 &&
	    write_map(pid, "gid_map", base) == 0) {
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	close(hold[1]);
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			;
	return fd;
}

/* The template as a detached mount, read only, idmapped onto base's
 * range when there is one; its root's owner and mode in *st. */
static int
template_tree(int tfd, uint32_t base, struct stat *st)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	int tree, ns = -1, rc;

	if ((tree = open_tree(tfd, "", AT_EMPTY_PATH | OPEN_TREE_CLONE |
	    OPEN_TREE_CLOEXEC)) == -1)
		return -1;
	if (base != 0) {
		if ((ns = userns_of(base)) == -1) {
			close(tree);
			return -1;
		}
		attr.attr_set |= MOUNT_ATTR_IDMAP;
		attr.userns_fd = (uint64_t)ns;
	}
	rc = mount_setattr(tree, "", AT_EMPTY_PATH, &attr, sizeof(attr));
	if (ns != -1)
		close(ns);
	if (rc == -1 || fstat(tree, st) == -1) {
		close(tree);
		return -1;
	}
	return tree;
}

/* The overlay of tree under root/u, mounted on root/m. */
static int
overlay_mount(int tree, const char *root)
{
	char up[PATH_MAX], work[PATH_MAX], on[PATH_MAX];
	int fs, mnt = -1, rc = -1;

	snprintf(up, sizeof(up), "%s/u", root);
	snprintf(work, sizeof(work), "%s/w", root);
	snprintf(on, sizeof(on), "%s/m", root);
	if ((fs = fsopen("overlay", FSOPEN_CLOEXEC)) == -1)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_FD, "lowerdir+", NULL, tree) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "upperdir", up, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "workdir", work, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0 &&
	    (mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID |
	    MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)) != -1)
		rc = move_mount(mnt, "", AT_FDCWD, on, MOVE_MOUNT_F_EMPTY_PATH);
	if (mnt != -1)
		close(mnt);
	close(fs);
	return rc;
}

/* root: the tmpfs and its three directories, the upper one given the
 * template root's owner and mode (what the overlay's root shows). */
static int
data_tmpfs(const char *root, const char *size, const struct stat *st)
{
	char opts[64], path[PATH_MAX];
	static const char *const dirs[] = { "u", "w", "m" };
	size_t i;

	if (mkdir(root, 0700) == -1 && errno != EEXIST)
		return -1;
	snprintf(opts, sizeof(opts), "size=%s,mode=0700", size);
	if (mount("sbx", root, "tmpfs", MS_NOSUID | MS_NODEV | MS_NOEXEC,
	    opts) == -1)
		return -1;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		if (mkdir(path, 0700) == -1)
			return -1;
	}
	snprintf(path, sizeof(path), "%s/u", root);
	return chown(path, st->st_uid, st->st_gid) == -1 ||
	    chmod(path, st->st_mode & 07777) == -1 ? -1 : 0;
}

int
datadir_make(const char *sockdir, const struct service_cfg *s,
    uint32_t base, char *out, size_t cap, char *err, size_t ecap)
{
	struct stat st;
	int tfd, tree, rc = -1;

	if (data_root(sockdir, out, cap) == -1) {
		snprintf(err, ecap, "the data path is too long");
		return -1;
	}
	if ((tfd = template_open(s->data_template, err, ecap)) == -1)
		return -1;
	if ((tree = template_tree(tfd, base, &st)) == -1)
		snprintf(err, ecap, "data_template %s: cannot mount it "
		    "(idmapped onto %u): %s", s->data_template,
		    (unsigned)base, strerror(errno));
	else if (data_tmpfs(out, s->data_size, &st) == -1 ||
	    overlay_mount(tree, out) == -1)
		snprintf(err, ecap, "data of %s on %s: %s", s->name, out,
		    strerror(errno));
	else {
		strlcat(out, "/m", cap);
		rc = 0;
	}
	if (tree != -1)
		close(tree);
	close(tfd);
	return rc;
}
