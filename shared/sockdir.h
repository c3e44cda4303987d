/*
 * sockdir.h - per-uid directories for sandboxes' Unix sockets.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter), and the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_SOCKDIR_H
#define SBX_SOCKDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "config.h"

/*
 * What a container can write on the host: its socket directory, a tmpfs
 * mounted on run_dir/.../<service>/SOCKDIR_MOUNT before it starts, with
 * room for its sockets and their lock files and little else.
 */
#define SOCKDIR_MOUNT	"s"
#define SOCKDIR_TMPFS	"size=1m,nr_inodes=64,mode=0755"

/* run_dir/<uid>/<agent>: everything of one sandbox. -1: too long. */
int	sockdir_key_path(const struct sbx_config *, uid_t, const char *agent,
	    char *out, size_t cap);
/* run_dir/<uid>/<agent>/<service>/SOCKDIR_MOUNT: the directory the
 * service gets, a tmpfs of its own. */
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
/* run_dir/.pool/<service>-<slot>/SOCKDIR_MOUNT: a warm container's,
 * under a directory root's until claimed. */
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
/* At start: remove everything under run_dir that keep() does not name
 * (run_dir/<uid>/<agent>, or a warm container's sockdir_pool_path). */
void	sockdir_prune(const struct sbx_config *,
	    bool (*keep)(void *, const char *path), void *arg);

/* rm -r of path relative to descriptors: no link followed, no other
 * file system entered, a tmpfs of ours detached. 0, or -1 with errno. */
int	sockdir_rm_tree(const char *path);
/* Tests only: called before each entry of a directory is removed. */
extern void (*sockdir_walk_hook)(int dirfd, const char *name);

#endif
