/*
 * resident.c - JOB_RESIDENT: a sandbox's data worker that stays, so that
 * its resets and snapshots are asked of a postgres session logged in
 * already.
 * runs in: sbx-worker's JOB_RESIDENT (root, runtime deny filter); the
 *   sessions it forks as data.c's (the sandbox's prober uid, session
 *   allowlist)
 *
 * The monitor starts it at a sandbox's first reset or snapshot, with the
 * sandbox's job_data (its services, their passwords and ranges) and a
 * SOCK_SEQPACKET channel at fd 3, and kills it when the sandbox is
 * released or provisioned again (privsep/monitor/rt_data.c). Each job
 * comes on the channel: a resident_ask and two pipes, the data_result's
 * and the job's end's. A postgres is worked on in a kept session
 * (pg_data_kept): forked once, logged in once as the keeper, then asked
 * job after job as data.c asks its sessions, so that a reset pays no
 * exec, no load of libpq and no login. A service sbx keeps no session for
 * (redis) gets a session of the job's own, as in data.c.
 *
 * Jobs run one at a time, in the order asked. A kept session that died,
 * or whose job did not end cleanly (a refusal, a failure, a timeout:
 * which of its reports were read is then not known), is killed and forked
 * again at the next job. The end's pipe is closed once the tidy-up is
 * over: until then the job counts, as a data worker does until its exit.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "data.h"
#include "fdpass.h"
#include "iox.h"
#include "job.h"
#include "log.h"
#include "pg_data.h"
#include "pq.h"
#include "redis_data.h"
#include "resident.h"
#include "svc_session.h"

struct resident {
	const struct sbx_config	*cfg;
	struct job_data		 j;		/* the sandbox, from the start */
	struct svc_reach	 r[SBX_MAX_SERVICES];
	char			 dirs[SBX_MAX_SERVICES][SBX_SOCKET_MAX];
	struct session		 kept[SBX_MAX_SERVICES];	/* pid -1: none */
};

int
resident_ask_valid(const struct resident_ask *a, size_t len)
{
	if (len != sizeof(*a) || a->magic != RESIDENT_MAGIC)
		return -1;
	return data_ask_valid(&a->ask);
}

static void
kept_end(struct session *k)
{
	if (k->pid != -1)
		session_end(k, now_ms());	/* killed, its lines relayed */
}

/* Service i's kept session, alive (forked again if it was not): 0, or -1. */
static int
kept_ready(struct resident *rs, size_t i)
{
	struct session *k = &rs->kept[i];
	int status;

	if (k->pid != -1 && waitpid(k->pid, &status, WNOHANG) != 0) {
		k->pid = -1;	/* reaped: session_end must not wait for it */
		kept_end(k);
	}
	if (k->pid != -1)
		return 0;
	return session_start(k, &rs->r[i], pg_data_kept, NULL, INT64_MAX);
}

/* Each service's session for the job, asked (NULL: none to ask): 0, or
 * -1 with out why not. */
static int
resident_sessions(struct resident *rs, const struct data_req *q,
    const struct data_ask *ask, struct session *own, struct session **ss,
    int64_t deadline, struct data_result *out)
{
	const struct job_svc *v;
	size_t i;
	int rc;

	for (i = 0; i < rs->j.nservices; i++) {
		v = &rs->j.svc[i];
		ss[i] = NULL;
		own[i] = (struct session){ .pid = -1, .fd = -1, .log = -1 };
		if ((rc = data_reach(rs->cfg, &rs->j, v, rs->dirs[i],
		    sizeof(rs->dirs[i]), &rs->r[i])) == 0)
			continue;
		if (rc == -1)
			goto unreachable;
		if (rs->r[i].s->probe != PROBE_POSTGRES) {
			if (session_start(&own[i], &rs->r[i],
			    redis_data_session, (void *)(uintptr_t)q, deadline +
			    (int64_t)rs->cfg->runtime_timeout * 1000) == -1)
				goto unreachable;
			ss[i] = &own[i];
		} else if (kept_ready(rs, i) == 0 && write_all(rs->kept[i].fd,
		    ask, sizeof(*ask), deadline) == 0)
			ss[i] = &rs->kept[i];
		else {
			kept_end(&rs->kept[i]);
			goto unreachable;
		}
	}
	return 0;
unreachable:
	out->code = SBX_E_RUNTIME_FAILED;
	snprintf(out->message, sizeof(out->message), "%s: cannot reach it.",
	    rs->j.svc[i].conn.name);
	return -1;
}

/* After the reply: a clean job's kept sessions told to tidy up and
 * awaited, any other killed; the job's own sessions ended. */
static void
resident_tidy(struct resident *rs, struct session *own,
    struct session **ss, bool clean, int64_t deadline)
{
	struct data_result over;
	size_t i;

	for (i = 0; i < rs->j.nservices; i++) {
		if (ss[i] == NULL)
			continue;
		if (ss[i] == &own[i]) {
			(void)session_send(ss[i], DATA_TIDY);
			session_end(ss[i], deadline);
		} else if (!clean || session_send(ss[i], DATA_TIDY) == -1 ||
		    session_recv(ss[i], &over, deadline) == -1 ||
		    over.code != SBX_OK)
			kept_end(ss[i]);
		else
			session_log_relay(ss[i]->log, ss[i]->name);
	}
}

/* One job: its reply to res, its end told by closing end. */
static void
resident_job(struct resident *rs, const struct resident_ask *a, int res,
    int end)
{
	struct session own[SBX_MAX_SERVICES], *ss[SBX_MAX_SERVICES] = { NULL };
	struct data_req q = { .op = a->ask.op, .snapshot = a->ask.snapshot,
	    .max = a->ask.max };
	struct data_result out;
	int64_t deadline = now_ms() + (int64_t)rs->cfg->runtime_timeout * 1000;
	bool clean = false;

	memset(&out, 0, sizeof(out));
	if (resident_sessions(rs, &q, &a->ask, own, ss, deadline, &out) == 0)
		clean = data_act(ss, &rs->j, &q, deadline, &out) == 0;
	(void)write_all(res, &out, sizeof(out), now_ms() + 5000);
	close(res);
	resident_tidy(rs, own, ss, clean, now_ms() +
	    (int64_t)rs->cfg->runtime_timeout * 1000);
	close(end);
}

/* The next ask and its two pipes; -1 on anything else (then nothing of
 * it is left open), 1 when the monitor closed the channel. */
static int
resident_next(int chan, struct resident_ask *a, int *res, int *end)
{
	struct pollfd pfd = { .fd = chan, .events = POLLIN };
	struct fdpass_rx rx;
	struct stat s0, s1;
	ssize_t n;

	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return -1;
	memset(a, 0, sizeof(*a));
	if ((n = recv_fds(chan, a, sizeof(*a), &rx)) == 0)
		return 1;
	if (n == -1)
		return errno == EAGAIN ? 0 : -1;
	if (rx.truncated || rx.foreign || rx.nfds != 2 ||
	    resident_ask_valid(a, (size_t)n) == -1 ||
	    fstat(rx.fds[0], &s0) == -1 || !S_ISFIFO(s0.st_mode) ||
	    fstat(rx.fds[1], &s1) == -1 || !S_ISFIFO(s1.st_mode)) {
		fdpass_close(&rx);
		return -1;
	}
	*res = rx.fds[0];
	*end = rx.fds[1];
	return 0;
}

int
resident_body(int chan, const struct sbx_config *cfg, const void *job,
    size_t len)
{
	static struct resident rs;
	struct resident_ask a;
	size_t i;
	int res = -1, end = -1, rc;

	memcpy(&rs.j, job, len);
	rs.cfg = cfg;
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		rs.kept[i] = (struct session){ .pid = -1, .fd = -1, .log = -1 };
	if (data_job_valid(&rs.j) == -1)
		return 1;
	(void)pq_load();	/* before any session forks */
	while ((rc = resident_next(chan, &a, &res, &end)) != 1) {
		if (rc == -1) {
			log_warnx("resident uid=%u agent=%s: not an ask of the "
			    "monitor's", (unsigned)rs.j.key.uid, rs.j.key.agent);
			break;
		}
		if (res != -1)
			resident_job(&rs, &a, res, end);
		res = end = -1;
	}
	for (i = 0; i < SBX_MAX_SERVICES; i++)
		kept_end(&rs.kept[i]);
	explicit_bzero(&rs, sizeof(rs));
	return rc == 1 ? 0 : 1;
}
