/*
 * relay.h - a tcp service reached from a network namespace of one's own
 * (relay.c): the session child's and the prober's way to 127.0.0.1.
 * runs in: the prober and a session child (root until their drop:
 *   relay_start; then the sandbox's prober uid, probe or session allowlist:
 *   relay_addr), and the relay they fork (root until its drop, then the same
 *   uid, runtime deny filter)
 */
#ifndef SBX_RELAY_H
#define SBX_RELAY_H

#include <stdint.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/un.h>

/* The relay's abstract name is RELAY_HOST/.s.PGSQL.<port>, so that
 * libpq's host "@" RELAY_HOST names it. */
#define RELAY_HOST	"sbx"

/* The abstract address of the relay for port; its length. */
socklen_t	relay_addr(struct sockaddr_un *, uint16_t port);

/*
 * Called in a network namespace of the caller's own, while root: listens
 * on relay_addr(port) there and forks the relay, which goes back to the
 * host's network (hostns), drops to uid:gid, and joins each connection
 * to 127.0.0.1:port. 0, or -1 (logged).
 */
int		relay_start(uint16_t port, int hostns, uid_t uid, gid_t gid);

/*
 * While root: a network namespace and a root of the caller's own (drop.c's
 * drop_network). With dir, dir is the root (opened without following a
 * link), and *dir_gid, if not NULL, becomes its group when that is not
 * root's; without it (a tcp service), an empty root, and a relay to
 * 127.0.0.1:port running as uid:gid. 0, or -1 (logged).
 */
int		relay_confine(const char *dir, uint16_t port, uid_t uid,
		    gid_t gid, gid_t *dir_gid);

#endif
