/*
 * spare.h - a data worker made ahead of its job (spare.c).
 * runs in: sbx-worker's JOB_DATA started as a spare (root, runtime deny
 *   filter), until its job comes
 */
#ifndef SBX_WORKER_SPARE_H
#define SBX_WORKER_SPARE_H

/* As a spare, wait for the job's descriptors (stdin, fd 3): 0 when they
 * are in place, 1 when the spawner closed the channel, -1. */
int	spare_wait(void);

#endif
