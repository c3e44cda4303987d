/*
 * test_audit.c - the audit trail (privsep/monitor/audit.c) given hostile
 * names: tenants choose agent and project names, and a worker's answer
 * carries container names. Whatever the bytes, a line is one line of
 * printable ASCII whose keys come in their order, each slug value
 * written with '?' for a byte outside the slug alphabet, no field read
 * past its size, and no more than 16 services.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "audit.h"
#include "log.h"

static int log_rd = -1;

/* Lines go to a pipe (log_relay), as a broker's would. */
static void
relay(void)
{
	int p[2];

	cr_assert_eq(pipe2(p, O_NONBLOCK | O_CLOEXEC), 0);
	log_relay(p[1]);
	log_rd = p[0];
}

TestSuite(audit, .init = relay);

/* The one line logged, without its "<PRI>PID " and newline; every byte
 * printable ASCII. */
static const char *
line(void)
{
	static char buf[4096];
	char *nl, *c;
	ssize_t n = read(log_rd, buf, sizeof(buf) - 1);

	cr_assert_gt(n, 0, "a line");
	buf[n] = '\0';
	nl = strchr(buf, '\n');
	cr_assert(nl == buf + n - 1, "one line, ended: %s", buf);
	*nl = '\0';
	for (c = buf; *c != '\0'; c++)
		cr_assert(*c >= 0x20 && *c <= 0x7e, "byte %#x in %s",
		    (unsigned char)*c, buf);
	cr_assert((c = strchr(buf, ' ')) != NULL);
	return c + 1;
}

Test(audit, a_line_as_written)
{
	const char svc[2][SBX_SLUG_MAX] = { "postgres", "redis" };

	audit(AUDIT_PROVISION, 1000, "dev-1", "demo", svc, 2, SBX_OK,
	    "ms=%d", 812);
	cr_assert_str_eq(line(), "audit event=provision uid=1000 agent=dev-1 "
	    "project=demo services=postgres,redis result=ok ms=812");
}

Test(audit, bytes_outside_the_slug_alphabet_are_question_marks)
{
	const char svc[3][SBX_SLUG_MAX] = { "a,b", "c d=e", "\xff\x80" };

	audit(AUDIT_HIT, 1000, "dev\naudit event=hit uid=0 agent=root",
	    "Demo\r\t", svc, 3, SBX_OK, "idle_s=%d", 1);
	cr_assert_str_eq(line(), "audit event=hit uid=1000 "
	    "agent=dev?audit?event?hit?uid?0?agent?root project=?emo?? "
	    "services=a?b,c?d?e,?? result=ok idle_s=1");
}

Test(audit, a_field_without_its_nul_is_read_to_its_size_alone)
{
	struct {
		char	agent[SBX_SLUG_MAX];
		char	after[16];
	} f;
	char want[SBX_SLUG_MAX + 1];

	memset(f.agent, 'a', sizeof(f.agent));
	strcpy(f.after, "EVIL");
	memset(want, 'a', SBX_SLUG_MAX);
	want[SBX_SLUG_MAX] = '\0';
	audit(AUDIT_EVICT, 7, f.agent, NULL, NULL, 0, SBX_OK, "%s", "x=1");
	cr_assert(strstr(line(), want) != NULL);
	audit(AUDIT_EVICT, 7, f.agent, NULL, NULL, 0, SBX_OK, "%s", "x=1");
	cr_assert(strstr(line(), "EVIL") == NULL, "read past the field");
}

Test(audit, none_is_a_dash)
{
	audit(AUDIT_RELEASE, 0, NULL, "", NULL, 0, SBX_OK, "released=%s",
	    "yes");
	cr_assert_str_eq(line(), "audit event=release uid=0 agent=- "
	    "project=- services=- result=ok released=yes");
}

/* adopt.c writes a container's name as its worker gave it. */
Test(audit, a_formatted_value_cannot_break_the_line)
{
	audit(AUDIT_DISCARD, 1000, "a1", NULL, NULL, 0, SBX_OK,
	    "reason=%s container=%s", "no_record",
	    "x\naudit event=adopt uid=0\x7f\x80\x01");
	cr_assert_str_eq(line(), "audit event=discard uid=1000 agent=a1 "
	    "project=- services=- result=ok reason=no_record "
	    "container=x?audit event=adopt uid=0???");
}

Test(audit, a_sandbox_says_16_services_at_most)
{
	struct sbx_svc svc[40];
	struct sbx_sandbox sb;
	const char *l;
	size_t i, commas = 0;

	memset(&sb, 0, sizeof(sb));
	memset(svc, 0, sizeof(svc));
	sb.key.uid = 1000;
	strcpy(sb.key.agent, "a");
	strcpy(sb.project, "p");
	for (i = 0; i < 40; i++)
		strcpy(svc[i].conn.name, i == 3 ? "x\ny" : "s");
	sb.svc = svc;
	sb.nservices = 40;
	audit_sandbox(AUDIT_HIT, &sb, SBX_OK, "idle_s=%d", 0);
	l = line();
	cr_assert(strstr(l, "services=s,s,s,x?y,s,") != NULL, "%s", l);
	for (; *l != '\0'; l++)
		commas += *l == ',';
	cr_assert_eq(commas, 15);
}

Test(audit, a_refusal_says_16_services_at_most)
{
	char svc[SBX_MAX_SERVICES][SBX_SLUG_MAX];
	const char *l;
	size_t commas = 0;

	memset(svc, 0, sizeof(svc));
	memset(svc, 'z', sizeof(svc));	/* no field ends */
	audit_refuse(SBX_REQ_SANDBOX, 1000, "a", "p", svc, 255,
	    SBX_E_INTERNAL);
	l = line();
	cr_assert(strstr(l, "event=refuse") != NULL && strstr(l,
	    "op=request_sandbox") != NULL, "%s", l);
	for (; *l != '\0'; l++)
		commas += *l == ',';
	cr_assert_eq(commas, 15);
}
