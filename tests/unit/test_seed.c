/*
 * test_seed.c - the original orchestrator's eleven cases
 * (../shared/seed/test_sandbox_provision_spawn.py), one Criterion test
 * each, with the same names. They drive the monitor's real request
 * handling (handle.c) and cache (cache.c) against a runtime double.
 *
 *   _sandbox_available_services  -> op "available"
 *   ensure_sandbox               -> op "request_sandbox"
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "load.h"
#include "cache.h"
#include "config.h"
#include "dispatch.h"
#include "handle.h"
#include "project.h"
#include "fixture.h"


static void
setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(&rtd, 0, sizeof(rtd));
	cfg.enabled = true;
	add_service("postgres", 5432);
	add_service("redis", 6379);
	/* sorted by slug, as projects_load leaves them */
	set_project(&proj[0], "both", "postgres", "redis");
	set_project(&proj[1], "empty", NULL, NULL);
	set_project(&proj[2], "roboco-api", "postgres", NULL);
	projects.v = proj;
	projects.n = 3;
	rtd.live = true;	/* live by default, like the seed's is_live mock */
	fake_now = 1000;
	cache_init(&cache, (struct sbx_runtime){ &rtd_ops, &rtd },
	    (struct cache_limits){ 0 }, clock_fake);
	env = (struct handler_env){ .cfg = &cfg, .projects = &projects,
	    .cache = &cache };
}

TestSuite(seed, .init = setup);

static const struct sbx_conn *
conn(const struct sbx_ans *a, const char *name)
{
	uint32_t i;

	for (i = 0; i < a->nservices; i++)
		if (!strcmp(a->services[i].name, name))
			return &a->services[i];
	return NULL;
}

/* ---- _sandbox_available_services (spawn-time probe, no provisioning) ---- */

Test(seed, test_flag_off_returns_empty_without_project_lookup)
{
	struct capture c = { 0 };

	cfg.enabled = false;
	poison_projects();	/* any project lookup crashes this test */
	available(1000, "roboco-api", &c);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(c.ans[0].nservices, 0);
	cr_assert_eq(rtd.provisions, 0);
}

Test(seed, test_project_without_sandbox_services_returns_empty)
{
	struct capture c = { 0 };

	available(1000, "empty", &c);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(c.ans[0].nservices, 0);
	cr_assert_eq(rtd.provisions, 0);
}

Test(seed, test_missing_project_returns_empty)
{
	struct capture c = { 0 };

	available(1000, "no-such-project", &c);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(c.ans[0].nservices, 0);
}

Test(seed, test_opted_in_project_returns_services_without_provisioning)
{
	struct capture c = { 0 };

	available(1000, "roboco-api", &c);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(c.ans[0].nservices, 1);
	cr_assert_str_eq(c.ans[0].services[0].name, "postgres");
	cr_assert_eq(rtd.provisions, 0);
}

/* The lookup "fails" the way it can fail here: the project's policy file
 * is garbage or unreadable. Loaded for real from a temporary directory. */
Test(seed, test_project_lookup_failure_degrades_to_no_sandbox)
{
	char dir[] = "/tmp/sbx-seed-XXXXXX", path[256];
	struct project_table t;
	struct capture c = { 0 };
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/roboco-api.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("[project\nsandbox_services = postgres\n\x01garbage\n", f);
	fclose(f);
	snprintf(path, sizeof(path), "%s/unreadable.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fputs("[project]\nsandbox_services = postgres\n", f);
	fclose(f);
	chmod(path, 0666);	/* writable by others: refused as untrusted */
	strlcpy(cfg.projects, dir, sizeof(cfg.projects));
	cr_assert_eq(projects_load(&cfg, &t, false), 0);
	env.projects = &t;

	available(1000, "roboco-api", &c);
	available(1000, "unreadable", &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(c.ans[0].nservices, 0);
	cr_assert_eq(c.ans[1].nservices, 0);
	cr_assert_eq(rtd.provisions, 0);
	projects_free(&t);
	unlink(path);
	snprintf(path, sizeof(path), "%s/roboco-api.conf", dir);
	unlink(path);
	rmdir(dir);
}

/* A project file's warm, warm_max, warm_idle: defaults, ranges, order. */
static const struct project *
load_one(struct project_table *t, char *dir, const char *body)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/p.conf", dir);
	cr_assert_not_null(f = fopen(path, "w"));
	fprintf(f, "[project]\nsandbox_services = postgres\n%s\n", body);
	fclose(f);
	chmod(path, 0644);
	strlcpy(cfg.projects, dir, sizeof(cfg.projects));
	cr_assert_eq(projects_load(&cfg, t, false), 0);
	unlink(path);
	cr_assert_eq(t->n, 1);
	return &t->v[0];
}

Test(seed, test_project_warm_keys)
{
	char dir[] = "/tmp/sbx-seed-XXXXXX";
	struct project_table t;
	const struct project *p;

	cr_assert_not_null(mkdtemp(dir));
	p = load_one(&t, dir, "warm = 2");
	cr_assert(p->valid, "%s", p->why);
	cr_assert_eq(p->warm_max, 2, "unset: a fixed pool");
	cr_assert_eq(p->warm_idle, 300);
	projects_free(&t);
	p = load_one(&t, dir, "warm_max = 16\nwarm = 1\nwarm_idle = 45");
	cr_assert(p->valid, "%s", p->why);
	cr_assert_eq(p->warm, 1);
	cr_assert_eq(p->warm_max, 16);
	cr_assert_eq(p->warm_idle, 45);
	projects_free(&t);
	p = load_one(&t, dir, "warm = 3\nwarm_max = 2");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "p.conf: warm_max (2) is below "
	    "warm (3)"), "%s", p->why);
	projects_free(&t);
	p = load_one(&t, dir, "warm_max = 65");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "p.conf:3:"), "%s", p->why);
	projects_free(&t);
	p = load_one(&t, dir, "warm_idle = 0");
	cr_assert_not(p->valid);
	projects_free(&t);
	p = load_one(&t, dir, "warm_idle = 86401");
	cr_assert_not(p->valid);
	projects_free(&t);
	p = load_one(&t, dir, "warm_idle = -5");
	cr_assert_not(p->valid);
	projects_free(&t);
	rmdir(dir);
}

/* ---- ensure_sandbox (on-demand provision + cache) ---- */

Test(seed, test_ensure_sandbox_miss_provisions_and_caches)
{
	struct capture c = { 0 };
	struct sbx_sandbox *sb;

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 1);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(rtd.provisions, 1);
	cr_assert_str_eq(rtd.prov[0].key.agent, "dev-1");
	cr_assert_eq(rtd.prov[0].nservices, 1);
	cr_assert_str_eq(rtd.prov[0].services[0], "postgres");
	sb = cache_find(&cache, 1000, "dev-1");
	cr_assert_not_null(sb);
	cr_assert_eq(sb->state, SB_READY);
	cr_assert_str_eq(sb->svc[0].conn.password,
	    conn(&c.ans[0], "postgres")->password);
}

Test(seed, test_ensure_sandbox_cache_hit_skips_second_provision)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(c.ans[1].code, SBX_OK);
	cr_assert_eq(memcmp(&c.ans[0], &c.ans[1], sizeof(c.ans[0])), 0);
	cr_assert_eq(rtd.provisions, 1);
}

Test(seed, test_ensure_sandbox_first_subset_request_provisions_full_opted_set)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "both", "postgres", NULL, &c);
	ensure(1000, "dev-1", "both", "postgres", "redis", &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(rtd.provisions, 1);
	cr_assert_eq(rtd.prov[0].nservices, 2);
	cr_assert_str_eq(rtd.prov[0].services[0], "postgres");
	cr_assert_str_eq(rtd.prov[0].services[1], "redis");
	cr_assert_eq(c.ans[0].nservices, 2, "the first reply has the full set");
	cr_assert_eq(memcmp(&c.ans[0], &c.ans[1], sizeof(c.ans[0])), 0);
	cr_assert_eq(rtd.teardowns, 0);
}

Test(seed, test_ensure_sandbox_cache_is_per_agent_slug)
{
	struct capture c = { 0 };

	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-2", "roboco-api", "postgres", NULL, &c);
	/* and per uid: another user sending the same slug gets its own */
	ensure(1001, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 3);
	cr_assert_eq(rtd.provisions, 3);
	cr_assert_str_neq(conn(&c.ans[0], "postgres")->password,
	    conn(&c.ans[1], "postgres")->password);
	cr_assert_str_neq(conn(&c.ans[0], "postgres")->password,
	    conn(&c.ans[2], "postgres")->password);
	cr_assert_neq(cache_find(&cache, 1000, "dev-1"),
	    cache_find(&cache, 1001, "dev-1"));
	cr_assert_eq(cache_find(&cache, 1000, "dev-1")->svc[0].conn.port,
	    c.ans[0].services[0].port);
	cr_assert_eq(cache_find(&cache, 1000, "dev-2")->svc[0].conn.port,
	    c.ans[1].services[0].port);
}

Test(seed, test_ensure_sandbox_concurrent_calls_serialize_on_agent_lock)
{
	struct capture c = { 0 }, other = { 0 };

	rtd.deferred = true;	/* the seed's slow provision */
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	ensure(1000, "dev-9", "roboco-api", "postgres", NULL, &other);
	cr_assert_eq(c.n, 0, "nobody is answered before the provision ends");
	cr_assert_eq(rtd.provisions, 2, "dev-9 did not wait for dev-1");
	rtd_complete(&rtd);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(other.n, 1);
	cr_assert_eq(c.ans[0].code, SBX_OK);
	cr_assert_eq(memcmp(&c.ans[0], &c.ans[1], sizeof(c.ans[0])), 0);
	cr_assert_eq(rtd.prov[0].key.uid, 1000);
	cr_assert_str_eq(rtd.prov[1].key.agent, "dev-9");
}

Test(seed, test_ensure_sandbox_cache_hit_with_dead_container_reprovisions)
{
	struct capture c = { 0 };
	char stale[SBX_SECRET_MAX];

	rtd.live = false;
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	strlcpy(stale, conn(&c.ans[0], "postgres")->password, sizeof(stale));
	ensure(1000, "dev-1", "roboco-api", "postgres", NULL, &c);
	cr_assert_eq(c.n, 2);
	cr_assert_eq(rtd.provisions, 2);
	cr_assert_str_neq(conn(&c.ans[1], "postgres")->password, stale,
	    "fresh passwords after a dead container");
	cr_assert_str_eq(cache_find(&cache, 1000, "dev-1")->svc[0].conn.password,
	    conn(&c.ans[1], "postgres")->password);
	cr_assert_eq(rtd.is_live_calls, 1);
	cr_assert_str_eq(rtd.live_calls[0].key.agent, "dev-1");
	cr_assert_eq(rtd.live_calls[0].nservices, 1);
	cr_assert_str_eq(rtd.live_calls[0].services[0], "postgres");
}
