/*
 * run.h - one runtime call: argv with a clean environment, its stdout and
 * stderr captured, and what to say when it fails (run.c).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and a runtime call's child until its exec (root, runtime
 *   deny filter)
 */
#ifndef SBX_RUN_H
#define SBX_RUN_H

#include <stddef.h>
#include <stdint.h>

/* One runtime call's end: its exit and what it said. */
struct run_result {
	int	status;		/* exit code, or -1 killed / not run */
	int	exec_errno;	/* execve's errno when it failed, else 0 */
	char	out[4096];
	char	err[1024];
};

/* argv with a clean env, stdout and stderr captured. */
int	run_argv(char *const argv[], char *const envp[], int64_t deadline,
	    struct run_result *);

/* A runtime call, logged when it fails (any secret scrubbed). */
int	run_logged(char *const argv[], char *const envp[], int64_t deadline,
	    const char *secret, struct run_result *);
/* The agent's sentence for a failed call, from what the runtime said. */
void	explain(char *msg, size_t cap, const char *what, const char *image,
	    const struct run_result *);

#endif
