/*
 * scfilter.c - load a role's seccomp filter with libseccomp.
 * runs in: the monitor as it confines itself (root), a worker's fork of the
 *   spawner (root, unfiltered); in sbx-worker, JOB_DATA, JOB_WARM_START and a
 *   provision's service children, which start sessions, and a listing's child
 *   (root, runtime deny filter), the prober and a session child after their
 *   drop (the sandbox's prober uid, runtime deny filter), the parsing jobs at
 *   their drop (sbx-job, runtime deny filter: privsep/worker/jobuser.c); the
 *   broker (broker user, unfiltered) and its children (broker user, broker
 *   allowlist)
 *
 * The lists are compiled in from policy/seccomp/ (an admin reads them
 * there; nobody can swap them at run time). libseccomp checks the
 * architecture for us: a syscall made through another ABI hits the
 * filter's bad-arch action, which is kill. A few entries carry argument
 * conditions, kept here beside the code that needs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "log.h"
#include "scfilter.h"
#include "seccomp_lists.h"

#define CLONE_NS_FLAGS	(CLONE_NEWNS | CLONE_NEWUTS | CLONE_NEWIPC | \
	CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWCGROUP | \
	CLONE_THREAD | CLONE_VM)

const struct sc_list *
sc_lists_all(size_t *n)
{
	*n = sizeof(sc_lists) / sizeof(sc_lists[0]);
	return sc_lists;
}

const struct sc_list *
sc_list_find(const char *role)
{
	size_t i, n;
	const struct sc_list *all = sc_lists_all(&n);

	for (i = 0; i < n; i++)
		if (!strcmp(all[i].role, role))
			return &all[i];
	return NULL;
}

/* The socket options the monitor reads and sets, at SOL_SOCKET: its own
 * checks of agents' sockets, and sd_notify's send buffer. */
static const int monitor_reads[] = { SO_PEERCRED, SO_DOMAIN, SO_TYPE,
	SO_ACCEPTCONN, SO_MARK, SO_ERROR, SO_SNDBUF };
static const int monitor_sets[] = { SO_MARK, SO_SNDBUF, SO_SNDBUFFORCE };

/* get- or setsockopt at SOL_SOCKET, for these options alone (rules
 * OR). */
static int
sockopts(scmp_filter_ctx ctx, int nr, const int *opt, size_t n)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
		    SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
		    SCMP_A2(SCMP_CMP_EQ, (scmp_datum_t)opt[i]));
	return rc;
}

/*
 * The monitor's: sockets of the kinds it makes, descriptors from its
 * broker on any channel, the socket options it reads and sets, one ioctl,
 * and an unmount that only detaches; 1 when name is not one of these.
 */
static int
add_monitor(scmp_filter_ctx ctx, const char *name, int nr)
{
	if (!strcmp(name, "socket"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX)) ||
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_INET)) ||
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_INET6));
	if (!strcmp(name, "recvmsg"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
	if (!strcmp(name, "getsockopt"))
		return sockopts(ctx, nr, monitor_reads,
		    sizeof(monitor_reads) / sizeof(monitor_reads[0]));
	if (!strcmp(name, "setsockopt"))
		return sockopts(ctx, nr, monitor_sets,
		    sizeof(monitor_sets) / sizeof(monitor_sets[0]));
	if (!strcmp(name, "ioctl"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A1(SCMP_CMP_EQ, FIONREAD));
	if (!strcmp(name, "umount2"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A1(SCMP_CMP_EQ, MNT_DETACH));
	return 1;
}

static int
add_allow(scmp_filter_ctx ctx, const char *role, const char *name, int nr)
{
	int rc;

	if (!strcmp(role, "monitor") &&
	    (rc = add_monitor(ctx, name, nr)) != 1)
		return rc;
	/* The prober's and a session's: Unix alone (a tcp service is
	 * reached through a relay's abstract socket, relay.c). */
	if (!strcmp(name, "socket"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	/* The broker's spares: a private pair each, nothing reachable. */
	if (!strcmp(name, "socketpair"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, AF_UNIX));
	/* A spare's agent socket, on its channel alone: no child can take
	 * a descriptor its agent sends (and pass it off as the agent). A
	 * parsing job's is nscd's answer, on the socket NSS made. */
	if (!strcmp(name, "recvmsg") && strcmp(role, "job") != 0)
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, SC_SPARE_FD));
	/* A broker child lowers its own priority for its exit, nothing
	 * else (broker/child.c). */
	if (!strcmp(name, "setpriority"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 3,
		    SCMP_A0(SCMP_CMP_EQ, PRIO_PROCESS), SCMP_A1(SCMP_CMP_EQ, 0),
		    SCMP_A2(SCMP_CMP_EQ, SC_EXIT_NICE));
	if (!strcmp(name, "prctl"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_EQ, PR_SET_NO_NEW_PRIVS));
	/* Two read-only options: SO_ERROR (libpq's connect) and
	 * SO_PEERCRED (the broker's audit uid); rules for one call OR. */
	if (!strcmp(name, "getsockopt"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
		    SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
		    SCMP_A2(SCMP_CMP_EQ, SO_PEERCRED)) ||
		    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 2,
		    SCMP_A1(SCMP_CMP_EQ, SOL_SOCKET),
		    SCMP_A2(SCMP_CMP_EQ, SO_ERROR));
	if (!strcmp(name, "clone"))
		return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
		    SCMP_A0(SCMP_CMP_MASKED_EQ, CLONE_NS_FLAGS, 0));
	return seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0);
}

/* The role's filter, ready to load or export; NULL on error. */
static scmp_filter_ctx
build(const char *role, int deny)
{
	const struct sc_list *l = sc_list_find(role);
	scmp_filter_ctx ctx;
	size_t i;
	int nr, rc = -1;

	if (l == NULL) {
		log_warnx("seccomp: no list for role %s", role);
		return NULL;
	}
	ctx = seccomp_init(deny ? SCMP_ACT_ALLOW : SCMP_ACT_KILL_PROCESS);
	if (ctx == NULL)
		return NULL;
	if (!deny && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 1) != 0)
		goto out;
	/*
	 * A binary tree of syscall numbers rather than a list: the kernel
	 * runs the filter once per syscall number when it is installed (to
	 * cache the always-allowed ones), in every per-request child. The
	 * tree makes that ~20-50 us cheaper per child (bench/README.md).
	 */
	if (!deny && seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2) != 0)
		goto out;
	for (i = 0; i < l->n; i++) {
		if ((nr = seccomp_syscall_resolve_name(l->rules[i].name)) ==
		    __NR_SCMP_ERROR) {
			log_warnx("seccomp %s: unknown syscall %s", role,
			    l->rules[i].name);
			goto out;
		}
		if (deny)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(
			    strstr(l->rules[i].name, "key") ? ENOSYS : EPERM),
			    nr, 0);
		else
			rc = add_allow(ctx, role, l->rules[i].name, nr);
		if (rc != 0) {
			log_warnx("seccomp %s: rule %s: %s", role,
			    l->rules[i].name, strerror(-rc));
			goto out;
		}
	}
	if (!deny) {
		/* glibc probes clone3 first; ENOSYS sends it back to clone. */
		nr = seccomp_syscall_resolve_name("clone3");
		if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nr, 0) != 0)
			goto out;
	}
	return ctx;
out:
	seccomp_release(ctx);
	return NULL;
}

static int
load(const char *role, int deny)
{
	scmp_filter_ctx ctx = build(role, deny);
	int rc;

	if (ctx == NULL)
		return -1;
	if ((rc = seccomp_load(ctx)) != 0) {
		log_warnx("seccomp %s: load: %s", role, strerror(-rc));
		rc = -1;
	}
	seccomp_release(ctx);
	return rc;
}

/*
 * ctx's program, as seccomp_load() would install it, released: libseccomp
 * 2.5 exports only to a descriptor, so through a non-blocking pipe (a
 * program too large for it fails instead of blocking). role names it in
 * the log.
 */
int
sc_export(scmp_filter_ctx ctx, const char *role, struct sc_prog *p)
{
	size_t got = 0;
	ssize_t n;
	int pfd[2], rc = -1;

	if (pipe2(pfd, O_CLOEXEC | O_NONBLOCK) == -1) {
		seccomp_release(ctx);
		return -1;
	}
	if (seccomp_export_bpf(ctx, pfd[1]) == 0) {
		close(pfd[1]);
		pfd[1] = -1;
		while (got < sizeof(p->insns) && (n = read(pfd[0],
		    (char *)p->insns + got, sizeof(p->insns) - got)) > 0)
			got += (size_t)n;
		if (got > 0 && got < sizeof(p->insns) &&
		    got % sizeof(p->insns[0]) == 0)
			rc = 0;
	}
	if (pfd[1] != -1)
		close(pfd[1]);
	close(pfd[0]);
	seccomp_release(ctx);
	/* None at all on failure: never a part of one to install. */
	p->fprog.len = rc == 0 ? (unsigned short)(got / sizeof(p->insns[0])) : 0;
	p->fprog.filter = p->insns;
	if (rc == -1)
		log_warnx("seccomp %s: cannot export the filter", role);
	return rc;
}

/* The role's allow filter, compiled once to be installed many times. */
int
sc_compile_allow(const char *role, struct sc_prog *p)
{
	scmp_filter_ctx ctx = build(role, 0);

	return ctx == NULL ? -1 : sc_export(ctx, role, p);
}

/* What seccomp_load() does with CTL_NNP: no_new_privs, then the filter. */
int
sc_install(const struct sc_prog *p)
{
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1)
		return -1;
	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0,
	    &p->fprog) == 0 ? 0 : -1;
}

int
sc_load_allow(const char *role)
{
	return load(role, 0);
}

int
sc_load_deny(const char *role)
{
	return load(role, 1);
}
