/*
 * test_datadir.c - datadir_make (privsep/worker/datadir.c): a service's
 * data is an overlay of the host template under a tmpfs of its own. What
 * the sandbox writes lands in that tmpfs alone, bounded by its size; the
 * template is never changed; with a range, the template's owners are
 * shifted onto it; a template a host user could reach or swap is
 * refused; and a removal (sockdir_rm_tree) detaches it all without
 * walking what the container wrote. Root only (mounts).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "datadir.h"
#include "sockdir.h"

#define OWNER	999u		/* the template's files, as in the image */
#define BASE	3000000u	/* a range's first host uid */

static char base[64], tpls[128], tpl[160], unit[160], sock[192];
static struct service_cfg svc;

static void
path_of(char *out, size_t cap, const char *dir, const char *name)
{
	cr_assert_lt(snprintf(out, cap, "%s/%s", dir, name), (int)cap);
}

static void
write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	cr_assert_neq(fd, -1, "create %s: %s", path, strerror(errno));
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void
read_file(const char *path, char *out, size_t cap)
{
	ssize_t n;
	int fd = open(path, O_RDONLY);

	cr_assert_neq(fd, -1, "open %s: %s", path, strerror(errno));
	n = read(fd, out, cap - 1);
	cr_assert_geq(n, 0);
	out[n] = '\0';
	close(fd);
}

static bool
mounted_under(const char *dir)
{
	char line[1024];
	FILE *f = fopen("/proc/self/mounts", "r");
	bool hit = false;

	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, dir) != NULL)
			hit = true;
	fclose(f);
	return hit;
}

/* base/tpls (root's, 0700)/tpl: PG_VERSION and base/1/f, of OWNER;
 * base/unit/s: a socket directory's path. */
static void
setup(void)
{
	char p[256];

	if (geteuid() != 0)
		cr_skip_test("mounting needs root");
	strcpy(base, "/tmp/sbx-datadir.XXXXXX");
	cr_assert_not_null(mkdtemp(base));
	path_of(tpls, sizeof(tpls), base, "tpls");
	cr_assert_eq(mkdir(tpls, 0700), 0);
	path_of(tpl, sizeof(tpl), tpls, "pg");
	cr_assert_eq(mkdir(tpl, 0700), 0);
	path_of(p, sizeof(p), tpl, "PG_VERSION");
	write_file(p, "15\n");
	cr_assert_eq(chown(p, OWNER, OWNER), 0);
	path_of(p, sizeof(p), tpl, "base");
	cr_assert_eq(mkdir(p, 0700), 0);
	cr_assert_eq(chown(p, OWNER, OWNER), 0);
	path_of(p, sizeof(p), tpl, "base/f");
	write_file(p, "catalog");
	cr_assert_eq(chown(p, OWNER, OWNER), 0);
	cr_assert_eq(chown(tpl, OWNER, OWNER), 0);
	path_of(unit, sizeof(unit), base, "unit");
	cr_assert_eq(mkdir(unit, 0755), 0);
	path_of(sock, sizeof(sock), unit, SOCKDIR_MOUNT);
	cr_assert_eq(mkdir(sock, 0755), 0);
	memset(&svc, 0, sizeof(svc));
	strcpy(svc.name, "postgres");
	strcpy(svc.data_path, "/srv/pgdata/pgdata");
	strcpy(svc.data_template, tpl);
	strcpy(svc.data_size, "1m");
}

static void
teardown(void)
{
	char cmd[128];

	if (base[0] == '\0')
		return;
	sockdir_rm_tree(unit);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(datadir, .init = setup, .fini = teardown);

static void
make_it(uint32_t range, char *data, size_t cap)
{
	char err[256] = "";

	cr_assert_eq(datadir_make(sock, &svc, range, data, cap, err,
	    sizeof(err)), 0, "datadir_make: %s", err);
}

static void
template_intact(void)
{
	char p[256], text[64];
	struct stat st;

	path_of(p, sizeof(p), tpl, "base/f");
	read_file(p, text, sizeof(text));
	cr_assert_str_eq(text, "catalog");
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, OWNER);
	path_of(p, sizeof(p), tpl, "new");
	cr_assert_eq(access(p, F_OK), -1, "a write reached the template");
}

Test(datadir, writes_land_in_the_tmpfs_and_never_in_the_template)
{
	char data[256], p[320], text[64];
	struct stat st;

	make_it(0, data, sizeof(data));
	cr_assert_str_eq(data + strlen(data) - 4, "/d/m");
	path_of(p, sizeof(p), data, "base/f");
	read_file(p, text, sizeof(text));
	cr_assert_str_eq(text, "catalog");
	write_file(p, "changed");
	path_of(p, sizeof(p), data, "new");
	write_file(p, "x");
	template_intact();
	/* the copy-up is in the upper directory, on the tmpfs */
	snprintf(p, sizeof(p), "%s/d/u/base/f", unit);
	read_file(p, text, sizeof(text));
	cr_assert_str_eq(text, "changed");
	/* what the overlay's root shows: the template's owner and mode */
	cr_assert_eq(stat(data, &st), 0);
	cr_assert_eq(st.st_uid, OWNER);
	cr_assert_eq(st.st_mode & 07777, 0700);
	/* no host user enters the tmpfs */
	snprintf(p, sizeof(p), "%s/d", unit);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, 0);
	cr_assert_eq(st.st_mode & 077, 0);
}

Test(datadir, a_range_owns_the_template_shifted_onto_it)
{
	char data[256], p[320];
	struct stat st;

	make_it(BASE, data, sizeof(data));
	path_of(p, sizeof(p), data, "base/f");
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, BASE + OWNER);
	cr_assert_eq(st.st_gid, BASE + OWNER);
	cr_assert_eq(stat(data, &st), 0);
	cr_assert_eq(st.st_uid, BASE + OWNER);
	/* a copy-up keeps the shifted owner; the template keeps its own */
	write_file(p, "changed");
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, BASE + OWNER);
	snprintf(p, sizeof(p), "%s/d/u/base/f", unit);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_uid, BASE + OWNER);
	template_intact();
}

Test(datadir, the_tmpfs_size_bounds_what_the_sandbox_writes)
{
	char data[256], p[320], block[65536];
	ssize_t n = 0;
	size_t total = 0;
	int fd;

	make_it(0, data, sizeof(data));
	path_of(p, sizeof(p), data, "fill");
	cr_assert_neq(fd = open(p, O_WRONLY | O_CREAT, 0600), -1);
	memset(block, 'x', sizeof(block));
	while (total < 8u << 20 && (n = write(fd, block, sizeof(block))) > 0)
		total += (size_t)n;
	cr_assert_eq(n, -1, "8 MiB fitted in a 1m tmpfs");
	cr_assert_eq(errno, ENOSPC);
	cr_assert_leq(total, 1u << 20);
	close(fd);
	template_intact();
}

Test(datadir, a_template_a_host_user_reaches_is_refused)
{
	char data[256], err[256] = "";

	cr_assert_eq(chmod(tpls, 0755), 0);
	cr_assert_eq(datadir_make(sock, &svc, 0, data, sizeof(data), err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "must be root's with mode 0700"),
	    "%s", err);
	cr_assert(!mounted_under(base));
	cr_assert_eq(chmod(tpls, 0700), 0);
	cr_assert_eq(chown(tpls, 1, 0), 0);
	cr_assert_eq(datadir_make(sock, &svc, 0, data, sizeof(data), err,
	    sizeof(err)), -1);
	cr_assert(!mounted_under(base));
}

Test(datadir, a_link_is_judged_by_where_it_leads)
{
	char data[256], err[256] = "", link[192], open_dir[160], p[192];

	/* a link beside, in a directory anyone enters, to the shut one */
	path_of(link, sizeof(link), base, "current");
	cr_assert_eq(symlink(tpl, link), 0);
	strcpy(svc.data_template, link);
	make_it(0, data, sizeof(data));
	cr_assert_eq(sockdir_rm_tree(unit), 0);
	/* a link in the shut directory to a template anyone may reach */
	path_of(open_dir, sizeof(open_dir), base, "open");
	cr_assert_eq(mkdir(open_dir, 0755), 0);
	path_of(p, sizeof(p), open_dir, "pg");
	cr_assert_eq(rename(tpl, p), 0);
	cr_assert_eq(symlink(p, tpl), 0);
	strcpy(svc.data_template, tpl);
	cr_assert_eq(mkdir(unit, 0755), 0);
	cr_assert_eq(mkdir(sock, 0755), 0);
	cr_assert_eq(datadir_make(sock, &svc, 0, data, sizeof(data), err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, open_dir), "%s", err);
}

Test(datadir, a_removal_detaches_it_all_and_follows_no_link)
{
	char data[256], p[320], victim[192], text[64];

	path_of(victim, sizeof(victim), base, "victim");
	write_file(victim, "root's");
	make_it(BASE, data, sizeof(data));
	/* what a compromised server plants in its data */
	path_of(p, sizeof(p), data, "link");
	cr_assert_eq(symlink(victim, p), 0);
	path_of(p, sizeof(p), data, "base/link");
	cr_assert_eq(symlink(base, p), 0);
	cr_assert(mounted_under(unit));
	cr_assert_eq(sockdir_rm_tree(unit), 0);
	cr_assert(!mounted_under(base));
	cr_assert_eq(access(unit, F_OK), -1);
	read_file(victim, text, sizeof(text));
	cr_assert_str_eq(text, "root's");
	template_intact();
}

Test(datadir, a_path_that_is_no_socket_directory_is_refused)
{
	char data[256], err[256] = "";

	cr_assert_eq(datadir_make(unit, &svc, 0, data, sizeof(data), err,
	    sizeof(err)), -1);
	cr_assert(!mounted_under(base));
	strcpy(svc.data_template, "/nonexistent/sbx/template");
	cr_assert_eq(datadir_make(sock, &svc, 0, data, sizeof(data), err,
	    sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "/nonexistent/sbx/template"), "%s",
	    err);
	cr_assert(!mounted_under(base));
}
