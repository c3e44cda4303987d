/*
 * work.h - sbx-worker's jobs (main.c's table) and what they share: one
 * runtime call (run.c, rt_run.c) and the removals built on it.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter)
 */
#ifndef SBX_WORK_H
#define SBX_WORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "config.h"
#include "job.h"
#include "project.h"
#include "subuid.h"

/* One runtime call's end: its exit and what it said. */
struct run_result {
	int	status;		/* exit code, or -1 killed / not run */
	int	exec_errno;	/* execve's errno when it failed, else 0 */
	char	out[4096];
	char	err[1024];
};

/* run.c: argv with a clean env, stdout and stderr captured. */
int	run_argv(char *const argv[], char *const envp[], int64_t deadline,
	    struct run_result *);

/* resident.c: JOB_RESIDENT's body, and its check of an ask (apart for
 * its unit test): 0, or -1. */
int	resident_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	resident_ask_valid(const struct resident_ask *, size_t len);

/* spare.c: as a spare, wait for the job's descriptors (stdin, fd 3):
 * 0 when they are in place, 1 when the spawner closed the channel, -1. */
int	spare_wait(void);

/* rt_run.c: a runtime call, logged when it fails (any secret scrubbed). */
int	run_logged(char *const argv[], char *const envp[], int64_t deadline,
	    const char *secret, struct run_result *);
/* The agent's sentence for a failed call, from what the runtime said. */
void	explain(char *msg, size_t cap, const char *what, const char *image,
	    const struct run_result *);

/* rt_run.c: removals; 0 when the runtime said they went. */
int	remove_key(const struct sbx_config *, const struct sbx_key *,
	    int64_t deadline, struct run_result *);
void	remove_storage(const struct sbx_config *, const char *name,
	    int64_t deadline);
int	remove_names(const struct sbx_config *, const char *first,
	    const char *second, int64_t deadline);
/* A claimed warm container's rename or removal, one at a time. */
int	names_lock(const struct sbx_config *);
void	names_unlock(int);
int	remove_svc_names(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_service(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_claimed(const struct sbx_config *, const struct sbx_key *,
	    const struct job_svc *, size_t n, int64_t deadline);
uint32_t remove_dropped(const struct sbx_config *,
	    const struct job_sandbox *, int64_t deadline);

/* guard.c: a tcp service's port, for its owner (and root, and its
 * prober) alone, from before it is published until its container is
 * gone: a free port to publish, a rule added by its note (a key's or a
 * warm container's), a claim's change of hands, removals by key (service
 * NULL: all of the key's) or by warm slot, and at start the rules the
 * records want. 0, or -1 (logged). */
#define GUARD_NO_OWNER	((uid_t)-1)
#define GUARD_NOTE_MAX	(SBX_SLUG_MAX * 2 + 24)
struct guard_want {
	size_t	n;
	struct {
		char	 note[GUARD_NOTE_MAX];
		unsigned port;
		uid_t	 owner, prober;
	}	*v;
	size_t	 nbusy;
	unsigned *busy;		/* ports containers publish */
};
void	guard_note_key(char *, size_t, uid_t, const char *agent,
	    const char *service);
void	guard_note_pool(char *, size_t, const char *service, unsigned slot);
int	guard_open(const struct sbx_config *, const char *note, uid_t owner,
	    uid_t prober, unsigned *port);
struct guard_hand {
	const struct sbx_key *key;	/* its new owner's */
	const char	*service;
	unsigned	 slot, port;	/* the warm slot, the loopback port */
	uid_t		 prober;
};
int	guard_claim(const struct sbx_config *, const struct guard_hand *,
	    size_t n);
int	guard_del(const struct sbx_config *, uid_t, const char *agent,
	    const char *service);
int	guard_del_pool(const struct sbx_config *, const char *service,
	    unsigned slot);
int	guard_sync(const struct sbx_config *, const struct guard_want *);

/* rt_seen.c: the runtime's listing as rt_seen entries. */
int	rt_seen_parse(char *text, struct rt_seen **, size_t *);
/* rt_run.c: every container of sbx's that the runtime lists, parsed. */
int	rt_list(const struct sbx_config *, struct rt_seen **, size_t *);

/* config.c: sbx.conf from fd, opened by root as path (fd -1: its open
 * failed with open_errno); 0, or -1 with one line in err (file:line:
 * cause). */
int	config_parse(int fd, int open_errno, const char *path,
	    struct sbx_config *, char *err, size_t errlen);
size_t	split_words(char *s, char **out, size_t max);

/* jobfiles.c: what JOB_RELOAD and -t parse, opened by root. */
#define JOB_FILES_MAX	(2 * RELOAD_MAX_PROJECTS)
struct job_files {
	int		 dir_err;	/* the projects directory's, or 0 */
	size_t		 n, cap;
	struct job_file {
		char	 name[256];
		int	 fd;		/* -1: err says why */
		int	 err;
	}		*v;
	int		 subuid_fd;	/* -1: subuid_err says why */
	int		 subuid_err;
};
/* The projects directory's files and the subordinate uids' (subuid NULL:
 * none); -1 if the directory cannot be listed (dir_err). */
int	job_files_open(const char *projects, const char *subuid,
	    struct job_files *);
void	job_files_close(struct job_files *);

/* subuid.c: /etc/subuid (path) from jf, sorted, no overlap; a missing
 * file is an empty table; -1 with err otherwise. */
int	subuid_parse(const struct job_files *, const char *path,
	    struct subuid_table *, char *err, size_t errlen);

/* ini_check.c: the number of the first line of f that is indented and
 * looks like a key (err says so), or 0. */
int	indented_key(FILE *, char *err, size_t errlen);

/* projects.c: every <slug>.conf of cfg->projects, from jf, an invalid
 * file's project kept as invalid with why; -1 if the directory is
 * unreadable. check: each problem on stderr as file:line: cause. */
int	projects_parse(const struct sbx_config *, const struct job_files *,
	    struct project_table *, bool check);

/* metrics_fmt.c: the exposition of m to f; 0, or -1 if a write failed. */
struct metrics_snap;
int	metrics_format(FILE *f, const struct metrics_snap *m);

/* The jobs: each writes its one result to fd; its return is its exit. */
int	provision_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	claim_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	teardown_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	evict_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	warm_start_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	warm_remove_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	rename_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	reload_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	adopt_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	remove_gone_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	config_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	metrics_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	log_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	purge_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	login_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	data_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	bind_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
int	brokerlog_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
