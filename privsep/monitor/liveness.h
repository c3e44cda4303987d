/*
 * liveness.h - a hit's checks of its sandbox's containers (liveness.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_LIVENESS_H
#define SBX_LIVENESS_H

#include "runtime.h"

/* A container's process, by its pidfd. */
bool	rt_pid_alive(int pidfd);
/* A warm container at a claim: its process and its socket file. */
bool	rt_warm_alive(const struct sbx_svc *);
/* A hit's check: are sb's services live? */
bool	rt_is_live(void *impl, struct sbx_sandbox *);

#endif
