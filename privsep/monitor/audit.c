/*
 * audit.c - the audit trail (audit.h).
 * runs in: the monitor (root, monitor allowlist once started): its loop, and
 *   adoption at start
 *
 * Values are re-checked here even though dispatch validated every slug:
 * a byte outside the slug alphabet is written as '?', so no value can
 * ever forge a key or a line. What follows result= is the caller's
 * format; a byte of it outside printable ASCII is written as '?' too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "audit.h"
#include "code.h"
#include "iox.h"
#include "metrics.h"
#include "ratelim.h"
#include "log.h"
#include "slug.h"

/* 16 services of 63 bytes and the rest fit; log.c's buffer is as large. */
#define LINE_MAX_	2048

struct line {
	char	buf[LINE_MAX_];
	size_t	len;
};

static const char *const event_names[] = {
	[AUDIT_PROVISION] = "provision",
	[AUDIT_HIT] = "hit",
	[AUDIT_EVICT] = "evict",
	[AUDIT_ADOPT] = "adopt",
	[AUDIT_DISCARD] = "discard",
	[AUDIT_REVOKE] = "revoke",
	[AUDIT_RESET] = "reset",
	[AUDIT_SNAPSHOT] = "snapshot",
	[AUDIT_RELEASE] = "release",
	[AUDIT_EXPIRE] = "expire",
	[AUDIT_REFUSE] = "refuse",
};

static void
put_byte(struct line *l, char c)
{
	if (l->len + 1 < sizeof(l->buf))
		l->buf[l->len++] = c;
	l->buf[l->len] = '\0';
}

static void
put_str(struct line *l, const char *s)
{
	for (; *s != '\0'; s++)
		put_byte(l, *s);
}

/* s, or "-" when NULL or empty; bytes outside the slug alphabet as '?'. */
static void
put_slug(struct line *l, const char *s, size_t max)
{
	size_t i;

	if (s == NULL || *s == '\0') {
		put_byte(l, '-');
		return;
	}
	for (i = 0; i < max && s[i] != '\0'; i++)
		put_byte(l, slug_byte(s[i], false) ? s[i] : '?');	/* NOLINT(bugprone-narrowing-conversions) */
}

static void
put_key(struct line *l, const char *key, const char *slug)
{
	put_byte(l, ' ');
	put_str(l, key);
	put_byte(l, '=');
	put_slug(l, slug, SBX_SLUG_MAX);
}

static void vaudit(enum audit_event, uid_t, const char *, const char *,
    const char (*)[SBX_SLUG_MAX], size_t, enum sbx_code, const char *,
    va_list) __attribute__((format(printf, 8, 0)));

static void
vaudit(enum audit_event ev, uid_t uid, const char *agent, const char *project,
    const char (*services)[SBX_SLUG_MAX], size_t n, enum sbx_code code,
    const char *fmt, va_list ap)
{
	struct line l = { .len = 0 };
	char num[24];
	size_t i;

	metrics_event(ev, code);
	put_str(&l, "audit event=");
	put_str(&l, event_names[ev]);
	snprintf(num, sizeof(num), " uid=%u", (unsigned)uid);
	put_str(&l, num);
	put_key(&l, "agent", agent);
	put_key(&l, "project", project);
	put_str(&l, " services=");
	if (services == NULL || n == 0)
		put_byte(&l, '-');
	for (i = 0; services != NULL && i < n; i++) {
		if (i > 0)
			put_byte(&l, ',');
		put_slug(&l, services[i], SBX_SLUG_MAX);
	}
	put_key(&l, "result", sbx_code_name(code));
	put_byte(&l, ' ');
	if (l.len < sizeof(l.buf) - 1) {
		char *p = l.buf + l.len;

		(void)vsnprintf(p, sizeof(l.buf) - l.len, fmt, ap);
		/* A value a caller formats (a container's name) is one line
		 * of printable bytes too. */
		for (; *p != '\0'; p++)
			if (*p < 0x20 || *p > 0x7e)
				*p = '?';
	}
	log_info("%s", l.buf);
}

void
audit(enum audit_event ev, uid_t uid, const char *agent, const char *project,
    const char (*services)[SBX_SLUG_MAX], size_t n, enum sbx_code code,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vaudit(ev, uid, agent, project, services, n, code, fmt, ap);
	va_end(ap);
}

void
audit_sandbox(enum audit_event ev, const struct sbx_sandbox *sb,
    enum sbx_code code, const char *fmt, ...)
{
	char names[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	size_t i, n = sb->nservices < SBX_MAX_SERVICES ? sb->nservices :
	    SBX_MAX_SERVICES;
	va_list ap;

	for (i = 0; i < n; i++)
		strlcpy(names[i], sb->svc[i].conn.name, sizeof(names[i]));
	va_start(ap, fmt);
	vaudit(ev, sb->key.uid, sb->key.agent, sb->project, names, n, code,
	    fmt, ap);
	va_end(ap);
}

/*
 * A tenant decides how often it is refused: its refusal lines are
 * limited per uid (ratelim.c, as the broker's are), so that its flood
 * never pushes other tenants' lines past syslog's rate limit. What is
 * dropped is counted in one "suppressed" line per window, and in the
 * metrics, which count every refusal.
 */
static struct ratelim refusals;
static bool refusals_ready;

static void
report_suppressed(uid_t uid, unsigned count, void *arg)
{
	(void)arg;
	log_info("audit event=suppressed uid=%u agent=- project=- services=- "
	    "result=refuse count=%u by=monitor", (unsigned)uid, count);
}

void
audit_tick(int64_t now)
{
	if (refusals_ready)
		rl_tick(&refusals, now);
}

void
audit_refuse(enum sbx_req_type op, uid_t uid, const char *agent,
    const char *project, const char (*services)[SBX_SLUG_MAX], size_t n,
    enum sbx_code code)
{
	const char *name = sbx_req_name(op);

	if (!refusals_ready) {
		rl_init(&refusals, 10, 1000, 5000, report_suppressed, NULL);
		refusals_ready = true;
	}
	if (!rl_allow(&refusals, uid, now_ms())) {
		metrics_event(AUDIT_REFUSE, code);
		return;
	}
	audit(AUDIT_REFUSE, uid, agent, project, services,
	    n < SBX_MAX_SERVICES ? n : SBX_MAX_SERVICES, code, "op=%s", name);
}
