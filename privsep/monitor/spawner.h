/*
 * spawner.h - every exec the monitor asks for: a worker's or the broker's
 * (spawner.c).
 * runs in: the monitor (root, monitor allowlist once started), and the
 *   spawner, its fork made before that (root, unfiltered)
 */
#ifndef SBX_SPAWNER_H
#define SBX_SPAWNER_H

#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "job.h"

/* What the spawner is asked: a fixed head, and one descriptor per role. */
#define SPAWN_MAGIC	0x73627873u	/* "sbxs" */
enum spawn_what {
	SPAWN_WORKER = 1,	/* fds: the job's sealed memfd [, fd 3's] */
	SPAWN_BROKER,		/* fds: agent socket, channel, ranges [, stderr] */
};
struct spawn_req {
	uint32_t	magic;
	uint32_t	what;		/* enum spawn_what */
	uint32_t	type;		/* a worker's enum job_type */
	uint32_t	foreground;	/* the broker's -d */
};
struct spawn_ans {
	uint32_t	magic;
	int32_t		pid;		/* > 0, or -errno */
};

/* The broker's executable and what its command line is made of: the
 * spawner's copy is taken when it is forked (sbx.conf is read once). */
struct spawn_broker {
	char		path[4096];
	const struct sbx_config *cfg;
};

/*
 * Fork the spawner: from then on every spawn_* goes through it, and its
 * children are the monitor's (CLONE_PARENT), reaped and signalled as
 * before. exe is sbx-worker's descriptor (workers_open). 0, or -1.
 */
int	spawner_start(int exe, const struct spawn_broker *);
/* The spawner's pid, 0 before spawner_start. */
pid_t	spawner_pid(void);
/* At a clean stop: its channel closed, it ends and is reaped. */
void	spawner_stop(void);

/* A worker whose job is the sealed memfd jobfd, with keep_fd (or -1) at
 * its fd 3, as the monitor's child: its pid, or -1. */
pid_t	spawn_worker(enum job_type, int jobfd, int keep_fd, int exe);
/* The broker, with its four descriptors (log_w -1 with -d). */
pid_t	spawn_broker(const struct spawn_broker *, int foreground,
	    int listen_fd, int chan, int ranges, int log_w);

/* The spawner's check of a request, apart for its unit test: 0, or -1
 * and why. */
int	spawn_req_valid(const struct spawn_req *, size_t len, int nfds,
	    const int *fds, char *why, size_t whylen);
/* The monitor's check of an answer: the pid, or -1 with errno. */
pid_t	spawn_ans_valid(const struct spawn_ans *, ssize_t len);

#endif
