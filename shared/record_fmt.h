/*
 * record_fmt.h - a sandbox's record on disk (state_dir/sandboxes): what
 * the monitor alone knows of a live sandbox, so that a restart can adopt
 * it.
 * runs in: the monitor (root, monitor allowlist once started), sbx-worker's
 *   JOB_ADOPT (root, runtime deny filter)
 *
 * The monitor writes records (privsep/monitor/record.c); at start a worker
 * reads them (privsep/worker/adopt.c), and the monitor checks what it was
 * sent with record_valid, as the worker checked the file.
 */
#ifndef SBX_RECORD_FMT_H
#define SBX_RECORD_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "conn.h"

#define RECORD_MAGIC	0x73627872u	/* "sbxr" */
#define RECORD_VERSION	5	/* 1: without warm; 1, 2: the old hash;
				 * 1-3: without host_uid; 1-4: without
				 * bind_pid */
#define RECORD_V4_HEAD	(offsetof(struct record, bind_pid))
#define RECORD_POOL_UID	UINT32_MAX	/* a warm container's, unclaimed */
#define RECORD_NAME_MAX	(SBX_SLUG_MAX + 16)	/* <uid>-<agent>, pool-<svc>-<slot> */

struct record_svc {
	struct sbx_conn	conn;		/* name, socket, host, port, password */
	uint64_t	confhash;	/* its [service] section's hash (config_parse.c)
					 * when started */
	uint32_t	warm;		/* claimed from the pool: its slot */
	uint32_t	host_uid;	/* its container's uid range (0: none,
					 * or a record of version 3 or older) */
};

struct record {
	uint32_t	magic, version;
	uint32_t	uid, nservices, idmap;
	char		agent[SBX_SLUG_MAX];
	char		project[SBX_SLUG_MAX];
	int64_t		created_wall_ms;	/* CLOCK_REALTIME */
	int32_t		bind_pid;		/* 0: bound to no process */
	uint32_t	pad;
	uint64_t	bind_start;		/* its start (lease.c) */
	struct record_svc svc[SBX_MAX_SERVICES];	/* nservices written */
};

/* The bytes of a record of n services. */
size_t	record_size(uint32_t nservices);
/* Every field in range, every string ended, names slugs, a password. */
bool	record_valid(const struct record *);
/* Was service i started as s is configured now? */
bool	record_same_config(const struct record *, uint32_t i,
	    const struct service_cfg *);

#endif
