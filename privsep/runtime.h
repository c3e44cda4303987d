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

int	runtime_list(const struct sbx_config *, struct rt_seen **, size_t *);
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


/* Warm containers' runtime jobs, each in a worker (warm.c decides). */
struct warm_job {
	struct rt_cli	*rt;
	size_t		 svc;		/* config index */
	unsigned	 slot;
	struct sbx_conn	 conn;		/* the start's: name and password */
	struct warm_rename renames[WARM_RENAMES];	/* rt_rename_body's */
	size_t		 nrenames;
};
struct warm_started {
	uint32_t	code;		/* enum sbx_code */
	char		message[SBX_MESSAGE_MAX];
	int32_t		pid;
	uint32_t	port;
};
void	rt_warm_start_body(int fd, void *job);	/* writes warm_started */
void	rt_warm_remove_body(int fd, void *job);	/* writes a uint32_t code */
void	rt_rename_body(int fd, void *job);	/* writes a uint32_t code */

#endif
