/*
 * conn.h - who holds a sandbox and how its services are reached: the
 * monitor's answers and records, and the jobs it gives sbx-worker.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker
 *   jobs and a provision's service children (root, runtime deny filter)
 */
#ifndef SBX_CONN_H
#define SBX_CONN_H

#include <stdint.h>
#include <sys/types.h>

#include "msg.h"

/* A sandbox's owner: the peer's uid (SO_PEERCRED) and its agent slug. */
struct sbx_key {
	uid_t		uid;
	char		agent[SBX_SLUG_MAX];
};

/*
 * How to reach one service. transport unix: socket is the socket file;
 * for postgres host is its directory and port the number in its name
 * (libpq's convention), for others host is empty and port 0. tcp: host
 * 127.0.0.1 and the published port, socket empty. both: socket, and host
 * and port of tcp.
 */
struct sbx_conn {
	char		name[SBX_SLUG_MAX];
	char		socket[SBX_SOCKET_MAX];
	char		host[SBX_HOST_MAX];
	uint32_t	port;
	char		user[SBX_SLUG_MAX];
	char		password[SBX_SECRET_MAX];
	char		database[SBX_SLUG_MAX];
};

#endif
