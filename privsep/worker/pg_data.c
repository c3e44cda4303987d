/*
 * pg_data.c - a reset or a snapshot of a sandbox's postgres.
 * runs in: a session child of JOB_DATA (svc_session.c; the sandbox's prober
 *   uid, not dumpable, session allowlist), a client of the server as sbx's
 *   keeper role
 *
 * The session connects as the keeper role, sbx's own (the image's
 * entrypoint makes it and leaves its password where only sbx's sessions
 * read it, session_client.c): no superuser, it may create databases, is a
 * member of the agent's role (it may rename, copy and hand over the
 * agent's database) and of pg_signal_backend (it may end the agent's
 * sessions). The agent's role is no member of it. Its databases:
 *
 *   <database>        the agent's (s->database), owned by the agent's role
 *   sbx_origin        the seeded hand-out state (seed_session.c);
 *                     without a seed the hand-out state is template1
 *                     (the image's database was initdb's empty one)
 *   sbx_snap_<i>      snapshot slot i, named by its COMMENT
 *   sbx_next_origin,  a copy of sbx_origin or of sbx_snap_<i>, made
 *   sbx_next_<i>      after the last reset to it: the next one is two
 *                     renames, not a copy
 *   sbx_old_*         a replaced database, or a copy in the making:
 *                     dropped by the tidy-up
 *
 * All but the agent's are the keeper's, with connections refused: the
 * agent's role can neither connect to, alter, rename nor drop them. It
 * can create a database of one of these names first: only the keeper's
 * count, and one of the agent's in the way is dropped before ours is
 * made. Comments are taken as names only if they are slugs. The
 * keeper's password is the worker's (keeper.c: tcp alone too), or the
 * image's own in keep/pg.secret; a server with no keeper at all (an
 * image older than the keeper) is reached as the agent's role, which
 * then owns them all. Every session of ours
 * connects to database postgres and holds an advisory lock there for
 * its whole job, tidy-up included: data jobs of one sandbox take turns.
 *
 * A reset: no new connections to <database>, its sessions ended (and
 * every other of the role's, so that no template is in use), then one
 * transaction renames it away and the copy into its place. Without a
 * next copy, the copy is made first (FILE_COPY, from the state reset
 * to), still renamed in and given to the agent's role: the agent's
 * database is never missing. After the reply: the old one dropped and
 * the next copy made.
 */
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "data.h"
#include "iox.h"
#include "log.h"
#include "pg_data.h"
#include "pq.h"
#include "session_client.h"
#include "snaps.h"
#include "svc_session.h"

#define LOCK_KEY	"7523431027348501504"	/* "sbx data", any constant */
#define LOCK_WAIT	"10s"		/* the longest a tidy-up takes, and more */
#define ORIGIN		PG_ORIGIN
#define NEXT_ORIGIN	PG_NEXT_ORIGIN
#define SNAP		"sbx_snap_"
#define NEXT		"sbx_next_"
#define OLD		"sbx_old_"
#define TERMINATE_MS	5000
#define GONE_POLL_NS	500000		/* 0.5 ms */
#define DBNAME_MAX	64

/* What the server holds of ours, as its listing says. */
struct pg_dbs {
	struct snaps	snaps;
	bool		origin;
	bool		next_origin;
	bool		next[SBX_MAX_SNAPSHOTS];
	bool		squatted;	/* one of our names is another's */
};

struct pg_job {
	const struct data_req	*q;
	const char		*service;
	PGconn			*c;
	char			*db;		/* <database>, quoted */
	char			*dblit;		/* and as a literal */
	char			*role;		/* the agent's role, quoted */
	char			*rolelit;	/* and as a literal */
	struct pg_dbs		 d;
	int			 slot;		/* the snapshot's, or -1 */
	char			 src[DBNAME_MAX];	/* a reset's state */
	char			 next[DBNAME_MAX];	/* its next copy */
	unsigned		 seq;		/* sbx_old_ names made */
};

int
pg_snap_slot(const char *datname, const char *prefix)
{
	size_t n = strlen(prefix);
	const char *p = datname + n;
	int i = 0;

	if (strncmp(datname, prefix, n) != 0 || *p == '\0' ||
	    (*p == '0' && p[1] != '\0'))
		return -1;
	for (; *p != '\0'; p++) {
		if (*p < '0' || *p > '9' || (i = i * 10 + (*p - '0')) >=
		    SBX_MAX_SNAPSHOTS)
			return -1;
	}
	return i;
}

/* One of our statements; a failure logged by postgres's primary message
 * (the server's words, cleaned), never any other text. */
static int
pg_do(const struct pg_job *pj, const char *sql)
{
	PGresult *res = pq.exec(pj->c, sql);
	ExecStatusType st = pq.resultStatus(res);
	const char *prim;
	char why[SBX_MESSAGE_MAX];

	if (st == PGRES_COMMAND_OK || st == PGRES_TUPLES_OK) {
		pq.clear(res);
		return 0;
	}
	prim = res != NULL ? pq.resultErrorField(res,
	    PG_DIAG_MESSAGE_PRIMARY) : NULL;
	session_text(why, sizeof(why), prim != NULL ? prim :
	    pq.errorMessage(pj->c));
	log_warnx("%s: %.40s...: %s", pj->service, sql, why);
	pq.clear(res);
	return -1;
}

/* A statement of our own words (names ours, or quoted) from fmt. */
static int
pg_dof(const struct pg_job *pj, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int
pg_dof(const struct pg_job *pj, const char *fmt, ...)
{
	char sql[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return -1;
	return pg_do(pj, sql);
}

/* One of the names the keeper's databases have (not sbx_old_*). */
static bool
pg_name_ours(const char *name)
{
	return strcmp(name, ORIGIN) == 0 || strcmp(name, NEXT_ORIGIN) == 0 ||
	    pg_snap_slot(name, SNAP) != -1 || pg_snap_slot(name, NEXT) != -1;
}

/* One row of the listing into d: ours only if the keeper owns it. */
static void
pg_dbs_add(struct pg_dbs *d, const char *name, const char *comment,
    bool ours)
{
	int i;

	if (!ours) {
		if (pg_name_ours(name))
			d->squatted = true;
	} else if (strcmp(name, ORIGIN) == 0)
		d->origin = true;
	else if (strcmp(name, NEXT_ORIGIN) == 0)
		d->next_origin = true;
	else if ((i = pg_snap_slot(name, SNAP)) != -1)
		snaps_set(&d->snaps, (unsigned)i, comment);
	else if ((i = pg_snap_slot(name, NEXT)) != -1)
		d->next[i] = true;
}

/* The server's databases of ours, and their comments. */
static int
pg_list(struct pg_job *pj)
{
	PGresult *res;
	int i, n;

	memset(&pj->d, 0, sizeof(pj->d));
	res = pq.exec(pj->c, "SELECT datname, coalesce(shobj_description(oid,"
	    " 'pg_database'), ''), datdba = (SELECT oid FROM pg_roles WHERE "
	    "rolname = current_user) FROM pg_database WHERE datname LIKE "
	    "'sbx\\_%'");
	if (pq.resultStatus(res) != PGRES_TUPLES_OK || pq.nfields(res) != 3) {
		pq.clear(res);
		return -1;
	}
	n = pq.ntuples(res);
	for (i = 0; i < n; i++)
		pg_dbs_add(&pj->d, pq.getvalue(res, i, 0),
		    pq.getvalue(res, i, 1),
		    strcmp(pq.getvalue(res, i, 2), "t") == 0);
	pq.clear(res);
	return 0;
}

/* A name for a database on its way out, or on its way in. */
static void
pg_old(struct pg_job *pj, char *out, size_t cap)
{
	snprintf(out, cap, OLD "%ld_%lld_%u", (long)getpid(),
	    (long long)wall_ms(), pj->seq++);
}

/* No one but us on <database> and on any template: the role's other
 * sessions ended (and waited for), a data job's waiting for our lock
 * on database postgres kept. */
/* Sessions still in <database> but ours, or -1. */
static int
pg_left(const struct pg_job *pj)
{
	char sql[256];
	PGresult *res;
	int n = -1;

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_stat_activity "
	    "WHERE datname = %s AND pid <> pg_backend_pid()", pj->dblit);
	res = pq.exec(pj->c, sql);
	if (pq.resultStatus(res) == PGRES_TUPLES_OK && pq.ntuples(res) == 1)
		n = (int)strtol(pq.getvalue(res, 0, 0), NULL, 10);
	pq.clear(res);
	return n;
}

/*
 * Every session of the agent's role ends (but other data jobs', which
 * are the keeper's, or the agent's in database postgres named sbx-data
 * where there is no keeper); the database is free once none is left in
 * it. pg_terminate_backend's own
 * wait would poll in steps of 100 ms: this one polls every 0.5 ms,
 * within TERMINATE_MS.
 */
static int
pg_end_sessions(const struct pg_job *pj)
{
	struct timespec pause = { 0, GONE_POLL_NS };
	int64_t until = now_ms() + TERMINATE_MS;
	int n;

	if (pg_dof(pj, "SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE backend_type = 'client backend' AND pid "
	    "<> pg_backend_pid() AND usename = %s AND NOT (usename = "
	    "current_user AND datname = 'postgres' AND application_name = "
	    "'sbx-data')", pj->rolelit) == -1)
		return -1;
	while ((n = pg_left(pj)) > 0 && now_ms() < until)
		nanosleep(&pause, NULL);
	return n == 0 ? 0 : -1;
}

static int
pg_connections(const struct pg_job *pj, bool on)
{
	return pg_dof(pj, "ALTER DATABASE %s ALLOW_CONNECTIONS %s", pj->db,
	    on ? "true" : "false");
}

/* A copy of src named name, which nobody may connect to. */
static int
pg_copy(const struct pg_job *pj, const char *name, const char *src)
{
	return pg_dof(pj, "CREATE DATABASE %s TEMPLATE %s STRATEGY FILE_COPY "
	    "ALLOW_CONNECTIONS false", name, src);
}

/* Check: what the reset goes back to, or the snapshot's slot. */
static int
pg_check(struct pg_job *pj)
{
	/* The lock is the tenant's to hold too (its role may take it):
	 * a job waits for no lock longer than LOCK_WAIT, and says so. */
	if (pg_do(pj, "SET lock_timeout = '" LOCK_WAIT "'") == -1 ||
	    pg_do(pj, "SELECT pg_advisory_lock(" LOCK_KEY ")") == -1) {
		session_report(SBX_E_TIMEOUT, "%s: another reset or snapshot "
		    "of this sandbox held it for " LOCK_WAIT ".", pj->service);
		return -1;
	}
	if (pg_list(pj) == -1) {
		session_report(SBX_E_RUNTIME_FAILED, "%s: cannot read its "
		    "databases.", pj->service);
		return -1;
	}
	if (data_check(&pj->d.snaps, pj->q, pj->service, &pj->slot) == -1)
		return -1;
	if (pj->q->op == DATA_RESET && pj->slot != -1) {
		snprintf(pj->src, sizeof(pj->src), SNAP "%d", pj->slot);
		snprintf(pj->next, sizeof(pj->next), NEXT "%d", pj->slot);
	} else {
		strlcpy(pj->src, pj->d.origin ? ORIGIN : "template1",
		    sizeof(pj->src));
		strlcpy(pj->next, NEXT_ORIGIN, sizeof(pj->next));
	}
	return session_report(SBX_OK, "can");
}

/* The swap: <database> renamed away, in its place the copy, given to
 * the agent's role; one transaction, so that all is done or nothing. */
static int
pg_swap(struct pg_job *pj, const char *copy)
{
	char old[DBNAME_MAX];

	pg_old(pj, old, sizeof(old));
	if (pg_do(pj, "BEGIN") == 0 &&
	    pg_dof(pj, "ALTER DATABASE %s RENAME TO %s", pj->db, old) == 0 &&
	    pg_dof(pj, "ALTER DATABASE %s RENAME TO %s", copy, pj->db) == 0 &&
	    pg_dof(pj, "ALTER DATABASE %s OWNER TO %s", pj->db, pj->role) ==
	    0 && pg_connections(pj, true) == 0 && pg_do(pj, "COMMIT") == 0)
		return 0;
	(void)pg_do(pj, "ROLLBACK");
	return -1;
}

/* Databases of our names that are not the keeper's (the agent made
 * them) dropped: ours go there. The keeper may, as a member of the
 * agent's role. */
static int
pg_evict(const struct pg_job *pj)
{
	PGresult *res;
	const char *name;
	int i, n, rc = 0;

	if (!pj->d.squatted)
		return 0;
	res = pq.exec(pj->c, "SELECT datname FROM pg_database WHERE datname "
	    "~ '^sbx_(origin|next_origin|snap_[0-9]{1,2}|next_[0-9]{1,2})$' "
	    "AND datdba <> (SELECT oid FROM pg_roles WHERE rolname = "
	    "current_user)");
	if (pq.resultStatus(res) != PGRES_TUPLES_OK || pq.nfields(res) != 1) {
		pq.clear(res);
		return -1;
	}
	n = pq.ntuples(res);
	for (i = 0; i < n; i++) {
		name = pq.getvalue(res, i, 0);
		if (pg_name_ours(name) && pg_dof(pj, "DROP DATABASE IF EXISTS "
		    "%s WITH (FORCE)", name) == -1)
			rc = -1;
	}
	pq.clear(res);
	return rc;
}

static int
pg_reset(struct pg_job *pj)
{
	bool have = pj->slot != -1 ? pj->d.next[pj->slot] :
	    pj->d.next_origin;
	char fresh[DBNAME_MAX];
	const char *copy = pj->next;

	if (!have) {
		pg_old(pj, fresh, sizeof(fresh));
		copy = fresh;
	}
	if (pg_evict(pj) == 0 && pg_connections(pj, false) == 0 &&
	    pg_end_sessions(pj) == 0 &&
	    (have || pg_copy(pj, fresh, pj->src) == 0) &&
	    pg_swap(pj, copy) == 0)
		return session_report(SBX_OK, "reset");
	(void)pg_connections(pj, true);
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the reset failed "
	    "(see the monitor's log).", pj->service);
}

/* The copy of <database> becomes slot i, named: the old copy, if any,
 * renamed away in the same transaction. */
static int
pg_file_snapshot(struct pg_job *pj, const char *copy)
{
	char old[DBNAME_MAX], *lit;
	int rc = -1;

	if ((lit = pq.escapeLiteral(pj->c, pj->q->snapshot,
	    strlen(pj->q->snapshot))) == NULL)
		return -1;
	pg_old(pj, old, sizeof(old));
	if (pg_do(pj, "BEGIN") == 0 && (!pj->d.snaps.present[pj->slot] ||
	    pg_dof(pj, "ALTER DATABASE " SNAP "%d RENAME TO %s", pj->slot,
	    old) == 0) && pg_dof(pj, "ALTER DATABASE %s RENAME TO " SNAP "%d",
	    copy, pj->slot) == 0 && pg_dof(pj, "COMMENT ON DATABASE " SNAP
	    "%d IS %s", pj->slot, lit) == 0 && pg_do(pj, "COMMIT") == 0)
		rc = 0;
	else
		(void)pg_do(pj, "ROLLBACK");
	pq.freemem(lit);
	return rc;
}

static int
pg_snapshot(struct pg_job *pj)
{
	char copy[DBNAME_MAX];
	int made;

	pg_old(pj, copy, sizeof(copy));
	made = pg_evict(pj) == 0 && pg_connections(pj, false) == 0 &&
	    pg_end_sessions(pj) == 0 && pg_copy(pj, copy, pj->db) == 0;
	if (pg_connections(pj, true) == 0 && made &&
	    pg_file_snapshot(pj, copy) == 0)
		return session_report(SBX_OK, "saved");
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the snapshot "
	    "failed (see the monitor's log).", pj->service);
}

/* Every sbx_old_* dropped: ours of this job, and any a job that died
 * left. Names are the tenant's: only ours, in their shape, are used. */
static void
pg_sweep(const struct pg_job *pj)
{
	PGresult *res;
	const char *name;
	int i, n;

	res = pq.exec(pj->c, "SELECT datname FROM pg_database WHERE datname "
	    "~ '^sbx_old_[0-9_]{1,40}$'");
	if (pq.resultStatus(res) != PGRES_TUPLES_OK || pq.nfields(res) != 1) {
		pq.clear(res);
		return;
	}
	n = pq.ntuples(res);
	for (i = 0; i < n; i++) {
		name = pq.getvalue(res, i, 0);
		if (strspn(name + strlen(OLD), "0123456789_") ==
		    strlen(name + strlen(OLD)) && strlen(name) < DBNAME_MAX)
			(void)pg_dof(pj, "DROP DATABASE IF EXISTS %s WITH "
			    "(FORCE)", name);
	}
	pq.clear(res);
}

/* After the reply: what was replaced goes; a reset's next copy is made
 * from the state it went back to, a snapshot's stale one dropped. */
static void
pg_tidy(struct pg_job *pj)
{
	pg_sweep(pj);
	if (pj->q->op == DATA_SNAPSHOT)
		(void)pg_dof(pj, "DROP DATABASE IF EXISTS " NEXT "%d WITH "
		    "(FORCE)", pj->slot);
	else if (pg_list(pj) == 0 && !(pj->slot != -1 ?
	    pj->d.next[pj->slot] : pj->d.next_origin) && pg_evict(pj) == 0)
		(void)pg_copy(pj, pj->next, pj->src);
}

/* The keeper's connection, and the names of this sandbox quoted on it;
 * -1 (reported) when it cannot be had. */
static int
pg_open(struct pg_job *pj, const struct session_env *e)
{
	const char *db = e->r->database, *user = e->r->user;

	if ((pj->c = session_pg_keeper(e)) != NULL &&
	    (pj->dblit = pq.escapeLiteral(pj->c, db, strlen(db))) != NULL &&
	    (pj->db = pq.escapeIdentifier(pj->c, db, strlen(db))) != NULL &&
	    (pj->rolelit = pq.escapeLiteral(pj->c, user, strlen(user))) !=
	    NULL &&
	    (pj->role = pq.escapeIdentifier(pj->c, user, strlen(user))) != NULL)
		return 0;
	session_report(SBX_E_RUNTIME_FAILED, "%s: cannot connect.",
	    pj->service);
	return -1;
}

static void
pg_close(struct pg_job *pj)
{
	pq.freemem(pj->role);
	pq.freemem(pj->rolelit);
	pq.freemem(pj->db);
	pq.freemem(pj->dblit);
	if (pj->c != NULL)
		pq.finish(pj->c);
	pj->role = pj->rolelit = pj->db = pj->dblit = NULL;
	pj->c = NULL;
}

/* One job on the open connection: the check, the parent's byte, the act
 * on DATA_GO, and the tidy-up on the parent's last word (DATA_TIDY, or
 * its end). */
static void
pg_job(struct pg_job *pj)
{
	int can = pg_check(pj) == 0;

	if (session_wait() == DATA_GO && can &&
	    (pj->q->op == DATA_RESET ? pg_reset(pj) : pg_snapshot(pj)) == 0 &&
	    session_wait() != DATA_GO)
		pg_tidy(pj);
}

void
pg_data_session(const struct session_env *e, void *arg)
{
	struct pg_job pj = { .q = arg, .service = e->r->s->name, .slot = -1 };

	if (pg_open(&pj, e) == 0)
		pg_job(&pj);
	pg_close(&pj);
}

/* Is a kept connection still the server's, idle? The server that ended
 * it (a restart, an admin's pg_terminate_backend) has said so on its
 * socket, or closed it: something to read. */
static bool
pg_idle(const struct pg_job *pj)
{
	struct pollfd pfd = { .fd = pq.socket(pj->c), .events = POLLIN };

	return pq.status(pj->c) == CONNECTION_OK && pfd.fd != -1 &&
	    poll(&pfd, 1, 0) == 0;
}

/*
 * A kept session (resident.c): one connection, opened at the first job
 * and again only when the server ended it, for every job asked of it.
 * Each job: the ask, the check's report, the parent's byte (DATA_GO: the
 * act's report, then its last byte, then the tidy-up), and one last
 * report that the job is over, its advisory lock let go. A parent that
 * goes ends it.
 */
void
pg_data_kept(const struct session_env *e, void *arg)
{
	struct pg_job pj = { .service = e->r->s->name };
	struct data_ask a;
	struct data_req q;

	(void)arg;
	while (session_ask(&a) == 0) {
		q = (struct data_req){ .op = a.op, .snapshot = a.snapshot,
		    .max = a.max };
		pj.q = &q;
		pj.slot = -1;
		if (pj.c != NULL && !pg_idle(&pj))
			pg_close(&pj);
		if (pj.c != NULL || pg_open(&pj, e) == 0)
			pg_job(&pj);
		else
			(void)session_wait();	/* the parent's no */
		if (pj.c != NULL && pg_do(&pj, "SELECT "
		    "pg_advisory_unlock_all()") == -1)
			pg_close(&pj);
		if (session_report(SBX_OK, "over") == -1)
			break;
	}
	pg_close(&pj);
}
