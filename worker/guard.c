/*
 * guard.c - the kernel keeps other uids off a tcp service's port.
 *
 * With transport = unix the socket's directory keeps them out; a port on
 * 127.0.0.1 is open to every local user, and the password alone guards it
 * then: anyone may hold it with unauthenticated connections. So each tcp
 * service gets one packet-filter rule in the chain SBX_GUARD (jumped to
 * from OUTPUT, which every local connection passes): a connection to its
 * port from a socket owned by any uid but the owner's, root's and its
 * readiness prober's is reset. The rule is added once the port is known,
 * before the first probe, and removed with the container (remove_key,
 * remove_service). Its comment names the key (sbx:<uid>:<agent>:<svc>),
 * so that a removal finds it without knowing the port. At start, adoption
 * lays the chain anew for the sandboxes it finds whole (worker/adopt.c).
 * docker publishes through its own proxy and NAT: no rule is made there,
 * and the monitor says so at start.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "iox.h"
#include "log.h"
#include "runtime_argv.h"
#include "work.h"

#define IPTABLES	"/usr/sbin/iptables"
#define CHAIN		"SBX_GUARD"
#define GUARD_ARGS	40

static int
iptables(char *const *argv, struct run_result *r)
{
	return run_logged(argv, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, NULL, r);
}

static void
comment(char *out, size_t cap, uid_t uid, const char *agent,
    const char *service)
{
	snprintf(out, cap, "sbx:%u:%s:%s", (unsigned)uid, agent, service);
}

int
guard_add(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service, unsigned port, uid_t prober)
{
	char p[8], u[16], pu[16], c[SBX_SLUG_MAX * 2 + 16];
	char *argv[] = { IPTABLES, "-w", "-A", CHAIN, "-d", "127.0.0.0/8",
	    "-p", "tcp", "--dport", p, "-m", "owner", "!", "--uid-owner", u,
	    "-m", "owner", "!", "--uid-owner", "0", "-m", "owner", "!",
	    "--uid-owner", pu, "-m", "comment", "--comment", c, "-j",
	    "REJECT", "--reject-with", "tcp-reset", NULL };
	struct run_result r;

	if (rt_is_docker(cfg))
		return 0;
	snprintf(p, sizeof(p), "%u", port);
	snprintf(u, sizeof(u), "%u", (unsigned)uid);
	snprintf(pu, sizeof(pu), "%u", (unsigned)prober);
	comment(c, sizeof(c), uid, agent, service);
	return iptables(argv, &r);
}

/* Split one line of iptables -S into words, a quoted one unquoted (our
 * comments have no blank); *note: the comment's. */
static size_t
rule_words(char *line, char **w, size_t max, const char **note)
{
	size_t n = 0, len;
	char *t, *save = NULL;

	*note = NULL;
	for (t = strtok_r(line, " \n", &save); t != NULL && n < max;
	    t = strtok_r(NULL, " \n", &save)) {
		if ((len = strlen(t)) >= 2 && t[0] == '"' && t[len - 1] == '"') {
			t[len - 1] = '\0';
			t++;
		}
		if (n > 0 && strcmp(w[n - 1], "--comment") == 0)
			*note = t;
		w[n++] = t;
	}
	return n;
}

/* Every rule of the chain whose comment is name (a service's), or begins
 * with it (a key's, "sbx:<uid>:<agent>:"), deleted. -1 if one could not
 * be. */
static int
guard_del_rules(const char *name, bool prefix)
{
	char *list[] = { IPTABLES, "-w", "-S", CHAIN, NULL };
	char *argv[GUARD_ARGS + 4], *w[GUARD_ARGS], *line, *save = NULL;
	const char *note;
	struct run_result r, d;
	size_t n, i;
	int rc = 0;

	if (iptables(list, &r) == -1)
		return 0;	/* no chain: no rule (guard_reset said why) */
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((n = rule_words(line, w, GUARD_ARGS, &note)) < 2 ||
		    strcmp(w[0], "-A") != 0 || note == NULL ||
		    (prefix ? strncmp(note, name, strlen(name)) :
		    strcmp(note, name)) != 0)
			continue;
		argv[0] = IPTABLES;
		argv[1] = "-w";
		argv[2] = "-D";
		for (i = 1; i < n; i++)
			argv[i + 2] = w[i];
		argv[n + 2] = NULL;
		if (iptables(argv, &d) == -1)
			rc = -1;
	}
	return rc;
}

int
guard_del(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service)
{
	char c[SBX_SLUG_MAX * 2 + 24];

	if (rt_is_docker(cfg))
		return 0;
	comment(c, sizeof(c), uid, agent, service != NULL ? service : "");
	return guard_del_rules(c, service == NULL);
}

int
guard_reset(const struct sbx_config *cfg)
{
	char *make[] = { IPTABLES, "-w", "-N", CHAIN, NULL };
	char *flush[] = { IPTABLES, "-w", "-F", CHAIN, NULL };
	char *check[] = { IPTABLES, "-w", "-C", "OUTPUT", "-j", CHAIN, NULL };
	char *jump[] = { IPTABLES, "-w", "-I", "OUTPUT", "1", "-j", CHAIN,
	    NULL };
	struct run_result r;

	if (rt_is_docker(cfg))
		return 0;
	/* Made if missing (an error if there: not worth a log line). */
	(void)run_argv(make, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, &r);
	if (iptables(flush, &r) == -1)
		return -1;
	if (run_argv(check, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, &r) == 0 && r.status == 0)
		return 0;
	return iptables(jump, &r);
}
