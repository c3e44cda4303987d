/*
 * results.h - the checks of what workers send back, as hostile (results.c).
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_RESULTS_H
#define SBX_RESULTS_H

#include "runtime.h"

/* A worker's outcome of sb's provision, checked as hostile. */
bool	outcome_valid(const struct job_outcome *, const struct sbx_config *,
	    const struct sbx_sandbox *);
/* A warm start's result, checked as hostile. */
bool	warm_started_valid(const struct warm_started *,
	    const struct service_cfg *);
/* A reset's or snapshot's result, a login check's. */
bool	data_result_valid(const struct data_result *);
bool	login_result_valid(const void *result, size_t len);
/* A batch of n claims' answer, copied to r when it is of its form. */
bool	claims_result_valid(const void *result, size_t len, size_t n,
	    struct claim_results *r);
/* A teardown's. */
bool	teardown_result_valid(const void *result, size_t len);

#endif
