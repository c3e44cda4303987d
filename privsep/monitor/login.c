/*
 * login.c - does a tcp service still take logins?
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * A hit's connect (liveness.c) says that the port accepts; a server whose
 * connections are all taken (max_connections, maxclients) accepts and
 * then refuses every login. So a hit of a sandbox with a tcp service has,
 * at most every LOGIN_EVERY_MS, a worker run the service's readiness
 * probe on its port, as its prober's uid (the port's guard lets it in);
 * a service that fails it is not live, and the next hit provisions the
 * sandbox anew. The answer is a code: nothing else is taken of it.
 */
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "login.h"
#include "results.h"
#include "runtime.h"
#include "service.h"

#define LOGIN_EVERY_MS	10000

struct login_job {
	struct rt_cli	*rt;
	struct sbx_key	 key;
	uint64_t	 generation;
	size_t		 svc;
};

static void
login_done(void *arg, const void *result, size_t len)
{
	struct login_job *j = arg;
	struct sbx_sandbox *sb = cache_find(j->rt->cache, j->key.uid,
	    j->key.agent);
	bool ok = login_result_valid(result, len);

	if (sb != NULL && sb->generation == j->generation &&
	    j->svc < sb->nservices && !ok) {
		sb->svc[j->svc].login_failed = true;
		log_warnx("uid=%u agent=%s: %s takes no logins on its port: "
		    "the next request provisions the sandbox anew",
		    (unsigned)sb->key.uid, sb->key.agent,
		    sb->svc[j->svc].conn.name);
	}
	free(j);
}

/* Service i of sb, if it is due and a worker is spare (provisions first:
 * the check is a hint, never a tenant's wait). */
void
login_spawn(struct rt_cli *rt, struct sbx_sandbox *sb, size_t i)
{
	struct sbx_svc *v = &sb->svc[i];
	struct login_job *j;
	struct job_login l;
	const struct service_cfg *s;
	int64_t now = now_ms();

	/* No runtime (bench/livecost.c times the checks alone): none. */
	if (rt == NULL || rt->cache == NULL ||
	    now - v->login_ms < LOGIN_EVERY_MS ||
	    (s = config_service(rt->cfg, v->conn.name)) == NULL ||
	    !(s->transport & TRANSPORT_TCP) || v->host_uid == 0 ||
	    !workers_spare(rt->pool, rt->cfg->max_provisions,
	    rt->cache->nprovisions) ||
	    (j = calloc(1, sizeof(*j))) == NULL)
		return;
	v->login_ms = now;
	*j = (struct login_job){ .rt = rt, .key = sb->key,
	    .generation = sb->generation, .svc = i };
	memset(&l, 0, sizeof(l));
	l.host_uid = v->host_uid;
	l.conn = v->conn;
	if (worker_spawn(rt->pool, JOB_LOGIN, 1U << (s - rt->cfg->services),
	    &l, sizeof(l), sizeof(uint32_t), now + 10000, login_done,
	    j) == -1)
		free(j);
	explicit_bzero(&l, sizeof(l));
}
