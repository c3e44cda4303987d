/*
 * reload.h - the project policies and /etc/subuid, read by a worker:
 * their user and group names resolve through NSS (LDAP, perhaps), which
 * may take its time; no tenant waits for it.
 * runs in: the monitor (root, monitor allowlist once started): at its start,
 *   and in its loop on SIGHUP
 */
#ifndef SBX_RELOAD_H
#define SBX_RELOAD_H

#include "config.h"
#include "project.h"
#include "subuid.h"
#include "jobpool.h"

/*
 * What a reload read, for the monitor to take (it owns both tables
 * then): projects is NULL when the directory could not be read, subuids
 * when subuid_file could not be used (err says why); all three NULL when
 * the worker failed as a whole (logged).
 */
typedef void (*reload_done)(void *arg, struct project_table *projects,
    struct subuid_table *subuids, const char *err);

/* On SIGHUP, in the loop's background; -1 when no worker is free (try
 * again later). done is called once, from the loop. */
int	reload_spawn(struct worker_pool *, const struct sbx_config *,
	    reload_done, void *arg);
/* At start, before the loop: waited for; done is called before return. */
void	reload_wait(const struct sbx_config *, reload_done, void *arg);
/* A worker's result, checked as hostile (the unit tests' too). */
bool	reload_result_valid(const struct sbx_config *,
	    const struct reload_result *);

#endif
