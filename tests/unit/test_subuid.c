/*
 * test_subuid.c - the /etc/subuid reader (privsep/worker/subuid_parse.c):
 * names and numbers, bad and overlong lines skipped, overlaps dropped, the
 * range edges, root never subordinate, a file that is not root's refused.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "subuid.h"

static char path[64];

static void
write_file(const char *text, mode_t mode)
{
	int fd;

	strlcpy(path, "/tmp/sbx-subuid.XXXXXX", sizeof(path));
	cr_assert_neq(fd = mkstemp(path), -1);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void
done(void)
{
	if (path[0] != '\0')
		unlink(path);
}

TestSuite(subuid, .fini = done);

static uid_t
owner_of(const struct subuid_table *t, uid_t uid)
{
	uid_t o = (uid_t)-1;

	return subuid_owner(t, uid, &o) ? o : (uid_t)-1;
}

Test(subuid, names_numbers_and_edges)
{
	struct subuid_table t;
	char err[256];

	write_file("root:100000:65536\n"
	    "# a comment\n"
	    "\n"
	    "1000:300000:10\n"
	    "nosuchuser-sbx:400000:5\n"
	    "broken line\n"
	    "a:1:2:3\n"
	    "b:-5:10\n"
	    "c:500000:0\n"
	    "d:4294967295:2\n"
	    "1001:300005:10\n"	/* overlaps 1000's: dropped */
	    "1002:200000:1", 0644);
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 4);
	cr_assert_eq(t.skipped, 6);
	cr_assert_eq(owner_of(&t, 99999), (uid_t)-1);
	cr_assert_eq(owner_of(&t, 100000), 0);
	cr_assert_eq(owner_of(&t, 165535), 0);
	cr_assert_eq(owner_of(&t, 165536), (uid_t)-1);
	cr_assert_eq(owner_of(&t, 200000), 1002, "a last line without newline");
	cr_assert_eq(owner_of(&t, 200001), (uid_t)-1);
	cr_assert_eq(owner_of(&t, 300009), 1000);
	cr_assert_eq(owner_of(&t, 300010), (uid_t)-1, "the overlap is gone");
	/* an owner that names no user: one quota for its range */
	cr_assert_eq(owner_of(&t, 400004), 400000);
	cr_assert_eq(owner_of(&t, 0), (uid_t)-1, "root is never subordinate");
	cr_assert_eq(owner_of(&t, 1000), (uid_t)-1);
	subuid_free(&t);
}

/*
 * The broker refuses a whole table with a range it finds unsound
 * (subrange_valid) and then serves nobody: a line the broker would refuse
 * is skipped here, so that every table loaded is one the broker takes.
 */
Test(subuid, a_range_the_broker_refuses_is_skipped)
{
	struct subuid_table t;
	char err[256];

	write_file("1000:0:100\n"		/* holds uid 0 */
	    "1001:4294967290:6\n"		/* ends at 2^32 */
	    "1002:4294967290:5\n", 0600);	/* ends at 2^32 - 1 */
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 1);
	cr_assert_eq(t.skipped, 2);
	cr_assert(subrange_valid(t.v, t.n), "the broker takes the table");
	cr_assert_eq(owner_of(&t, 0), (uid_t)-1, "root is never subordinate");
	cr_assert_eq(owner_of(&t, 99), (uid_t)-1);
	cr_assert_eq(owner_of(&t, 4294967294u), 1002);
	subuid_free(&t);
}

Test(subuid, overlong_line_skipped)
{
	struct subuid_table t;
	char err[256], *text = malloc(2000);

	cr_assert_not_null(text);
	memset(text, 'x', 1000);
	strlcpy(text + 1000, ":1:1\n1000:5000:5\n", 1000);
	write_file(text, 0644);
	free(text);
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 1);
	cr_assert_eq(t.skipped, 1);
	cr_assert_eq(owner_of(&t, 5004), 1000);
	subuid_free(&t);
}

Test(subuid, many_ranges)
{
	struct subuid_table t;
	char err[256];
	FILE *f;
	int i;

	write_file("", 0644);
	cr_assert_not_null(f = fopen(path, "w"));
	for (i = 999; i >= 0; i--)	/* unsorted on purpose */
		fprintf(f, "%d:%d:65536\n", 2000 + i, 100000 + i * 65536);
	fclose(f);
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(t.n, 1000);
	for (i = 0; i < 1000; i++) {
		cr_assert_eq(owner_of(&t, (uid_t)(100000 + i * 65536)),
		    (uid_t)(2000 + i));
		cr_assert_eq(owner_of(&t, (uid_t)(100000 + i * 65536 + 65535)),
		    (uid_t)(2000 + i));
	}
	subuid_free(&t);
}

Test(subuid, missing_file_is_empty)
{
	struct subuid_table t;
	char err[256];

	cr_assert_eq(subuid_load("/nonexistent/subuid", &t, err,
	    sizeof(err)), 0);
	cr_assert_eq(t.n, 0);
	cr_assert_eq(owner_of(&t, 100000), (uid_t)-1);
	subuid_free(&t);
}

Test(subuid, writable_by_others_refused)
{
	struct subuid_table t;
	char err[256];

	write_file("1000:100000:65536\n", 0666);
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "root"), "%s", err);
	cr_assert_eq(t.n, 0);
}

Test(subuid, not_root_owned_refused)
{
	struct subuid_table t;
	char err[256];

	write_file("1000:100000:65536\n", 0644);
	cr_assert_eq(chown(path, 65534, 65534), 0);
	cr_assert_eq(subuid_load(path, &t, err, sizeof(err)), -1);
}

/* What the broker gets from the monitor is checked before use. */
Test(subuid, ranges_handed_to_the_broker_are_checked)
{
	struct subuid_range ok[] = { { 100000, 65536, 1000 },
	    { 165536, 65536, 1001 } };
	struct subuid_range overlap[] = { { 100000, 65536, 1000 },
	    { 150000, 10, 1001 } };
	struct subuid_range root[] = { { 0, 10, 1000 } };
	struct subuid_range wrap[] = { { 4294967290u, 100, 1000 } };
	uid_t owner = 0;

	cr_assert(subrange_valid(ok, 2));
	cr_assert(subrange_valid(NULL, 0));
	cr_assert_not(subrange_valid(overlap, 2));
	cr_assert_not(subrange_valid(root, 1));
	cr_assert_not(subrange_valid(wrap, 1));
	cr_assert(subrange_owner(ok, 2, 165537, &owner));
	cr_assert_eq(owner, 1001);
	cr_assert_not(subrange_owner(ok, 2, 99999, &owner));
	cr_assert_not(subrange_owner(ok, 2, 231072, &owner));
}
