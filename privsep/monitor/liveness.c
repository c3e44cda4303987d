/*
 * liveness.c - is a sandbox's container still there and listening?
 * runs in: the monitor's loop (root, monitor allowlist); never waits
 *
 * A hit's check (rt_cli_ops.is_live) and a warm container's at a claim
 * (warm.c), from the loop, so each is a poll() of a pidfd that does not
 * wait, a stat, or a non-blocking connect; never a runtime call. Whether
 * a tcp service still takes logins is a worker's to find, now and then
 * (login.c); what it found is read here.
 */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

#include "iox.h"
#include "liveness.h"
#include "login.h"
#include "proc.h"
#include "record.h"
#include "runtime.h"

#define LIVE_PORT_FRESH_MS 1000	/* see rt_is_live() */

bool
rt_pid_alive(int pidfd)
{
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	/* A pidfd turns readable when its process exits. */
	return pidfd >= 0 && poll(&pfd, 1, 0) == 0;
}

/*
 * A warm container at a claim: its process lives (the pidfd) and, on
 * unix, its socket file is there. No connect: it was probed ready when it
 * joined the pool, and a connect makes a postmaster fork a backend, which
 * eight claims at once pay for on the host's cores. A service that has
 * stopped listening is found by the sandbox's first hit (its port check
 * is due: port_seen_ms 0).
 */
bool
rt_warm_alive(const struct sbx_svc *s)
{
	struct stat st;

	if (!rt_pid_alive(s->pidfd))
		return false;
	return s->conn.socket[0] == '\0' ||
	    (stat(s->conn.socket, &st) == 0 && S_ISSOCK(st.st_mode));
}


/*
 * A hit's liveness check. The pidfd, every time: a container killed, OOM-
 * killed or removed by hand is seen at once, for one poll(). The connect
 * (to the Unix socket, or through the runtime's port forwarding, waking
 * the service) is most of a hit's cost, so it is made when the last one
 * that worked is older than LIVE_PORT_FRESH_MS: a broken forwarding or a
 * service that stopped listening is found within that time
 * (bench/README.md).
 */
bool
rt_is_live(void *impl, struct sbx_sandbox *sb)
{
	int64_t now = now_ms();
	struct sbx_svc *s;
	size_t i;

	for (i = 0; i < sb->nservices; i++)
		if (!rt_pid_alive(sb->svc[i].pidfd) || sb->svc[i].login_failed)
			return false;
	for (i = 0; i < sb->nservices; i++) {
		s = &sb->svc[i];
		if (now - s->port_seen_ms < LIVE_PORT_FRESH_MS)
			continue;
		if (!rt_listening(&s->conn))
			return false;
		s->port_seen_ms = now;
	}
	for (i = 0; i < sb->nservices; i++)
		login_spawn(impl, sb, i);
	record_touch(sb, now);
	return true;
}
