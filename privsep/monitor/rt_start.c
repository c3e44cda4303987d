/*
 * rt_start.c - the runtime at the monitor's start, before its loop, when
 * waiting is allowed: the host's lock (one monitor per host and runtime),
 * and adoption's removals (adopt.c), a job in a worker that the monitor
 * waits for; and sbx-monitor --purge, which takes the same lock.
 * runs in: the monitor at its start, and sbx-monitor --purge (root,
 *   unfiltered)
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "proc.h"
#include "rt_start.h"
#include "rtname.h"
#include "runtime.h"

/*
 * Container names, labels and adoption's sweep of orphans take every sbx
 * container the runtime lists to be this monitor's: a second monitor on
 * the host (another config, another state_dir) would discard the first's
 * sandboxes as orphans at its start. So one monitor per host and
 * runtime: a lock in /run (root's alone; /run/lock is anyone's), held
 * for the monitor's life on a descriptor no child keeps past its exec,
 * waited for a few seconds for a monitor that is still exiting.
 */
#define HOST_LOCK_WAIT	50	/* tries, 100 ms apart */

static int	host_lock = -1;		/* held open: the lock */
static char	host_lock_path[64];

/* Our pid in the lock, for the line a second monitor is refused with. */
static void
host_lock_pid(void)
{
	char pid[16];
	int n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());

	if (ftruncate(host_lock, 0) == -1 ||
	    pwrite(host_lock, pid, (size_t)n, 0) != n)
		log_warn("%s: cannot write our pid", host_lock_path);
}

int
runtime_lock_host(const struct sbx_config *cfg, char *err, size_t errlen)
{
	const char *flavour = rt_is_docker(cfg) ? "docker" : "podman";
	const char *path = host_lock_path;
	char pid[16] = "";
	int fd, i;

	snprintf(host_lock_path, sizeof(host_lock_path),
	    "/run/sbx-monitor.%s.lock", flavour);
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
	    0600)) == -1) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < HOST_LOCK_WAIT; i++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
			host_lock = fd;
			host_lock_pid();
			return 0;
		}
		if (errno != EWOULDBLOCK)
			break;
		usleep(100000);
	}
	if (pread(fd, pid, sizeof(pid) - 1, 0) <= 0)
		strlcpy(pid, "?", sizeof(pid));
	pid[strcspn(pid, "\n")] = '\0';
	snprintf(err, errlen, "another sbx-monitor (pid %s) manages the %s "
	    "containers of this host (%s); one monitor per host and runtime, "
	    "or the second would discard the first's sandboxes", pid, flavour,
	    path);
	close(fd);
	return -1;
}

/* The lock's descriptor came through fork(): the lock is ours still
 * (it belongs to the open file), only the pid in it changes. */
void
runtime_lock_moved(void)
{
	if (host_lock != -1)
		host_lock_pid();
}

/* Remove what adoption discarded, with its directories, in a worker. */
int
runtime_remove(const struct sbx_config *cfg, const struct rt_gone *gone,
    size_t n)
{
	if (n == 0)
		return 0;
	return worker_spawn_wait(JOB_REMOVE, 0, gone, n * sizeof(*gone), -1,
	    now_ms() + (int64_t)cfg->runtime_timeout * 1000 * (int64_t)(n + 1));
}

/*
 * sbx-monitor --purge: every container, record and socket directory of
 * sbx's on this host, removed by a worker (JOB_PURGE) that says each on
 * our stdout. Only with the host's lock: a monitor that serves would be
 * left with sandboxes that are no more. The exit status.
 */
int
runtime_purge(const struct sbx_config *cfg)
{
	char err[512];
	int out, rc;

	if (runtime_lock_host(cfg, err, sizeof(err)) == -1) {
		log_warnx("%s: stop it before --purge", err);
		return 1;
	}
	/* The worker's fd 3: its stdout is /dev/null, ours is the admin's. */
	if ((out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3)) == -1) {
		log_warn("stdout");
		return 1;
	}
	rc = worker_spawn_wait(JOB_PURGE, 0, NULL, 0, out, now_ms() +
	    (int64_t)cfg->runtime_timeout * 1000 * PURGE_CALLS);
	close(out);
	if (rc == -1)
		log_warnx("the purge did not finish (what failed is said "
		    "above); run it again");
	return rc == 0 ? 0 : 1;
}
