/*
 * fixture.h - what test_seed.c and test_cache.c share: a config with
 * postgres and redis, in-memory project policies, the cache over the
 * runtime double, and requests driven through dispatch_handle().
 */
#ifndef SBX_FIXTURE_H
#define SBX_FIXTURE_H

#include <string.h>
#include <sys/mman.h>

#include "cache.h"
#include "config.h"
#include "dispatch.h"
#include "handle.h"
#include "project.h"
#include "rtdouble.h"

#define CAP_ANS		16

static struct sbx_config cfg;
static struct project proj[4];
static struct project_table projects;
static struct cache cache;
static struct rtdouble rtd;
static struct handler_env env;
static int64_t fake_now;

struct capture {
	int		n;
	struct sbx_ans	ans[CAP_ANS];
};

static int64_t
clock_fake(void)
{
	return fake_now;
}

static void
capture_fn(void *ctx, const struct sbx_ans *a)
{
	struct capture *c = ctx;

	if (c->n < CAP_ANS)
		c->ans[c->n] = *a;
	c->n++;
}

static void
add_service(const char *name, unsigned port)
{
	struct service_cfg *s = &cfg.services[cfg.nservices++];

	strlcpy(s->name, name, sizeof(s->name));
	strlcpy(s->image, "img", sizeof(s->image));
	s->port = port;
	s->ready_timeout = 5;
}

static void
set_project(struct project *p, const char *slug, const char *s1,
    const char *s2)
{
	memset(p, 0, sizeof(*p));
	strlcpy(p->slug, slug, sizeof(p->slug));
	p->valid = true;
	p->anyone = true;
	if (s1 != NULL)
		strlcpy(p->services[p->nservices++], s1, SBX_SLUG_MAX);
	if (s2 != NULL)
		strlcpy(p->services[p->nservices++], s2, SBX_SLUG_MAX);
}

/*
 * A project table that must never be read: three entries that point at an
 * inaccessible mapping, so that any project lookup (project_find's bsearch
 * reads the entries) crashes the test, which Criterion reports as a
 * failure. An empty or NULL table would prove nothing: project_find
 * returns before touching an empty one.
 */
/* The tables test_cache.c and test_limits.c start from: two services,
 * four projects (sorted by slug, as projects_load leaves them), every
 * container live, the clock at 1 s. */
static void __attribute__((unused))
fixture_four_projects(void)
{
	memset(&cfg, 0, sizeof(cfg));
	memset(&rtd, 0, sizeof(rtd));
	cfg.enabled = true;
	add_service("postgres", 5432);
	add_service("redis", 6379);
	set_project(&proj[0], "both", "postgres", "redis");
	set_project(&proj[1], "empty", NULL, NULL);
	set_project(&proj[2], "locked", "postgres", NULL);
	set_project(&proj[3], "roboco-api", "postgres", NULL);
	projects.v = proj;
	projects.n = 4;
	rtd.live = true;
	fake_now = 1000;
}

static void __attribute__((unused))
poison_projects(void)
{
	void *v = mmap(NULL, 3 * sizeof(struct project), PROT_NONE,
	    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	cr_assert_neq(v, MAP_FAILED);
	projects.v = v;
	projects.n = 3;
}

static void
available(uid_t uid, const char *project, struct capture *c)
{
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = SBX_REQ_AVAILABLE;
	strlcpy(rq.available.project, project, SBX_SLUG_MAX);
	dispatch_handle(&env, uid, &rq, (struct sbx_reply){ capture_fn, c });
}

static void
ensure(uid_t uid, const char *agent, const char *project, const char *s1,
    const char *s2, struct capture *c)
{
	union sbx_req_any rq;

	memset(&rq, 0, sizeof(rq));
	rq.hdr.magic = SBX_MSG_MAGIC;
	rq.hdr.type = SBX_REQ_SANDBOX;
	strlcpy(rq.sandbox.agent, agent, SBX_SLUG_MAX);
	strlcpy(rq.sandbox.project, project, SBX_SLUG_MAX);
	if (s1 != NULL)
		strlcpy(rq.sandbox.services[rq.sandbox.nservices++], s1,
		    SBX_SLUG_MAX);
	if (s2 != NULL)
		strlcpy(rq.sandbox.services[rq.sandbox.nservices++], s2,
		    SBX_SLUG_MAX);
	dispatch_handle(&env, uid, &rq, (struct sbx_reply){ capture_fn, c });
}

#endif
