/*
 * test_sockdir.c - sockdir_rm_tree (shared/sockdir.c) removes what is
 * under its path and nothing else: links planted before the removal (to
 * a file of root's, to another tenant's directory) are removed, never
 * followed, and so are directories swapped for such links while the walk
 * is inside them (sockdir_walk_hook plays the container); a tmpfs
 * mounted in the tree is detached, not walked.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sockdir.h"

static char base[64];
static char victim[128], tenant[128], tree[128];
static int swaps;

static void
path_of(char *out, size_t cap, const char *dir, const char *name)
{
	cr_assert_lt(snprintf(out, cap, "%s/%s", dir, name), (int)cap);
}

static void
touch(const char *dir, const char *name)
{
	char p[256];
	int fd;

	path_of(p, sizeof(p), dir, name);
	cr_assert_neq(fd = open(p, O_WRONLY | O_CREAT | O_EXCL, 0600), -1,
	    "create %s", p);
	close(fd);
}

static void
mkdir_in(char *out, size_t cap, const char *dir, const char *name)
{
	path_of(out, cap, dir, name);
	cr_assert_eq(mkdir(out, 0755), 0, "mkdir %s", out);
}

static bool
exists(const char *dir, const char *name)
{
	char p[256];
	struct stat st;

	path_of(p, sizeof(p), dir, name);
	return lstat(p, &st) == 0;
}

/* The names a container would plant: the same as the victims'. */
static void
fill(const char *dir)
{
	touch(dir, "aaa-first");
	touch(dir, "root-file");
	touch(dir, "redis.sock");
}

static void
setup(void)
{
	char d[256];

	strlcpy(base, "/tmp/sbx-sockdir-XXXXXX", sizeof(base));
	cr_assert_not_null(mkdtemp(base));
	mkdir_in(victim, sizeof(victim), base, "root-only");
	chmod(victim, 0700);
	touch(victim, "root-file");
	touch(victim, "redis.sock");
	mkdir_in(tenant, sizeof(tenant), base, "other-tenant");
	touch(tenant, "redis.sock");
	touch(tenant, "root-file");
	mkdir_in(tree, sizeof(tree), base, "tree");
	mkdir_in(d, sizeof(d), tree, "redis");
	touch(d, "dump.rdb");
	swaps = 0;
	sockdir_walk_hook = NULL;
}

static int
rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)flag;
	(void)f;
	remove(path);
	return 0;
}

static void
teardown(void)
{
	sockdir_walk_hook = NULL;
	nftw(base, rm_one, 8, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

static void
victims_intact(void)
{
	cr_assert(exists(victim, "root-file"), "root's file is still there");
	cr_assert(exists(victim, "redis.sock"), "root's socket is there");
	cr_assert(exists(tenant, "redis.sock"), "the other tenant's socket");
	cr_assert(exists(tenant, "root-file"), "the other tenant's file");
}

static void
tree_gone(void)
{
	struct stat st;

	cr_assert_eq(lstat(tree, &st), -1, "the tree is gone");
}

TestSuite(sockdir, .init = setup, .fini = teardown);

Test(sockdir, links_planted_before_are_removed_not_followed)
{
	char p[256], d[256];

	path_of(p, sizeof(p), tree, "to-root-file");
	cr_assert_eq(symlink(victim, p), 0);
	path_of(p, sizeof(p), tree, "to-tenant");
	cr_assert_eq(symlink(tenant, p), 0);
	mkdir_in(d, sizeof(d), tree, "nested");
	path_of(p, sizeof(p), d, "root-file");
	cr_assert_eq(symlink(victim, p), 0);
	path_of(p, sizeof(p), d, "file-link");
	path_of(d, sizeof(d), victim, "root-file");
	cr_assert_eq(symlink(d, p), 0);
	cr_assert_eq(sockdir_rm_tree(tree), 0);
	tree_gone();
	victims_intact();
}

/* The container's move: once the walk is inside "swap" (one of its
 * entries, named as the victims' are, is about to go), the directory is
 * renamed aside and a link to the victim takes its name. A walk by names
 * then removes the victim's same-named files. */
static const char *swap_target;

static void
swap_hook(int dirfd, const char *name)
{
	char from[256], to[256];

	(void)dirfd;
	if ((strcmp(name, "aaa-first") != 0 && strcmp(name, "root-file") != 0 &&
	    strcmp(name, "redis.sock") != 0) || swaps > 0)
		return;
	path_of(from, sizeof(from), tree, "swap");
	path_of(to, sizeof(to), tree, "swap.moved");
	if (rename(from, to) == 0 && symlink(swap_target, from) == 0)
		swaps++;
}

static void
swap_mid_walk(const char *target)
{
	char d[256];

	mkdir_in(d, sizeof(d), tree, "swap");
	fill(d);
	swap_target = target;
	sockdir_walk_hook = swap_hook;
	sockdir_rm_tree(tree);
	cr_assert_eq(swaps, 1, "the hook swapped the directory mid-walk");
	victims_intact();
	tree_gone();
}

Test(sockdir, a_directory_swapped_for_a_link_to_roots_directory)
{
	swap_mid_walk(victim);
}

Test(sockdir, a_directory_swapped_for_a_link_to_another_tenant)
{
	swap_mid_walk(tenant);
}

/* A link in place of a directory between our look and our open, at
 * every entry: the walk still ends, and nothing outside goes. */
static void
every_entry_hook(int dirfd, const char *name)
{
	char moved[64];

	if (swaps >= 8 || strcmp(name, "sub") != 0)
		return;
	snprintf(moved, sizeof(moved), "sub.%d", swaps);
	if (renameat(dirfd, name, dirfd, moved) == 0 &&
	    symlinkat(victim, dirfd, name) == 0)
		swaps++;
}

Test(sockdir, a_name_swapped_again_and_again)
{
	char d[256], sub[256];

	mkdir_in(d, sizeof(d), tree, "deep");
	mkdir_in(sub, sizeof(sub), d, "sub");
	fill(sub);
	sockdir_walk_hook = every_entry_hook;
	sockdir_rm_tree(tree);
	cr_assert_geq(swaps, 1);
	victims_intact();
}

Test(sockdir, a_missing_tree_is_no_error)
{
	char p[256];

	path_of(p, sizeof(p), base, "none");
	cr_assert_eq(sockdir_rm_tree(p), 0);
	victims_intact();
}

Test(sockdir, a_tmpfs_in_the_tree_is_detached_not_walked)
{
	char unit[256], mnt[256];

	if (geteuid() != 0)
		cr_skip_test("mounting needs root");
	mkdir_in(unit, sizeof(unit), tree, "unit");
	mkdir_in(mnt, sizeof(mnt), unit, SOCKDIR_MOUNT);
	cr_assert_eq(mount("sbx", mnt, "tmpfs", MS_NOSUID | MS_NODEV |
	    MS_NOEXEC, SOCKDIR_TMPFS), 0);
	fill(mnt);
	cr_assert_eq(sockdir_rm_tree(tree), 0);
	tree_gone();
	victims_intact();
}
