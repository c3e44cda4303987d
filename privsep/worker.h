/*
 * worker.h - forked workers whose result comes back on a pipe, so the
 * monitor's event loop never waits on the runtime.
 */
#ifndef SBX_WORKER_H
#define SBX_WORKER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/queue.h>
#include <sys/types.h>

#include "helper.h"

struct worker;
/* result is NULL when the worker died, overran or wrote a short result. */
typedef void (*worker_done)(void *arg, const void *result, size_t len);

struct worker {
	TAILQ_ENTRY(worker) entry;
	pid_t		pid;
	int		fd;
	int64_t		deadline;
	size_t		want, got;
	unsigned char	*buf;
	worker_done	done;
	void		*arg;
	int		killed;
};

TAILQ_HEAD(worker_list, worker);

struct worker_pool {
	struct worker_list	 live;
	unsigned		 n;
	unsigned		 max;
	const struct sbx_config	*cfg;		/* every job's */
};

void	workers_init(struct worker_pool *, unsigned max,
	    const struct sbx_config *);
/*
 * Start job (len bytes at arg, copied: the caller may free or wipe it
 * on return) in an exec'd worker (helper.c), whose body writes exactly
 * result_size bytes; done gets them in the loop.
 */
int	worker_spawn(struct worker_pool *, enum helper_job, const void *arg,
	    size_t len, size_t result_size, int64_t deadline, worker_done,
	    void *done_arg);
size_t	workers_pollfds(struct worker_pool *, struct pollfd *, size_t max);
void	workers_events(struct worker_pool *, const struct pollfd *, size_t n);
int64_t	workers_next_deadline(struct worker_pool *);
void	workers_expire(struct worker_pool *, int64_t now);

/* For worker bodies: run argv with a clean env, capture stdout/stderr. */
struct run_result {
	int	status;		/* exit code, or -1 killed / not run */
	int	exec_errno;	/* execve's errno when it failed, else 0 */
	char	out[4096];
	char	err[1024];
};
int	run_argv(char *const argv[], char *const envp[], int64_t deadline,
	    struct run_result *);
void	worker_child_setup(int keep_fd);
void	proc_reset_signals(void);

#endif
