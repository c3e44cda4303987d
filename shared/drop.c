/*
 * drop.c - become an unprivileged uid for good, and prove it.
 * runs in: the broker (root until its drop, then broker user, unfiltered); in
 *   sbx-worker, the prober, a session child and a relay (root until their
 *   drop, then the sandbox's prober uid, runtime deny filter), and the
 *   parsing jobs (root until their drop, then sbx-job, runtime deny filter:
 *   privsep/worker/jobuser.c)
 *
 * Ids, not names: the broker is linked statically and must not need NSS;
 * the monitor resolves broker_user and passes the numbers (drop_user.c
 * has the by-name front for processes that may look users up).
 *
 * Order matters: the bounding set can only be emptied while we still hold
 * CAP_SETPCAP, and chroot needs CAP_SYS_CHROOT, so both come before the
 * uid change. After each step we read the state back rather than trust a
 * return code: a drop that did not happen fails closed.
 */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/capability.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "drop.h"
#include "log.h"

static int
drop_bounding_set(void)
{
	cap_value_t c;

	for (c = 0; cap_valid(c); c++)
		if (cap_drop_bound(c) == -1 && errno != EINVAL) {
			log_warn("cap_drop_bound(%d)", (int)c);
			return -1;
		}
	return 0;
}

static int
verify_ids(uid_t uid, gid_t gid)
{
	uid_t ru, eu, su;
	gid_t rg, eg, sg, groups[2];

	if (getresuid(&ru, &eu, &su) == -1 || getresgid(&rg, &eg, &sg) == -1)
		return -1;
	if (ru != uid || eu != uid || su != uid ||
	    rg != gid || eg != gid || sg != gid)
		return -1;
	if (getgroups(2, groups) != 1 || groups[0] != gid)
		return -1;
	/* The saved ids are gone if root cannot be regained. */
	if (setuid(0) != -1 || setgid(0) != -1)
		return -1;
	return 0;
}

static int
clear_capabilities(void)
{
	cap_t empty, now;
	int same;

	if ((empty = cap_init()) == NULL)
		return -1;
	if (cap_set_proc(empty) == -1 || cap_reset_ambient() == -1) {
		cap_free(empty);
		return -1;
	}
	if ((now = cap_get_proc()) == NULL) {
		cap_free(empty);
		return -1;
	}
	same = cap_compare(empty, now) == 0;
	cap_free(now);
	cap_free(empty);
	return same ? 0 : -1;
}

int
drop_to_ids(uid_t uid, gid_t gid, const char *root_dir)
{
	if (uid == 0 || gid == 0) {
		log_warnx("drop: refusing to drop to uid %u gid %u",
		    (unsigned)uid, (unsigned)gid);
		return -1;
	}
	if (root_dir != NULL && (chroot(root_dir) == -1 || chdir("/") == -1)) {
		log_warn("drop: chroot %s", root_dir);
		return -1;
	}
	if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) == -1) {
		log_warn("drop: keepcaps");
		return -1;
	}
	if (drop_bounding_set() == -1)
		return -1;
	if (setgroups(1, &gid) == -1 || setresgid(gid, gid, gid) == -1 ||
	    setresuid(uid, uid, uid) == -1) {
		log_warn("drop: set ids to %u:%u", (unsigned)uid, (unsigned)gid);
		return -1;
	}
	if (verify_ids(uid, gid) == -1) {
		log_warnx("drop: ids did not change to %u:%u", (unsigned)uid,
		    (unsigned)gid);
		return -1;
	}
	if (clear_capabilities() == -1) {
		log_warnx("drop: capabilities remain");
		return -1;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1 ||
	    prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		log_warnx("drop: no_new_privs not set");
		return -1;
	}
	return 0;
}

int
drop_network(int dirfd)
{
	char tmp[] = "/tmp/sbx-root.XXXXXX";
	int fd = dirfd, rc = -1;

	if (unshare(CLONE_NEWNET) == -1) {
		log_warn("drop: a network namespace");
		return -1;
	}
	/* Removed while open: lookups in it find nothing, and nothing can
	 * be made in a directory that is gone. */
	if (fd == -1 && (mkdtemp(tmp) == NULL || (fd = open(tmp, O_RDONLY |
	    O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) == -1 || rmdir(tmp) == -1)) {
		log_warn("drop: an empty root");
		if (fd != -1)
			close(fd);
		return -1;
	}
	if (fchdir(fd) == 0 && chroot(".") == 0 && chdir("/") == 0)
		rc = 0;
	else
		log_warn("drop: chroot");
	if (fd != dirfd)
		close(fd);
	return rc;
}
