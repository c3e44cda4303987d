/*
 * guard.c - the kernel keeps other uids off a tcp service's port.
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter)
 *
 * With transport = unix the socket's directory keeps them out; a port on
 * 127.0.0.1 is open to every local user, and the password alone would
 * guard it: anyone could hold it with unauthenticated connections. So
 * each tcp service has one packet-filter rule in the chain SBX_GUARD
 * (jumped to from OUTPUT, which every local connection passes): a
 * connection to its port from a socket owned by any uid but root's, its
 * readiness prober's and, once known, its owner's is reset.
 *
 * The rule is there before the port is: the worker picks a free loopback
 * port (guard_port), adds the rule, and only then has the runtime publish
 * that port; it goes after the container is gone. A warm container's rule
 * names no owner; a claim adds the owner's rule before it deletes the
 * pool's (guard_claim), and since every rule only refuses, no moment lets
 * in more than either. At start the chain is never flushed: adoption adds
 * what the records name and is missing, then deletes the rules of ports
 * no record names (guard_sync).
 *
 * A rule's comment names whose it is: sbx:<uid>:<agent>:<service> for a
 * sandbox's, sbx:pool:<service>:<slot> for a warm container's, so that a
 * removal finds it without knowing the port. docker publishes through
 * its own proxy and NAT: no rule is made there, and the monitor says so
 * at start.
 */
#include <sys/file.h>
#include <sys/mman.h>
#include <netinet/in.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "config.h"
#include "guard.h"
#include "iox.h"
#include "log.h"
#include "run.h"
#include "runtime_argv.h"

#define IPTABLES	"/usr/sbin/iptables"
#define CHAIN		"SBX_GUARD"
#define GUARD_ARGS	40

static int
iptables(char *const *argv, struct run_result *r)
{
	return run_logged(argv, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, NULL, r);
}

void
guard_note_key(char *out, size_t cap, uid_t uid, const char *agent,
    const char *service)
{
	snprintf(out, cap, "sbx:%u:%s:%s", (unsigned)uid, agent, service);
}

void
guard_note_pool(char *out, size_t cap, const char *service, unsigned slot)
{
	snprintf(out, cap, "sbx:pool:%s:%u", service, slot);
}

/*
 * A free port on 127.0.0.1, as the kernel picks an ephemeral one. The
 * runtime binds it a moment later; should another process take it
 * meanwhile, the runtime's bind fails and so does the start.
 */
static int
free_port(unsigned *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int s, rc = -1;

	if ((s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_warn("guard: socket");
		return -1;
	}
	if (bind(s, (struct sockaddr *)&a, sizeof(a)) == -1 ||
	    getsockname(s, (struct sockaddr *)&a, &len) == -1)
		log_warn("guard: a free loopback port");
	else {
		*port = ntohs(a.sin_port);
		rc = 0;
	}
	close(s);
	return rc;
}

static int port_ruled(unsigned);

/*
 * A free loopback port that no rule names: a rule left by a container
 * removed without its monitor would refuse the new owner, never let
 * another uid in.
 */
static int
guard_port(const struct sbx_config *cfg, unsigned *port)
{
	int tries, r;

	for (tries = 0; tries < 8; tries++) {
		if (free_port(port) == -1)
			return -1;
		if (rt_is_docker(cfg) || (r = port_ruled(*port)) == 0)
			return 0;
		if (r == -1)
			return -1;
	}
	log_warnx("guard: every free port tried has a rule");
	return -1;
}

/* The rule of port as iptables words after the verb: REJECT every uid
 * but root's, the prober's and the owner's (GUARD_NO_OWNER: none). */
struct rule {
	char	 p[8], u[16], pu[16], note[GUARD_NOTE_MAX];
	char	*w[GUARD_ARGS];
	size_t	 n;
};

static void
rule_make(struct rule *r, const char *note, unsigned port, uid_t owner,
    uid_t prober)
{
	static const char *const head[] = { CHAIN, "-d", "127.0.0.0/8", "-p",
	    "tcp", "--dport" };
	size_t i;

	snprintf(r->p, sizeof(r->p), "%u", port);
	snprintf(r->u, sizeof(r->u), "%u", (unsigned)owner);
	snprintf(r->pu, sizeof(r->pu), "%u", (unsigned)prober);
	strlcpy(r->note, note, sizeof(r->note));
	r->n = 0;
	for (i = 0; i < sizeof(head) / sizeof(head[0]); i++)
		r->w[r->n++] = (char *)(uintptr_t)head[i];
	r->w[r->n++] = r->p;
	if (owner != GUARD_NO_OWNER) {
		r->w[r->n++] = "-m"; r->w[r->n++] = "owner";
		r->w[r->n++] = "!"; r->w[r->n++] = "--uid-owner";
		r->w[r->n++] = r->u;
	}
	r->w[r->n++] = "-m"; r->w[r->n++] = "owner";
	r->w[r->n++] = "!"; r->w[r->n++] = "--uid-owner"; r->w[r->n++] = "0";
	r->w[r->n++] = "-m"; r->w[r->n++] = "owner";
	r->w[r->n++] = "!"; r->w[r->n++] = "--uid-owner";
	r->w[r->n++] = r->pu;
	r->w[r->n++] = "-m"; r->w[r->n++] = "comment";
	r->w[r->n++] = "--comment"; r->w[r->n++] = r->note;
	r->w[r->n++] = "-j"; r->w[r->n++] = "REJECT";
	r->w[r->n++] = "--reject-with"; r->w[r->n++] = "tcp-reset";
}

/* iptables -w VERB <rule>: -A adds, -C checks, -D deletes. */
static int
rule_run(const struct rule *ru, const char *verb, bool quiet)
{
	char *argv[GUARD_ARGS + 4];
	struct run_result r;
	size_t i;

	argv[0] = IPTABLES;
	argv[1] = "-w";
	argv[2] = (char *)(uintptr_t)verb;
	for (i = 0; i < ru->n; i++)
		argv[i + 3] = ru->w[i];
	argv[ru->n + 3] = NULL;
	if (quiet)
		return run_argv(argv, (char *const *)(uintptr_t)rt_base_env,
		    now_ms() + 10000, &r) == 0 && r.status == 0 ? 0 : -1;
	return iptables(argv, &r);
}

static int
guard_add(const struct sbx_config *cfg, const char *note, unsigned port,
    uid_t owner, uid_t prober)
{
	struct rule r = { .n = 0 };

	if (rt_is_docker(cfg))
		return 0;
	rule_make(&r, note, port, owner, prober);
	return rule_run(&r, "-A", false);
}

/*
 * A port for a new container, its rule added: picked and ruled under one
 * lock of the host's (state_dir's, root's alone), so that two services
 * starting at once never pick the same port: the second sees the first's
 * rule, which is there before either binds.
 */
int
guard_open(const struct sbx_config *cfg, const char *note, uid_t owner,
    uid_t prober, unsigned *port)
{
	int lock, rc = -1;

	if ((lock = open(cfg->state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1 || flock(lock, LOCK_EX) == -1) {
		log_warn("guard: the lock of %s", cfg->state_dir);
		if (lock != -1)
			close(lock);
		return -1;
	}
	if (guard_port(cfg, port) == 0 &&
	    guard_add(cfg, note, *port, owner, prober) == 0)
		rc = 0;
	close(lock);
	return rc;
}

/* One rule as a line of iptables-restore's input: VERB and its words. */
static void
rule_line(FILE *f, const char *verb, const struct rule *r)
{
	size_t i;

	fputs(verb, f);
	for (i = 0; i < r->n; i++)
		fprintf(f, " %s", r->w[i]);
	putc('\n', f);
}

/* iptables-restore --noflush of text: one transaction, whole or not at
 * all. Its standard input is a memfd put on the worker's own fd 0 (the
 * job's, read long before) for the call. */
static int
restore(const char *text, size_t len)
{
	char *argv[] = { IPTABLES "-restore", "-w", "--noflush", NULL };
	struct run_result r;
	int fd, saved, rc = -1;

	if ((fd = memfd_create("sbx-guard", MFD_CLOEXEC)) == -1) {
		log_warn("guard: memfd_create");
		return -1;
	}
	if (write_all(fd, text, len, now_ms() + 1000) == 0 &&
	    lseek(fd, 0, SEEK_SET) == 0 && (saved = dup(STDIN_FILENO)) != -1) {
		if (dup2(fd, STDIN_FILENO) != -1)
			rc = iptables(argv, &r);
		if (dup2(saved, STDIN_FILENO) == -1)
			rc = -1;
		close(saved);
	}
	close(fd);
	return rc;
}

/*
 * Claimed warm containers' ports, each its owner's from now (the claims
 * of one JOB_CLAIM, of any owners): in one transaction, each owner's
 * rule added and the pool's deleted, so that nobody else is let in at
 * any moment, and no claim's connection waits on another call.
 */
int
guard_claim(const struct sbx_config *cfg, const struct guard_hand *h,
    size_t n)
{
	char note[GUARD_NOTE_MAX], *text = NULL;
	struct rule r = { .n = 0 };
	size_t len = 0, i;
	FILE *f;
	int rc;

	if (rt_is_docker(cfg) || n == 0)
		return 0;
	if ((f = open_memstream(&text, &len)) == NULL)
		return -1;
	fputs("*filter\n", f);
	for (i = 0; i < n; i++) {
		guard_note_key(note, sizeof(note), h[i].key->uid,
		    h[i].key->agent, h[i].service);
		rule_make(&r, note, h[i].port, h[i].key->uid, h[i].prober);
		rule_line(f, "-A", &r);
		guard_note_pool(note, sizeof(note), h[i].service, h[i].slot);
		rule_make(&r, note, h[i].port, GUARD_NO_OWNER, h[i].prober);
		rule_line(f, "-D", &r);
	}
	fputs("COMMIT\n", f);
	if (fclose(f) != 0 || text == NULL) {
		free(text);
		return -1;
	}
	rc = restore(text, len);
	free(text);
	return rc;
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

/* Does keep say to keep the rule of this note and port? */
typedef bool (*guard_keep_fn)(void *arg, const char *note, unsigned port);

/* The port a rule's words name after --dport; 0: none. */
static unsigned
rule_port(char *const *w, size_t n)
{
	size_t i;

	for (i = 0; i + 1 < n; i++)
		if (strcmp(w[i], "--dport") == 0)
			return (unsigned)strtoul(w[i + 1], NULL, 10);
	return 0;
}

/* Every rule of the chain that keep does not keep deleted. -1 if one
 * could not be. */
static int
guard_del_rules(guard_keep_fn keep, void *arg)
{
	char *list[] = { IPTABLES, "-w", "-S", CHAIN, NULL };
	char *argv[GUARD_ARGS + 4], *w[GUARD_ARGS], *line, *save = NULL;
	const char *note;
	struct run_result r, d;
	size_t n, i;
	int rc = 0;

	if (iptables(list, &r) == -1)
		return 0;	/* no chain: no rule (guard_sync said why) */
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if ((n = rule_words(line, w, GUARD_ARGS, &note)) < 2 ||
		    strcmp(w[0], "-A") != 0 || note == NULL ||
		    keep(arg, note, rule_port(w, n)))
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

struct match {
	const char	*name;
	bool		 prefix;
};

static bool
keep_unmatched(void *arg, const char *note, unsigned port)
{
	const struct match *m = arg;

	(void)port;
	return (m->prefix ? strncmp(note, m->name, strlen(m->name)) :
	    strcmp(note, m->name)) != 0;
}

/* The rules of a key's service (service NULL: of all its services). */
int
guard_del(const struct sbx_config *cfg, uid_t uid, const char *agent,
    const char *service)
{
	char c[GUARD_NOTE_MAX];
	struct match m = { c, service == NULL };

	if (rt_is_docker(cfg))
		return 0;
	guard_note_key(c, sizeof(c), uid, agent, service != NULL ? service :
	    "");
	return guard_del_rules(keep_unmatched, &m);
}

int
guard_del_pool(const struct sbx_config *cfg, const char *service,
    unsigned slot)
{
	char c[GUARD_NOTE_MAX];
	struct match m = { c, false };

	if (rt_is_docker(cfg))
		return 0;
	guard_note_pool(c, sizeof(c), service, slot);
	return guard_del_rules(keep_unmatched, &m);
}

/* The chain, and OUTPUT's jump to it, made where missing; never
 * flushed. */
static int
guard_chain(void)
{
	char *make[] = { IPTABLES, "-w", "-N", CHAIN, NULL };
	char *check[] = { IPTABLES, "-w", "-C", "OUTPUT", "-j", CHAIN, NULL };
	char *jump[] = { IPTABLES, "-w", "-I", "OUTPUT", "1", "-j", CHAIN,
	    NULL };
	struct run_result r;

	/* Made if missing (an error if there: not worth a log line). */
	(void)run_argv(make, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, &r);
	if (run_argv(check, (char *const *)(uintptr_t)rt_base_env,
	    now_ms() + 10000, &r) == 0 && r.status == 0)
		return 0;
	return iptables(jump, &r);
}

/* A rule the records want, or of a port a container still publishes
 * (one the monitor will remove): kept. */
static bool
keep_wanted(void *arg, const char *note, unsigned port)
{
	const struct guard_want *g = arg;
	size_t i;

	if (strncmp(note, "sbx:", 4) != 0)
		return true;	/* not ours */
	for (i = 0; i < g->n; i++)
		if (strcmp(g->v[i].note, note) == 0)
			return true;
	for (i = 0; i < g->nbusy; i++)
		if (g->busy[i] == port)
			return true;
	return false;
}

/* Does a rule of the chain name port? -1: the chain could not be read. */
static int
port_ruled(unsigned port)
{
	char *list[] = { IPTABLES, "-w", "-S", CHAIN, NULL };
	char want[24], *line, *save = NULL;
	struct run_result r;

	if (iptables(list, &r) == -1)
		return -1;
	snprintf(want, sizeof(want), " --dport %u ", port);
	for (line = strtok_r(r.out, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strstr(line, want) != NULL)
			return 1;
	return 0;
}

/*
 * At start: every rule g wants is there (added where missing), then
 * every other rule of ours goes. Adding before deleting, and never
 * flushing, leaves no moment in which a published port is open.
 */
int
guard_sync(const struct sbx_config *cfg, const struct guard_want *g)
{
	struct rule r = { .n = 0 };
	size_t i;
	int rc = 0;

	if (rt_is_docker(cfg))
		return 0;
	if (guard_chain() == -1)
		return -1;
	for (i = 0; i < g->n; i++) {
		rule_make(&r, g->v[i].note, g->v[i].port, g->v[i].owner,
		    g->v[i].prober);
		if (rule_run(&r, "-C", true) == -1 &&
		    rule_run(&r, "-A", false) == -1)
			rc = -1;
	}
	if (rc == 0 && guard_del_rules(keep_wanted, (void *)(uintptr_t)g) ==
	    -1)
		rc = -1;
	return rc;
}
