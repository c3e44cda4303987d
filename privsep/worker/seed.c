/*
 * seed.c - a seeded project's postgres, at its provision: the seed run
 * in the agent's database, and that state kept as sbx_origin, what a
 * reset returns to (pg_data.c), owned by sbx's keeper role.
 * runs in: a provision's service children and JOB_WARM_START (root, runtime
 *   deny filter) read the reload's copy; the session child they fork (the
 *   sandbox's prober uid, not dumpable, session allowlist) applies it
 *
 * The whole file goes in one PQexec: one implicit transaction, so a seed
 * that fails half-way leaves nothing. It runs as the agent's role, which
 * is no superuser: a seed can do what the agent could. Of a failure only
 * postgres's primary message is said, after the seed's name and the line
 * its statement position falls on: no other text of the seed reaches a
 * log or a reply (the image runs with log_min_error_statement=panic, so
 * neither does the container's log get the statement). COPY FROM STDIN
 * is psql's, not the server's: a seed holds plain statements (pg_dump
 * --inserts).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "iox.h"
#include "data.h"
#include "log.h"
#include "pq.h"
#include "seed.h"
#include "session.h"
#include "slug.h"


struct seed_job {
	const char	*name;		/* the seed file's, for the message */
	const char	*text;		/* NUL-ended */
	size_t		 len;
};

unsigned long
seed_line(const char *text, size_t len, unsigned long pos, bool bytes)
{
	unsigned long line = 1, c = 0;
	size_t i;

	for (i = 0; i < len && pos > 0; i++) {
		/* A character starts at any byte but a UTF-8 continuation. */
		if (bytes || ((unsigned char)text[i] & 0xc0) != 0x80) {
			if (++c == pos)
				return line;
		}
		if (text[i] == '\n')
			line++;
	}
	return 0;
}

/* The reload's copy, whole and NUL-ended, or NULL with msg. */
static char *
seed_read(const struct sbx_config *cfg, const char *project, size_t *len,
    char *msg, size_t msglen)
{
	char path[CFG_STR + SBX_SLUG_MAX + 16];
	struct stat st;
	char *text = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/%s.sql", cfg->state_dir,
	    SEED_DIR, project);
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 ||
	    !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (uint64_t)st.st_size > SEED_MAX ||
	    (text = malloc((size_t)st.st_size + 1)) == NULL ||
	    read(fd, text, (size_t)st.st_size) != st.st_size) {
		log_warn("seed %s", path);
		snprintf(msg, msglen, "postgres: the project's seed cannot "
		    "be read (see the monitor's log).");
		free(text);
		if (fd != -1)
			close(fd);
		return NULL;
	}
	close(fd);
	text[st.st_size] = '\0';
	*len = (size_t)st.st_size;
	return text;
}

/* The failed seed's one sentence: its name, the line postgres's
 * position falls on (when it gave one), its primary message. */
static void
seed_failed(PGconn *c, const PGresult *res, const struct seed_job *j)
{
	const char *prim = NULL, *pos = NULL, *enc;
	char clean[SBX_MESSAGE_MAX];
	unsigned long line = 0;

	if (res != NULL) {
		prim = pq.resultErrorField(res, PG_DIAG_MESSAGE_PRIMARY);
		pos = pq.resultErrorField(res, PG_DIAG_STATEMENT_POSITION);
	}
	if (res != NULL && pq.resultStatus(res) == PGRES_COPY_IN)
		prim = "COPY FROM STDIN is not supported (use INSERT)";
	session_text(clean, sizeof(clean), prim != NULL ? prim :
	    "the server gave no reason");
	if (pos != NULL) {
		enc = pq.parameterStatus(c, "server_encoding");
		line = seed_line(j->text, j->len, strtoul(pos, NULL, 10),
		    enc != NULL && strcmp(enc, "SQL_ASCII") == 0);
	}
	if (line > 0)
		session_report(SBX_E_SEED_FAILED, "%s:%lu: %s", j->name, line,
		    clean);
	else
		session_report(SBX_E_SEED_FAILED, "%s: %s", j->name, clean);
}

/* The seed in the agent's database; 0, or -1 reported. */
static int
seed_run(const struct session_env *e, const struct seed_job *j)
{
	PGconn *c;
	PGresult *res;
	int rc = -1;

	if ((c = session_pg(e, e->r->database)) == NULL) {
		session_report(SBX_E_RUNTIME_FAILED, "postgres: cannot "
		    "connect to apply the project's seed.");
		return -1;
	}
	res = pq.exec(c, j->text);
	if (res != NULL && (pq.resultStatus(res) == PGRES_COMMAND_OK ||
	    pq.resultStatus(res) == PGRES_TUPLES_OK ||
	    pq.resultStatus(res) == PGRES_EMPTY_QUERY))
		rc = 0;
	else
		seed_failed(c, res, j);
	pq.clear(res);
	pq.finish(c);
	return rc;
}

/* The seeded database copied to sbx_origin, from database postgres
 * (a template has no session: ours is gone), as the keeper role, which
 * owns the copy: the agent's role can neither alter it nor connect to
 * it. 0, or -1 reported. */
static int
origin_make(const struct session_env *e)
{
	char q[256], *id;
	PGconn *c;
	PGresult *res = NULL;
	int rc = -1;

	if ((c = session_pg_keeper(e)) != NULL &&
	    (id = pq.escapeIdentifier(c, e->r->database,
	    strlen(e->r->database))) != NULL) {
		snprintf(q, sizeof(q), "CREATE DATABASE " PG_ORIGIN
		    " TEMPLATE %s STRATEGY FILE_COPY ALLOW_CONNECTIONS false",
		    id);
		pq.freemem(id);
		res = pq.exec(c, q);
		rc = pq.resultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;
		/* and its copy for the first reset, as a reset leaves one
		 * for the next (pg_data.c): none of them waits for a copy */
		if (rc == 0) {
			pq.clear(res);
			res = pq.exec(c, "CREATE DATABASE " PG_NEXT_ORIGIN
			    " TEMPLATE " PG_ORIGIN " STRATEGY FILE_COPY "
			    "ALLOW_CONNECTIONS false");
			rc = pq.resultStatus(res) == PGRES_COMMAND_OK ? 0 : -1;
		}
	}
	if (rc == -1) {
		log_warnx("%s: cannot keep the seeded state as " PG_ORIGIN,
		    e->r->s->name);
		session_report(SBX_E_RUNTIME_FAILED, "postgres: cannot keep "
		    "the seeded state for resets.");
	}
	if (c != NULL) {
		pq.clear(res);
		pq.finish(c);
	}
	return rc;
}

static void
seed_session(const struct session_env *e, void *arg)
{
	const struct seed_job *j = arg;

	if (seed_run(e, j) == 0 && origin_make(e) == 0)
		session_report(SBX_OK, "seeded");
}

int
seed_apply(const struct sbx_config *cfg, const char *project,
    const char *seed, const struct svc_reach *r, int64_t deadline,
    uint32_t *res_code, char *msg, size_t msglen)
{
	struct seed_job j = { .name = seed };
	int64_t t0 = now_ms();
	struct session ss;
	struct data_result res;
	char *text;

	*res_code = SBX_E_SEED_FAILED;
	if (!slug_valid(project, strlen(project)) ||
	    (text = seed_read(cfg, project, &j.len, msg, msglen)) == NULL)
		return -1;
	j.text = text;
	if (memchr(text, '\0', j.len) != NULL) {
		snprintf(msg, msglen, "%s: holds a NUL byte.", seed);
		free(text);
		return -1;
	}
	if (session_start(&ss, r, seed_session, &j, deadline) == -1 ||
	    session_recv(&ss, &res, deadline) == -1) {
		res.code = SBX_E_RUNTIME_FAILED;
		snprintf(res.message, sizeof(res.message), "postgres: the "
		    "project's seed did not finish.");
	}
	session_end(&ss, now_ms() + 5000);
	free(text);
	if (res.code == SBX_OK)	/* bench/run.sh reads it (figure 8) */
		log_info("seed %s applied in %lld ms", seed,
		    (long long)(now_ms() - t0));
	*res_code = res.code;
	snprintf(msg, msglen, "%s", res.message);
	return res.code == SBX_OK ? 0 : -1;
}

/* An unseeded warm postgres: its first reset's copy, made ahead. */
static void
first_copy_session(const struct session_env *e, void *arg)
{
	PGconn *c;
	PGresult *res = NULL;

	(void)arg;
	if ((c = session_pg_keeper(e)) != NULL)
		res = pq.exec(c, "CREATE DATABASE " PG_NEXT_ORIGIN " TEMPLATE "
		    "template1 STRATEGY FILE_COPY ALLOW_CONNECTIONS false");
	if (c != NULL && pq.resultStatus(res) == PGRES_COMMAND_OK)
		session_report(SBX_OK, "copied");
	else
		session_report(SBX_E_RUNTIME_FAILED, "no copy");
	pq.clear(res);
	pq.finish(c);
}

void
seed_first_copy(const struct svc_reach *r, int64_t deadline)
{
	struct session ss;
	struct data_result res;

	if (session_start(&ss, r, first_copy_session, NULL, deadline) == -1 ||
	    session_recv(&ss, &res, deadline) == -1 || res.code != SBX_OK)
		log_warnx("%s: no copy made ahead for its first reset (it "
		    "makes its own)", r->s->name);
	session_end(&ss, now_ms() + 5000);
}
