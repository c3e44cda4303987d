/*
 * claims.h - the claims of warm tcp containers that come together, their
 * ports handed over by one JOB_CLAIM (claims.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_CLAIMS_H
#define SBX_CLAIMS_H

#include <stdbool.h>
#include <stddef.h>

#include "job.h"

struct rt_cli;
struct sbx_sandbox;

/* The claims waiting for the next JOB_CLAIM; at most one runs. */
struct claims {
	struct sbx_sandbox	*pending[CLAIM_BATCH];
	size_t			 npending;
	bool			 running;
};

/* Can one more claim wait for the next batch? */
bool	claims_room(const struct rt_cli *);
/* sb's claim, recorded and replied to once its batch has answered
 * (cache_claimed). */
void	claims_add(struct rt_cli *, struct sbx_sandbox *);
/* At the end of each pass of the loop: the claims pending, in one job,
 * unless one runs (its end's pass sends them). */
void	claims_send(struct rt_cli *);

#endif
