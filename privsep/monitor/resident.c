/*
 * resident.c - a sandbox's resident data worker (privsep/worker/
 * resident.c): started at the sandbox's first reset or snapshot, asked
 * for every later one, told to end when the sandbox is released or
 * provisioned again.
 * runs in: the monitor's loop (root, monitor allowlist)
 *
 * The monitor has decided whose the sandbox is (cache.c) before a job
 * comes here; the resident is that sandbox's alone. It holds the
 * job_data of the provision it was started for (its generation) and is
 * asked nothing after another provision. What it is sent is fixed-form
 * (a resident_ask and two pipes of ours), non-blocking: a resident that
 * is gone, or whose channel is full, takes nothing, is told to end, and
 * the job goes to a data worker of its own as before. Its sessions run
 * as uids of the sandbox's ranges, which stay pinned (idmap.c) until its
 * process has exited, which the pool watches.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "iox.h"
#include "log.h"
#include "resident.h"
#include "service.h"

struct resident {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;		/* NULL once told to end */
	pid_t			 pid;
	int			 chan;		/* -1 once told to end */
	uint64_t		 generation;
	size_t			 npins;
	uint32_t		 pins[SBX_MAX_SERVICES];	/* ranges */
};

/* Its process exited (its sessions with it): the ranges go back. */
static void
resident_exited(void *arg)
{
	struct resident *r = arg;

	while (r->npins > 0)
		idmap_unpin(&r->rt->idmap, r->pins[--r->npins]);
	if (r->sb != NULL)
		r->sb->resident = NULL;
	if (r->chan != -1)
		close(r->chan);
	free(r);
}

void
resident_stop(struct sbx_sandbox *sb)
{
	struct resident *r = sb->resident;

	if (r == NULL)
		return;
	sb->resident = NULL;
	r->sb = NULL;
	close(r->chan);		/* it ends after the job it is on */
	r->chan = -1;
}

/* Does sb have a postgres, whose session a resident keeps? */
static bool
has_postgres(const struct rt_cli *rt, const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	size_t i;

	for (i = 0; i < sb->nservices; i++)
		if ((s = config_service(rt->cfg, sb->svc[i].conn.name)) !=
		    NULL && s->probe == PROBE_POSTGRES)
			return true;
	return false;
}

static struct resident *
resident_start(struct rt_cli *rt, struct sbx_sandbox *sb,
    const struct job_data *j, uint32_t svcmask)
{
	struct resident *r;
	int sv[2];
	size_t i;

	if ((r = calloc(1, sizeof(*r))) == NULL)
		return NULL;
	r->rt = rt;
	r->chan = -1;
	for (i = 0; i < j->nservices; i++)
		if (j->svc[i].host_uid != 0) {
			if (idmap_pin(&rt->idmap, j->svc[i].host_uid) == -1)
				goto fail;
			r->pins[r->npins++] = j->svc[i].host_uid;
		}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) == -1)
		goto fail;
	r->pid = worker_spawn_watched(rt->pool, JOB_RESIDENT, svcmask, j,
	    sizeof(*j), sv[1], resident_exited, r);
	close(sv[1]);
	if (r->pid == -1) {
		close(sv[0]);
		goto fail;
	}
	(void)set_nonblock(sv[0]);
	r->chan = sv[0];
	r->generation = sb->generation;
	r->sb = sb;
	sb->resident = r;
	log_info("resident uid=%u agent=%s: started, pid %d",
	    (unsigned)sb->key.uid, sb->key.agent, (int)r->pid);
	return r;
fail:
	r->chan = -1;
	resident_exited(r);	/* nothing started: the pins go */
	return NULL;
}

int
resident_send(struct rt_cli *rt, struct sbx_sandbox *sb,
    const struct job_data *j, uint32_t svcmask, size_t result_size,
    int64_t deadline, worker_done done, void *done_arg,
    worker_exited exited, void *exited_arg)
{
	struct resident_ask a = { .magic = RESIDENT_MAGIC,
	    .ask = { .op = j->op, .max = j->max_snapshots } };
	struct resident *r;

	if (!has_postgres(rt, sb))
		return -1;
	if (sb->resident != NULL && sb->resident->generation !=
	    sb->generation)
		resident_stop(sb);
	if ((r = sb->resident) == NULL &&
	    (r = resident_start(rt, sb, j, svcmask)) == NULL)
		return -1;
	memcpy(a.ask.snapshot, j->snapshot, sizeof(a.ask.snapshot));
	if (worker_send_held(rt->pool, r->pid, r->chan, &a, sizeof(a),
	    result_size, deadline, done, done_arg, exited, exited_arg) == 0)
		return 0;
	if (errno != EAGAIN)	/* not a full pool: a resident gone */
		resident_stop(sb);
	return -1;
}
