/*
 * test_drop.c - the broker's one-way trip from root (drop_privileges) and
 * the seccomp filters stacked on it, checked from the kernel's side.
 *
 * Every drop happens in a child forked by the test: Criterion's own
 * machinery (its reporting threads, its IPC) would not survive the broker
 * filter, and a drop is for good. The child reports through a pipe -
 * write(2) is in every allowlist - and by how it ends; the parent makes
 * the assertions.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "drop.h"
#include "drop_user.h"
#include "scfilter.h"

#define OUT_MAX		16384

struct child {
	int	status;
	char	out[OUT_MAX];
	size_t	len;
};

static void
need_root(void)
{
	if (geteuid() != 0)
		cr_skip_test("the privilege drop needs root");
}

/* The broker's drop as the monitor sets it up: the name resolved to ids
 * (user_ids, in supervise.c), then drop_to_ids with them. */
static int
drop_privileges(const char *user, const char *root_dir)
{
	uid_t uid;
	gid_t gid;

	if (user_ids(user, &uid, &gid) == -1)
		return -1;
	return drop_to_ids(uid, gid, root_dir);
}

/*
 * Leave a filtered child. Not _exit(), and not declared noreturn: under
 * ASan both _exit and the __asan_handle_no_return the compiler puts before
 * any noreturn call run sigaltstack(2), which no allowlist has.
 * exit_group is what _exit would end in anyway.
 */
static void
bye(int code)
{
	syscall(SYS_exit_group, code);
}

static void
put(int w, const void *buf, size_t len)
{
	const char *p = buf;
	ssize_t n;

	while (len > 0) {
		n = write(w, p, len);
		if (n <= 0)
			bye(90);
		p += n;
		len -= (size_t)n;
	}
}

/* Run fn(arg, w) in a child; collect what it writes to w and its status. */
static void
run(void (*fn)(const void *, int), const void *arg, struct child *c)
{
	int p[2];
	pid_t pid;
	ssize_t n;

	memset(c, 0, sizeof(*c));
	cr_assert_eq(pipe2(p, O_CLOEXEC), 0);
	fflush(NULL);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		close(p[0]);
		fn(arg, p[1]);
		_exit(0);
	}
	close(p[1]);
	while (c->len < sizeof(c->out) - 1 &&
	    (n = read(p[0], c->out + c->len, sizeof(c->out) - 1 - c->len)) != 0) {
		if (n == -1 && errno == EINTR)
			continue;
		cr_assert_gt(n, 0, "read: %s", strerror(errno));
		c->len += (size_t)n;
	}
	c->out[c->len] = '\0';
	close(p[0]);
	cr_assert_eq(waitpid(pid, &c->status, 0), pid);
}

static void
expect_exit0(const struct child *c)
{
	cr_assert(WIFEXITED(c->status), "child died: signal %d",
	    WIFSIGNALED(c->status) ? WTERMSIG(c->status) : -1);
	cr_assert_eq(WEXITSTATUS(c->status), 0, "child exit status %d (%s)",
	    WEXITSTATUS(c->status), c->out);
}

static void
expect_sigsys(const struct child *c, const char *what)
{
	cr_assert(WIFSIGNALED(c->status),
	    "%s: not killed (exit %d, output '%s')", what,
	    WIFEXITED(c->status) ? WEXITSTATUS(c->status) : -1, c->out);
	cr_assert_eq(WTERMSIG(c->status), SIGSYS, "%s: killed by signal %d",
	    what, WTERMSIG(c->status));
	cr_assert_str_eq(c->out, "before",
	    "%s: killed before reaching the syscall under test", what);
}

/* The value after "Key:\t" in /proc/<pid>/status text, or NULL. */
static const char *
field(const char *status, const char *key, char *val, size_t cap)
{
	size_t klen = strlen(key);
	const char *p = status, *e;

	while (p != NULL && *p != '\0') {
		if (strncmp(p, key, klen) == 0 && p[klen] == ':') {
			p += klen + 1;
			p += strspn(p, " \t");
			e = strchr(p, '\n');
			if (e == NULL)
				e = p + strlen(p);
			while (e > p && (e[-1] == ' ' || e[-1] == '\t'))
				e--;
			snprintf(val, cap, "%.*s", (int)(e - p), p);
			return val;
		}
		p = strchr(p, '\n');
		if (p != NULL)
			p++;
	}
	return NULL;
}

static void
expect_field(const char *status, const char *key, const char *want)
{
	char val[256];

	cr_assert_not_null(field(status, key, val, sizeof(val)),
	    "no %s line in:\n%s", key, status);
	cr_assert_str_eq(val, want, "%s is '%s', want '%s'", key, val, want);
}

/* ---- the drop, as the kernel sees it ---------------------------------- */

static void
child_drop_broker_status(const void *arg, int w)
{
	const int *with_filter = arg;
	char buf[OUT_MAX];
	size_t off = 0;
	ssize_t n;
	int fd;

	/* Opened while root: afterwards the process is not dumpable and
	 * /proc/self belongs to root. */
	if ((fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC)) == -1)
		_exit(10);
	if (drop_privileges("nobody", NULL) == -1)
		_exit(11);
	if (*with_filter && sc_load_allow("broker") == -1)
		bye(12);
	/* read(2), not pread(2): pread64 is not in broker.list, and the
	 * offset is still 0, so the kernel renders the file now. */
	while ((n = read(fd, buf + off, sizeof(buf) - 1 - off)) > 0)
		off += (size_t)n;
	if (n == -1)
		bye(13);
	put(w, buf, off);
	bye(0);
}

Test(drop, status_after_drop_and_broker_filter)
{
	struct passwd *pw;
	struct child c;
	char want[64], val[64];
	int with_filter = 1;

	need_root();
	cr_assert_not_null(pw = getpwnam("nobody"));
	run(child_drop_broker_status, &with_filter, &c);
	expect_exit0(&c);
	cr_assert_gt(c.len, 0);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)pw->pw_uid,
	    (unsigned)pw->pw_uid, (unsigned)pw->pw_uid, (unsigned)pw->pw_uid);
	expect_field(c.out, "Uid", want);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)pw->pw_gid,
	    (unsigned)pw->pw_gid, (unsigned)pw->pw_gid, (unsigned)pw->pw_gid);
	expect_field(c.out, "Gid", want);
	snprintf(want, sizeof(want), "%u", (unsigned)pw->pw_gid);
	expect_field(c.out, "Groups", want);
	expect_field(c.out, "CapInh", "0000000000000000");
	expect_field(c.out, "CapPrm", "0000000000000000");
	expect_field(c.out, "CapEff", "0000000000000000");
	expect_field(c.out, "CapBnd", "0000000000000000");
	expect_field(c.out, "CapAmb", "0000000000000000");
	expect_field(c.out, "NoNewPrivs", "1");
	expect_field(c.out, "Seccomp", "2");
	if (field(c.out, "Seccomp_filters", val, sizeof(val)) != NULL)
		cr_assert_geq(atoi(val), 1, "Seccomp_filters: %s", val);
}

static void
own_status(char *buf, size_t cap)
{
	FILE *f;
	size_t n;

	cr_assert_not_null(f = fopen("/proc/self/status", "r"));
	n = fread(buf, 1, cap - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static bool
own_caps_nonzero(void)
{
	char buf[OUT_MAX], val[64];

	own_status(buf, sizeof(buf));
	cr_assert_not_null(field(buf, "CapEff", val, sizeof(val)));
	return strcmp(val, "0000000000000000") != 0;
}

/* The drop alone, no filter yet: no_new_privs is drop_privileges' own
 * doing, not libseccomp's. */
Test(drop, status_after_drop_only)
{
	struct passwd *pw;
	struct child c;
	char want[64];
	int with_filter = 0;

	need_root();
	cr_assert_not_null(pw = getpwnam("nobody"));
	run(child_drop_broker_status, &with_filter, &c);
	expect_exit0(&c);
	snprintf(want, sizeof(want), "%u\t%u\t%u\t%u", (unsigned)pw->pw_uid,
	    (unsigned)pw->pw_uid, (unsigned)pw->pw_uid, (unsigned)pw->pw_uid);
	expect_field(c.out, "Uid", want);
	expect_field(c.out, "CapEff", "0000000000000000");
	expect_field(c.out, "CapPrm", "0000000000000000");
	expect_field(c.out, "CapBnd", "0000000000000000");
	expect_field(c.out, "NoNewPrivs", "1");
	expect_field(c.out, "Seccomp", "0");
}

/* Root before, so the test above proves a change, not a default. */
Test(drop, test_runs_as_root_with_capabilities)
{
	char buf[OUT_MAX];

	need_root();
	own_status(buf, sizeof(buf));
	cr_assert(own_caps_nonzero());
	expect_field(buf, "Uid", "0\t0\t0\t0");
	expect_field(buf, "Seccomp", "0");
}

static void
child_drop_then_setuid(const void *arg, int w)
{
	char msg[128];

	(void)arg;
	if (drop_privileges("nobody", NULL) == -1)
		_exit(11);
	errno = 0;
	if (setuid(0) != -1)
		_exit(20);
	snprintf(msg, sizeof(msg), "setuid=%d", errno);
	put(w, msg, strlen(msg));
	if (setresuid(0, 0, 0) != -1 || seteuid(0) != -1)
		_exit(21);
	if (setgid(0) != -1 || setresgid(0, 0, 0) != -1)
		_exit(22);
	if (setgroups(0, NULL) != -1)
		_exit(23);
	if (getuid() == 0 || geteuid() == 0 || getgid() == 0)
		_exit(24);
	_exit(0);
}

Test(drop, setuid_0_fails_after_the_drop)
{
	struct child c;
	char want[32];

	need_root();
	run(child_drop_then_setuid, NULL, &c);
	expect_exit0(&c);
	snprintf(want, sizeof(want), "setuid=%d", EPERM);
	cr_assert_str_eq(c.out, want);
}

Test(drop, root_is_refused)
{
	need_root();
	cr_assert_eq(drop_privileges("root", NULL), -1);
	/* refused before anything changed */
	cr_assert_eq(getuid(), 0);
	cr_assert_eq(geteuid(), 0);
	cr_assert_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	cr_assert(own_caps_nonzero(), "capabilities lost on a refused drop");
}

Test(drop, unknown_user_is_refused)
{
	need_root();
	cr_assert_eq(drop_privileges("sbx-no-such-user-7f3a", NULL), -1);
	cr_assert_eq(drop_privileges("", NULL), -1);
	cr_assert_eq(getuid(), 0);
	cr_assert_eq(geteuid(), 0);
	cr_assert_eq(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0), 0);
	cr_assert(own_caps_nonzero(), "capabilities lost on a refused drop");
}

struct chroot_arg {
	const char *dir;
};

static void
child_drop_chroot(const void *arg, int w)
{
	const struct chroot_arg *a = arg;
	char cwd[64];

	if (drop_privileges("nobody", a->dir) == -1)
		_exit(11);
	if (getcwd(cwd, sizeof(cwd)) == NULL || strcmp(cwd, "/") != 0)
		_exit(12);
	if (access("/marker", F_OK) != 0)
		_exit(13);	/* not inside the new root */
	if (access("/etc/passwd", F_OK) == 0)
		_exit(14);	/* the old root is still visible */
	if (chroot("/") != -1)
		_exit(15);	/* CAP_SYS_CHROOT is gone */
	put(w, "jailed", 6);
	_exit(0);
}

Test(drop, chroot_before_the_uid_change)
{
	char dir[] = "/tmp/sbx-drop-XXXXXX", marker[64];
	struct chroot_arg a;
	struct child c;
	int fd;

	need_root();
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(chmod(dir, 0755), 0);	/* searchable by nobody */
	snprintf(marker, sizeof(marker), "%s/marker", dir);
	cr_assert_neq(fd = open(marker, O_CREAT | O_WRONLY, 0644), -1);
	close(fd);
	a.dir = dir;
	run(child_drop_chroot, &a, &c);
	unlink(marker);
	rmdir(dir);
	expect_exit0(&c);
	cr_assert_str_eq(c.out, "jailed");
}

/* ---- the broker and child filters, stacked as in the real child ------- */

enum act { ACT_OPENAT, ACT_EXECVE, ACT_WRITE, ACT_SOCKET_UNIX, ACT_OPEN_BROKER };

static void
child_filtered(const void *arg, int w)
{
	enum act act = *(const enum act *)arg;
	char *const argv[] = { (char *)"/bin/true", NULL };
	char *const envp[] = { NULL };

	if (drop_privileges("nobody", NULL) == -1)
		_exit(11);
	if (sc_load_allow("broker") == -1)
		bye(12);
	if (act == ACT_OPEN_BROKER) {
		/* the broker filter alone refuses it too */
		put(w, "before", 6);
		syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
		bye(30);
	}
	if (sc_load_allow("child") == -1)
		bye(13);
	/* the marker shows the child got this far: killed by the call below */
	if (act != ACT_WRITE)
		put(w, "before", 6);
	switch (act) {
	case ACT_OPENAT:
		syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY);
		break;
	case ACT_EXECVE:
		syscall(SYS_execve, "/bin/true", argv, envp);
		break;
	case ACT_SOCKET_UNIX:
		syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0);
		break;
	case ACT_WRITE:
		put(w, "still alive", 11);
		bye(0);
		break;
	default:
		break;
	}
	bye(31);	/* the syscall returned: not refused */
}

Test(drop, child_filter_kills_openat)
{
	enum act a = ACT_OPENAT;
	struct child c;

	need_root();
	run(child_filtered, &a, &c);
	expect_sigsys(&c, "openat under the child filter");
}

Test(drop, child_filter_kills_execve)
{
	enum act a = ACT_EXECVE;
	struct child c;

	need_root();
	run(child_filtered, &a, &c);
	expect_sigsys(&c, "execve under the child filter");
}

Test(drop, child_filter_kills_socket)
{
	enum act a = ACT_SOCKET_UNIX;
	struct child c;

	need_root();
	run(child_filtered, &a, &c);
	expect_sigsys(&c, "socket under the child filter");
}

Test(drop, broker_filter_kills_openat)
{
	enum act a = ACT_OPEN_BROKER;
	struct child c;

	need_root();
	run(child_filtered, &a, &c);
	expect_sigsys(&c, "openat under the broker filter");
}

Test(drop, child_filter_lets_write_through)
{
	enum act a = ACT_WRITE;
	struct child c;

	need_root();
	run(child_filtered, &a, &c);
	expect_exit0(&c);
	cr_assert_str_eq(c.out, "still alive");
}
