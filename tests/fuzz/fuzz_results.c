/*
 * fuzz_results.c - libFuzzer harness for the monitor's checks of what
 * its workers send back (privsep/monitor/results.c, config_take.c,
 * reload.c, adopt_check.c, shared/record_fmt.c): a subverted worker may
 * write any bytes, and each check must refuse or take them without
 * reading past them or trusting a count inside them.
 *
 * Input: byte 0 picks the check, the rest is the worker's bytes. A check
 * of a fixed-size struct gets a heap copy of exactly that size (the bytes
 * given, zeros after): ASan sees any read past it. A check of a (result,
 * length) pair gets the bytes as they are, a buffer of their own size.
 * The config and the sandbox they are checked against are the monitor's
 * own, made once: postgres (tcp) and redis (unix).
 *
 * What must hold, whatever the bytes: no crash, no read out of bounds,
 * no undefined behaviour, and a few invariants of an acceptance,
 * rewritten here apart from the checks (see check_*).
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "adopt.h"
#include "cache.h"
#include "config.h"
#include "config_take.h"
#include "job.h"
#include "record_fmt.h"
#include "reload.h"
#include "results.h"

int LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static struct sbx_config cfg;
static struct sbx_svc svc[2];
static struct sbx_sandbox sb;

static void
setup(void)
{
	static int done;

	if (done++)
		return;
	cfg.nservices = 2;
	strcpy(cfg.services[0].name, "postgres");
	cfg.services[0].transport = TRANSPORT_TCP;
	strcpy(cfg.services[1].name, "redis");
	cfg.services[1].transport = TRANSPORT_UNIX;
	strcpy(svc[0].conn.name, "postgres");
	strcpy(svc[1].conn.name, "redis");
	sb.nservices = 2;
	sb.svc = svc;
}

/* The bytes as a struct of size n: a copy of exactly n bytes. */
static void *
as_struct(const uint8_t *data, size_t size, size_t n)
{
	void *p = calloc(1, n);

	assert(p != NULL);
	memcpy(p, data, size < n ? size : n);
	return p;
}

static int
ends(const char *s, size_t cap)
{
	return memchr(s, '\0', cap) != NULL;
}

static void
check_outcome(const uint8_t *data, size_t size)
{
	struct job_outcome *o = as_struct(data, size, sizeof(*o));

	if (outcome_valid(o, &cfg, &sb)) {
		assert(o->code < SBX_CODE_MAX);
		assert(ends(o->message, sizeof(o->message)));
		if (o->code == SBX_OK)
			assert(o->svc[0].pid > 0 && o->svc[0].port > 0 &&
			    o->svc[0].port <= 65535 && o->svc[1].pid > 0);
	}
	free(o);
}

static void
check_warm(const uint8_t *data, size_t size)
{
	struct warm_started *r = as_struct(data, size, sizeof(*r));

	if (warm_started_valid(r, &cfg.services[0]))
		assert(r->code < SBX_CODE_MAX);
	(void)warm_started_valid(r, &cfg.services[1]);
	free(r);
}

static void
check_data(const uint8_t *data, size_t size)
{
	struct data_result *r = as_struct(data, size, sizeof(*r));

	if (data_result_valid(r))
		assert(ends(r->message, sizeof(r->message)));
	free(r);
}

/* A (result, length) check: the bytes in a buffer of their own size. */
static void
check_raw(bool (*valid)(const void *, size_t), const uint8_t *data,
    size_t size)
{
	void *p = size > 0 ? malloc(size) : NULL;

	if (p != NULL)
		memcpy(p, data, size);
	if (valid(p, size) && valid != login_result_valid)
		assert(size == sizeof(struct job_outcome));
	free(p);
}

static void
check_record(const uint8_t *data, size_t size)
{
	size_t n = record_size(SBX_MAX_SERVICES);
	struct record *r = as_struct(data, size, n);

	if (record_valid(r))
		assert(r->nservices <= SBX_MAX_SERVICES);
	free(r);
}

static void
check_adopt(const uint8_t *data, size_t size, int gone)
{
	if (gone) {
		struct adopt_gone *g = as_struct(data, size, sizeof(*g));

		(void)adopt_gone_valid(g);
		free(g);
	} else {
		struct adopt_found *a = as_struct(data, size, sizeof(*a));

		if (adopt_found_valid(a))
			assert(ends(a->file, sizeof(a->file)));
		free(a);
	}
}

static void
check_config(const uint8_t *data, size_t size)
{
	struct sbx_config *c = as_struct(data, size, sizeof(*c));

	if (config_valid(c))
		assert(c->nservices <= SBX_MAX_SERVICES);
	free(c);
}

static void
check_reload(const uint8_t *data, size_t size)
{
	struct reload_result *r = as_struct(data, size, sizeof(*r));

	if (reload_result_valid(&cfg, r))
		assert(r->nprojects <= RELOAD_MAX_PROJECTS &&
		    r->nranges <= SUBUID_MAX_RANGES);
	free(r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t which;

	setup();
	if (size < 1)
		return 0;
	which = data[0];
	data++;
	size--;
	switch (which % 11) {
	case 0:	check_outcome(data, size); break;
	case 1:	check_warm(data, size); break;
	case 2:	check_data(data, size); break;
	case 3:	check_raw(login_result_valid, data, size); break;
	case 4:	check_raw(claim_result_valid, data, size); break;
	case 5:	check_raw(teardown_result_valid, data, size); break;
	case 6:	check_record(data, size); break;
	case 7:	check_adopt(data, size, 0); break;
	case 8:	check_adopt(data, size, 1); break;
	case 9:	check_config(data, size); break;
	default: check_reload(data, size); break;
	}
	return 0;
}
