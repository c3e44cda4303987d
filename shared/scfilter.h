/*
 * scfilter.h - seccomp filters built from policy/seccomp/<role>.list.
 * runs in: the monitor as it confines itself (root), a worker's fork of the
 *   spawner (root, unfiltered); in sbx-worker, JOB_DATA, JOB_WARM_START and a
 *   provision's service children, which start sessions, and a listing's child
 *   (root, runtime deny filter), the prober and a session child after their
 *   drop (the sandbox's prober uid, runtime deny filter), the parsing jobs at
 *   their drop (sbx-job, runtime deny filter: privsep/worker/jobuser.c); the
 *   broker (broker user, unfiltered) and its children (broker user, broker
 *   allowlist)
 */
#ifndef SBX_SCFILTER_H
#define SBX_SCFILTER_H

#include <stddef.h>
#include <linux/filter.h>
#include <seccomp.h>

struct sc_rule {
	const char	*name;
	const char	*reason;
};

struct sc_list {
	const char		*role;
	const struct sc_rule	*rules;
	size_t			 n;
};

const struct sc_list *sc_list_find(const char *role);
const struct sc_list *sc_lists_all(size_t *n);
/* Default kill, the role's syscalls allowed: broker, child, probe. */
int	sc_load_allow(const char *role);

/* The one descriptor recvmsg may read: a broker spare's channel, on
 * which its agent socket comes (broker/spare.c). */
#define SC_SPARE_FD	3
/* The one nice value setpriority may set: a broker child's, for its
 * exit (broker/child.c). */
#define SC_EXIT_NICE	10
/* Default allow, the role's syscalls refused with an errno: runtime. */
int	sc_load_deny(const char *role);

/*
 * An allow filter compiled once and installed many times: the broker
 * compiles the child's filter before it confines itself, and each
 * per-connection child installs it with one seccomp(2) call instead of
 * building it again with libseccomp.
 */
#define SC_PROG_MAX	1024
struct sc_prog {
	struct sock_fprog	fprog;
	struct sock_filter	insns[SC_PROG_MAX];
};
int	sc_compile_allow(const char *role, struct sc_prog *);
/* Any libseccomp filter's program, exported; ctx is released. */
int	sc_export(scmp_filter_ctx ctx, const char *role, struct sc_prog *);
int	sc_install(const struct sc_prog *);

#endif
