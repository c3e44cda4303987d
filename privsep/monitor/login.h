/*
 * login.h - the logins a hit checks on its tcp services (login.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_LOGIN_H
#define SBX_LOGIN_H

#include "runtime.h"

/* A worker that logs in to service svc of sb, as its agent would. */
void	login_spawn(struct rt_cli *, struct sbx_sandbox *, size_t svc);

#endif
