/* runtime.h - the docker-CLI-compatible runtime behind struct sbx_runtime. */
#ifndef SBX_RUNTIME_H
#define SBX_RUNTIME_H

#include "cache.h"
#include "config.h"
#include "idmap.h"
#include "warm.h"
#include "worker.h"

struct rt_cli {
	const struct sbx_config	*cfg;
	struct worker_pool	*pool;
	struct idmap		 idmap;
	struct warm		 warm;		/* warm containers (warm.c) */
};

extern const struct sbx_runtime_ops rt_cli_ops;

/* A container with sbx labels, as the runtime lists it (adopt.c). */
struct rt_seen {
	char	name[SBX_SLUG_MAX * 3];
	char	agent[SBX_SLUG_MAX];
	uid_t	uid;
	bool	pool;		/* a warm container's labels: no uid, agent */
	int	pid;		/* 0: not running */
	int	port;		/* published on 127.0.0.1, or 0 */
};

/* At start, before anything else of the runtime's: the host's lock for
 * its sbx containers (one monitor per host and runtime); -1 with err. */
int	runtime_lock_host(const struct sbx_config *, char *err, size_t errlen);
/* After daemon(3): the lock is held still, under the daemon's pid. */
void	runtime_lock_moved(void);
/* At start: what the runtime lists, parsed by a worker, every entry
 * checked (rt_seen_sound); -1, logged, otherwise. */
int	runtime_list(const struct sbx_config *, struct rt_seen **, size_t *);
/* rt_seen.c: the worker's parser and the monitor's check. */
int	rt_seen_parse(char *text, struct rt_seen **, size_t *);
bool	rt_seen_sound(const struct rt_seen *);
/* What adoption discards: a whole key, or one service of a kept one. */
struct rt_gone {
	struct sbx_key	key;
	char		service[SBX_SLUG_MAX];	/* "": every container */
	char		name[SBX_SLUG_MAX * 3];	/* set: this container only */
};
int	runtime_remove(const struct sbx_config *, const struct rt_gone *,
	    size_t);
/* Does something listen at c's socket or loopback port? Never waits. */
bool	rt_listening(const struct sbx_conn *);
bool	rt_pid_alive(int pidfd);
/* A warm container at a claim: its process and its socket file. */
bool	rt_warm_alive(const struct sbx_svc *);


/* Warm containers' runtime jobs, each in a worker (warm.c decides):
 * the worker is given w, or renames, and nothing of rt. */
struct warm_job {
	struct rt_cli	*rt;
	struct job_warm	 w;
	struct job_renames renames;	/* rt_rename_body's */
};
struct warm_started {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};
/* In the exec'd worker (helper.c): job_warm, job_warm, job_renames. */
int	rt_warm_start_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);		/* writes warm_started */
int	rt_warm_remove_body(int fd, const struct sbx_config *,
	    const void *job, size_t len);	/* writes a uint32_t code */
int	rt_rename_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);		/* writes a uint32_t code */

#endif
