/*
 * session_keeper.c - a postgres's keeper password as the session child
 * reads it from its socket directory's keep/pg.secret, where the image's
 * entrypoint leaves it for sbx's sessions alone
 * (images/postgres/entrypoint.sh); without it the child takes the one the
 * worker derived (keeper.c).
 * runs in: a session child of JOB_DATA, JOB_RESIDENT, JOB_WARM_START and a
 *   provision's service children (svc_session.c's session_child), after its
 *   drop and before its session allowlist (it opens a file): the sandbox's
 *   prober uid, not dumpable
 */
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "keeper.h"
#include "log.h"
#include "session_keeper.h"
#include "svc_session.h"

#define KEEP_PG		"keep/pg.secret"	/* in the socket directory */

int
keeper_pw_parse(const char *text, size_t n, char *out, size_t cap)
{
	size_t i;

	if (cap > 0)
		out[0] = '\0';
	if (cap <= KEEPER_PW_LEN || n < KEEPER_PW_LEN ||
	    n > KEEPER_PW_LEN + 1 ||
	    (n == KEEPER_PW_LEN + 1 && text[KEEPER_PW_LEN] != '\n'))
		return -1;
	for (i = 0; i < KEEPER_PW_LEN; i++)
		if (!((text[i] >= '0' && text[i] <= '9') ||
		    (text[i] >= 'a' && text[i] <= 'f')))
			return -1;
	memcpy(out, text, KEEPER_PW_LEN);
	out[KEEPER_PW_LEN] = '\0';
	return 0;
}

/* The keeper's password, read as the session's uid and group in the
 * socket directory, its root (before the filter: it opens a file). None
 * is no error: a server that has no keeper is reached as the agent. */
void
session_keeper_read(struct session_env *e)
{
	char buf[KEEPER_PW_LEN + 2];
	ssize_t n;
	int fd;

	e->keeper_pw[0] = '\0';
	if (e->r->dir == NULL || e->r->s->probe != PROBE_POSTGRES ||
	    (fd = open("/" KEEP_PG, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1)
		return;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n > 0 && keeper_pw_parse(buf, (size_t)n, e->keeper_pw,
	    sizeof(e->keeper_pw)) == -1)
		log_warnx("%s: " KEEP_PG " is not a password of ours",
		    e->r->s->name);
	explicit_bzero(buf, sizeof(buf));
}
