/*
 * drop_user.c - drop_to_ids() by user name, for the monitor's side (the
 * readiness probe, the broker's command line).
 * runs in: the prober before it drops, the broker's fork before its exec
 *
 * Both are root then: the prober forked from a worker (runtime deny
 * filter), the broker's fork from the monitor (unfiltered). Kept apart
 * from drop.c so the statically linked broker never pulls in getpwnam
 * and NSS.
 */
#include <pwd.h>
#include <stddef.h>

#include "drop_user.h"
#include "log.h"

int
user_ids(const char *user, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;

	if ((pw = getpwnam(user)) == NULL || pw->pw_uid == 0) {
		log_warnx("drop: user %s unknown or root", user);
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = pw->pw_gid;
	return 0;
}

int
drop_privileges(const char *user, const char *root_dir)
{
	uid_t uid;
	gid_t gid;

	if (user_ids(user, &uid, &gid) == -1)
		return -1;
	return drop_to_ids(uid, gid, root_dir);
}
