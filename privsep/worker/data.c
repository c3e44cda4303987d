/*
 * data.c - JOB_DATA: a reset or a snapshot of a ready sandbox's data.
 * runs in: sbx-worker's JOB_DATA (root, runtime deny filter)
 *
 * The monitor decided whose sandbox it is and names its services; every
 * one of them whose data sbx knows is handled (postgres, pg_data.c;
 * redis, redis_data.c), each in a session child of its own that reads
 * the tenant's bytes as the sandbox's uid, never as root (svc_session.c).
 * Services probed by tcp alone hold nothing sbx can reset: skipped.
 *
 * Two phases, so that a refusal changes nothing: every session first
 * checks (does the snapshot to return to exist in each? would a new one
 * pass max_snapshots?), and only when all say yes are they told to act.
 * The one data_result goes to fd as soon as every session has acted; the
 * slow tidy-up (dropping the database a reset replaced, preparing the
 * next copy) comes after, in the sessions, bounded by runtime_timeout.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "data.h"
#include "iox.h"
#include "job.h"
#include "keeper.h"
#include "log.h"
#include "pg_data.h"
#include "redis_data.h"
#include "service.h"
#include "slug.h"
#include "sockdir.h"
#include "svc_session.h"

int
data_job_valid(const struct job_data *j)
{
	size_t i;

	if (j->nservices > SBX_MAX_SERVICES ||
	    j->max_snapshots > SBX_MAX_SNAPSHOTS ||
	    !memchr(j->key.agent, '\0', sizeof(j->key.agent)) ||
	    !memchr(j->project, '\0', sizeof(j->project)) ||
	    !memchr(j->snapshot, '\0', sizeof(j->snapshot)) ||
	    (j->op != DATA_RESET && j->op != DATA_SNAPSHOT))
		return -1;
	if (j->snapshot[0] != '\0' ?
	    !slug_valid(j->snapshot, strlen(j->snapshot)) :
	    j->op == DATA_SNAPSHOT)
		return -1;
	for (i = 0; i < j->nservices; i++)
		if (!memchr(j->svc[i].conn.name, '\0', SBX_SLUG_MAX) ||
		    !memchr(j->svc[i].conn.password, '\0', SBX_SECRET_MAX) ||
		    j->svc[i].conn.port > 65535)
			return -1;
	return 0;
}

int
data_reach(const struct sbx_config *cfg, const struct job_data *j,
    const struct job_svc *v, char *dir, size_t dircap, struct svc_reach *r)
{
	const struct service_cfg *s = config_service(cfg, v->conn.name);

	if (s != NULL && s->probe == PROBE_TCP)
		return 0;
	if (s == NULL || v->host_uid == 0 || ((s->transport &
	    TRANSPORT_UNIX) && sockdir_path(cfg, j->key.uid, j->key.agent,
	    s->name, dir, dircap) == -1) || (!(s->transport &
	    TRANSPORT_UNIX) && v->conn.port == 0))
		return -1;
	*r = (struct svc_reach){ .s = s,
	    .dir = (s->transport & TRANSPORT_UNIX) ? dir : NULL,
	    .port = (uint16_t)v->conn.port,
	    .uid = v->host_uid + JOB_RANGE_UIDS - 1,
	    .gid = v->host_uid + JOB_RANGE_UIDS - 1,
	    .user = s->user, .password = v->conn.password,
	    .database = s->database };
	if (s->probe == PROBE_POSTGRES)
		(void)keeper_derive(cfg, v->conn.password, r->keeper_pw);
	return 1;
}

/* One service's session, unless it holds nothing sbx can reset (0 with
 * no session). */
static int
data_start(const struct sbx_config *cfg, const struct job_data *j,
    const struct job_svc *v, const struct data_req *q, char *dir,
    size_t dircap, struct svc_reach *r, struct session *ss,
    int64_t deadline)
{
	int rc;

	ss->pid = -1;
	ss->fd = -1;
	ss->log = -1;
	if ((rc = data_reach(cfg, j, v, dir, dircap, r)) <= 0)
		return rc;
	return session_start(ss, r, r->s->probe == PROBE_POSTGRES ?
	    pg_data_session : redis_data_session, (void *)(uintptr_t)q,
	    deadline);
}

/* Every session's next report; the first that is not SBX_OK is the
 * reply. 0: all said yes. */
static int
data_collect(struct session *const *ss, size_t n, const struct job_svc *v,
    int64_t deadline, struct data_result *out)
{
	struct data_result res;
	size_t i;

	for (i = 0; i < n; i++) {
		if (ss[i] == NULL)
			continue;
		if (session_recv(ss[i], &res, deadline) == -1) {
			res.code = now_ms() >= deadline ? SBX_E_TIMEOUT :
			    SBX_E_RUNTIME_FAILED;
			snprintf(res.message, sizeof(res.message), "%s: %s.",
			    v[i].conn.name, res.code == SBX_E_TIMEOUT ?
			    "another reset or snapshot of this sandbox, or "
			    "its server, took too long" :
			    "the reset or snapshot did not finish (see the "
			    "monitor's log)");
		}
		if (res.code != SBX_OK) {
			*out = res;
			return -1;
		}
	}
	return 0;
}

/* The sentence of a job done. */
static void
data_done(const struct data_req *q, struct data_result *out)
{
	out->code = SBX_OK;
	if (q->op == DATA_SNAPSHOT)
		snprintf(out->message, sizeof(out->message), "snapshot %s "
		    "saved.", q->snapshot);
	else if (q->snapshot[0] != '\0')
		snprintf(out->message, sizeof(out->message), "reset to "
		    "snapshot %s.", q->snapshot);
	else
		snprintf(out->message, sizeof(out->message), "reset to the "
		    "hand-out state.");
}

int
data_act(struct session *const *ss, const struct job_data *j,
    const struct data_req *q, int64_t deadline, struct data_result *out)
{
	size_t i, started = 0;

	for (i = 0; i < j->nservices; i++)
		started += ss[i] != NULL;
	if (started == 0) {
		out->code = SBX_E_BAD_REQUEST;
		snprintf(out->message, sizeof(out->message), "this sandbox "
		    "has no service whose data sbx can reset or snapshot.");
		return -1;
	}
	if (data_collect(ss, j->nservices, j->svc, deadline, out) == -1)
		return -1;
	for (i = 0; i < j->nservices; i++)
		if (ss[i] != NULL)
			(void)session_send(ss[i], DATA_GO);
	if (data_collect(ss, j->nservices, j->svc, deadline, out) == -1)
		return -1;
	data_done(q, out);
	return 0;
}

/* Start every session, check, act: the reply in out. */
static void
data_run(const struct sbx_config *cfg, const struct job_data *j,
    const struct data_req *q, struct session *ss, int64_t deadline,
    struct data_result *out)
{
	char dirs[SBX_MAX_SERVICES][SBX_SOCKET_MAX];
	struct svc_reach r[SBX_MAX_SERVICES];
	struct session *live[SBX_MAX_SERVICES] = { NULL };
	size_t i;

	for (i = 0; i < j->nservices; i++) {
		if (data_start(cfg, j, &j->svc[i], q, dirs[i],
		    sizeof(dirs[i]), &r[i], &ss[i], deadline +
		    (int64_t)cfg->runtime_timeout * 1000) == -1) {
			out->code = SBX_E_RUNTIME_FAILED;
			snprintf(out->message, sizeof(out->message), "%s: "
			    "cannot reach it.", j->svc[i].conn.name);
			return;
		}
		live[i] = ss[i].pid != -1 ? &ss[i] : NULL;
	}
	(void)data_act(live, j, q, deadline, out);
}

int
data_body(int fd, const struct sbx_config *cfg, const void *job, size_t len)
{
	struct session ss[SBX_MAX_SERVICES];
	struct data_result out;
	struct job_data *j;
	struct data_req q;
	int64_t deadline;
	size_t i;
	int rc;

	if ((j = malloc(sizeof(*j))) == NULL)
		return 1;	/* a short result: the monitor says so */
	memcpy(j, job, len);
	if (data_job_valid(j) == -1) {
		explicit_bzero(j, sizeof(*j));
		free(j);
		return 1;
	}
	q = (struct data_req){ .op = j->op, .snapshot = j->snapshot,
	    .max = j->max_snapshots };
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		ss[i] = (struct session){ .pid = -1, .fd = -1, .log = -1 };
	memset(&out, 0, sizeof(out));
	deadline = now_ms() + (int64_t)cfg->runtime_timeout * 1000;
	data_run(cfg, j, &q, ss, deadline, &out);
	rc = write_all(fd, &out, sizeof(out), now_ms() + 5000) == 0 ? 0 : 1;
	close(fd);
	/* The reply is out: the sessions tidy up (each told so by its
	 * socket's shutdown), then end, within one runtime call's time. */
	deadline = now_ms() + (int64_t)cfg->runtime_timeout * 1000;
	for (i = 0; i < j->nservices; i++)
		if (ss[i].pid != -1) {
			(void)session_send(&ss[i], DATA_TIDY);
			(void)shutdown(ss[i].fd, SHUT_WR);
		}
	for (i = 0; i < j->nservices; i++)
		session_end(&ss[i], deadline);
	explicit_bzero(j, sizeof(*j));
	free(j);
	return rc;
}
