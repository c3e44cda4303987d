/*
 * results.c - runtime jobs' results, checked before runtime.c and
 * warm.c take anything of them: a worker talks to the runtime and to
 * tenants' services, and may have been subverted.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#include <string.h>

#include "results.h"
#include "runtime.h"
#include "service.h"

/*
 * A worker's outcome, checked as hostile: a known code, a message that
 * ends, removed a yes or a no, and on success a live pid for each service started and, for a
 * tcp one, a port. Nothing else of it is taken.
 */
bool
outcome_valid(const struct job_outcome *o, const struct sbx_config *cfg,
    const struct sbx_sandbox *sb)
{
	const struct service_cfg *s;
	size_t i;

	if (o->code >= SBX_CODE_MAX ||
	    memchr(o->message, '\0', sizeof(o->message)) == NULL ||
	    o->dropped_gone >> (sb->prev != NULL ? sb->nprev : 0) != 0 ||
	    o->removed > 1)
		return false;
	if (o->code != SBX_OK)
		return true;
	for (i = 0; i < sb->nservices; i++) {
		if (sb->svc[i].keep)
			continue;
		if ((s = config_service(cfg, sb->svc[i].conn.name)) == NULL ||
		    o->svc[i].pid <= 0 || o->svc[i].port > 65535 ||
		    ((s->transport & TRANSPORT_TCP) && o->svc[i].port == 0))
			return false;
	}
	return true;
}

/* A warm start's result: a pid on success, a tcp service's port. */
bool
warm_started_valid(const struct warm_started *r, const struct service_cfg *s)
{
	return r->code < SBX_CODE_MAX &&
	    memchr(r->message, '\0', sizeof(r->message)) != NULL &&
	    (r->code != SBX_OK || (r->pid > 0 && r->port <= 65535 &&
	    (!(s->transport & TRANSPORT_TCP) || r->port > 0)));
}

/* What a data job may answer (job.h), with a message that ends. */
bool
data_result_valid(const struct data_result *r)
{
	switch (r->code) {
	case SBX_OK:
	case SBX_E_UNKNOWN_SNAPSHOT:
	case SBX_E_BAD_REQUEST:
	case SBX_E_RUNTIME_FAILED:
	case SBX_E_TIMEOUT:
		return memchr(r->message, '\0', sizeof(r->message)) != NULL;
	default:
		return false;
	}
}

/* A login check's answer: SBX_OK, exactly, keeps a service live; a
 * short, long, missing or other answer does not. */
bool
login_result_valid(const void *result, size_t len)
{
	uint32_t code;

	if (result == NULL || len != sizeof(code))
		return false;
	memcpy(&code, result, sizeof(code));
	return code == SBX_OK;
}

/*
 * The answer of a JOB_CLAIM of n claims: of the exact size, for exactly
 * those n, each code a known one and none past n. Claim i's ports are
 * its owner's only if r->code[i] is SBX_OK, exactly; false refuses
 * every claim of the batch.
 */
bool
claims_result_valid(const void *result, size_t len, size_t n,
    struct claim_results *r)
{
	size_t i;

	if (result == NULL || len != sizeof(*r) || n > CLAIM_BATCH)
		return false;
	memcpy(r, result, sizeof(*r));
	if (r->n != n)
		return false;
	for (i = 0; i < CLAIM_BATCH; i++)
		if (i < n ? r->code[i] >= SBX_CODE_MAX : r->code[i] != 0)
			return false;
	return true;
}

/* A teardown's answer: an outcome of the exact size, a known code, a
 * message that ends (logged, and the caller's reason when it failed). */
bool
teardown_result_valid(const void *result, size_t len)
{
	struct job_outcome o;

	if (result == NULL || len != sizeof(o))
		return false;
	memcpy(&o, result, sizeof(o));
	return o.code < SBX_CODE_MAX &&
	    memchr(o.message, '\0', sizeof(o.message)) != NULL;
}
