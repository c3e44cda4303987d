/*
 * jobpool.h - jobs for sbx-worker, whose result comes back on a pipe, so
 * that the monitor's loop never waits on the runtime (jobpool.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_JOBPOOL_H
#define SBX_JOBPOOL_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "config.h"
#include "job.h"

/* result is NULL when the worker died, overran or wrote a short result. */
typedef void (*worker_done)(void *arg, const void *result, size_t len);
/* The worker's process exited, after its done: nothing of its job runs
 * (jobpool.c). */
typedef void (*worker_exited)(void *arg);

struct worker {
	TAILQ_ENTRY(worker) entry;
	pid_t		pid;
	int		fd;		/* its result pipe, -1 once answered */
	int		pidfd;		/* its process: it counts until exit */
	int64_t		deadline;
	size_t		want, got;
	unsigned char	*buf;
	worker_done	done;
	void		*arg;
	worker_exited	exited;		/* NULL: no one asks */
	void		*exited_arg;
	int		killed;
	int		uncounted;	/* a resident: not toward max */
};

TAILQ_HEAD(worker_list, worker);

struct worker_pool {
	struct worker_list	 live;
	unsigned		 n;		/* workers whose process runs */
	unsigned		 max;
};

/* First of all: sbx-worker at path is opened (root's, written by nobody
 * else); -1 with err. */
int	workers_open(const char *path, char *err, size_t errlen);
/* That descriptor, for the spawner. */
int	workers_exe(void);
/* Once the config is read: what every job's env is made of. */
void	workers_init(struct worker_pool *, unsigned max,
	    const struct sbx_config *cfg);
/*
 * Start a job (len bytes at arg, copied: the caller may free or wipe it
 * on return) with the [service] sections of svcmask (bit i: sbx.conf's
 * i-th), whose worker writes exactly result_size bytes; done gets them
 * in the loop.
 */
int	worker_spawn(struct worker_pool *, enum job_type, uint32_t svcmask,
	    const void *arg, size_t len, size_t result_size, int64_t deadline,
	    worker_done, void *done_arg);
/* The same, and exited is called once its process has exited (a job
 * whose worker goes on after its result: a reset's tidy-up). */
int	worker_spawn_held(struct worker_pool *, enum job_type,
	    uint32_t svcmask, const void *arg, size_t len, size_t result_size,
	    int64_t deadline, worker_done, void *done_arg, worker_exited,
	    void *exited_arg);
/* The same for a worker that stays (a resident, rt_data.c): msg and two
 * pipes sent on chan, the result's and one whose EOF is the job's end,
 * after which exited is called; a deadline kills pid's process group.
 * 0, or -1 when chan takes nothing (the resident is gone). */
int	worker_send_held(struct worker_pool *, pid_t pid, int chan,
	    const void *msg, size_t len, size_t result_size, int64_t deadline,
	    worker_done, void *done_arg, worker_exited, void *exited_arg);
/* A worker that stays, keep_fd at its fd 3: in the pool, its exit
 * watched (then exited is called), not counted toward max; no deadline,
 * no result. Its pid, or -1. */
pid_t	worker_spawn_watched(struct worker_pool *, enum job_type,
	    uint32_t svcmask, const void *arg, size_t len, int keep_fd,
	    worker_exited, void *exited_arg);
/* At start, before the loop: a job waited for (keep_fd at its fd 3, or
 * -1) until deadline; 0 when its worker exited 0. */
int	worker_spawn_wait(enum job_type, uint32_t svcmask, const void *arg,
	    size_t len, int keep_fd, int64_t deadline);
/* A job that lives on (keep_fd at its fd 3), reaped by the caller. */
pid_t	worker_spawn_long(enum job_type, int keep_fd);
/* A worker beyond what tenants may still need, for background work (a
 * pool's refill, a login check): one for every provision max_provisions
 * lets start besides the provisions running, and one for a teardown. */
bool	workers_spare(const struct worker_pool *, unsigned max_provisions,
	    size_t provisions);
size_t	workers_pollfds(struct worker_pool *, struct pollfd *, size_t max);
void	workers_events(struct worker_pool *, const struct pollfd *, size_t n);
int64_t	workers_next_deadline(struct worker_pool *);
void	workers_expire(struct worker_pool *, int64_t now);

#endif
