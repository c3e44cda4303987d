/*
 * redis_data.c - a reset or a snapshot of a sandbox's redis.
 * runs in: a session child of JOB_DATA (svc_session.c; the sandbox's prober
 *   uid, not dumpable, session allowlist), a client of the server as the
 *   agent's user, and of its keeper
 *
 * The agent's server has 16 databases, all the agent's. Snapshots are
 * kept by a second server in the container, the keeper, which only sbx's
 * sessions reach (its socket is in the socket directory's keep/, which
 * the agent's uid cannot enter: images/redis/entrypoint.sh): nothing the
 * agent's clients do, FLUSHALL, SWAPDB, MOVE, SELECT, scripts, reaches
 * it. Snapshot slot i is the keeper's database i: a copy (RESTORE of the
 * agent's server's DUMP) of every key of 0-15, each named by its
 * database's byte and its own name, a marker key (MARKER) with the
 * snapshot's name, and a hash (TTLS) of the time left to each copied key
 * that had one (a copy keeps no expiry, so that it lasts as long as its
 * snapshot; a reset gives back what was left). The keys travel through
 * this session: one script on one server reads them all, one script on
 * the other writes them all, each run whole, without any other client's
 * command in between. A marker is taken as a name only if it is a slug.
 *
 * A reset ends the agent's connections (CLIENT KILL by id, the image lets
 * its user run it; every client but those named sbx-data, which are
 * other data jobs', whose sessions the reset must not end: a tenant who
 * names its own so keeps them, and only that), empties 0-15 and, if it is
 * to a snapshot, restores its keys there, all in one script. A plain
 * reset needs no keeper. A server with no socket directory (transport
 * tcp alone) has no keeper: its snapshots are refused. Nothing is slow
 * enough to be left for after the reply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "log.h"
#include "redis_data.h"
#include "session_client.h"
#include "snaps.h"
#include "svc_session.h"

#define MARKER		"sbx:snapshot"	/* no copy's name: those start */
#define TTLS		"sbx:ttl"	/* with a byte below 16 */
#define OUR_NAME	"sbx-data"	/* CLIENT SETNAME of our sessions */
#define KEY_FIELDS	4		/* a key in transit: db, name, ttl, dump */

/* The keeper: each slot's marker (or "") and its number of keys. */
static const char list_lua[] =
    "local r = {}\n"
    "for i = 0, 15 do\n"
    "  redis.call('SELECT', i)\n"
    "  local m = redis.pcall('GET', ARGV[1])\n"
    "  if type(m) ~= 'string' then m = '' end\n"
    "  r[2 * i + 1] = m\n"
    "  r[2 * i + 2] = redis.call('DBSIZE')\n"
    "end\n"
    "return r\n";

/* The agent's server: every key of 0-15 as db, name, ms left (or -1),
 * DUMP. */
static const char dump_lua[] =
    "local r = {}\n"
    "for db = 0, 15 do\n"
    "  redis.call('SELECT', db)\n"
    "  for _, k in ipairs(redis.call('KEYS', '*')) do\n"
    "    local d = redis.call('DUMP', k)\n"
    "    if d then\n"
    "      r[#r + 1] = db\n"
    "      r[#r + 1] = k\n"
    "      r[#r + 1] = redis.call('PTTL', k)\n"
    "      r[#r + 1] = d\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return r\n";

/* The keeper: database ARGV[1] emptied, then the keys of ARGV[5...] put
 * there (as dump_lua gives them), named ARGV[2] by marker ARGV[3], the
 * times left in hash ARGV[4]. */
static const char save_lua[] =
    "redis.call('SELECT', tonumber(ARGV[1]))\n"
    "redis.call('FLUSHDB')\n"
    "for i = 5, #ARGV, 4 do\n"
    "  local c = string.char(tonumber(ARGV[i])) .. ARGV[i + 1]\n"
    "  redis.call('RESTORE', c, 0, ARGV[i + 3], 'REPLACE')\n"
    "  local t = tonumber(ARGV[i + 2])\n"
    "  if t > 0 then redis.call('HSET', ARGV[4], c, t) end\n"
    "end\n"
    "redis.call('SET', ARGV[3], ARGV[2])\n"
    "return 'OK'\n";

/* The keeper: the keys of database ARGV[1] as dump_lua gives them (the
 * time left 0 for none), but its marker ARGV[2] and hash ARGV[3]. */
static const char load_lua[] =
    "redis.call('SELECT', tonumber(ARGV[1]))\n"
    "local r = {}\n"
    "for _, k in ipairs(redis.call('KEYS', '*')) do\n"
    "  local db = string.byte(k, 1)\n"
    "  if k ~= ARGV[2] and k ~= ARGV[3] and db ~= nil and db < 16 then\n"
    "    local t = redis.call('HGET', ARGV[3], k)\n"
    "    r[#r + 1] = db\n"
    "    r[#r + 1] = string.sub(k, 2)\n"
    "    r[#r + 1] = t and tonumber(t) or 0\n"
    "    r[#r + 1] = redis.call('DUMP', k)\n"
    "  end\n"
    "end\n"
    "return r\n";

/* The agent's server: 0-15 emptied, then the keys of ARGV (as load_lua
 * gives them) restored with the time they had left. */
static const char reset_lua[] =
    "for db = 0, 15 do\n"
    "  redis.call('SELECT', db)\n"
    "  redis.call('FLUSHDB')\n"
    "end\n"
    "for i = 1, #ARGV, 4 do\n"
    "  local t = tonumber(ARGV[i + 2])\n"
    "  if t < 0 then t = 0 end\n"
    "  redis.call('SELECT', tonumber(ARGV[i]))\n"
    "  redis.call('RESTORE', ARGV[i + 1], t, ARGV[i + 3], 'REPLACE')\n"
    "end\n"
    "return 'OK'\n";

struct rd_job {
	const struct data_req	*q;
	const char		*service;
	redisContext		*c;
	redisContext		*keep;		/* the keeper, or NULL */
	struct snaps		 snaps;
	int			 slot;
};

/* A reply of ours: +OK, or a failure logged by the server's words,
 * cleaned. */
static int
rd_ok(const struct rd_job *rj, redisReply *rep, const char *what)
{
	char why[SBX_MESSAGE_MAX];
	int rc = 0;

	if (rep == NULL || rep->type == REDIS_REPLY_ERROR ||
	    (rep->type != REDIS_REPLY_STATUS &&
	    rep->type != REDIS_REPLY_INTEGER &&
	    rep->type != REDIS_REPLY_STRING)) {
		session_text(why, sizeof(why), rep == NULL ? rj->c->errstr :
		    rep->type == REDIS_REPLY_ERROR ? rep->str :
		    "unexpected answer");
		log_warnx("%s: %s: %s", rj->service, what, why);
		rc = -1;
	}
	if (rep != NULL)
		freeReplyObject(rep);
	return rc;
}

/* The slots, from the markers and sizes list_lua gives. */
static int
rd_list(struct rd_job *rj)
{
	redisReply *rep, *m, *n;
	unsigned i;

	memset(&rj->snaps, 0, sizeof(rj->snaps));
	rep = redisCommand(rj->keep, "EVAL %s 0 %s", list_lua, MARKER);
	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY ||
	    rep->elements != 2 * SBX_MAX_SNAPSHOTS) {
		(void)rd_ok(rj, rep, "listing the snapshots");
		return -1;
	}
	for (i = 0; i < SBX_MAX_SNAPSHOTS; i++) {
		m = rep->element[2 * i];
		n = rep->element[2 * i + 1];
		if (n->type == REDIS_REPLY_INTEGER && n->integer > 0)
			snaps_set(&rj->snaps, i, m->type ==
			    REDIS_REPLY_STRING && memchr(m->str, '\0',
			    m->len) == NULL ? m->str : NULL);
	}
	freeReplyObject(rep);
	return 0;
}

/* The client id of a CLIENT LIST line (a tenant's words: "id=N ..."),
 * 0 if it is ours (named OUR_NAME) or not one. */
static unsigned long long
rd_client(const char *line)
{
	const char *name = strstr(line, " name=");
	unsigned long long id;
	char *end;

	if (strncmp(line, "id=", 3) != 0 || line[3] < '0' || line[3] > '9')
		return 0;
	id = strtoull(line + 3, &end, 10);
	if (*end != ' ' || (name != NULL && strncmp(name + 6, OUR_NAME " ",
	    sizeof(OUR_NAME)) == 0))
		return 0;
	return id;
}

/* Every client of type (normal, pubsub) ended, but ours. */
static int
rd_kill(const struct rd_job *rj, const char *type)
{
	redisReply *rep, *k;
	char *line, *next;
	unsigned long long id;

	rep = redisCommand(rj->c, "CLIENT LIST TYPE %s", type);
	if (rep == NULL || rep->type != REDIS_REPLY_STRING) {
		(void)rd_ok(rj, rep, "listing the clients");
		return -1;
	}
	for (line = rep->str; line != NULL && *line != '\0'; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((id = rd_client(line)) == 0)
			continue;
		/* One gone meanwhile is no error. */
		k = redisCommand(rj->c, "CLIENT KILL ID %llu", id);
		if (k == NULL) {
			freeReplyObject(rep);
			return rd_ok(rj, k, "ending a client");
		}
		freeReplyObject(k);
	}
	freeReplyObject(rep);
	return 0;
}

/*
 * Keys in transit: a script's reply as dump_lua gives it, checked, as the
 * arguments of the next script after its first head ones (the head's
 * strings filled in by the caller). 0, or -1 (logged).
 */
struct rd_keys {
	size_t		  n;		/* arguments, head included */
	const char	**v;
	size_t		 *len;
	char		(*num)[24];	/* the numbers, as text */
};

static int
rd_keys_take(const struct rd_job *rj, const redisReply *rep, size_t head,
    struct rd_keys *k)
{
	const redisReply *e;
	size_t i, j;

	memset(k, 0, sizeof(*k));
	if (rep == NULL || rep->type != REDIS_REPLY_ARRAY ||
	    rep->elements % KEY_FIELDS != 0) {
		log_warnx("%s: the keys came in no shape of ours", rj->service);
		return -1;
	}
	k->n = head + rep->elements;
	if ((k->v = calloc(k->n, sizeof(*k->v))) == NULL ||
	    (k->len = calloc(k->n, sizeof(*k->len))) == NULL ||
	    (k->num = calloc(k->n, sizeof(*k->num))) == NULL)
		return -1;
	for (i = 0; i < rep->elements; i++) {
		e = rep->element[i];
		j = head + i;
		if (i % KEY_FIELDS == 0 || i % KEY_FIELDS == 2) {
			/* a database (0-15) or a time left */
			if (e->type != REDIS_REPLY_INTEGER || (i % KEY_FIELDS ==
			    0 && (e->integer < 0 || e->integer > 15)))
				return -1;
			snprintf(k->num[j], sizeof(k->num[j]), "%lld",
			    e->integer);
			k->v[j] = k->num[j];
			k->len[j] = strlen(k->num[j]);
		} else {
			if (e->type != REDIS_REPLY_STRING)
				return -1;
			k->v[j] = e->str;
			k->len[j] = e->len;
		}
	}
	return 0;
}

static void
rd_keys_free(struct rd_keys *k)
{
	free(k->v);
	free(k->len);
	free(k->num);
}

/* Script src on c with the keys as its arguments after the head. */
static int
rd_eval_keys(const struct rd_job *rj, redisContext *c, const char *src,
    struct rd_keys *k, const char *const *head, size_t nhead,
    const char *what)
{
	size_t i;

	/* EVAL, the script and its 0 keys take the first three. */
	k->v[0] = "EVAL";
	k->v[1] = src;
	k->v[2] = "0";
	for (i = 0; i < 3 + nhead; i++) {
		if (i >= 3)
			k->v[i] = head[i - 3];
		k->len[i] = strlen(k->v[i]);
	}
	return rd_ok(rj, redisCommandArgv(c, (int)k->n, k->v, k->len), what);
}

/* The keys of slot (or none: -1) as load_lua gives them, into k. */
static int
rd_load(const struct rd_job *rj, size_t head, struct rd_keys *k,
    redisReply **rep)
{
	char slot[16];

	*rep = NULL;
	if (rj->slot == -1) {
		memset(k, 0, sizeof(*k));
		k->n = head;
		return (k->v = calloc(head, sizeof(*k->v))) != NULL &&
		    (k->len = calloc(head, sizeof(*k->len))) != NULL ? 0 : -1;
	}
	snprintf(slot, sizeof(slot), "%d", rj->slot);
	*rep = redisCommand(rj->keep, "EVAL %s 0 %s %s %s", load_lua, slot,
	    MARKER, TTLS);
	if (rd_keys_take(rj, *rep, head, k) == -1) {
		if (*rep != NULL && (*rep)->type == REDIS_REPLY_ERROR)
			(void)rd_ok(rj, *rep, "reading the snapshot");
		else if (*rep != NULL)
			freeReplyObject(*rep);
		*rep = NULL;
		return -1;
	}
	return 0;
}

static int
rd_reset(const struct rd_job *rj)
{
	struct rd_keys k;
	redisReply *rep;
	int rc = -1;

	if (rd_load(rj, 3, &k, &rep) == 0 && rd_kill(rj, "normal") == 0 &&
	    rd_kill(rj, "pubsub") == 0 && rd_eval_keys(rj, rj->c, reset_lua,
	    &k, NULL, 0, "the reset") == 0)
		rc = 0;
	rd_keys_free(&k);
	if (rep != NULL)
		freeReplyObject(rep);
	if (rc == 0)
		return session_report(SBX_OK, "reset");
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the reset failed "
	    "(see the monitor's log).", rj->service);
}

static int
rd_snapshot(const struct rd_job *rj)
{
	char dst[16];
	const char *head[4] = { dst, rj->q->snapshot, MARKER, TTLS };
	struct rd_keys k;
	redisReply *rep;
	int rc = -1;

	snprintf(dst, sizeof(dst), "%d", rj->slot);
	rep = redisCommand(rj->c, "EVAL %s 0", dump_lua);
	if (rd_keys_take(rj, rep, 3 + 4, &k) == 0 &&
	    rd_eval_keys(rj, rj->keep, save_lua, &k, head, 4,
	    "the snapshot") == 0)
		rc = 0;
	else if (rep != NULL && rep->type == REDIS_REPLY_ERROR)
		(void)rd_ok(rj, rep, "reading the keys");
	rd_keys_free(&k);
	if (rep != NULL && rep->type != REDIS_REPLY_ERROR)
		freeReplyObject(rep);
	if (rc == 0)
		return session_report(SBX_OK, "saved");
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the snapshot "
	    "failed (see the monitor's log).", rj->service);
}

/* The keeper, when the job needs it (a snapshot, a reset to one), and
 * the slots it holds. 0, or -1 reported. */
static int
rd_keeper(struct rd_job *rj, const struct session_env *e)
{
	if (rj->q->op == DATA_RESET && rj->q->snapshot[0] == '\0')
		return 0;
	if (e->r->dir == NULL) {
		session_report(SBX_E_BAD_REQUEST, "%s: snapshots need its "
		    "socket directory (transport unix or both).", rj->service);
		return -1;
	}
	if ((rj->keep = session_redis_keeper(e)) == NULL || rd_list(rj) == -1) {
		session_report(SBX_E_RUNTIME_FAILED, "%s: cannot read its "
		    "snapshots.", rj->service);
		return -1;
	}
	return 0;
}

void
redis_data_session(const struct session_env *e, void *arg)
{
	struct rd_job rj = { .q = arg, .service = e->r->s->name, .slot = -1 };

	if ((rj.c = session_redis(e)) == NULL) {
		session_report(SBX_E_RUNTIME_FAILED, "%s: cannot connect.",
		    rj.service);
		return;
	}
	if (rd_ok(&rj, redisCommand(rj.c, "CLIENT SETNAME " OUR_NAME),
	    "naming our client") == -1)
		session_report(SBX_E_RUNTIME_FAILED, "%s: cannot name its "
		    "session.", rj.service);
	else if (rd_keeper(&rj, e) == 0 &&
	    data_check(&rj.snaps, rj.q, rj.service, &rj.slot) == 0 &&
	    session_report(SBX_OK, "can") == 0 && session_wait() == DATA_GO)
		(void)(rj.q->op == DATA_RESET ? rd_reset(&rj) :
		    rd_snapshot(&rj));
	if (rj.keep != NULL)
		redisFree(rj.keep);
	redisFree(rj.c);
}
