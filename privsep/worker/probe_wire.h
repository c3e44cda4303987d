/*
 * probe_wire.h - one readiness attempt at protocol level (probe_wire.c).
 * runs in: the prober that a provision's service children and JOB_LOGIN /
 *   JOB_WARM_START fork, after its drop (the sandbox's prober uid, not
 *   dumpable, probe allowlist)
 */
#ifndef SBX_PROBE_WIRE_H
#define SBX_PROBE_WIRE_H

#include <stdint.h>

struct probe_target;

/* Connect to t's socket (or its relay's address) and ask the service
 * whether it is ready, within a second and before deadline: 0 if it
 * answered as a ready one does, -1 otherwise. */
int	probe_wire_once(const struct probe_target *t, int64_t deadline);

#endif
