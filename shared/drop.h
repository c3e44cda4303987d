/* drop.h - a one-way trip from root to an unprivileged uid. */
#ifndef SBX_DROP_H
#define SBX_DROP_H

#include <sys/types.h>

/* Drop to uid:gid (chroot to root_dir first when not NULL); 0 or -1.
 * Neither may be 0. drop.c: needs no user database. A user name is
 * resolved by the monitor alone (privsep/drop_user.h), for the broker's
 * command line. */
int	drop_to_ids(uid_t uid, gid_t gid, const char *root_dir);

#endif
