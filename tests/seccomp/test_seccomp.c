/*
 * test_seccomp.c - the compiled-in seccomp lists (policy/seccomp/<role>.list
 * through gen.awk) as a table, and the probe worker's filter in action.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scfilter.h"

static const struct sc_list *
list(const char *role)
{
	const struct sc_list *l = sc_list_find(role);

	cr_assert_not_null(l, "no seccomp list for role '%s'", role);
	cr_assert_str_eq(l->role, role);
	return l;
}

static bool
has(const struct sc_list *l, const char *name)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (!strcmp(l->rules[i].name, name))
			return true;
	return false;
}

Test(seccomp_lists, the_seven_roles_exist)
{
	static const char *const roles[] = { "broker", "child", "job",
	    "monitor", "probe", "runtime", "session" };
	size_t i, n;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		list(roles[i]);
	sc_lists_all(&n);
	cr_assert_eq(n, 7, "%zu lists compiled in, want 7", n);
	cr_assert_null(sc_list_find("nobody"));
	cr_assert_null(sc_list_find(""));
	cr_assert_null(sc_list_find("broker.list"));
}

Test(seccomp_lists, roles_are_unique)
{
	const struct sc_list *all;
	size_t i, j, n;

	all = sc_lists_all(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < i; j++)
			cr_assert_str_neq(all[i].role, all[j].role);
}

Test(seccomp_lists, each_list_non_empty)
{
	const struct sc_list *all;
	size_t i, n;

	all = sc_lists_all(&n);
	cr_assert_gt(n, 0);
	for (i = 0; i < n; i++) {
		cr_assert_gt(all[i].n, 0, "list %s is empty", all[i].role);
		cr_assert_not_null(all[i].rules);
	}
}

Test(seccomp_lists, strictly_sorted_no_duplicates)
{
	const struct sc_list *all;
	size_t i, j, n;

	all = sc_lists_all(&n);
	for (i = 0; i < n; i++)
		for (j = 1; j < all[i].n; j++) {
			int c = strcmp(all[i].rules[j - 1].name,
			    all[i].rules[j].name);

			cr_assert_neq(c, 0, "%s: %s listed twice", all[i].role,
			    all[i].rules[j].name);
			cr_assert_lt(c, 0, "%s: %s before %s is out of order",
			    all[i].role, all[i].rules[j - 1].name,
			    all[i].rules[j].name);
		}
}

/* Every entry must say why, in a phrase and not a word (gen.awk only
 * refuses an empty one). */
Test(seccomp_lists, every_reason_at_least_8_chars)
{
	const struct sc_list *all;
	size_t i, j, n;
	char short_ones[2048] = "";

	all = sc_lists_all(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < all[i].n; j++) {
			const struct sc_rule *r = &all[i].rules[j];

			cr_assert_not_null(r->reason);
			cr_assert_neq(r->reason[0], '\0', "%s: %s has no reason",
			    all[i].role, r->name);
			if (strlen(r->reason) < 8) {
				char one[128];

				snprintf(one, sizeof(one), " %s:%s(\"%s\")",
				    all[i].role, r->name, r->reason);
				strlcat(short_ones, one, sizeof(short_ones));
			}
		}
	cr_assert_str_empty(short_ones, "reasons shorter than 8 chars:%s",
	    short_ones);
}

Test(seccomp_lists, names_are_plain_identifiers)
{
	const struct sc_list *all;
	size_t i, j, n;

	all = sc_lists_all(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < all[i].n; j++) {
			const char *s = all[i].rules[j].name;

			cr_assert_gt(strlen(s), 0);
			cr_assert_eq(strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_"),
			    strlen(s), "%s: odd name '%s'", all[i].role, s);
		}
}

Test(seccomp_lists, every_name_resolves)
{
	const struct sc_list *all;
	size_t i, j, n;
	int nr;

	all = sc_lists_all(&n);
	for (i = 0; i < n; i++)
		for (j = 0; j < all[i].n; j++) {
			nr = seccomp_syscall_resolve_name(all[i].rules[j].name);
			cr_assert_neq(nr, __NR_SCMP_ERROR,
			    "%s: '%s' is not a syscall libseccomp knows",
			    all[i].role, all[i].rules[j].name);
#if defined(__x86_64__)
			/* negative: a pseudo-syscall, absent on this ABI, so
			 * the rule would match nothing */
			cr_assert_geq(nr, 0, "%s: '%s' does not exist on x86_64",
			    all[i].role, all[i].rules[j].name);
#endif
		}
}

/* The child inherits the broker's filter: a syscall only child.list
 * allows would still be killed by the broker's. */
Test(seccomp_lists, child_is_a_subset_of_broker)
{
	const struct sc_list *broker = list("broker"), *child = list("child");
	size_t i;

	for (i = 0; i < child->n; i++)
		cr_assert(has(broker, child->rules[i].name),
		    "child allows %s, which broker.list does not",
		    child->rules[i].name);
	cr_assert_lt(child->n, broker->n, "the child is meant to be tighter");
}

/* The monitor keeps records and reaches services, so it opens and
 * connects; it never executes, changes ids, mounts (it may only detach:
 * an argument check, make seccomp-probe), binds or enters a namespace:
 * the spawner does every exec for it. */
Test(seccomp_lists, the_monitor_gives_up_exec_and_ids)
{
	static const char *const never[] = { "execve", "execveat", "ptrace",
	    "setuid", "setresuid", "setgid", "setresgid", "setgroups",
	    "capset", "chroot", "pivot_root", "mount", "unshare",
	    "setns", "bind", "listen", "accept4", "init_module",
	    "finit_module", "kexec_load", "bpf", "process_vm_writev",
	    "clone3", "open_by_handle_at" };
	const struct sc_list *m = list("monitor");
	size_t j;

	for (j = 0; j < sizeof(never) / sizeof(never[0]); j++)
		cr_assert_not(has(m, never[j]), "monitor allows %s", never[j]);
}

/* Allowlists never carry what would undo them. */
Test(seccomp_lists, allowlists_omit_escapes)
{
	static const char *const never[] = { "execve", "execveat", "ptrace",
	    "open", "openat", "openat2", "setuid", "setresuid", "setgid",
	    "setresgid", "capset", "chroot", "mount", "unshare", "setns",
	    "bind", "listen", "connect" };
	static const char *const roles[] = { "broker", "child", "job",
	    "probe", "session" };
	size_t i, j;

	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++)
		for (j = 0; j < sizeof(never) / sizeof(never[0]); j++) {
			/* connecting is the probe's and the session's job,
			 * and syslog's and NSS's in a parsing job */
			if ((!strcmp(roles[i], "probe") ||
			    !strcmp(roles[i], "session") ||
			    !strcmp(roles[i], "job")) &&
			    !strcmp(never[j], "connect"))
				continue;
			/* NSS reads /etc/passwd and /etc/group as sbx-job,
			 * which no file of root's alone lets read */
			if (!strcmp(roles[i], "job") &&
			    !strcmp(never[j], "openat"))
				continue;
			cr_assert_not(has(list(roles[i]), never[j]),
			    "%s allows %s", roles[i], never[j]);
		}
}

Test(seccomp_lists, load_of_unknown_role_fails)
{
	cr_assert_eq(sc_load_allow("no-such-role"), -1);
	cr_assert_eq(sc_load_deny("no-such-role"), -1);
}

/* ---- the probe filter -------------------------------------------------- */

static void
become_probe(void)
{
	struct passwd *pw = getpwnam("nobody");

	/* what the probe worker is: nobody, no_new_privs, the probe list */
	if (pw == NULL || setgroups(0, NULL) == -1 ||
	    setresgid(pw->pw_gid, pw->pw_gid, pw->pw_gid) == -1 ||
	    setresuid(pw->pw_uid, pw->pw_uid, pw->pw_uid) == -1)
		_exit(11);
	if (sc_load_allow("probe") == -1)
		_exit(12);
}

/*
 * exit_group directly, and not declared noreturn: under ASan both _exit
 * and the __asan_handle_no_return the compiler puts before any noreturn
 * call run sigaltstack(2), which no allowlist has.
 */
static void
bye(int code)
{
	syscall(SYS_exit_group, code);
}

/* fork; the child becomes a probe and tries socket(domain, SOCK_STREAM) */
static int
probe_socket(int domain)
{
	int status, p[2];
	char c = 0, out[4];
	ssize_t n;
	pid_t pid;

	cr_assert_eq(pipe(p), 0);
	if ((pid = fork()) == 0) {
		close(p[0]);
		become_probe();
		c = 'b';	/* got as far as the call under test */
		if (write(p[1], &c, 1) != 1)
			bye(21);
		if (syscall(SYS_socket, domain, SOCK_STREAM, 0) == -1)
			bye(20);
		c = 'y';
		if (write(p[1], &c, 1) != 1)
			bye(21);
		bye(0);
	}
	cr_assert_neq(pid, -1);
	close(p[1]);
	n = 0;
	for (;;) {	/* to EOF: the child writes twice */
		ssize_t k = read(p[0], out + n, sizeof(out) - (size_t)n);

		if (k == -1 && errno == EINTR)
			continue;
		if (k <= 0 || (size_t)(n += k) == sizeof(out))
			break;
	}
	close(p[0]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert_geq(n, 1, "the probe died before its socket() call");
	cr_assert_eq(out[0], 'b');
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		cr_assert(n == 2 && out[1] == 'y', "no word after socket()");
	if (WIFSIGNALED(status))
		cr_assert_eq(n, 1, "killed after socket() returned");
	return status;
}

/* A tcp service is probed through its relay's abstract socket (relay.c):
 * the prober makes no AF_INET socket. */
Test(seccomp_probe, af_inet_socket_kills)
{
	int st;

	if (geteuid() != 0)
		cr_skip_test("dropping to nobody needs root");
	st = probe_socket(AF_INET);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "AF_INET socket: status %#x", st);
}

/* A service's Unix socket, or its relay's. */
Test(seccomp_probe, af_unix_socket_allowed)
{
	int st;

	if (geteuid() != 0)
		cr_skip_test("dropping to nobody needs root");
	st = probe_socket(AF_UNIX);
	cr_assert(WIFEXITED(st), "AF_UNIX socket killed the probe (signal "
	    "%d)", WIFSIGNALED(st) ? WTERMSIG(st) : -1);
	cr_assert_eq(WEXITSTATUS(st), 0, "exit %d", WEXITSTATUS(st));
}

Test(seccomp_probe, af_netlink_socket_kills)
{
	int st;

	if (geteuid() != 0)
		cr_skip_test("dropping to nobody needs root");
	st = probe_socket(AF_NETLINK);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "AF_NETLINK socket: status %#x", st);
}

Test(seccomp_probe, af_inet6_socket_kills)
{
	int st;

	if (geteuid() != 0)
		cr_skip_test("dropping to nobody needs root");
	st = probe_socket(AF_INET6);
	cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == SIGSYS,
	    "AF_INET6 socket: status %#x", st);
}
