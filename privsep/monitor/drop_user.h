/*
 * drop_user.h - a user name's ids (drop_user.c): the monitor's side only,
 * so the statically linked broker never pulls in getpwnam and NSS.
 * runs in: the spawner's fork of the broker before its exec (root, unfiltered)
 */
#ifndef SBX_DROP_USER_H
#define SBX_DROP_USER_H

#include "drop.h"

/* A user name's uid and gid, resolved with getpwnam; 0 or -1 (root too). */
int	user_ids(const char *user, uid_t *uid, gid_t *gid);

#endif
