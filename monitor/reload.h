/*
 * reload.h - SIGHUP's reading of the project policies and /etc/subuid,
 * off the monitor's loop: their user and group names resolve through NSS
 * (LDAP, perhaps), which may take its time; no tenant waits for it.
 */
#ifndef SBX_RELOAD_H
#define SBX_RELOAD_H

#include "config.h"
#include "project.h"
#include "subuid.h"
#include "worker.h"

/*
 * What a reload read, for the monitor to take (it owns both tables
 * then): projects is NULL when the directory could not be read, subuids
 * when subuid_file could not be used (err says why); what was read
 * before stays in their place.
 */
typedef void (*reload_done)(void *arg, struct project_table *projects,
    struct subuid_table *subuids, const char *err);

/* In a worker; -1 when none is free (try again later). done is called
 * once; all three NULL when the worker failed as a whole (logged). */
int	reload_spawn(struct worker_pool *, reload_done, void *arg);
/* HELPER_RELOAD's body, in the exec'd worker: cfg is all it reads. */
int	reload_body(int fd, const struct sbx_config *, const void *job,
	    size_t len);

#endif
