/*
 * helper.h - the monitor's slow jobs run in sbx-worker, the monitor's own
 * binary executed anew (helper.c), so that a worker holds the one job it
 * was given and nothing else of the monitor's memory: no other tenant's
 * password, no cache, no pool.
 */
#ifndef SBX_HELPER_H
#define SBX_HELPER_H

#include <stddef.h>
#include <stdint.h>

#include "cache.h"
#include "config.h"
#include "warm.h"

/* argv[0] of an exec'd worker; argv[1] is its job's name. */
#define HELPER_ARGV0	"sbx-worker"

enum helper_job {
	HELPER_PROVISION = 1,	/* job_sandbox; writes sbx_outcome */
	HELPER_TEARDOWN,	/* job_sandbox; writes sbx_outcome */
	HELPER_EVICT,		/* job_evict; writes a uint32_t code */
	HELPER_WARM_START,	/* job_warm; writes warm_started */
	HELPER_WARM_REMOVE,	/* job_warm; writes a uint32_t code */
	HELPER_RENAME,		/* job_renames; writes a uint32_t code */
	HELPER_RELOAD,		/* nothing; writes reload.c's result */
	HELPER_REMOVE_GONE,	/* rt_gone[n]; its exit status says */
	HELPER_LIST,		/* nothing; writes rt_seen[n] to a memfd */
	HELPER_NJOBS
};

/*
 * The jobs, as flat structs: what crosses to the worker is the job and
 * the config, by value, with no pointer into the monitor. The sandbox
 * of a provision or teardown: its passwords are its own.
 */
struct job_sandbox {
	struct sbx_key	key;
	char		project[SBX_SLUG_MAX];
	uint64_t	generation;
	uint32_t	idmap;
	uint32_t	nservices;
	uint32_t	reshape;	/* prev[] is the set served */
	uint32_t	nprev;
	struct sbx_svc	svc[SBX_MAX_SERVICES];
	struct sbx_svc	prev[SBX_MAX_SERVICES];
};

struct job_evict {
	struct sbx_key	key;
	char		service[SBX_SLUG_MAX];
	uint32_t	slot;
};

struct job_warm {
	uint32_t	svc;		/* config index */
	uint32_t	slot;
	struct sbx_conn	conn;		/* the start's: name and password */
};

struct job_renames {
	uint32_t	n;
	struct warm_rename v[WARM_RENAMES];
};

/*
 * In a fresh child of the monitor, after its descriptors are set (the
 * result, if any, at 3) and its filter loaded: put cfg and the job in a
 * sealed memfd on stdin and execute the monitor's binary as sbx-worker.
 * Never returns.
 */
void	helper_exec(const struct sbx_config *, enum helper_job,
	    const void *, size_t) __attribute__((noreturn));
/* main()'s first question: 0 if this is not an exec'd worker; if it
 * is (argv[0] is HELPER_ARGV0), it runs its job and never returns. */
int	helper_main(int argc, char *argv[]);

#endif
