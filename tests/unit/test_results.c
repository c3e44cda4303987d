/*
 * test_results.c - the monitor's checks of what its workers send, each
 * with hostile input: a subverted worker (or a file on disk) may send any
 * bytes, and every check must refuse what no honest worker writes, and
 * take what one does.
 *
 *   config_valid          JOB_CONFIG's sbx.conf (config_take.c)
 *   reload_result_valid   JOB_RELOAD's projects and ranges (reload.c)
 *   data_result_valid     a reset's or snapshot's answer (results.c)
 *   outcome_valid         a provision's outcome (results.c)
 *   warm_started_valid    a warm start's result (results.c)
 *   login_result_valid    a login check's answer (results.c)
 *   teardown_result_valid a teardown's answer (results.c)
 *   claims_result_valid   a batch of claims' answer (results.c)
 *   adopt_found_valid     JOB_ADOPT's records (adopt_check.c)
 *   adopt_gone_valid      JOB_ADOPT's orphans (adopt_check.c)
 *   record_valid          a record (shared/record_fmt.c)
 *   bind_result_take      JOB_BIND's agent socket (bind.c)
 *   adopt_answer_take     JOB_ADOPT's whole answer (adopt_check.c)
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "adopt_check.h"
#include "bind.h"
#include "config_take.h"
#include "reload.h"
#include "results.h"
#include "runtime.h"
#include "load.h"

static struct sbx_config cfg;

/* policy/local.conf as the worker reads it: a real config, its services
 * on sockets alone, so that a test that wants a port says so. */
static void
setup_cfg(void)
{
	char err[512];
	size_t i;

	memset(&cfg, 0, sizeof(cfg));
	cr_assert_eq(config_load("policy/local.conf", &cfg, err, sizeof(err)),
	    0, "%s", err);
	cr_assert_geq(cfg.nservices, 2);
	for (i = 0; i < cfg.nservices; i++)
		cfg.services[i].transport = TRANSPORT_UNIX;
}

TestSuite(results, .init = setup_cfg);

/* ---- config_valid ------------------------------------------------------- */

Test(results, config_as_read_is_sound)
{
	cr_assert(config_valid(&cfg));
}

/* A [service]'s data, data_template and data_size, as sbx.conf sets them. */
static void
data_set(struct sbx_config *c, const char *path, const char *tmpl,
    const char *size)
{
	strlcpy(c->services[0].data_path, path,
	    sizeof(c->services[0].data_path));
	strlcpy(c->services[0].data_template, tmpl,
	    sizeof(c->services[0].data_template));
	strlcpy(c->services[0].data_size, size,
	    sizeof(c->services[0].data_size));
}

/* Data fields config_valid refuses, each for the one reason it names. */
static const struct {
	const char	*path, *tmpl, *size, *why;
} bad_data[] = {
	{ "/srv/pgdata/pgdata", "var/lib/sbx/templates/pg", "256m",
	  "a relative data_template" },
	{ "/srv/pgdata/pgdata", "/var/lib/sbx/../../etc", "256m",
	  "a data_template with .." },
	{ "/srv/pgdata/pgdata", "/t:/etc", "256m", "a data_template with ':'" },
	{ "/srv/x,ro", "/t", "256m", "a data path with ','" },
	{ "/srv/x", "/t", "256m,nr_inodes=1", "tmpfs options in data_size" },
	{ "/srv/x", "/t", "0m", "a size of 0" },
	{ "/srv/x", "/t", "1234567m", "seven digits" },
	{ "/srv/x", "/t", "", "data without data_size" },
	{ "", "/t", "1m", "data_template without data" },
};

Test(results, config_refused_for_each_broken_field)
{
	static struct sbx_config c;
	size_t i;

	c = cfg;
	memset(c.socket, 'x', sizeof(c.socket));
	cr_assert_not(config_valid(&c), "a socket path that does not end");
	c = cfg;
	memset(c.services[1].image, 'x', sizeof(c.services[1].image));
	cr_assert_not(config_valid(&c), "an image that does not end");
	c = cfg;
	c.nservices = SBX_MAX_SERVICES + 1;
	cr_assert_not(config_valid(&c), "more sections than there is room for");
	c = cfg;
	c.services[0].warm = 3;
	c.services[0].warm_max = 2;
	cr_assert_not(config_valid(&c), "warm above warm_max");
	c = cfg;
	c.services[0].warm_max = POOL_MAX_WARM + 1;
	cr_assert_not(config_valid(&c), "warm_max past its most");
	c = cfg;
	c.services[0].warm_max = WARM_MAX_UNSET;
	cr_assert_not(config_valid(&c), "warm_max left unset");
	c = cfg;
	c.services[1].warm_idle = 0;
	cr_assert_not(config_valid(&c), "warm_idle 0");
	c = cfg;
	data_set(&c, "/srv/pgdata/pgdata", "/var/lib/sbx/templates/pg", "256m");
	cr_assert(config_valid(&c), "data, as config_parse.c takes it");
	memset(c.services[0].data_template, 'x',
	    sizeof(c.services[0].data_template));
	cr_assert_not(config_valid(&c), "a data_template that does not end");
	for (i = 0; i < sizeof(bad_data) / sizeof(bad_data[0]); i++) {
		c = cfg;
		data_set(&c, bad_data[i].path, bad_data[i].tmpl,
		    bad_data[i].size);
		cr_assert_not(config_valid(&c), "%s", bad_data[i].why);
	}
	c = cfg;
	c.services[1].warm_idle = WARM_IDLE_MAX + 1;
	cr_assert_not(config_valid(&c), "warm_idle past a day");
	c = cfg;
	c.services[1].warm_mib = 0;
	cr_assert_not(config_valid(&c), "warm_mib 0");
	c = cfg;
	c.services[1].warm_mib = WARM_MIB_MAX + 1;
	cr_assert_not(config_valid(&c), "warm_mib past its most");
	c = cfg;
	c.warm_memory = WARM_MEMORY_MAX + 1;
	cr_assert_not(config_valid(&c), "warm_memory past its most");
	c = cfg;
	c.warm_memory = WARM_MEMORY_MAX;
	c.services[0].warm_max = POOL_MAX_WARM;
	c.services[0].warm_idle = WARM_IDLE_MAX;
	c.services[0].warm_mib = WARM_MIB_MAX;
	cr_assert(config_valid(&c), "the most of each");
	c = cfg;
	strlcpy(c.services[1].name, c.services[0].name, SBX_SLUG_MAX);
	cr_assert_not(config_valid(&c), "two sections of one name");
	c = cfg;
	strlcpy(c.services[0].name, "../etc", SBX_SLUG_MAX);
	cr_assert_not(config_valid(&c), "a name that is no slug");
	c = cfg;
	c.services[0].probe = (enum probe_kind)7;
	cr_assert_not(config_valid(&c), "a probe no parser makes");
	c = cfg;
	c.services[0].transport = (enum transport)0;
	cr_assert_not(config_valid(&c), "no transport");
	c = cfg;
	c.services[0].nenv = CFG_MAX_ENV + 1;
	cr_assert_not(config_valid(&c), "more env than fits");
	c = cfg;
	c.services[0].port = 70000;
	cr_assert_not(config_valid(&c), "a port past 65535");
	c = cfg;
	strlcpy(c.runtime, "podman", sizeof(c.runtime));
	cr_assert_not(config_valid(&c), "a runtime that is not a path");
	c = cfg;
	c.socket_mode = 010000;
	cr_assert_not(config_valid(&c), "a mode past 07777");
	c = cfg;
	c.userns_base = UINT32_MAX - 65536;
	cr_assert_not(config_valid(&c), "uid ranges past 2^32");
	c = cfg;
	c.max_workers = 0;
	cr_assert_not(config_valid(&c), "no worker at all");
}

/* ---- reload_result_valid --------------------------------------------------- */

static struct reload_result *
reload_good(void)
{
	struct reload_result *r = calloc(1, sizeof(*r));

	cr_assert_not_null(r);
	r->magic = RELOAD_MAGIC;
	r->projects_ok = r->subuid_ok = 1;
	r->nprojects = 2;
	strlcpy(r->projects[0].slug, "alpha", SBX_SLUG_MAX);
	strlcpy(r->projects[1].slug, "beta", SBX_SLUG_MAX);
	r->projects[0].valid = r->projects[1].valid = true;
	r->projects[0].warm_idle = r->projects[1].warm_idle = 300;
	r->projects[0].nservices = 1;
	strlcpy(r->projects[0].services[0], cfg.services[0].name,
	    SBX_SLUG_MAX);
	r->nranges = 2;
	r->ranges[0] = (struct subuid_range){ .start = 100000, .count = 65536,
	    .owner = 1000 };
	r->ranges[1] = (struct subuid_range){ .start = 165536, .count = 65536,
	    .owner = 1001 };
	return r;
}

Test(results, reload_as_written_is_taken)
{
	struct reload_result *r = reload_good();

	cr_assert(reload_result_valid(&cfg, r));
	free(r);
}

Test(results, reload_refused_for_each_broken_field)
{
	struct reload_result *r = reload_good();

	r->magic = 0;
	cr_assert_not(reload_result_valid(&cfg, r), "no magic");
	free(r);
	r = reload_good();
	r->nprojects = RELOAD_MAX_PROJECTS + 1;
	cr_assert_not(reload_result_valid(&cfg, r), "more projects than fit");
	free(r);
	r = reload_good();
	strlcpy(r->projects[0].slug, "zulu", SBX_SLUG_MAX);
	cr_assert_not(reload_result_valid(&cfg, r), "not sorted: bsearch fails");
	free(r);
	r = reload_good();
	strlcpy(r->projects[1].slug, "Beta/..", SBX_SLUG_MAX);
	cr_assert_not(reload_result_valid(&cfg, r), "a slug that is no slug");
	free(r);
	r = reload_good();
	r->projects[0].warm = 3;
	r->projects[0].warm_max = 2;
	cr_assert_not(reload_result_valid(&cfg, r), "warm above warm_max");
	free(r);
	r = reload_good();
	r->projects[0].warm = r->projects[0].warm_max = POOL_MAX_WARM + 1;
	cr_assert_not(reload_result_valid(&cfg, r), "warm_max past its most");
	free(r);
	r = reload_good();
	r->projects[0].warm_max = UINT32_MAX;
	cr_assert_not(reload_result_valid(&cfg, r), "warm_max unset");
	free(r);
	r = reload_good();
	r->projects[1].warm_idle = 0;
	cr_assert_not(reload_result_valid(&cfg, r), "warm_idle 0");
	free(r);
	r = reload_good();
	r->projects[1].warm_idle = WARM_IDLE_MAX + 1;
	cr_assert_not(reload_result_valid(&cfg, r), "warm_idle past a day");
	free(r);
	r = reload_good();
	r->projects[1].valid = false;
	r->projects[1].warm_max = UINT32_MAX;
	r->projects[1].warm_idle = 0;
	cr_assert(reload_result_valid(&cfg, r), "an invalid project's warm "
	    "is never used");
	free(r);
	r = reload_good();
	r->projects[0].warm = 2;
	r->projects[0].warm_max = POOL_MAX_WARM;
	r->projects[0].warm_idle = WARM_IDLE_MAX;
	cr_assert(reload_result_valid(&cfg, r), "the most of each");
	free(r);
	r = reload_good();
	strlcpy(r->projects[0].services[0], "mongodb", SBX_SLUG_MAX);
	cr_assert_not(reload_result_valid(&cfg, r),
	    "a service sbx.conf does not offer");
	free(r);
	r = reload_good();
	memset(r->projects[0].why, 'x', sizeof(r->projects[0].why));
	cr_assert_not(reload_result_valid(&cfg, r), "a why that does not end");
	free(r);
	r = reload_good();
	r->projects[0].nuids = PROJECT_MAX_UIDS + 1;
	cr_assert_not(reload_result_valid(&cfg, r), "more uids than fit");
	free(r);
	r = reload_good();
	r->ranges[1].start = 100001;
	cr_assert_not(reload_result_valid(&cfg, r), "overlapping ranges");
	free(r);
	r = reload_good();
	memset(r->err, 'x', sizeof(r->err));
	cr_assert_not(reload_result_valid(&cfg, r), "an error that does not end");
	free(r);
	r = reload_good();
	strlcpy(r->projects[0].seed, "../../etc/shadow", SBX_SLUG_MAX);
	cr_assert_not(reload_result_valid(&cfg, r), "a seed that is a path");
	free(r);
	r = reload_good();
	memset(r->projects[0].seed, 'a', sizeof(r->projects[0].seed));
	cr_assert_not(reload_result_valid(&cfg, r), "a seed that does not end");
	free(r);
	r = reload_good();
	r->projects[0].seed[5] = 'x';	/* bytes after an empty name */
	cr_assert_not(reload_result_valid(&cfg, r), "bytes past a seed's end");
	free(r);
}

Test(results, reload_seed_file_name_is_taken)
{
	struct reload_result *r = reload_good();

	strlcpy(r->projects[0].seed, "alpha.sql", SBX_SLUG_MAX);
	cr_assert(reload_result_valid(&cfg, r));
	free(r);
}

/* ---- data_result_valid -------------------------------------------------- */

Test(results, data_result_codes_a_data_job_may_answer)
{
	static const uint32_t ok[] = { SBX_OK, SBX_E_UNKNOWN_SNAPSHOT,
	    SBX_E_BAD_REQUEST, SBX_E_RUNTIME_FAILED, SBX_E_TIMEOUT };
	struct data_result r;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.code = ok[i];
		cr_assert(data_result_valid(&r), "code %u", ok[i]);
	}
}

Test(results, data_result_refused_for_what_no_data_job_says)
{
	static const uint32_t bad[] = { SBX_E_FORBIDDEN, SBX_E_NO_SANDBOX,
	    SBX_E_SEED_FAILED, SBX_E_BUSY, SBX_CODE_MAX, 0xffffffffu };
	struct data_result r;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&r, 0, sizeof(r));
		r.code = bad[i];
		cr_assert_not(data_result_valid(&r), "code %u", bad[i]);
	}
	memset(&r, 'x', sizeof(r));
	r.code = SBX_OK;
	cr_assert_not(data_result_valid(&r), "a message that does not end");
}

/* ---- outcome_valid ------------------------------------------------------ */

static struct sbx_svc svcs[2];
static struct sbx_sandbox sb = { .svc = svcs };

static void
outcome_good(struct job_outcome *o)
{
	memset(svcs, 0, sizeof(svcs));
	strlcpy(svcs[0].conn.name, cfg.services[0].name, SBX_SLUG_MAX);
	strlcpy(svcs[1].conn.name, cfg.services[1].name, SBX_SLUG_MAX);
	sb.nservices = 2;
	sb.prev = NULL;
	sb.nprev = 0;
	memset(o, 0, sizeof(*o));
	o->code = SBX_OK;
	strlcpy(o->message, "ready", sizeof(o->message));
	o->svc[0].pid = 100;
	o->svc[1].pid = 101;
}

Test(results, outcome_as_written_is_taken)
{
	struct job_outcome o;

	outcome_good(&o);
	cr_assert(outcome_valid(&o, &cfg, &sb));
	o.code = SBX_E_RUNTIME_FAILED;
	o.svc[0].pid = 0;
	cr_assert(outcome_valid(&o, &cfg, &sb), "a failure carries no pid");
}

Test(results, outcome_refused_for_each_broken_field)
{
	struct job_outcome o;

	outcome_good(&o);
	o.code = SBX_CODE_MAX;
	cr_assert_not(outcome_valid(&o, &cfg, &sb), "a code past the last");
	outcome_good(&o);
	memset(o.message, 'x', sizeof(o.message));
	cr_assert_not(outcome_valid(&o, &cfg, &sb), "a message that does not end");
	outcome_good(&o);
	o.svc[1].pid = 0;
	cr_assert_not(outcome_valid(&o, &cfg, &sb), "a started service with no pid");
	outcome_good(&o);
	o.svc[0].pid = -1;
	cr_assert_not(outcome_valid(&o, &cfg, &sb), "a negative pid");
	outcome_good(&o);
	o.svc[0].port = 65536;
	cr_assert_not(outcome_valid(&o, &cfg, &sb), "a port past 65535");
	outcome_good(&o);
	o.dropped_gone = 1;
	cr_assert_not(outcome_valid(&o, &cfg, &sb),
	    "a dropped service that no reshape had");
	outcome_good(&o);
	strlcpy(svcs[1].conn.name, "gone", SBX_SLUG_MAX);
	cr_assert_not(outcome_valid(&o, &cfg, &sb),
	    "a service the config does not have");
}

Test(results, outcome_of_a_tcp_service_needs_its_port)
{
	static struct sbx_config c;
	struct job_outcome o;

	c = cfg;
	c.services[1].transport = TRANSPORT_TCP;
	outcome_good(&o);
	cr_assert_not(outcome_valid(&o, &c, &sb), "tcp with no port");
	o.svc[1].port = 40000;
	cr_assert(outcome_valid(&o, &c, &sb));
}

Test(results, warm_start_checked)
{
	struct warm_started r = { .code = SBX_OK, .message = "ready", .pid = 9 };
	static struct service_cfg s;

	s = cfg.services[0];
	s.transport = TRANSPORT_UNIX;
	cr_assert(warm_started_valid(&r, &s));
	r.pid = 0;
	cr_assert_not(warm_started_valid(&r, &s), "ready, with no pid");
	r.pid = 9;
	s.transport = TRANSPORT_BOTH;
	cr_assert_not(warm_started_valid(&r, &s), "tcp, with no port");
	r.port = 41000;
	cr_assert(warm_started_valid(&r, &s));
	r.port = 65536;
	cr_assert_not(warm_started_valid(&r, &s), "a port past 65535");
	r.port = 41000;
	memset(r.message, 'x', sizeof(r.message));
	cr_assert_not(warm_started_valid(&r, &s), "a message that does not end");
	memset(&r, 0, sizeof(r));
	r.code = SBX_CODE_MAX;
	cr_assert_not(warm_started_valid(&r, &s), "a code past the last");
	r.code = SBX_E_RUNTIME_FAILED;
	cr_assert(warm_started_valid(&r, &s), "a failure carries nothing more");
}

/* ---- record_valid, adopt_found_valid, adopt_gone_valid ------------------ */

static void
found_good(struct adopt_found *a)
{
	memset(a, 0, sizeof(*a));
	strlcpy(a->file, "1000-agent-1", sizeof(a->file));
	a->r.magic = RECORD_MAGIC;
	a->r.version = RECORD_VERSION;
	a->r.uid = 1000;
	a->r.nservices = 1;
	a->r.idmap = 3;
	strlcpy(a->r.agent, "agent-1", SBX_SLUG_MAX);
	strlcpy(a->r.project, "demo", SBX_SLUG_MAX);
	strlcpy(a->r.svc[0].conn.name, "redis", SBX_SLUG_MAX);
	strlcpy(a->r.svc[0].conn.password, "0123456789abcdef", SBX_SECRET_MAX);
	a->pid[0] = 4242;
	a->why = ADOPT_WHOLE;
}

Test(results, found_as_written_is_taken)
{
	struct adopt_found a;

	found_good(&a);
	cr_assert(record_valid(&a.r));
	cr_assert(adopt_found_valid(&a));
	a.why = ADOPT_CONTAINER_MISSING;
	a.pid[0] = 0;
	cr_assert(adopt_found_valid(&a), "not whole: no pid needed");
	found_good(&a);
	strlcpy(a.file, "pool-redis-7", sizeof(a.file));
	a.r.uid = RECORD_POOL_UID;
	a.r.idmap = a.r.svc[0].warm = 7;
	cr_assert(adopt_found_valid(&a), "a warm container's record");
}

Test(results, found_refused_for_each_broken_field)
{
	struct adopt_found a;

	found_good(&a);
	strlcpy(a.file, "../../etc/passwd", sizeof(a.file));
	cr_assert_not(adopt_found_valid(&a), "a file outside the records");
	found_good(&a);
	strlcpy(a.file, ".1000-agent-1.tmp", sizeof(a.file));
	cr_assert_not(adopt_found_valid(&a), "a temporary file");
	found_good(&a);
	memset(a.file, 'a', sizeof(a.file));
	cr_assert_not(adopt_found_valid(&a), "a name that does not end");
	found_good(&a);
	a.r.magic = 0;
	cr_assert_not(adopt_found_valid(&a), "no record's magic");
	found_good(&a);
	a.r.nservices = 0;
	cr_assert_not(adopt_found_valid(&a), "a record of nothing");
	found_good(&a);
	a.r.nservices = SBX_MAX_SERVICES + 1;
	cr_assert_not(adopt_found_valid(&a), "more services than fit");
	found_good(&a);
	strlcpy(a.r.agent, "../x", SBX_SLUG_MAX);
	cr_assert_not(adopt_found_valid(&a), "an agent that is no slug");
	found_good(&a);
	a.r.svc[0].conn.password[0] = '\0';
	cr_assert_not(adopt_found_valid(&a), "a service with no password");
	found_good(&a);
	memset(a.r.svc[0].conn.socket, 'x', SBX_SOCKET_MAX);
	cr_assert_not(adopt_found_valid(&a), "a socket that does not end");
	found_good(&a);
	a.r.svc[0].conn.port = 70000;
	cr_assert_not(adopt_found_valid(&a), "a port past 65535");
	found_good(&a);
	a.pid[0] = 0;
	cr_assert_not(adopt_found_valid(&a), "whole, with no pid");
	found_good(&a);
	a.why = ADOPT_NO_RECORD;
	cr_assert_not(adopt_found_valid(&a), "an orphan's reason on a record");
	found_good(&a);
	a.pool_named = 2;
	cr_assert_not(adopt_found_valid(&a), "a service it does not have");
	found_good(&a);
	a.r.uid = RECORD_POOL_UID;
	a.r.svc[0].warm = 9;
	cr_assert_not(adopt_found_valid(&a), "a warm record of another slot");
}

static void
gone_good(struct adopt_gone *g)
{
	memset(g, 0, sizeof(*g));
	g->why = ADOPT_NO_RECORD;
	g->g.key.uid = 1000;
	strlcpy(g->g.key.agent, "a1", SBX_SLUG_MAX);
	strlcpy(g->container, "sbx-1000-a1-redis", sizeof(g->container));
}

Test(results, gone_checked)
{
	struct adopt_gone g;

	gone_good(&g);
	cr_assert(adopt_gone_valid(&g));
	g.why = ADOPT_NOT_IN_SANDBOX;
	cr_assert_not(adopt_gone_valid(&g), "not in the sandbox, but no service");
	strlcpy(g.g.service, "redis", SBX_SLUG_MAX);
	cr_assert(adopt_gone_valid(&g));
	strlcpy(g.g.service, "re dis", SBX_SLUG_MAX);
	cr_assert_not(adopt_gone_valid(&g), "a service that is no slug");
	gone_good(&g);
	g.why = ADOPT_WHOLE;
	cr_assert_not(adopt_gone_valid(&g), "a record's reason on an orphan");
	gone_good(&g);
	g.why = ADOPT_NWHY;
	cr_assert_not(adopt_gone_valid(&g), "a reason past the last");
	gone_good(&g);
	strlcpy(g.g.key.agent, "A;rm", SBX_SLUG_MAX);
	cr_assert_not(adopt_gone_valid(&g), "an agent that is no slug");
	gone_good(&g);
	memset(g.container, 'x', sizeof(g.container));
	cr_assert_not(adopt_gone_valid(&g), "a container that does not end");
	gone_good(&g);
	g.why = ADOPT_POOL_NO_RECORD;
	cr_assert_not(adopt_gone_valid(&g), "a warm container with a key");
	g.g.key.uid = (uid_t)-1;
	strlcpy(g.g.name, "sbx-pool-redis-3", sizeof(g.g.name));
	cr_assert(adopt_gone_valid(&g));
}

/* adopt.c writes the container's name in an audit line as it is. */
Test(results, gone_named_outside_the_runtimes_alphabet_is_refused)
{
	static const char *bad[] = { "sbx\naudit event=adopt", "a b",
	    "a=b", "a/b", "\x7f", "\xc3\xa9" };
	struct adopt_gone g;
	size_t i;

	gone_good(&g);
	strlcpy(g.container, "Sbx-1000_a1.redis", sizeof(g.container));
	cr_assert(adopt_gone_valid(&g), "podman's alphabet");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gone_good(&g);
		strlcpy(g.container, bad[i], sizeof(g.container));
		cr_assert_not(adopt_gone_valid(&g), "%zu", i);
	}
}

/* ---- adopt_answer_take -------------------------------------------------- */

/* JOB_ADOPT's answer as its worker writes it: a head, nf records, ng
 * orphans, in a memfd of n bytes (n 0: the exact size). */
static int
adopt_answer(uint32_t magic, uint32_t nf, uint32_t ng, size_t n)
{
	struct adopt_head h = { magic, nf, ng, 1 };
	struct adopt_found f;
	struct adopt_gone g;
	size_t exact = sizeof(h) + nf * sizeof(f) + ng * sizeof(g);
	int fd = memfd_create("test-adopt", MFD_CLOEXEC);
	uint32_t i;

	cr_assert_geq(fd, 0);
	found_good(&f);
	gone_good(&g);
	cr_assert_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	for (i = 0; i < nf && i < 4; i++)
		cr_assert_eq(write(fd, &f, sizeof(f)), (ssize_t)sizeof(f));
	for (i = 0; i < ng && i < 4; i++)
		cr_assert_eq(write(fd, &g, sizeof(g)), (ssize_t)sizeof(g));
	cr_assert_eq(ftruncate(fd, (off_t)(n ? n : exact)), 0);
	return fd;
}

static bool
adopt_taken(int fd)
{
	const struct adopt_head *h;
	size_t len = 0;

	h = adopt_answer_take(fd, &len);
	close(fd);
	if (h != NULL)
		munmap((void *)(uintptr_t)h, len);
	return h != NULL;
}

Test(results, adopt_answer_of_its_exact_size_alone_is_taken)
{
	size_t one = sizeof(struct adopt_head) + sizeof(struct adopt_found) +
	    sizeof(struct adopt_gone);

	cr_assert(adopt_taken(adopt_answer(ADOPT_MAGIC, 0, 0, 0)));
	cr_assert(adopt_taken(adopt_answer(ADOPT_MAGIC, 1, 1, 0)));
	cr_assert(adopt_taken(adopt_answer(ADOPT_MAGIC, 2, 3, 0)));
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, 1, 1, one - 1)),
	    "short");
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, 1, 1, one + 1)),
	    "long");
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, 0, 0, 8)),
	    "shorter than its head");
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC ^ 1, 0, 0, 0)),
	    "magic");
	/* counts that lie: past ADOPT_MAX, and sizes that wrap */
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, ADOPT_MAX + 1, 0,
	    sizeof(struct adopt_head))));
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, UINT32_MAX,
	    UINT32_MAX, sizeof(struct adopt_head))));
	cr_assert_not(adopt_taken(adopt_answer(ADOPT_MAGIC, 2, 0, one)),
	    "two records said, one and an orphan's size there");
}

Test(results, adopt_answer_with_one_bad_entry_is_refused)
{
	struct adopt_gone g;
	int fd = adopt_answer(ADOPT_MAGIC, 1, 2, 0);

	gone_good(&g);
	strlcpy(g.container, "x\ny", sizeof(g.container));
	cr_assert_eq(pwrite(fd, &g, sizeof(g), sizeof(struct adopt_head) +
	    sizeof(struct adopt_found) + sizeof(g)), (ssize_t)sizeof(g));
	cr_assert_not(adopt_taken(fd), "the second orphan");
	fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	cr_assert_not(adopt_taken(fd), "not a file of any size");
}

/* ---- login_result_valid ---------------------------------------------------- */

Test(results, login_result_only_ok_exactly_keeps_a_service)
{
	uint32_t ok = SBX_OK, other = SBX_E_RUNTIME_FAILED, big[2] = { 0 };

	cr_assert(login_result_valid(&ok, sizeof(ok)));
	cr_assert_not(login_result_valid(NULL, 0), "no answer (died, late)");
	cr_assert_not(login_result_valid(&ok, 2), "a short answer");
	cr_assert_not(login_result_valid(big, sizeof(big)), "a long one");
	cr_assert_not(login_result_valid(&other, sizeof(other)), "refused");
	other = 0xffffffffu;
	cr_assert_not(login_result_valid(&other, sizeof(other)), "garbage");
}

/* ---- teardown_result_valid ------------------------------------------------- */

Test(results, teardown_result_of_the_exact_size_with_a_known_code)
{
	struct job_outcome o;
	char big[sizeof(o) + 1];

	memset(&o, 0, sizeof(o));
	o.code = SBX_OK;
	cr_assert(teardown_result_valid(&o, sizeof(o)));
	o.code = SBX_E_RUNTIME_FAILED;
	snprintf(o.message, sizeof(o.message), "podman said no");
	cr_assert(teardown_result_valid(&o, sizeof(o)), "a failure, said");
	cr_assert_not(teardown_result_valid(NULL, 0), "no answer (died, late)");
	cr_assert_not(teardown_result_valid(&o, sizeof(o) - 1), "short");
	memset(big, 0, sizeof(big));
	memcpy(big, &o, sizeof(o));
	cr_assert_not(teardown_result_valid(big, sizeof(big)), "long");
	o.code = SBX_CODE_MAX;
	cr_assert_not(teardown_result_valid(&o, sizeof(o)), "an unknown code");
	o.code = SBX_OK;
	memset(o.message, 'x', sizeof(o.message));
	cr_assert_not(teardown_result_valid(&o, sizeof(o)),
	    "a message that does not end");
}

/* ---- claims_result_valid --------------------------------------------------- */

/* An honest answer to a batch of n claims: SBX_OK for each. */
static void
claims_ok(struct claim_results *r, size_t n)
{
	size_t i;

	memset(r, 0, sizeof(*r));
	r->n = (uint32_t)n;
	for (i = 0; i < n; i++)
		r->code[i] = SBX_OK;
}

Test(results, claims_result_one_code_per_claim_of_the_batch)
{
	struct claim_results r, out;

	claims_ok(&r, 3);
	cr_assert(claims_result_valid(&r, sizeof(r), 3, &out));
	cr_assert_eq(out.n, 3);
	cr_assert_eq(out.code[2], SBX_OK);
	/* One refused, the others given: each claim answered as it is. */
	r.code[1] = SBX_E_RUNTIME_FAILED;
	cr_assert(claims_result_valid(&r, sizeof(r), 3, &out));
	cr_assert_eq(out.code[0], SBX_OK);
	cr_assert_eq(out.code[1], SBX_E_RUNTIME_FAILED);
	claims_ok(&r, CLAIM_BATCH);
	cr_assert(claims_result_valid(&r, sizeof(r), CLAIM_BATCH, &out),
	    "a full batch");
	claims_ok(&r, 0);
	cr_assert(claims_result_valid(&r, sizeof(r), 0, &out));
}

Test(results, claims_result_hostile_answers_refuse_the_batch)
{
	struct claim_results r, out;
	char big[sizeof(r) + 1];

	claims_ok(&r, 3);
	cr_assert_not(claims_result_valid(NULL, 0, 3, &out),
	    "no answer (died, late)");
	cr_assert_not(claims_result_valid(&r, sizeof(r) - 1, 3, &out),
	    "a short answer");
	memset(big, 0, sizeof(big));
	memcpy(big, &r, sizeof(r));
	cr_assert_not(claims_result_valid(big, sizeof(big), 3, &out),
	    "a long one");
	cr_assert_not(claims_result_valid(&r, sizeof(r), 4, &out),
	    "an answer for fewer claims than sent");
	cr_assert_not(claims_result_valid(&r, sizeof(r), 2, &out),
	    "for more");
	r.n = 0xffffffffu;
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out),
	    "a huge count");
	claims_ok(&r, CLAIM_BATCH);
	r.n = CLAIM_BATCH + 1;
	cr_assert_not(claims_result_valid(&r, sizeof(r), CLAIM_BATCH + 1,
	    &out), "a batch past the cap, even if the count agrees");
	claims_ok(&r, 3);
	r.code[1] = SBX_CODE_MAX;
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out),
	    "an unknown code");
	r.code[1] = 0xffffffffu;
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out),
	    "garbage");
	claims_ok(&r, 3);
	r.code[3] = SBX_E_RUNTIME_FAILED;
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out),
	    "a code for a claim not in the batch");
	r.code[3] = 0;
	r.code[CLAIM_BATCH - 1] = 7;
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out),
	    "bytes past the batch");
	memset(&r, 0xff, sizeof(r));
	cr_assert_not(claims_result_valid(&r, sizeof(r), 3, &out), "all ones");
}

/* ---- bind_result_take --------------------------------------------------- */

/* A Unix socket of type at path ("" unbound), listening or not. */
static int
unix_socket(int type, const char *path, bool listening)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, type | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	if (path[0] != '\0') {
		strlcpy(sun.sun_path, path, sizeof(sun.sun_path));
		unlink(path);
		cr_assert_eq(bind(fd, (struct sockaddr *)&sun, sizeof(sun)), 0);
	}
	if (listening)
		cr_assert_eq(listen(fd, 1), 0);
	return fd;
}

/* What bind_result_take makes of err and, if fd >= 0, fd beside it. */
static int
take(const char *err, int fd, ssize_t n, const char *path, char *why)
{
	struct bind_result r;
	struct fdpass_rx rx = { .nfds = fd >= 0 };

	memset(&r, 'x', sizeof(r));
	if (err != NULL)
		strlcpy(r.err, err, sizeof(r.err));
	rx.fds[0] = fd;
	return bind_result_take(&r, n, &rx, path, why, 512);
}

static bool
closed(int fd)
{
	return fcntl(fd, F_GETFD) == -1;
}

Test(results, the_agent_socket_is_taken_listening_at_its_path)
{
	const char *path = "/tmp/sbx-test-bind.sock";
	char why[512];
	int fd = unix_socket(SOCK_STREAM, path, true);

	cr_assert_eq(take("", fd, sizeof(struct bind_result), path, why), fd);
	cr_assert(fcntl(fd, F_GETFL) & O_NONBLOCK, "made non-blocking");
	close(fd);
	unlink(path);
}

Test(results, a_refusal_is_said_as_the_worker_said_it)
{
	char why[512];

	cr_assert_eq(take("cannot bind /x: No such file or directory", -1,
	    sizeof(struct bind_result), "/x", why), -1);
	cr_assert_str_eq(why, "cannot bind /x: No such file or directory");
}

Test(results, any_other_answer_is_refused_and_its_descriptor_closed)
{
	const char *path = "/tmp/sbx-test-bind.sock";
	const char *other = "/tmp/sbx-test-bind-other.sock";
	const ssize_t size = sizeof(struct bind_result);
	char why[512];
	int p[2], fd;

	/* A sentence and a descriptor both; a socket and no sentence but
	 * the wrong kind of descriptor. */
	fd = unix_socket(SOCK_STREAM, path, true);
	cr_assert_eq(take("no", fd, size, path, why), -1);
	cr_assert(closed(fd));
	cr_assert(strstr(why, "answered what it cannot") != NULL);
	cr_assert_eq(pipe(p), 0);
	close(p[1]);
	cr_assert_eq(take("", p[0], size, path, why), -1);
	cr_assert(closed(p[0]), "a pipe is no socket");
	fd = unix_socket(SOCK_STREAM, path, false);
	cr_assert_eq(take("", fd, size, path, why), -1);
	cr_assert(closed(fd), "not listening");
	fd = unix_socket(SOCK_STREAM, other, true);
	cr_assert_eq(take("", fd, size, path, why), -1);
	cr_assert(closed(fd), "listening elsewhere");
	fd = unix_socket(SOCK_SEQPACKET, path, true);
	cr_assert_eq(take("", fd, size, path, why), -1);
	cr_assert(closed(fd), "not a stream");
	/* No descriptor and no sentence; a sentence that does not end; a
	 * short answer. */
	cr_assert_eq(take("", -1, size, path, why), -1);
	cr_assert_eq(take(NULL, -1, size, path, why), -1);
	cr_assert(strstr(why, "answered what it cannot") != NULL);
	fd = unix_socket(SOCK_STREAM, path, true);
	cr_assert_eq(take("", fd, size - 1, path, why), -1);
	cr_assert(closed(fd), "short");
	unlink(path);
	unlink(other);
}
