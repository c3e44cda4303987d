/*
 * probe.h - protocol-level readiness of a service on its socket or port.
 * runs in: sbx-worker's JOB_LOGIN and JOB_WARM_START and a provision's
 *   service children (root, runtime deny filter), and the prober they fork
 *   (root until its drop, then the sandbox's prober uid, probe allowlist)
 */
#ifndef SBX_PROBE_H
#define SBX_PROBE_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"

struct probe_target {
	enum probe_kind	kind;
	uint16_t	port;		/* on 127.0.0.1; used without a dir */
	const char	*dir;		/* the socket's directory, or NULL */
	const char	*socket_name;	/* the socket's name in dir */
	const char	*user;
	const char	*database;
	const char	*password;
};

enum probe_verdict { PROBE_READY = 0, PROBE_TIMEOUT = 1, PROBE_ERROR = 2 };

/* Fork a prober confined to uid:gid (neither 0), not dumpable, under the
 * probe allowlist, and wait for its verdict. */
enum probe_verdict probe_ready(const struct probe_target *, uid_t, gid_t,
		    int64_t deadline);

#endif
