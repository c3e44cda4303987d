/*
 * record.h - what the monitor alone knows of a live sandbox, kept in a
 * root-only file so that a restart can adopt it (adopt.c).
 */
#ifndef SBX_RECORD_H
#define SBX_RECORD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "cache.h"
#include "config.h"

#define RECORD_MAGIC	0x73627872u	/* "sbxr" */
#define RECORD_VERSION	3	/* 1: without warm; 1, 2: the old hash */
#define RECORD_POOL_UID	UINT32_MAX	/* a warm container's, unclaimed */

struct record_svc {
	struct sbx_conn	conn;		/* name, socket, host, port, password */
	uint64_t	confhash;	/* its [service] section's hash (config.c)
					 * when started */
	uint32_t	warm;		/* claimed from the pool: its slot */
	uint32_t	pad;
};

struct record {
	uint32_t	magic, version;
	uint32_t	uid, nservices, idmap;
	char		agent[SBX_SLUG_MAX];
	char		project[SBX_SLUG_MAX];
	int64_t		created_wall_ms;	/* CLOCK_REALTIME */
	struct record_svc svc[SBX_MAX_SERVICES];	/* nservices written */
};

/* state_dir/sandboxes, root-only; the descriptor stays open. */
int	record_open_dir(const struct sbx_config *, char *err, size_t cap);
/* sb's names and passwords, o's sockets and ports (a provision's). */
int	record_write(const struct sbx_config *, const struct sbx_sandbox *,
	    const struct sbx_outcome *);
void	record_remove(uid_t, const char *agent);
/* A warm container (uid RECORD_POOL_UID, idmap and svc[0].warm = slot,
 * project = its service), named pool-<service>-<slot>. */
int	record_write_pool(const struct sbx_config *, const struct sbx_conn *,
	    unsigned slot);
void	record_remove_pool(const char *service, unsigned slot);
void	record_touch(struct sbx_sandbox *, int64_t now);
/* One file of the directory, validated; its mtime is when last used. */
int	record_read(const char *name, struct record *, int64_t *used_wall_ms);
int	record_dirfd(void);
bool	record_same_config(const struct record *, uint32_t i,
	    const struct service_cfg *);

#endif
