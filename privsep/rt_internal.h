/*
 * rt_internal.h - internal to the runtime: runtime_cli.c, rt_run.c,
 * rt_worker.c and liveness.c, and helper.c, whose job table names the
 * workers' bodies; nothing else includes it. The runtime's API is
 * runtime.h.
 *
 * The four files are one runtime split by the process each part runs in
 * (runtime_cli.c says which); this header is what one part calls or
 * hands to another. Everything else in them is static.
 */
#ifndef SBX_RT_INTERNAL_H
#define SBX_RT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"
#include "config.h"
#include "helper.h"
#include "runtime.h"
#include "worker.h"

/* A provision's or a teardown's job: runtime_cli.c starts it and takes
 * its outcome in the loop; the worker is given sb as a job_sandbox
 * (helper.h), and rt_worker.c's body runs there. */
struct prov_job {
	struct rt_cli		*rt;
	struct sbx_sandbox	*sb;
};

/* evict_claimed's job (runtime_cli.c), run by evict_body (rt_worker.c).
 * A claimed warm container of an evicted sandbox: by its names only
 * (the key's new containers and directories are the new provision's). */
struct evict_job {
	struct rt_cli		*rt;
	struct job_evict	 e;	/* what the worker is given */
};

/* rt_run.c: a runtime call, logged when it fails (any secret scrubbed). */
int	run_logged(char *const argv[], char *const envp[], int64_t deadline,
	    const char *secret, struct run_result *);
/* The agent's sentence for a failed call, from what the runtime said. */
void	explain(char *msg, size_t cap, const char *what, const char *image,
	    const struct run_result *);

/* rt_run.c: removals, in a worker; 0 when the runtime said they went. */
int	remove_key(const struct sbx_config *, const struct sbx_key *,
	    int64_t deadline, struct run_result *);
void	remove_storage(const struct sbx_config *, const char *name,
	    int64_t deadline);
int	remove_names(const struct sbx_config *, const char *first,
	    const char *second, int64_t deadline);
int	remove_svc_names(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_service(const struct sbx_config *, const struct sbx_key *,
	    const char *service, unsigned warm, int64_t deadline);
int	remove_claimed(const struct sbx_config *, const struct sbx_key *,
	    const struct sbx_svc *, size_t n, int64_t deadline);
uint32_t remove_dropped(const struct sbx_config *,
	    const struct sbx_sandbox *, int64_t deadline);
/* A reshape: did it drop sb->prev[i]? Also the loop's (close_pidfds). */
bool	dropped(const struct sbx_sandbox *, size_t i);

/* rt_worker.c: the bodies of helper.c's jobs, in the exec'd worker. */
int	provision_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);		/* job_sandbox; writes sbx_outcome */
int	teardown_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);		/* job_sandbox; writes sbx_outcome */
int	evict_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);		/* job_evict; writes a uint32_t code */
/* rt_run.c: the runtime's listing, as rt_seen[n] written to fd. */
int	list_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
/* rt_run.c: rt_gone[len / size]; its exit status: 0 when all went. */
int	remove_gone_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);
/* The longest ready_timeout of sb's services; 0: one is not configured.
 * Also the loop's: rt_provision's backstop deadline. */
unsigned max_ready_timeout(const struct sbx_config *,
	    const struct sbx_sandbox *);

/* runtime_cli.c: how the agent reaches a service; the loop's (a claim)
 * and a provision worker's. */
void	reach(const struct sbx_config *, const struct sbx_sandbox *,
	    const struct service_cfg *, struct sbx_conn *);
/* A pidfd of pid; -1 on failure. The loop's, and rt_run.c's wait_child. */
int	pidfd_open_pid(pid_t);

/* liveness.c: rt_cli_ops.is_live, a hit's check from the loop. */
bool	rt_is_live(void *impl, struct sbx_sandbox *);

#endif
