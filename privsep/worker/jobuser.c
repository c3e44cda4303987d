/*
 * jobuser.c - the parsing jobs' uid: sbx-job, a system user of its own
 * that owns no file and runs nothing else.
 * runs in: sbx-worker's JOB_CONFIG, JOB_RELOAD, JOB_METRICS, JOB_LOG and
 *   JOB_BROKERLOG (root until their drop, then sbx-job, runtime deny filter
 *   and job allowlist)
 *
 * A job that parses a file or formats one opens what it needs as root,
 * then drops here: the ids are looked up by name while still root (as
 * OpenSSH looks up its privsep user), the drop is drop.c's, each step
 * read back, and the job allowlist (policy/seccomp/job.list) goes on top
 * of the runtime deny filter the job already has. Anything that fails
 * ends the job with one line that names it: no parse runs as root.
 */
#include <errno.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "drop.h"
#include "job.h"
#include "jobuser.h"
#include "log.h"
#include "scfilter.h"

int
jobuser_find(uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	if ((pw = getpwnam(JOB_USER)) == NULL) {
		log_warnx("user %s does not exist: create it with `useradd "
		    "--system --no-create-home --shell /usr/sbin/nologin %s`",
		    JOB_USER, JOB_USER);
		return -1;
	}
	if (pw->pw_uid == 0 || pw->pw_gid == 0) {
		log_warnx("user %s is root (uid %u, gid %u): it must be a "
		    "user of its own", JOB_USER, (unsigned)pw->pw_uid,
		    (unsigned)pw->pw_gid);
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

/* The drop; with parent, this process then dies with it (the uid change
 * clears a parent-death signal set before). */
static int
drop(pid_t parent)
{
	uid_t uid;
	gid_t gid;

	if (jobuser_find(&uid, &gid) == -1)
		return -1;
	if (drop_to_ids(uid, gid, NULL) == -1)
		return -1;	/* drop.c said which step */
	/* Nothing of the same uid may read its memory: sbx-job runs every
	 * parsing job, each with its own files. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1 ||
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) != 0) {
		log_warnx("drop to %s: still dumpable", JOB_USER);
		return -1;
	}
	if (parent != 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1 ||
	    getppid() != parent)) {
		log_warnx("drop to %s: the parent is gone", JOB_USER);
		return -1;
	}
	if (geteuid() == 0 || getuid() == 0) {
		log_warnx("drop to %s: still root", JOB_USER);
		return -1;
	}
	if (sc_load_allow("job") == -1) {
		log_warnx("drop to %s: no job allowlist", JOB_USER);
		return -1;
	}
	return 0;
}

int
jobuser_drop(void)
{
	return drop(0);
}

/*
 * The lines are the monitor's, or the broker's it started: under its name
 * and pid, which they always had. Connected before the drop; glibc
 * connects again (a Unix socket, which the allowlist keeps) if the
 * daemon restarts.
 */
int
jobuser_drop_syslog(bool open)
{
	static char ident[32];

	if (open) {
		snprintf(ident, sizeof(ident), "sbx-monitor[%ld]",
		    (long)getppid());
		closelog();
		tzset();
		openlog(ident, LOG_NDELAY, LOG_DAEMON);
	}
	return jobuser_drop();
}

int
jobuser_fork(int close_fd, int (*fn)(void *), void *arg)
{
	pid_t pid, parent = getpid();
	int status;

	fflush(NULL);
	if ((pid = fork()) == -1) {
		log_warn("fork");
		return -1;
	}
	if (pid == 0) {
		if (close_fd != -1)
			close(close_fd);
		if (drop(parent) == -1)
			_exit(1);
		status = fn(arg);
		fflush(NULL);
		_exit(status);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}
