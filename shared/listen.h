/*
 * listen.h - a service's listener, seen with one non-blocking connect.
 * runs in: the monitor's loop (root, monitor allowlist) and sbx-worker's
 *   JOB_ADOPT (root, runtime deny filter)
 */
#ifndef SBX_LISTEN_H
#define SBX_LISTEN_H

#include <stdbool.h>

#include "conn.h"

/* Does something listen at c's socket or loopback port? Never waits. */
bool	rt_listening(const struct sbx_conn *);

#endif
