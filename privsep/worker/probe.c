/*
 * probe.c - is the service really answering? The prober's fork, its
 * confinement and its drop; what it asks the service is probe_wire.c's.
 * runs in: sbx-worker's JOB_LOGIN and JOB_WARM_START and a provision's
 *   service children (root, runtime deny filter), and the prober they fork
 *   (root until its drop, then the sandbox's prober uid, probe allowlist)
 *
 * A published port accepts TCP before the service does (the runtime's
 * proxy, or postgres's temporary init server), so readiness is judged
 * at protocol level (probe_wire.c). The bytes read come from a tenant's
 * container, so the prober is a fork that, while root, leaves the
 * host's network for a namespace of its own and takes the socket's
 * directory as its root (drop.c's drop_network: no other address, no
 * other socket path, as the session child), then drops to a uid no
 * other process of the host has (the top of the service's own host uid
 * range, which its image never uses: provision.c), is made non-dumpable
 * (checked), and loads the probe filter first. A tcp service is reached
 * through a relay (relay.c) on the namespace's one abstract address.
 * Its stdio is /dev/null: the verdict is its exit status, and a prober
 * the service's bytes subverted writes nothing a log or a parent reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <sys/prctl.h>

#include "drop.h"
#include "iox.h"
#include "log.h"
#include "probe.h"
#include "probe_wire.h"
#include "relay.h"
#include "scfilter.h"

#define PAUSE_MS	10	/* between readiness attempts; a by-hand poll uses 10 too */

/*
 * While root: a network namespace of the prober's own, with the socket's
 * directory as its root (an empty one and a relay for tcp, as uid:gid),
 * then stdio onto /dev/null.
 */
static int
isolate(const struct probe_target *t, uid_t uid, gid_t gid)
{
	int null, rc;

	if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) == -1)
		return -1;
	rc = relay_confine(t->dir, t->port, uid, gid, NULL);
	if (rc == 0 && (dup2(null, STDIN_FILENO) == -1 ||
	    dup2(null, STDOUT_FILENO) == -1 || dup2(null, STDERR_FILENO) == -1))
		rc = -1;
	close(null);
	return rc;
}

static void __attribute__((noreturn))
prober(const struct probe_target *t, uid_t uid, gid_t gid, int64_t deadline,
    pid_t parent)
{
	struct timespec pause = { 0, PAUSE_MS * 1000000L };

	/* Only stdio: the pipes of the process that forked us carry results
	 * the monitor trusts (a service's, a warm start's), and a prober
	 * that the service's bytes subverted must not write them. Not
	 * dumpable: nothing of the same uid may ptrace it or read its
	 * memory (the password it holds), whatever the uid change left.
	 * The parent-death signal comes after the uid change, which clears
	 * it: a prober never outlives the process waiting for it. */
	closefrom(3);
	if (isolate(t, uid, gid) == -1 ||
	    drop_to_ids(uid, gid, NULL) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0 ||
	    prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent ||
	    sc_load_allow("probe") == -1)
		_exit(PROBE_ERROR);
	while (now_ms() < deadline) {
		if (probe_wire_once(t, deadline) == 0)
			_exit(PROBE_READY);
		nanosleep(&pause, NULL);
	}
	_exit(PROBE_TIMEOUT);
}

enum probe_verdict
probe_ready(const struct probe_target *t, uid_t uid, gid_t gid,
    int64_t deadline)
{
	pid_t pid, parent = getpid();
	int status;

	if ((pid = fork()) == -1)
		return PROBE_ERROR;
	if (pid == 0)
		prober(t, uid, gid, deadline, parent);
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return PROBE_ERROR;
	if (!WIFEXITED(status))
		return PROBE_ERROR;
	return (enum probe_verdict)WEXITSTATUS(status);
}
