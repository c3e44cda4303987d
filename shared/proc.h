/*
 * proc.h - children of the monitor and of its workers: a clean start,
 * a pidfd, and a wait with a deadline (proc.c).
 * runs in: the monitor (root, monitor allowlist once started), its forks of a
 *   worker and of the broker until their exec (root, unfiltered);
 *   sbx-worker's JOB_ADOPT and JOB_PURGE, and their listings' children until
 *   their exec (root, runtime deny filter)
 */
#ifndef SBX_PROC_H
#define SBX_PROC_H

#include <stdint.h>
#include <sys/types.h>

/* Every signal to its default, none blocked (before an exec). */
void	proc_reset_signals(void);
/* In a fresh child: its own process group, dies with its parent, in_fd
 * (if >= 0, else /dev/null) on stdin, stdout on /dev/null, stderr kept,
 * keep_fd (if >= 0) at fd 3 and exe_fd (if >= 0) at fd 4, both
 * close-on-exec, nothing else open. */
void	proc_child_setup(int in_fd, int keep_fd, int exe_fd);
/* A pidfd of pid; -1 on failure. */
int	proc_pidfd(pid_t);
/* A small file of /proc/PID, whole and NUL-ended in buf; -1 if it is
 * gone or longer than cap. */
ssize_t	proc_file(pid_t, const char *file, char *buf, size_t cap);
/* pid's start time (/proc/PID/stat, field 22): which process it is; 0
 * if it is gone. */
uint64_t proc_start(pid_t);
/* Wait for a child until deadline, then kill it: its wait status, or -1. */
int	proc_wait(pid_t, int64_t deadline);

#endif
