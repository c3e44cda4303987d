/* sockdir.h - per-uid directories for sandboxes' Unix sockets. */
#ifndef SBX_SOCKDIR_H
#define SBX_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/* run_dir/<uid>/<agent>: everything of one sandbox. -1: too long. */
int	sockdir_key_path(const struct sbx_config *, uid_t, const char *agent,
	    char *out, size_t cap);
/* run_dir/<uid>/<agent>/<service>: the directory the service gets. */
int	sockdir_path(const struct sbx_config *, uid_t, const char *agent,
	    const char *service, char *out, size_t cap);
/* Make that directory (and its parents, with their modes and the ACL),
 * empty; with service NULL, <uid>/<agent>/ alone. 0, or -1 with one
 * line in err. */
int	sockdir_make(const struct sbx_config *, uid_t, const char *agent,
	    const char *service, char *err, size_t cap);
/* Remove everything of the sandbox, and <uid>/ if it is then empty. */
void	sockdir_remove(const struct sbx_config *, uid_t, const char *agent);
/* One service's directory, when a reshape dropped the service. */
void	sockdir_remove_service(const struct sbx_config *, uid_t,
	    const char *agent, const char *service);
/* run_dir/.pool/<service>-<slot>: a warm container's, root's until claimed. */
int	sockdir_pool_path(const struct sbx_config *, const char *service,
	    unsigned slot, char *out, size_t cap);
int	sockdir_pool_make(const struct sbx_config *, const char *service,
	    unsigned slot, char *err, size_t cap);
void	sockdir_pool_remove(const struct sbx_config *, const char *service,
	    unsigned slot);
/* A claim, after sockdir_make without a service: the warm container's
 * directory becomes the sandbox's. */
int	sockdir_claim(const struct sbx_config *, const char *service,
	    unsigned slot, uid_t, const char *agent, char *err, size_t cap);
/* Undo sockdir_claim (a later step of the claim failed). */
void	sockdir_unclaim(const struct sbx_config *, const char *service,
	    unsigned slot, uid_t, const char *agent);
/* At start: remove everything under run_dir that keep() does not name. */
void	sockdir_prune(const struct sbx_config *,
	    bool (*keep)(void *, const char *path), void *arg);

#endif
