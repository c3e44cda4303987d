/*
 * svc_session.h - a worker's session with a sandbox's service, as its
 * client (svc_session.c): the seed at a provision, a reset or a snapshot.
 * What the session child calls after its drop is session_keeper.h's and
 * session_client.h's.
 * runs in: sbx-worker's JOB_DATA, JOB_RESIDENT and JOB_WARM_START and a
 *   provision's service children (root, runtime deny filter), and the
 *   session child they fork (root until its drop, then the sandbox's
 *   prober uid, not dumpable, session allowlist)
 *
 * It runs in a child that reads the tenant's bytes as a uid of the
 * sandbox's own range, never as root, and talks to its parent over one
 * socket pair: fixed-size reports up, one byte at a time down.
 */
#ifndef SBX_SVC_SESSION_H
#define SBX_SVC_SESSION_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "keeper.h"

struct data_ask;
struct data_result;

/* The child's descriptor to its parent, where session_child puts it. */
#define SESSION_FD_PARENT	3

/* Where and as whom a service is reached. */
struct svc_reach {
	const struct service_cfg *s;
	const char	*dir;		/* its socket directory, or NULL: tcp */
	uint16_t	 port;		/* tcp: published on 127.0.0.1 */
	uid_t		 uid;		/* the session's: its range's last */
	gid_t		 gid;
	const char	*user;
	const char	*password;
	const char	*database;
	/* postgres: the keeper's password as keeper_derive() makes it, or
	 * "": the session reads keep/pg.secret, else connects as the agent */
	char		 keeper_pw[KEEPER_PW_LEN + 1];
};

/* The child's side: the reach, with the service as the child reaches
 * it (host: "/", its socket directory as its root, or "@sbx", its tcp
 * relay's abstract name), and the keeper's
 * password read from it ("" if there is none: no socket directory). */
struct session_env {
	const struct svc_reach	*r;
	char			 host[32];
	char			 keeper_pw[KEEPER_PW_LEN + 1];
};

typedef void	(*session_fn)(const struct session_env *, void *arg);

/* The parent's side. */
struct session {
	pid_t	pid;		/* -1: none */
	int	fd;		/* reports up, bytes down; shut: the last */
	int	log;		/* the child's stderr, relayed at its end */
	char	name[SBX_SLUG_MAX];	/* its service's, for those lines */
};

/* A child that leaves the host's network for a namespace of its own,
 * takes r's socket directory as its root (an empty one and a relay for
 * tcp), drops to r's uid, not dumpable, its stderr a pipe of ours, and
 * runs fn until the deadline (an alarm ends it). */
int	session_start(struct session *, const struct svc_reach *,
	    session_fn, void *arg, int64_t deadline);
/* The child's next report, its message made one clean line; -1: none
 * came by the deadline (it died, or hangs). */
int	session_recv(struct session *, struct data_result *,
	    int64_t deadline);
/* A byte for the child (session_wait's); -1 if it is gone. */
int	session_send(struct session *, uint8_t);
/* No more bytes for the child, then its end by the deadline, or kill;
 * then its stderr's lines relayed (session_log_relay). */
void	session_end(struct session *, int64_t deadline);
/* A child's stderr, read from fd without waiting, into the worker's log:
 * at most a few lines, each one session_log_line. */
void	session_log_relay(int fd, const char *service);
/* One line of a child's as the worker logs it: a prefix of its own, the
 * child's ident dropped, the rest one printable line (session_text). The
 * length snprintf gives. */
size_t	session_log_line(char *dst, size_t cap, const char *service,
	    const char *line);
/* A tenant's text as one printable ASCII line of at most cap - 1. */
void	session_text(char *dst, size_t cap, const char *src);

/* The check session_ask (session_client.c) makes of an ask, apart for its
 * unit test. */
int	data_ask_valid(const struct data_ask *);

#endif
