/*
 * relay.c - a network namespace and a root of one's own, and the relay
 * that joins it to a service's port on the host's 127.0.0.1 (the bytes it
 * passes once dropped: relay_loop.c).
 * runs in: the prober and a session child (root until their drop:
 *   relay_confine, relay_start; then the sandbox's prober uid, probe or
 *   session allowlist: relay_addr), and the relay they fork (root until its
 *   drop, then the same uid, runtime deny filter)
 *
 * The session child and the prober read a tenant's bytes, so they leave
 * the host's network and take the service's socket directory as their
 * root (relay_confine, drop.c's drop_network): there 127.0.0.1 is nobody's
 * and no abstract socket of the host's (sbx.sock's peers, dbus's) can be
 * named. A tcp service is reached through this relay: it listens on the
 * one abstract address of that namespace, goes back to the host's
 * network, and joins each connection to 127.0.0.1 at the published
 * port, which the guard opens to that uid (guard.c). It reads nothing of
 * what it passes on, holds no descriptor but its listener, and dies with
 * the process that forked it.
 */
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "drop.h"
#include "log.h"
#include "relay.h"
#include "relay_loop.h"

/* Here, not in relay_loop.c: relay_start names the address as root, the
 * prober and the session child connect to it once dropped. */
socklen_t
relay_addr(struct sockaddr_un *a, uint16_t port)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path + 1, sizeof(a->sun_path) - 1,
	    RELAY_HOST "/.s.PGSQL.%u", (unsigned)port);
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
	    strlen(a->sun_path + 1));
}

int
relay_start(uint16_t port, int hostns, uid_t uid, gid_t gid)
{
	struct sockaddr_un a;
	socklen_t len = relay_addr(&a, port);
	pid_t parent = getpid(), pid;
	int l;

	if ((l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(l, (struct sockaddr *)&a, len) == -1 || listen(l, 4) == -1 ||
	    (pid = fork()) == -1) {
		log_warn("relay: 127.0.0.1:%u", (unsigned)port);
		if (l != -1)
			close(l);
		return -1;
	}
	if (pid > 0) {
		close(l);
		return 0;
	}
	/* Nothing of the parent's but the listener: not its channel to the
	 * worker, not its stdio. */
	if (setns(hostns, CLONE_NEWNET) == -1 ||
	    dup2(l, STDIN_FILENO) == -1)
		_exit(2);
	closefrom(STDOUT_FILENO);
	if (drop_to_ids(uid, gid, NULL) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)
		_exit(2);
	relay_loop(STDIN_FILENO, port);
}

int
relay_confine(const char *dir, uint16_t port, uid_t uid, gid_t gid,
    gid_t *dir_gid)
{
	struct stat st;
	int fd = -1, hostns = -1, rc = -1;

	if (dir != NULL ? (fd = open(dir, O_PATH | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 : (hostns =
	    open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)) == -1)
		log_warn("confine: %s", dir != NULL ? dir : "the host's network");
	else if ((rc = drop_network(fd)) == 0 && hostns != -1)
		rc = relay_start(port, hostns, uid, gid);
	if (rc == 0 && fd != -1 && dir_gid != NULL && st.st_gid != 0)
		*dir_gid = st.st_gid;
	if (fd != -1)
		close(fd);
	if (hostns != -1)
		close(hostns);
	return rc;
}
