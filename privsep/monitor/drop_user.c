/*
 * drop_user.c - broker_user's uid and gid, for the broker's command line
 * (-u UID:GID): the broker drops to them itself (drop.c).
 * runs in: the spawner's fork of the broker before its exec (root, unfiltered)
 *
 * Kept apart from drop.c so the statically linked broker never pulls in
 * getpwnam and NSS.
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
