/*
 * seed_session.c - a seeded project's postgres, at its provision: the
 * seed run in the agent's database, and that state kept as sbx_origin,
 * what a reset returns to (pg_data.c), owned by sbx's keeper role; and an
 * unseeded warm postgres's copy for its first reset. seed.c reads the
 * seed and starts the session.
 * runs in: the session child of a seed or a first copy (seed.c), after its
 *   drop: the sandbox's prober uid, not dumpable, session allowlist
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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "pg_data.h"
#include "pq.h"
#include "seed_session.h"
#include "session_client.h"
#include "svc_session.h"

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

void
seed_session(const struct session_env *e, void *arg)
{
	const struct seed_job *j = arg;

	if (seed_run(e, j) == 0 && origin_make(e) == 0)
		session_report(SBX_OK, "seeded");
}

/* An unseeded warm postgres: its first reset's copy, made ahead. */
void
seed_session_first_copy(const struct session_env *e, void *arg)
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
