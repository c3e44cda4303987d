/*
 * login.h - JOB_LOGIN: does a sandbox's tcp service still take logins?
 * (login.c).
 * runs in: sbx-worker's JOB_LOGIN (root, runtime deny filter)
 */
#ifndef SBX_WORKER_LOGIN_H
#define SBX_WORKER_LOGIN_H

#include <stddef.h>

struct sbx_config;

/* The job's body (main.c's table): it writes its one result to fd; its
 * return is its exit. */
int	login_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
