/*
 * jobuser.h - the parsing jobs' drop from root to sbx-job (jobuser.c).
 * runs in: sbx-worker's JOB_CONFIG, JOB_RELOAD, JOB_METRICS, JOB_LOG and
 *   JOB_BROKERLOG (root until their drop, then sbx-job, runtime deny filter
 *   and job allowlist)
 */
#ifndef SBX_JOBUSER_H
#define SBX_JOBUSER_H

#include <stdbool.h>
#include <sys/types.h>

/* JOB_USER's uid and gid, looked up as root; -1, said in one line, if the
 * user is missing or is root. */
int	jobuser_find(uid_t *, gid_t *);
/* This process becomes JOB_USER for good: the checked drop (drop.c), not
 * dumpable, the job allowlist stacked on the runtime deny filter. 0, or
 * -1 with one line naming the cause. */
int	jobuser_drop(void);
/* JOB_LOG's and JOB_BROKERLOG's start: with open, syslog(3) connected now
 * under the monitor's name and pid, then jobuser_drop. */
int	jobuser_drop_syslog(bool open);
/*
 * fn(arg) in a child that drops first: root keeps only what must be root
 * (the opens before, a rename after), the parse runs as JOB_USER. The
 * child closes close_fd (the result pipe: the root parent's to write) and
 * dies with its parent. fn's exit code (1 if the drop failed), or -1 if
 * the child was killed or could not be made.
 */
int	jobuser_fork(int close_fd, int (*fn)(void *), void *arg);

#endif
