/*
 * drop.h - a one-way trip from root to an unprivileged uid.
 * runs in: the broker (root until its drop, then broker user, unfiltered); in
 *   sbx-worker, the prober, a session child and a relay (root until their
 *   drop, then the sandbox's prober uid, runtime deny filter), and the
 *   parsing jobs (root until their drop, then sbx-job, runtime deny filter:
 *   privsep/worker/jobuser.c)
 */
#ifndef SBX_DROP_H
#define SBX_DROP_H

#include <sys/types.h>

/* Drop to uid:gid (chroot to root_dir first when not NULL); 0 or -1.
 * Neither may be 0. drop.c: needs no user database. A user name is
 * resolved by the monitor alone (privsep/monitor/drop_user.h), for the broker's
 * command line. */
int	drop_to_ids(uid_t uid, gid_t gid, const char *root_dir);
/* As root, before drop_to_ids: no network but what dirfd's directory
 * holds. A network namespace of the caller's own (no address, its
 * loopback down, none of the host's abstract Unix sockets) and that
 * directory as / (no socket path outside it). dirfd -1: an empty root,
 * a directory made and removed at once, in which nothing can be made.
 * 0 or -1. */
int	drop_network(int dirfd);

#endif
