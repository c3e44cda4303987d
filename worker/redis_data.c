/*
 * redis_data.c - a reset or a snapshot of a sandbox's redis.
 * runs in: a session child (svc_session.c): the sandbox's own uid, not
 * dumpable; a client of the server as the agent's user
 *
 * The image's server has 32 databases: the agent's are 0-15, snapshot
 * slot i is database 16 + i, which holds a copy of every key of 0-15,
 * each named by its database's byte and its own name, a marker key
 * (MARKER) with the snapshot's name, and a hash (TTLS) of the time left
 * to each copied key that had one (a copy keeps no expiry, so that it
 * lasts as long as its snapshot; a reset gives back what was left). Each
 * change is one Lua script, which the server runs whole, without any
 * other client's command in between. All of it is the tenant's own
 * data: a marker is taken as a name only if it is a slug.
 *
 * A reset ends the agent's connections (CLIENT KILL by id, the image lets
 * its user run it; every client but those named sbx-data, which are
 * other data jobs', whose sessions the reset must not end: a tenant who
 * names its own so keeps them, and only that), empties 0-15 (FLUSHDB each: FLUSHALL
 * would take the snapshots) and copies the snapshot back if it is to
 * one. Nothing is slow enough to be left for after the reply.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data.h"
#include "log.h"

#define MARKER		"sbx:snapshot"	/* no copy's name: those start */
#define TTLS		"sbx:ttl"	/* with a byte below 16 */
#define SNAP_DB0	16
#define OUR_NAME	"sbx-data"	/* CLIENT SETNAME of our sessions */

/* Each slot's marker (or "") and its number of keys. */
static const char list_lua[] =
    "local r = {}\n"
    "for i = 0, 15 do\n"
    "  redis.call('SELECT', 16 + i)\n"
    "  local m = redis.pcall('GET', ARGV[1])\n"
    "  if type(m) ~= 'string' then m = '' end\n"
    "  r[2 * i + 1] = m\n"
    "  r[2 * i + 2] = redis.call('DBSIZE')\n"
    "end\n"
    "return r\n";

/* Every key of 0-15 into database ARGV[1], named ARGV[2]. */
static const char snap_lua[] =
    "local dst = tonumber(ARGV[1])\n"
    "redis.call('SELECT', dst)\n"
    "redis.call('FLUSHDB')\n"
    "for db = 0, 15 do\n"
    "  redis.call('SELECT', db)\n"
    "  for _, k in ipairs(redis.call('KEYS', '*')) do\n"
    "    local c = string.char(db) .. k\n"
    "    local t = redis.call('PTTL', k)\n"
    "    redis.call('COPY', k, c, 'DB', dst, 'REPLACE')\n"
    "    if t > 0 then\n"
    "      redis.call('SELECT', dst)\n"
    "      redis.call('PERSIST', c)\n"
    "      redis.call('HSET', ARGV[4], c, t)\n"
    "      redis.call('SELECT', db)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "redis.call('SELECT', dst)\n"
    "redis.call('SET', ARGV[3], ARGV[2])\n"
    "return 'OK'\n";

/* 0-15 emptied, then, if ARGV[1] is a slot's database, its copies put
 * back where they came from, with the time they had left. */
static const char reset_lua[] =
    "for db = 0, 15 do\n"
    "  redis.call('SELECT', db)\n"
    "  redis.call('FLUSHDB')\n"
    "end\n"
    "local src = tonumber(ARGV[1])\n"
    "if src < 16 then return 'OK' end\n"
    "redis.call('SELECT', src)\n"
    "for _, k in ipairs(redis.call('KEYS', '*')) do\n"
    "  local db = string.byte(k, 1)\n"
    "  if k ~= ARGV[2] and k ~= ARGV[3] and db ~= nil and db < 16 then\n"
    "    local n = string.sub(k, 2)\n"
    "    local t = redis.pcall('HGET', ARGV[3], k)\n"
    "    redis.call('COPY', k, n, 'DB', db, 'REPLACE')\n"
    "    if type(t) == 'string' then\n"
    "      redis.call('SELECT', db)\n"
    "      redis.call('PEXPIRE', n, t)\n"
    "      redis.call('SELECT', src)\n"
    "    end\n"
    "  end\n"
    "end\n"
    "return 'OK'\n";

struct rd_job {
	const struct data_req	*q;
	const char		*service;
	redisContext		*c;
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
	rep = redisCommand(rj->c, "EVAL %s 0 %s", list_lua, MARKER);
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

static int
rd_reset(const struct rd_job *rj)
{
	char src[16];

	snprintf(src, sizeof(src), "%d", rj->slot != -1 ?
	    SNAP_DB0 + rj->slot : -1);
	if (rd_kill(rj, "normal") == 0 && rd_kill(rj, "pubsub") == 0 &&
	    rd_ok(rj, redisCommand(rj->c, "EVAL %s 0 %s %s %s", reset_lua,
	    src, MARKER, TTLS), "the reset") == 0)
		return session_report(SBX_OK, "reset");
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the reset failed "
	    "(see the monitor's log).", rj->service);
}

static int
rd_snapshot(const struct rd_job *rj)
{
	char dst[16];

	snprintf(dst, sizeof(dst), "%d", SNAP_DB0 + rj->slot);
	if (rd_ok(rj, redisCommand(rj->c, "EVAL %s 0 %s %s %s %s", snap_lua,
	    dst, rj->q->snapshot, MARKER, TTLS), "the snapshot") == 0)
		return session_report(SBX_OK, "saved");
	return session_report(SBX_E_RUNTIME_FAILED, "%s: the snapshot "
	    "failed (see the monitor's log).", rj->service);
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
	    "naming our client") == -1 || rd_list(&rj) == -1)
		session_report(SBX_E_RUNTIME_FAILED, "%s: cannot read its "
		    "snapshots.", rj.service);
	else if (data_check(&rj.snaps, rj.q, rj.service, &rj.slot) == 0 &&
	    session_report(SBX_OK, "can") == 0 && session_wait() == DATA_GO)
		(void)(rj.q->op == DATA_RESET ? rd_reset(&rj) :
		    rd_snapshot(&rj));
	redisFree(rj.c);
}
