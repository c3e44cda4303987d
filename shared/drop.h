/* drop.h - a one-way trip from root to an unprivileged uid. */
#ifndef SBX_DROP_H
#define SBX_DROP_H

#include <sys/types.h>

/* Drop to uid:gid (chroot to root_dir first when not NULL); 0 or -1.
 * Neither may be 0. drop.c: needs no user database. The same for a user
 * name is the monitor's alone: privsep/drop_user.h. */
int	drop_to_ids(uid_t uid, gid_t gid, const char *root_dir);

#endif
