/*
 * record.h - what the monitor alone knows of a live sandbox, kept in a
 * root-only file so that a restart can adopt it (adopt.c).
 * runs in: the monitor (root, monitor allowlist once started): at its start
 *   and in its loop
 */
#ifndef SBX_RECORD_H
#define SBX_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"
#include "config.h"
#include "record_fmt.h"

int	record_open_dir(const struct sbx_config *, char *err, size_t cap);
/* sb's names and passwords, o's sockets and ports (a provision's). */
int	record_write(const struct sbx_config *, const struct sbx_sandbox *,
	    const struct sbx_outcome *);
void	record_remove(uid_t, const char *agent);
/* sb's record written again, with the process it is now bound to. */
void	record_lease(const struct sbx_config *, const struct sbx_sandbox *);
/* A warm container (uid RECORD_POOL_UID, idmap and svc[0].warm = slot,
 * project = its service), named pool-<service>-<slot>. */
int	record_write_pool(const struct sbx_config *, const struct sbx_svc *,
	    unsigned slot);
void	record_remove_pool(const char *service, unsigned slot);
void	record_touch(struct sbx_sandbox *, int64_t now);
/* One file of the directory, validated; its mtime is when last used. */
int	record_dirfd(void);

#endif
