/*
 * probe.c - prove each role's seccomp filter, one syscall at a time, in
 * the manner of bubblewrap's try-syscall.
 *
 * For every (role, check) pair the runner forks twice: once with the
 * role's set-up but no filter (the "unfiltered" column, what the kernel
 * itself answers), once with the filter the daemons install, through the
 * same shared/scfilter.c calls and in the same order (a session child
 * drops before its filter but after the worker's deny list: the order of
 * stacked filters does not change what they allow):
 *
 *   broker   drop_to_ids(nobody's ids), sc_load_allow("broker")
 *   child    the broker's, then sc_load_allow("child") stacked on it
 *   probe    drop_network (a network namespace and a root of its own),
 *            drop_to_ids(nobody's ids), sc_load_allow("probe"); its
 *            unfiltered column is the uid drop alone
 *   runtime  root, sc_load_deny("runtime") (the worker's deny list)
 *   session  drop_network (a network namespace and a root of its own),
 *            drop_to_ids(nobody's ids), the worker's deny list, then
 *            sc_load_allow("session") (a worker's session child); its
 *            unfiltered column is the uid drop alone
 *   monitor  root, sc_load_allow("monitor") (monitor_confine)
 *   job      drop_to_ids(nobody's ids), the worker's deny list, then
 *            sc_load_allow("job") (a parsing job after its drop to
 *            sbx-job, privsep/worker/jobuser.c); its expectations are a
 *            table of their own, job_want, by check name
 *
 * Each check is a raw syscall(2) with harmless arguments (a libc wrapper
 * may make another syscall than the one named). The filtered process must
 * die of SIGSYS, fail with the filter's errno, or, for what the role is
 * allowed, answer exactly as the unfiltered one did. A table is printed;
 * any mismatch fails the run.
 *
 * usage: sbx-seccomp-probe [role [check]]
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/kcmp.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <stddef.h>
#include <time.h>
#include <unistd.h>

#include "drop.h"
#include "drop_user.h"
#include "log.h"
#include "scfilter.h"

#define NOPE	"/nonexistent-sbx-probe"
#define NROLES	7

enum { BROKER, CHILD, PROBE, RUNTIME, SESSION, MONITOR, JOB };
static const char *const role_name[NROLES] = { "broker", "child", "probe",
    "runtime", "session", "monitor", "job" };

/* What the filtered call must do. UNREACH: a connect that the
 * unfiltered process makes is killed or fails. */
enum { KILL = 1, SAME, OK, E_PERM, E_NOSYS, UNREACH };
#define K	KILL
#define S	SAME
#define U	UNREACH

struct check {
	const char	*name;
	long		(*call)(void);
	int		 want[NROLES];	/* broker, child, probe, runtime, session,
					   monitor */
};

struct outcome {
	int	killed;		/* by this signal, 0 if it returned */
	int	reached;	/* got as far as the call */
	long	ret;
	int	err;
};

static int pipefd[2] = { -1, -1 };	/* made before the filter */

/* Listeners of the runner's, in the host's network and file system:
 * another address than a session's own service. */
static struct sockaddr_in lis_inet = { .sin_family = AF_INET };
static struct sockaddr_un lis_path = { .sun_family = AF_UNIX };
static struct sockaddr_un lis_abstract = { .sun_family = AF_UNIX };
static socklen_t lis_abstract_len;

static void
bye(int code)
{
	/* exit_group itself: _exit and ASan hooks may need more syscalls */
	syscall(SYS_exit_group, code);
}

/* ---- the calls ---------------------------------------------------------- */

static long c_execve(void) { return syscall(SYS_execve, NOPE, NULL, NULL); }
static long c_execveat(void)
{ return syscall(SYS_execveat, AT_FDCWD, NOPE, NULL, NULL, 0); }
static long c_ptrace(void) { return syscall(SYS_ptrace, 0x7fff, 0, 0, 0); }
static long c_mount(void)
{ return syscall(SYS_mount, "none", NOPE, "tmpfs", 0, NULL); }
static long c_umount2(void) { return syscall(SYS_umount2, NOPE, 0); }
static long c_umount2_detach(void)
{ return syscall(SYS_umount2, NOPE, MNT_DETACH); }
static long c_chroot(void) { return syscall(SYS_chroot, NOPE); }
static long c_open(void) { return syscall(SYS_open, "/etc/passwd", O_RDONLY); }
static long c_openat(void)
{ return syscall(SYS_openat, AT_FDCWD, "/etc/passwd", O_RDONLY); }
static long c_setuid(void) { return syscall(SYS_setuid, getuid()); }
static long c_setresuid(void) { return syscall(SYS_setresuid, -1, -1, -1); }
static long c_setgid(void) { return syscall(SYS_setgid, getgid()); }
static long c_capset(void) { return syscall(SYS_capset, NULL, NULL); }
static long c_unshare(void) { return syscall(SYS_unshare, 0); }
static long c_setns(void) { return syscall(SYS_setns, -1, 0); }
static long c_sock_inet(void)
{ return syscall(SYS_socket, AF_INET, SOCK_STREAM, 0); }
static long c_sock_inet6(void)
{ return syscall(SYS_socket, AF_INET6, SOCK_STREAM, 0); }
static long c_sock_unix(void)
{ return syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0); }
static long c_sock_netlink(void)
{ return syscall(SYS_socket, AF_NETLINK, SOCK_RAW, 0); }
static long c_pair_unix(void)
{ int sv[2]; return syscall(SYS_socketpair, AF_UNIX, SOCK_STREAM, 0, sv); }
static long c_pair_inet(void)
{ int sv[2]; return syscall(SYS_socketpair, AF_INET, SOCK_STREAM, 0, sv); }
static long c_bind(void) { return syscall(SYS_bind, -1, NULL, 0); }
static long c_listen(void) { return syscall(SYS_listen, -1, 0); }
static long c_connect(void) { return syscall(SYS_connect, -1, NULL, 0); }
static long
connect_to(int af, const void *addr, socklen_t len)
{
	long s = syscall(SYS_socket, af, SOCK_STREAM, 0);

	return s < 0 ? s : syscall(SYS_connect, s, addr, len);
}
static long c_reach_inet(void)
{ return connect_to(AF_INET, &lis_inet, sizeof(lis_inet)); }
static long c_reach_path(void)
{ return connect_to(AF_UNIX, &lis_path, sizeof(lis_path)); }
static long c_reach_abstract(void)
{ return connect_to(AF_UNIX, &lis_abstract, lis_abstract_len); }
static long c_kexec_load(void)
{ return syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL); }
static long c_kexec_file(void)
{ return syscall(SYS_kexec_file_load, -1, -1, 0, "", 0); }
static long c_bpf(void) { return syscall(SYS_bpf, 0x7fff, NULL, 0); }
static long c_init_module(void)
{ return syscall(SYS_init_module, NULL, 0, ""); }
static long c_finit_module(void)
{ return syscall(SYS_finit_module, -1, "", 0); }
static long c_delete_module(void)
{ return syscall(SYS_delete_module, "sbx_no_such_module", O_NONBLOCK); }
static long c_create_module(void) { return syscall(SYS_create_module, NULL, 0); }
static long c_keyctl(void)
{ return syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_PROCESS_KEYRING, 0); }
static long c_add_key(void)
{ return syscall(SYS_add_key, "user", "sbx", NULL, 0, -999); }
static long c_request_key(void)
{ return syscall(SYS_request_key, "user", "sbx-none", NULL, 0); }
static long c_reboot(void) { return syscall(SYS_reboot, 0, 0, 0, NULL); }
static long c_swapon(void) { return syscall(SYS_swapon, NOPE, 0); }
static long c_swapoff(void) { return syscall(SYS_swapoff, NOPE); }
static long c_acct(void) { return syscall(SYS_acct, NOPE); }
static long c_settimeofday(void)
{ return syscall(SYS_settimeofday, NULL, NULL); }
static long c_clock_settime(void)
{ struct timespec ts = { 0, 0 };
  return syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts); }
static long c_adjtimex(void)
{ struct timex tx = { .modes = 0 }; return syscall(SYS_adjtimex, &tx); }
static long c_clock_adjtime(void)
{ struct timex tx = { .modes = 0 };
  return syscall(SYS_clock_adjtime, CLOCK_REALTIME, &tx); }
static long c_ioperm(void) { return syscall(SYS_ioperm, 0, 0, 0); }
static long c_iopl(void) { return syscall(SYS_iopl, 0); }
static long c_kcmp(void)
{ return syscall(SYS_kcmp, getpid(), getpid(), KCMP_VM, 0, 0); }
static long c_lookup_dcookie(void)
{ return syscall(SYS_lookup_dcookie, 0, NULL, 0); }
static long c_nfsservctl(void) { return syscall(SYS_nfsservctl, 0, NULL, NULL); }
static long c_open_by_handle(void)
{ return syscall(SYS_open_by_handle_at, -1, NULL, 0); }
static long c_perf_event_open(void)
{ return syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0); }
static long c_vm_readv(void)
{ return syscall(SYS_process_vm_readv, getpid(), NULL, 0, NULL, 0, 0); }
static long c_vm_writev(void)
{ return syscall(SYS_process_vm_writev, getpid(), NULL, 0, NULL, 0, 0); }
static long c_quotactl(void) { return syscall(SYS_quotactl, 0, NULL, 0, NULL); }
static long c_syslog(void) { return syscall(SYS_syslog, 10, NULL, 0); }
static long c_uselib(void) { return syscall(SYS_uselib, NULL); }
static long c_userfaultfd(void) { return syscall(SYS_userfaultfd, O_CLOEXEC); }
static long c_vhangup(void) { return syscall(SYS_vhangup); }
static long c_prctl_nnp(void)
{ return syscall(SYS_prctl, PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); }
static long c_prctl_dump(void)
{ return syscall(SYS_prctl, PR_SET_DUMPABLE, 0, 0, 0, 0); }
static long c_clone3(void) { return syscall(SYS_clone3, NULL, 0); }

/* fork by clone(2); the new process leaves at once, the caller reaps it */
static long
clone_with(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, 0, NULL, NULL, 0);

	if (pid == 0)
		bye(0);
	if (pid > 0)
		syscall(SYS_wait4, pid, NULL, 0, NULL);
	return pid > 0 ? 0 : pid;
}
static long c_fork(void) { return clone_with(0); }
static long c_clone_userns(void) { return clone_with(CLONE_NEWUSER); }
static long c_clone_netns(void) { return clone_with(CLONE_NEWNET); }

/* the allowed set: what each role does all day */
static long
c_pipe_rw(void)
{
	char c = 'x';

	if (syscall(SYS_write, pipefd[1], &c, 1) != 1)
		return -1;
	return syscall(SYS_read, pipefd[0], &c, 1) == 1 && c == 'x' ? 0 : -1;
}
static long c_clock_gettime(void)
{ struct timespec ts; return syscall(SYS_clock_gettime, CLOCK_MONOTONIC, &ts); }
static long c_poll(void)
{ struct pollfd p = { pipefd[1], POLLOUT, 0 };
  return syscall(SYS_poll, &p, 1, 0); }
static long c_getpid(void) { return syscall(SYS_getpid) > 0 ? 0 : -1; }
static long c_brk(void) { return syscall(SYS_brk, 0) != 0 ? 0 : -1; }
static long c_mmap(void)
{
	long p = syscall(SYS_mmap, NULL, 4096, PROT_READ | PROT_WRITE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == -1 ? -1 : syscall(SYS_munmap, p, 4096);
}
static long c_nanosleep(void)
{ struct timespec ts = { 0, 1000 }; return syscall(SYS_nanosleep, &ts, NULL); }
static long c_close_bad(void) { return syscall(SYS_close, 9999); }
static long c_accept4(void) { return syscall(SYS_accept4, -1, NULL, NULL, 0); }
static long c_wait4(void) { return syscall(SYS_wait4, -1, NULL, WNOHANG, NULL); }
static long c_kill0(void) { return syscall(SYS_kill, getpid(), 0); }
static long c_seccomp(void) { return syscall(SYS_seccomp, 0x7fff, 0, NULL); }
static long c_prlimit(void)
{ struct rlimit rl; return syscall(SYS_prlimit64, 0, RLIMIT_AS, NULL, &rl); }
static long c_madvise(void) { return syscall(SYS_madvise, NULL, 0, MADV_NORMAL); }
static long c_sigprocmask(void)
{ return syscall(SYS_rt_sigprocmask, SIG_BLOCK, NULL, NULL, 8); }
static long c_gettid(void) { return syscall(SYS_gettid) > 0 ? 0 : -1; }
static long c_fcntl(void) { return syscall(SYS_fcntl, -1, F_GETFL); }
static long c_shutdown(void) { return syscall(SYS_shutdown, -1, SHUT_WR); }
static long c_getsockopt(void)
{ int v; socklen_t l = sizeof(v);
  return syscall(SYS_getsockopt, -1, SOL_SOCKET, SO_ERROR, &v, &l); }
static long c_getsockopt_cred(void)
{ struct ucred c; socklen_t l = sizeof(c);
  return syscall(SYS_getsockopt, -1, SOL_SOCKET, SO_PEERCRED, &c, &l); }
static long c_getsockopt_other(void)
{ int v; socklen_t l = sizeof(v);
  return syscall(SYS_getsockopt, -1, SOL_SOCKET, SO_RCVBUF, &v, &l); }
static long c_sendmsg(void) { return syscall(SYS_sendmsg, -1, NULL, 0); }
static long c_sendto(void) { return syscall(SYS_sendto, -1, "", 0, 0, NULL, 0); }
/* recvmsg reads a spare's channel only (SC_SPARE_FD), never another
 * descriptor such as the agent's socket. */
static long c_recvmsg_spare(void)
{ return syscall(SYS_recvmsg, SC_SPARE_FD, NULL, 0); }
static long c_recvmsg_other(void) { return syscall(SYS_recvmsg, -1, NULL, 0); }
/* A broker child lowers its own priority for its exit, to one value. */
static long c_nice_exit(void)
{ return syscall(SYS_setpriority, PRIO_PROCESS, 0, SC_EXIT_NICE); }
static long c_nice_other(void)
{ return syscall(SYS_setpriority, PRIO_PROCESS, 0, SC_EXIT_NICE + 1); }
static long c_recvfrom(void)
{ char c; return syscall(SYS_recvfrom, -1, &c, 1, 0, NULL, NULL); }

#if defined(__x86_64__)
/* The same getpid through the other ABIs: bad-arch, which is kill. */
static long
c_i386_getpid(void)
{
	long r;

	__asm__ volatile ("int $0x80" : "=a"(r) : "a"(20L) : "memory");
	if (r < 0 && r > -4096) {
		errno = (int)-r;
		return -1;
	}
	return r > 0 ? 0 : -1;
}
static long c_x32_getpid(void)
{ return syscall(0x40000000L | SYS_getpid) > 0 ? 0 : -1; }
#endif

/*
 * Expectations per role: broker, child, probe, runtime, session, monitor.
 * The allowlists
 * kill on anything not listed (and on a listed call whose argument check
 * fails); the runtime deny list answers EPERM, ENOSYS for keyrings, and
 * lets the rest through (podman needs mount, unshare, execve and more).
 */
static const struct check checks[] = {
	{ "execve",		c_execve,	{ K, K, K, S, K, K } },
	{ "execveat",		c_execveat,	{ K, K, K, S, K, K } },
	{ "ptrace",		c_ptrace,	{ K, K, K, E_PERM, K, K } },
	{ "mount",		c_mount,	{ K, K, K, S, K, K } },
	{ "umount2",		c_umount2,	{ K, K, K, S, K, K } },
	{ "umount2(MNT_DETACH)", c_umount2_detach, { K, K, K, S, K, S } },
	{ "chroot",		c_chroot,	{ K, K, K, S, K, K } },
	{ "open",		c_open,		{ K, K, K, OK, K, K } },
	{ "openat",		c_openat,	{ K, K, K, OK, K, OK } },
	{ "setuid",		c_setuid,	{ K, K, K, OK, K, K } },
	{ "setresuid",		c_setresuid,	{ K, K, K, OK, K, K } },
	{ "setgid",		c_setgid,	{ K, K, K, OK, K, K } },
	{ "capset",		c_capset,	{ K, K, K, S, K, K } },
	{ "unshare",		c_unshare,	{ K, K, K, OK, K, K } },
	{ "setns",		c_setns,	{ K, K, K, S, K, K } },
	{ "clone(fork)",	c_fork,		{ OK, K, K, OK, K, OK } },
	{ "clone(NEWUSER)",	c_clone_userns,	{ K, K, K, OK, K, K } },
	{ "clone(NEWNET)",	c_clone_netns,	{ K, K, K, OK, K, K } },
	{ "clone3",		c_clone3,	{ E_NOSYS, E_NOSYS, E_NOSYS, S, E_NOSYS, E_NOSYS } },
	{ "socket(AF_INET)",	c_sock_inet,	{ K, K, K, OK, K, OK } },
	{ "socket(AF_INET6)",	c_sock_inet6,	{ K, K, K, OK, K, OK } },
	{ "socket(AF_UNIX)",	c_sock_unix,	{ K, K, OK, OK, OK, OK } },
	{ "socket(AF_NETLINK)",	c_sock_netlink,	{ K, K, K, OK, K, K } },
	{ "socketpair(AF_UNIX)", c_pair_unix,	{ OK, K, K, OK, K, OK } },
	{ "socketpair(AF_INET)", c_pair_inet,	{ K, K, K, S, K, K } },
	{ "bind",		c_bind,		{ K, K, K, S, K, K } },
	{ "listen",		c_listen,	{ K, K, K, S, K, K } },
	{ "connect",		c_connect,	{ K, K, S, S, S, S } },
	/* a prober and a session reach their own service alone: not
	 * another port, not another Unix socket by path or in the abstract
	 * namespace */
	{ "connect(127.0.0.1)",	c_reach_inet,	{ K, K, U, OK, U, OK } },
	{ "connect(unix path)",	c_reach_path,	{ K, K, U, OK, U, OK } },
	{ "connect(abstract)",	c_reach_abstract, { K, K, U, OK, U, OK } },
	{ "prctl(NO_NEW_PRIVS)", c_prctl_nnp,	{ OK, K, K, OK, K, OK } },
	{ "prctl(SET_DUMPABLE)", c_prctl_dump,	{ K, K, K, OK, K, K } },
	{ "kexec_load",		c_kexec_load,	{ K, K, K, E_PERM, K, K } },
	{ "kexec_file_load",	c_kexec_file,	{ K, K, K, E_PERM, K, K } },
	{ "bpf",		c_bpf,		{ K, K, K, E_PERM, K, K } },
	{ "init_module",	c_init_module,	{ K, K, K, E_PERM, K, K } },
	{ "finit_module",	c_finit_module,	{ K, K, K, E_PERM, K, K } },
	{ "delete_module",	c_delete_module, { K, K, K, E_PERM, K, K } },
	{ "create_module",	c_create_module, { K, K, K, E_PERM, K, K } },
	{ "keyctl",		c_keyctl,	{ K, K, K, E_NOSYS, K, K } },
	{ "add_key",		c_add_key,	{ K, K, K, E_NOSYS, K, K } },
	{ "request_key",	c_request_key,	{ K, K, K, E_NOSYS, K, K } },
	{ "reboot",		c_reboot,	{ K, K, K, E_PERM, K, K } },
	{ "swapon",		c_swapon,	{ K, K, K, E_PERM, K, K } },
	{ "swapoff",		c_swapoff,	{ K, K, K, E_PERM, K, K } },
	{ "acct",		c_acct,		{ K, K, K, E_PERM, K, K } },
	{ "settimeofday",	c_settimeofday,	{ K, K, K, E_PERM, K, K } },
	{ "clock_settime",	c_clock_settime, { K, K, K, E_PERM, K, K } },
	{ "adjtimex",		c_adjtimex,	{ K, K, K, E_PERM, K, K } },
	{ "clock_adjtime",	c_clock_adjtime, { K, K, K, E_PERM, K, K } },
	{ "ioperm",		c_ioperm,	{ K, K, K, E_PERM, K, K } },
	{ "iopl",		c_iopl,		{ K, K, K, E_PERM, K, K } },
	{ "kcmp",		c_kcmp,		{ K, K, K, E_PERM, K, K } },
	{ "lookup_dcookie",	c_lookup_dcookie, { K, K, K, E_PERM, K, K } },
	{ "nfsservctl",		c_nfsservctl,	{ K, K, K, E_PERM, K, K } },
	{ "open_by_handle_at",	c_open_by_handle, { K, K, K, E_PERM, K, K } },
	{ "perf_event_open",	c_perf_event_open, { K, K, K, E_PERM, K, K } },
	{ "process_vm_readv",	c_vm_readv,	{ K, K, K, E_PERM, K, K } },
	{ "process_vm_writev",	c_vm_writev,	{ K, K, K, E_PERM, K, K } },
	{ "quotactl",		c_quotactl,	{ K, K, K, E_PERM, K, K } },
	{ "syslog",		c_syslog,	{ K, K, K, E_PERM, K, K } },
	{ "uselib",		c_uselib,	{ K, K, K, E_PERM, K, K } },
	{ "userfaultfd",	c_userfaultfd,	{ K, K, K, E_PERM, K, K } },
	{ "vhangup",		c_vhangup,	{ K, K, K, E_PERM, K, K } },
	/* allowed */
	{ "read+write(pipe)",	c_pipe_rw,	{ OK, OK, OK, OK, OK, OK } },
	{ "clock_gettime",	c_clock_gettime, { OK, OK, OK, OK, OK, OK } },
	{ "poll",		c_poll,		{ OK, OK, OK, OK, OK, OK } },
	{ "getpid",		c_getpid,	{ OK, OK, K, OK, OK, OK } },
	{ "brk",		c_brk,		{ OK, OK, OK, OK, OK, OK } },
	{ "mmap+munmap",	c_mmap,		{ OK, OK, OK, OK, OK, OK } },
	{ "nanosleep",		c_nanosleep,	{ K, K, OK, OK, OK, K } },
	{ "close(bad fd)",	c_close_bad,	{ S, S, S, S, S, S } },
	{ "fcntl",		c_fcntl,	{ S, S, K, S, S, S } },
	{ "sendto",		c_sendto,	{ S, K, S, S, S, S } },
	{ "recvfrom",		c_recvfrom,	{ K, K, S, S, S, S } },
	{ "sendmsg",		c_sendmsg,	{ S, S, K, S, K, S } },
	{ "recvmsg(fd 3)",	c_recvmsg_spare, { S, S, K, S, K, S } },
	{ "recvmsg(other fd)",	c_recvmsg_other, { K, K, K, S, K, S } },
	{ "setpriority(exit)",	c_nice_exit,	{ S, S, K, S, K, K } },
	{ "setpriority(other)",	c_nice_other,	{ K, K, K, S, K, K } },
	{ "shutdown",		c_shutdown,	{ S, S, K, S, K, S } },
	{ "madvise",		c_madvise,	{ OK, OK, K, OK, OK, OK } },
	{ "rt_sigprocmask",	c_sigprocmask,	{ OK, OK, K, OK, K, OK } },
	{ "gettid",		c_gettid,	{ OK, OK, K, OK, K, OK } },
	{ "getsockopt(SO_ERROR)", c_getsockopt,	{ S, K, K, S, S, S } },
	{ "getsockopt(SO_PEERCRED)", c_getsockopt_cred, { S, K, K, S, S, S } },
	{ "getsockopt(SO_RCVBUF)", c_getsockopt_other, { K, K, K, S, K, K } },
	/* what the broker may do and its child may not */
	{ "accept4",		c_accept4,	{ S, K, K, S, K, K } },
	{ "wait4",		c_wait4,	{ S, K, K, S, K, S } },
	{ "kill(self, 0)",	c_kill0,	{ OK, K, K, OK, K, OK } },
	{ "seccomp",		c_seccomp,	{ S, K, K, S, K, K } },
	{ "prlimit64",		c_prlimit,	{ OK, K, K, OK, K, OK } },
#if defined(__x86_64__)
	{ "getpid(i386 ABI)",	c_i386_getpid,	{ K, K, K, K, K, K } },
	{ "getpid(x32 ABI)",	c_x32_getpid,	{ K, K, K, K, K, K } },
#endif
};
#define NCHECKS	(sizeof(checks) / sizeof(checks[0]))

/*
 * The job role's, for every check above. It keeps a Unix socket and
 * connect (syslog(3) after a daemon restart, nscd, sssd) and openat (NSS
 * reads /etc/passwd and /etc/group as sbx-job): it reaches what sbx-job
 * may reach on the host's file system, and no inet socket at all.
 */
static const struct {
	const char	*name;
	int		 want;
} job_want[] = {
	{ "execve", K }, { "execveat", K }, { "ptrace", K }, { "mount", K },
	{ "umount2", K }, { "umount2(MNT_DETACH)", K }, { "chroot", K }, { "open", K }, { "openat", OK },
	{ "setuid", K }, { "setresuid", K }, { "setgid", K }, { "capset", K },
	{ "unshare", K }, { "setns", K }, { "clone(fork)", K },
	{ "clone(NEWUSER)", K }, { "clone(NEWNET)", K }, { "clone3", E_NOSYS },
	{ "socket(AF_INET)", K }, { "socket(AF_INET6)", K },
	{ "socket(AF_UNIX)", OK }, { "socket(AF_NETLINK)", K },
	{ "socketpair(AF_UNIX)", K }, { "socketpair(AF_INET)", K },
	{ "bind", K }, { "listen", K }, { "connect", S },
	{ "connect(127.0.0.1)", U }, { "connect(unix path)", OK },
	{ "connect(abstract)", OK }, { "prctl(NO_NEW_PRIVS)", OK },
	{ "prctl(SET_DUMPABLE)", K }, { "kexec_load", K },
	{ "kexec_file_load", K }, { "bpf", K }, { "init_module", K },
	{ "finit_module", K }, { "delete_module", K }, { "create_module", K },
	{ "keyctl", K }, { "add_key", K }, { "request_key", K },
	{ "reboot", K }, { "swapon", K }, { "swapoff", K }, { "acct", K },
	{ "settimeofday", K }, { "clock_settime", K }, { "adjtimex", K },
	{ "clock_adjtime", K }, { "ioperm", K }, { "iopl", K }, { "kcmp", K },
	{ "lookup_dcookie", K }, { "nfsservctl", K },
	{ "open_by_handle_at", K }, { "perf_event_open", K },
	{ "process_vm_readv", K }, { "process_vm_writev", K },
	{ "quotactl", K }, { "syslog", K }, { "uselib", K },
	{ "userfaultfd", K }, { "vhangup", K },
	{ "read+write(pipe)", OK }, { "clock_gettime", OK }, { "poll", OK },
	{ "getpid", OK }, { "brk", OK }, { "mmap+munmap", OK },
	{ "nanosleep", K }, { "close(bad fd)", S }, { "fcntl", S },
	{ "sendto", S }, { "recvfrom", S }, { "sendmsg", S },
	{ "recvmsg(fd 3)", S }, { "recvmsg(other fd)", S },	/* nscd's */
	{ "setpriority(exit)", K }, { "setpriority(other)", K },
	{ "shutdown", K }, { "madvise", OK }, { "rt_sigprocmask", OK },
	{ "gettid", K }, { "getsockopt(SO_ERROR)", K },
	{ "getsockopt(SO_PEERCRED)", K }, { "getsockopt(SO_RCVBUF)", K },
	{ "accept4", K }, { "wait4", K }, { "kill(self, 0)", K },
	{ "seccomp", K }, { "prlimit64", K },
	{ "getpid(i386 ABI)", K }, { "getpid(x32 ABI)", K },
};

/* What role must get for c; 0 (a mismatch) if no table says. */
static int
want_of(int role, const struct check *c)
{
	size_t i;

	if (role != JOB)
		return c->want[role];
	for (i = 0; i < sizeof(job_want) / sizeof(job_want[0]); i++)
		if (!strcmp(job_want[i].name, c->name))
			return job_want[i].want;
	return 0;
}

/* The runner's listeners, which the unfiltered roles reach and the
 * prober and the session do not (the broker's and its child's have no
 * socket at all). */
static int
listeners(void)
{
	socklen_t len = sizeof(lis_inet);
	int t, u, a;

	lis_inet.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	snprintf(lis_path.sun_path, sizeof(lis_path.sun_path),
	    "/tmp/sbx-seccomp-probe.%ld.sock", (long)getpid());
	snprintf(lis_abstract.sun_path + 1, sizeof(lis_abstract.sun_path) - 1,
	    "sbx-seccomp-probe.%ld", (long)getpid());
	lis_abstract_len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
	    1 + strlen(lis_abstract.sun_path + 1));
	(void)unlink(lis_path.sun_path);
	if ((t = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(t, (struct sockaddr *)&lis_inet, sizeof(lis_inet)) == -1 ||
	    getsockname(t, (struct sockaddr *)&lis_inet, &len) == -1 ||
	    listen(t, 64) == -1 ||
	    (u = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(u, (struct sockaddr *)&lis_path, sizeof(lis_path)) == -1 ||
	    chmod(lis_path.sun_path, 0666) == -1 || listen(u, 64) == -1 ||
	    (a = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(a, (struct sockaddr *)&lis_abstract, lis_abstract_len) == -1 ||
	    listen(a, 64) == -1) {
		perror("listeners");
		return -1;
	}
	return 0;
}

/* ---- running one check --------------------------------------------------- */

/* The role's process state, then (if filtered) its filters, as installed
 * by broker.c, child.c, probe.c and jobpool.c. */
static int
become(int role, int filtered)
{
	uid_t uid;
	gid_t gid;

	if (role != RUNTIME && role != MONITOR &&
	    user_ids("nobody", &uid, &gid) == -1)
		return -1;
	/* a prober and a session child leave the host's network and file
	 * system while root (probe.c, svc_session.c): part of their
	 * confinement, not their set-up */
	if ((role == PROBE || role == SESSION) && filtered &&
	    drop_network(-1) == -1)
		return -1;
	if (role != RUNTIME && role != MONITOR &&
	    drop_to_ids(uid, gid, NULL) == -1)
		return -1;
	if (!filtered)
		return 0;
	switch (role) {
	case BROKER:
		return sc_load_allow("broker");
	case CHILD:
		if (sc_load_allow("broker") == -1)
			return -1;
		return sc_load_allow("child");
	case PROBE:
		return sc_load_allow("probe");
	case MONITOR:	/* root, its start done (start.c) */
		return sc_load_allow("monitor");
	case SESSION:	/* a worker's child: the runtime list, then its own */
		if (sc_load_deny("runtime") == -1)
			return -1;
		return sc_load_allow("session");
	case JOB:	/* a worker's parsing child: the same */
		if (sc_load_deny("runtime") == -1)
			return -1;
		return sc_load_allow("job");
	default:
		return sc_load_deny("runtime");
	}
}

static void
try_one(int role, const struct check *c, int filtered, int report)
{
	struct { long ret; int err; } r;
	char b = 'b';

	setsid();	/* no controlling tty: vhangup stays harmless */
	if (pipe2(pipefd, O_CLOEXEC) == -1 || become(role, filtered) == -1)
		bye(90);
	if (syscall(SYS_write, report, &b, 1) != 1)
		bye(91);
	errno = 0;
	r.ret = c->call();
	r.err = r.ret < 0 ? errno : 0;
	if (syscall(SYS_write, report, &r, sizeof(r)) != (long)sizeof(r))
		bye(92);
	bye(0);
}

static void
run(int role, const struct check *c, int filtered, struct outcome *o)
{
	struct { long ret; int err; } r;
	char buf[1 + sizeof(r)];
	size_t got = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	if (pipe2(p, O_CLOEXEC) == -1 || (pid = fork()) == -1) {
		perror("fork");
		exit(2);
	}
	if (pid == 0) {
		close(p[0]);
		try_one(role, c, filtered, p[1]);
	}
	close(p[1]);
	while (got < sizeof(buf) &&
	    ((n = read(p[0], buf + got, sizeof(buf) - got)) > 0 ||
	    (n == -1 && errno == EINTR)))
		if (n > 0)
			got += (size_t)n;
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR) {
			perror("waitpid");
			exit(2);
		}
	o->reached = got >= 1;
	if (got == sizeof(buf)) {
		memcpy(&r, buf + 1, sizeof(r));
		o->ret = r.ret;
		o->err = r.err;
	}
	if (WIFSIGNALED(status))
		o->killed = WTERMSIG(status);
	else if (got != sizeof(buf))
		o->killed = -WEXITSTATUS(status);	/* set-up failed */
}

static void
describe(const struct outcome *o, char *s, size_t n)
{
	if (!o->reached)
		snprintf(s, n, "set-up failed (%d)", o->killed);
	else if (o->killed > 0)
		snprintf(s, n, "%s", o->killed == SIGSYS ? "SIGSYS" :
		    strsignal(o->killed));
	else if (o->killed < 0)
		snprintf(s, n, "exit %d", -o->killed);
	else if (o->ret < 0)
		snprintf(s, n, "%s", strerrorname_np(o->err) ?
		    strerrorname_np(o->err) : "errno ?");
	else
		snprintf(s, n, "ok");
}

static const char *
want_name(int w)
{
	switch (w) {
	case KILL:	return "SIGSYS";
	case SAME:	return "as unfiltered";
	case OK:	return "ok";
	case E_PERM:	return "EPERM";
	case UNREACH:	return "unreachable";
	default:	return "ENOSYS";
	}
}

static int
same(const struct outcome *a, const struct outcome *b)
{
	return a->reached && b->reached && a->killed == b->killed &&
	    (a->ret < 0) == (b->ret < 0) && a->err == b->err;
}

static int
matches(int w, const struct outcome *got, const struct outcome *free_)
{
	if (!got->reached || got->killed < 0)
		return 0;
	switch (w) {
	case KILL:
		return got->killed == SIGSYS;
	case SAME:
		return same(got, free_);
	case OK:
		return got->killed == 0 && got->ret >= 0 && same(got, free_);
	case E_PERM:
		return got->killed == 0 && got->ret == -1 && got->err == EPERM;
	case UNREACH:
		return free_->reached && free_->killed == 0 &&
		    free_->ret >= 0 && (got->killed == SIGSYS ||
		    (got->killed == 0 && got->ret < 0));
	default:
		return got->killed == 0 && got->ret == -1 && got->err == ENOSYS;
	}
}

/*
 * A kernel without IA32 emulation (CONFIG_IA32_EMULATION off, or
 * ia32_emulation=0) faults int 0x80 before any filter sees it: the ABI
 * is not there to filter, with or without ours. Said, not counted.
 */
static int
abi_absent(const struct check *c, const struct outcome *got,
    const struct outcome *free_)
{
	return strstr(c->name, " ABI)") != NULL && got->reached &&
	    free_->reached && got->killed == SIGSEGV &&
	    free_->killed == SIGSEGV;
}

int
main(int argc, char *argv[])
{
	struct outcome got, free_;
	char g[64], u[64];
	int counts[NROLES] = { 0 }, bad = 0, weak = 0, absent = 0, role, ok;
	size_t i;

	log_init("sbx-seccomp-probe", 1);
	if (geteuid() != 0) {
		/* the roles are nobody (dropped from root) and root */
		printf("sbx-seccomp-probe: skipped, needs root\n");
		return 0;
	}
	signal(SIGPIPE, SIG_IGN);
	if (listeners() == -1)
		return 2;
	printf("%-8s %-22s %-14s %-14s %-14s\n", "role", "syscall", "expected",
	    "got", "unfiltered");
	for (role = 0; role < NROLES; role++) {
		if (argc > 1 && strcmp(argv[1], role_name[role]) != 0)
			continue;
		for (i = 0; i < NCHECKS; i++) {
			const struct check *c = &checks[i];
			int w = want_of(role, c);

			if (argc > 2 && strcmp(argv[2], c->name) != 0)
				continue;
			run(role, c, 0, &free_);
			run(role, c, 1, &got);
			if (abi_absent(c, &got, &free_)) {
				printf("%-8s %-22s %-14s %-14s %-14s  (no such "
				    "ABI in this kernel)\n", role_name[role],
				    c->name, want_name(w), "SIGSEGV", "SIGSEGV");
				absent++;
				continue;
			}
			ok = w != 0 && matches(w, &got, &free_);
			describe(&got, g, sizeof(g));
			describe(&free_, u, sizeof(u));
			/* an errno the kernel gives anyway proves less */
			if (ok && (w == E_PERM || w == E_NOSYS) &&
			    same(&got, &free_))
				weak++;
			printf("%-8s %-22s %-14s %-14s %-14s%s\n",
			    role_name[role], c->name, want_name(w), g, u,
			    ok ? "" : "  MISMATCH");
			counts[role]++;
			bad += !ok;
		}
	}
	printf("checked:");
	for (role = 0; role < NROLES; role++)
		printf(" %s %d", role_name[role], counts[role]);
	printf("; %d mismatches; %d errno results the kernel gives unfiltered "
	    "too; %d checks of an ABI this kernel lacks\n", bad, weak, absent);
	(void)unlink(lis_path.sun_path);
	return bad ? 1 : 0;
}
