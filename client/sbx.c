/*
 * sbx.c - the sbx client CLI: one command, one request, one reply.
 *
 *   sbx [-S SOCKET] [-t SECONDS] COMMAND [ARGS]
 *
 * Exit status:
 *   0  success
 *   1  the server refused: {ok: false}; "sbx: CODE: message" on stderr
 *   2  usage: bad option, missing argument, invalid slug
 *   3  cannot connect: no socket, connection refused, permission denied
 *   4  no usable reply: connection reset, truncated or malformed reply,
 *      a reply without the keys the command needs; or stdout failed
 *   5  timeout: no complete reply within -t SECONDS
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "format.h"
#include "sbx.h"

enum {
	EX_OK = 0,
	EX_SERVER = 1,
	EX_USAGE = 2,
	EX_CONNECT = 3,
	EX_PROTO = 4,
	EX_TIMEOUT = 5,
};

static const char usage_text[] =
"usage: sbx [-S SOCKET] [-t SECONDS] [--json] COMMAND [ARGS]\n"
"\n"
"commands:\n"
"  ping                                  print the server's version\n"
"  available PROJECT                     services PROJECT offers, one a line\n"
"  request -a AGENT -p PROJECT [-f FORMAT] [--bind-pid PID] SERVICE...\n"
"                                        provision (or reuse) AGENT's sandbox;\n"
"                                        prints export lines for eval:\n"
"                                        NAME_SOCKET NAME_HOST NAME_PORT (where\n"
"                                        the transport gives them) NAME_USER\n"
"                                        NAME_PASSWORD NAME_DATABASE NAME_URL,\n"
"                                        PG* for the first postgres, and\n"
"                                        DATABASE_URL, REDIS_URL for the only\n"
"                                        postgres, the only redis; on any\n"
"                                        failure, with -f env, the line\n"
"                                        'false', so that eval fails too\n"
"  reset -a AGENT [--to NAME] [-f FORMAT]\n"
"                                        end every session and put AGENT's\n"
"                                        sandbox back as handed out (or as\n"
"                                        snapshot NAME); prints as request\n"
"  snapshot -a AGENT NAME                save the sandbox's state as NAME\n"
"  release -a AGENT                      tear AGENT's sandbox down\n"
"  status                                your sandboxes (root: everyone's)\n"
"  help                                  this help\n"
"\n"
"options:\n"
"  -S, --socket SOCKET    agent socket (default $SBX_SOCKET, else "
    SBXC_DEFAULT_SOCKET ")\n"
"  -t, --timeout SECONDS  overall timeout (default 120)\n"
"  -a, --agent AGENT      agent slug\n"
"  -p, --project PROJECT  project slug\n"
"  -f, --format FORMAT    request's and reset's output: env (export lines,\n"
"                         the default), dotenv (NAME=value lines for .env\n"
"                         files), json (the services as a JSON object,\n"
"                         with their url)\n"
"      --to NAME          reset: the snapshot to go back to\n"
"      --bind-pid PID     request: tear the sandbox down when process PID\n"
"                         (one of yours) exits\n"
"  -j, --json             print the server's reply as JSON\n"
"  -h, --help             this help\n"
"  -V, --version          the client's version\n"
"\n"
"AGENT, PROJECT, SERVICE and NAME match [a-z0-9][a-z0-9._-]{0,62}.\n"
"\n"
"With --json the reply is printed as is, errors included.\n"
"\n"
"exit status: 0 ok, 1 the server refused (sbx: CODE: message),\n"
"2 usage, 3 cannot connect, 4 bad or no reply, 5 timeout.\n"
"\n"
"example: set -e; eval \"$(sbx request -a my-agent -p my-project postgres)\"\n"
"         sbx request -a my-agent -p my-project -f dotenv postgres > .env\n";

struct cmdline {
	const char	*cmd;
	const char	*socket;
	const char	*agent;
	const char	*project;
	const char	*to;		/* reset --to */
	const char	**args;
	size_t		 nargs;
	int64_t		 timeout_ms;
	int64_t		 bind_pid;	/* request --bind-pid; 0: none */
	int		 json;
	int		 format_set;
	enum sbxf_format format;
};

typedef int format_fn(FILE *, const msgpack_object *, char *, size_t);

/* Long options without a short one. */
enum {
	OPT_TO = 256,
	OPT_BIND_PID,
};

static int usage_error(const char *, ...)
    __attribute__((format(printf, 1, 2)));

static int
usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("sbx: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'sbx -h' for help.\n", stderr);
	return EX_USAGE;
}

/* A user-supplied string in a message: quoted, controls made harmless. */
static void
print_arg(FILE *f, const char *s)
{
	putc('\'', f);
	sbxf_print_safe(f, s, strlen(s));
	putc('\'', f);
}

static int
check_slug(const char *what, const char *s)
{
	if (sbxf_slug_ok(s))
		return 0;
	fprintf(stderr, "sbx: invalid %s ", what);
	print_arg(stderr, s);
	fputs(": must match [a-z0-9][a-z0-9._-]{0,62}\n", stderr);
	return -1;
}

static int
parse_timeout(const char *s, int64_t *ms)
{
	char *end;
	double v;

	if (s == NULL)		/* getopt gives one; the analyzer cannot know */
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' || !isfinite(v) ||
	    v <= 0 || v > 7 * 86400.0)
		return -1;
	*ms = (int64_t)(v * 1000.0);
	if (*ms < 1)
		*ms = 1;
	return 0;
}

/* A pid for --bind-pid: a decimal integer, 1..INT_MAX (pid_t). */
static int
parse_pid(const char *s, int64_t *pid)
{
	char *end;
	long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (errno != 0 || *end != '\0' || v <= 0 || v > INT_MAX)
		return -1;
	*pid = v;
	return 0;
}

/* The option getopt names in optopt, or the word that holds it. */
static int
option_error(bool unknown, char **argv)
{
	const char *what = unknown ? "unknown option" : "option";
	const char *why = unknown ? "" : " needs an argument";

	if (optopt > 0 && optopt < 256)
		return usage_error("%s '-%c'%s", what, optopt, why);
	return usage_error("%s '%s'%s", what, argv[optind - 1], why);
}

/*
 * One option (or operand) of getopt's.  EX_OK, EX_USAGE (said on
 * stderr), or -1 for -h and -V, which are done.
 */
static int
parse_one(int ch, char **argv, struct cmdline *cl)
{
	switch (ch) {
	case 1:
		if (cl->cmd == NULL)
			cl->cmd = optarg;
		else
			cl->args[cl->nargs++] = optarg;
		break;
	case 'S':
		cl->socket = optarg;
		break;
	case 't':
		if (parse_timeout(optarg, &cl->timeout_ms) == -1)
			return usage_error("invalid timeout '%s': expected "
			    "seconds > 0", optarg);
		break;
	case 'a':
		cl->agent = optarg;
		break;
	case 'p':
		cl->project = optarg;
		break;
	case 'j':
		cl->json = 1;
		break;
	case 'f':
		if (optarg == NULL ||
		    sbxf_format_parse(optarg, &cl->format) == -1)
			return usage_error("unknown format '%s': expected "
			    "env, dotenv or json", optarg != NULL ? optarg :
			    "");
		cl->format_set = 1;
		break;
	case OPT_TO:
		cl->to = optarg;
		break;
	case OPT_BIND_PID:
		if (parse_pid(optarg, &cl->bind_pid) == -1)
			return usage_error("invalid pid '%s': expected an "
			    "integer from 1 to %d", optarg != NULL ? optarg :
			    "", INT_MAX);
		break;
	case 'h':
		fputs(usage_text, stdout);
		return -1;
	case 'V':
		printf("sbx %s\n", SBX_VERSION);
		return -1;
	case ':':
		return option_error(false, argv);
	default:
		return option_error(true, argv);
	}
	return EX_OK;
}

/*
 * After a usage error the rest is still read, without a word more on
 * stderr: main needs the command and the format to know whether stdout
 * owes an eval its 'false' (sbxf_request_failed).
 */
static int
parse_cmdline(int argc, char **argv, struct cmdline *cl)
{
	static const struct option longopts[] = {
		{ "socket",	required_argument,	NULL, 'S' },
		{ "timeout",	required_argument,	NULL, 't' },
		{ "agent",	required_argument,	NULL, 'a' },
		{ "project",	required_argument,	NULL, 'p' },
		{ "json",	no_argument,		NULL, 'j' },
		{ "format",	required_argument,	NULL, 'f' },
		{ "to",		required_argument,	NULL, OPT_TO },
		{ "bind-pid",	required_argument,	NULL, OPT_BIND_PID },
		{ "help",	no_argument,		NULL, 'h' },
		{ "version",	no_argument,		NULL, 'V' },
		{ NULL,		0,			NULL, 0 }
	};
	const char *env;
	int ch, rc = EX_OK, r;

	memset(cl, 0, sizeof(*cl));
	cl->timeout_ms = SBXC_DEFAULT_TIMEOUT_MS;
	if ((cl->args = calloc((size_t)argc + 1, sizeof(*cl->args))) == NULL) {
		fputs("sbx: out of memory\n", stderr);
		return EX_USAGE;
	}
	opterr = 0;
	/* Leading '-': operands come back in order as ch == 1, so options
	 * may follow the command whatever POSIXLY_CORRECT says. */
	while ((ch = getopt_long(argc, argv, "-:S:t:a:p:f:jhV", longopts,
	    NULL)) != -1) {
		if (rc != EX_OK) {
			/* quietly: the command and the format only */
			if (ch == 1 && cl->cmd == NULL)
				cl->cmd = optarg;
			else if (ch == 'f' && optarg != NULL &&
			    sbxf_format_parse(optarg, &cl->format) == 0)
				cl->format_set = 1;
			else if (ch == 'j')
				cl->json = 1;
			continue;
		}
		if ((r = parse_one(ch, argv, cl)) == -1)
			return -1;
		rc = r;
	}
	while (optind < argc) {			/* after "--" */
		if (cl->cmd == NULL)
			cl->cmd = argv[optind++];
		else
			cl->args[cl->nargs++] = argv[optind++];
	}
	if (cl->socket == NULL) {
		env = getenv("SBX_SOCKET");
		cl->socket = env != NULL && *env != '\0' ? env :
		    SBXC_DEFAULT_SOCKET;
	}
	if (rc == EX_OK && cl->cmd == NULL)
		rc = usage_error("%s", "no command given");
	return rc;
}

/* ---- progress on a terminal ---- */

static const char progress_blank[] =
    "                                                  ";
static volatile sig_atomic_t progress_shown;	/* chars on the line */

struct progress {
	const char	*label;
	int		 on;
	long long	 shown_s;	/* the seconds on the line, -1: none */
};

/* Redraws the line when the whole seconds shown change. */
static void
progress_tick(void *arg, int64_t elapsed_ms)
{
	struct progress *p = arg;
	long long s = (long long)((elapsed_ms + 500) / 1000);
	int n;

	if (!p->on || elapsed_ms < 500 || s == p->shown_s)
		return;
	p->shown_s = s;
	n = fprintf(stderr, "\rsbx: %s... %llds", p->label, s);
	if (n > 1 && n - 1 > progress_shown)
		progress_shown = n - 1;
}

static void
progress_clear(void)
{
	int n = progress_shown;

	if (n <= 0)
		return;
	if ((size_t)n > sizeof(progress_blank) - 1)
		n = (int)sizeof(progress_blank) - 1;
	fprintf(stderr, "\r%.*s\r", n, progress_blank);
	progress_shown = 0;
}

/* SIGINT/SIGTERM while the line is up: clear it, then die of the signal. */
static void
progress_signal(int sig)
{
	int n = progress_shown;

	if (n > 0) {
		if ((size_t)n > sizeof(progress_blank) - 1)
			n = (int)sizeof(progress_blank) - 1;
		(void)!write(STDERR_FILENO, "\r", 1);
		(void)!write(STDERR_FILENO, progress_blank, (size_t)n);
		(void)!write(STDERR_FILENO, "\r", 1);
	}
	raise(sig);	/* SA_RESETHAND: delivered, with SIG_DFL, on return */
}

static void
progress_signals(int on)
{
	static struct sigaction old_int, old_term;
	struct sigaction sa;

	if (on) {
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = progress_signal;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGINT, &sa, &old_int);
		sigaction(SIGTERM, &sa, &old_term);
	} else {
		sigaction(SIGINT, &old_int, NULL);
		sigaction(SIGTERM, &old_term, NULL);
	}
}

/* ---- one request ---- */

static int
status_exit(enum sbxc_status st)
{
	switch (st) {
	case SBXC_OK:		return EX_OK;
	case SBXC_ECONNECT:	return EX_CONNECT;
	case SBXC_ETIMEOUT:	return EX_TIMEOUT;
	case SBXC_EREQUEST:	return EX_USAGE;
	default:		return EX_PROTO;
	}
}

static int
finish_output(void)
{
	if (fflush(stdout) == EOF || ferror(stdout)) {
		fprintf(stderr, "sbx: cannot write the output: %s\n",
		    strerror(errno));
		return EX_PROTO;
	}
	return EX_OK;
}

static int
run(const struct cmdline *cl, const struct sbxc_req *req,
    const struct sbxc_req_ext *x, format_fn *fmt)
{
	struct progress prog = { "waiting", 0, -1 };
	struct sbxc_opts opts;
	struct sbxc_error err;
	msgpack_unpacked reply;
	enum sbxc_status st;
	int ok, rc;

	if (strcmp(req->op, "request_sandbox") == 0)
		prog.label = "provisioning";
	else if (strcmp(req->op, "release") == 0)
		prog.label = "releasing";
	else if (strcmp(req->op, "reset") == 0)
		prog.label = "resetting";
	else if (strcmp(req->op, "snapshot") == 0)
		prog.label = "saving";
	prog.on = isatty(STDERR_FILENO);
	memset(&opts, 0, sizeof(opts));
	opts.timeout_ms = cl->timeout_ms;
	opts.tick = prog.on ? progress_tick : NULL;
	opts.tick_arg = &prog;
	opts.tick_ms = 250;
	if (prog.on)
		progress_signals(1);
	st = sbxc_call_ext(cl->socket, req, x, &opts, &reply, &err);
	if (prog.on)
		progress_signals(0);
	progress_clear();
	if (st != SBXC_OK) {
		fputs("sbx: ", stderr);
		sbxf_print_safe(stderr, err.msg, strlen(err.msg));
		putc('\n', stderr);
		return status_exit(st);
	}
	if (cl->json) {
		sbxf_json(stdout, &reply.data);
		putchar('\n');
	}
	ok = sbxf_check_ok(stderr, &reply.data);
	if (ok == 1 && !cl->json) {
		char why[256];

		if (fmt(stdout, &reply.data, why, sizeof(why)) == -1) {
			fprintf(stderr, "sbx: bad reply: %s\n", why);
			ok = -1;
		}
	} else if (ok == -1)
		fputs("sbx: bad reply: no 'ok' boolean\n", stderr);
	msgpack_unpacked_destroy(&reply);
	rc = finish_output();
	if (ok == 0)
		return EX_SERVER;
	if (ok == -1)
		return EX_PROTO;
	return rc;
}

/* ---- commands ---- */

static enum sbxf_format request_format = SBXF_FMT_ENV;

static int
request_fmt(FILE *f, const msgpack_object *reply, char *err, size_t cap)
{
	return sbxf_request(f, stderr, request_format, reply, err, cap);
}

/* What a command takes besides the global options (no_extra). */
#define TAKES_AGENT	0x01
#define TAKES_PROJECT	0x02
#define TAKES_FORMAT	0x04
#define TAKES_TO	0x08
#define TAKES_BIND_PID	0x10

/* Refuses what cl holds that the command does not take. */
static int
no_extra(const struct cmdline *cl, int takes, size_t maxargs)
{
	if (!(takes & TAKES_FORMAT) && cl->format_set)
		return usage_error("'%s' takes no --format: it is request's "
		    "and reset's", cl->cmd);
	if (!(takes & TAKES_AGENT) && cl->agent != NULL)
		return usage_error("'%s' takes no -a AGENT", cl->cmd);
	if (!(takes & TAKES_PROJECT) && cl->project != NULL)
		return usage_error("'%s' takes no -p PROJECT", cl->cmd);
	if (!(takes & TAKES_TO) && cl->to != NULL)
		return usage_error("'%s' takes no --to: it is reset's",
		    cl->cmd);
	if (!(takes & TAKES_BIND_PID) && cl->bind_pid != 0)
		return usage_error("'%s' takes no --bind-pid: it is "
		    "request's", cl->cmd);
	if (cl->nargs > maxargs) {
		fprintf(stderr, "sbx: unexpected argument ");
		print_arg(stderr, cl->args[maxargs]);
		fputs("\nTry 'sbx -h' for help.\n", stderr);
		return EX_USAGE;
	}
	return EX_OK;
}

/* -a AGENT, given and a slug. */
static int
need_agent(const struct cmdline *cl, const char *usage)
{
	if (cl->agent == NULL)
		return usage_error("usage: %s", usage);
	if (check_slug("agent", cl->agent) == -1)
		return EX_USAGE;
	return EX_OK;
}

/* The formats print services: --json, the reply as is, is another. */
static int
one_format(const struct cmdline *cl)
{
	if (cl->format_set && cl->json)
		return usage_error("%s", "give --json (the reply as is) or "
		    "--format, not both");
	request_format = cl->format;
	return EX_OK;
}

static int
cmd_ping(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "ping" };
	int rc;

	if ((rc = no_extra(cl, 0, 0)) != EX_OK)
		return rc;
	return run(cl, &req, NULL, sbxf_ping);
}

static int
cmd_available(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "available" };
	int rc;

	if ((rc = no_extra(cl, TAKES_PROJECT, 1)) != EX_OK)
		return rc;
	if (cl->nargs == 1 && cl->project != NULL)
		return usage_error("%s", "give PROJECT once: as an argument "
		    "or with -p");
	req.project = cl->nargs == 1 ? cl->args[0] : cl->project;
	if (req.project == NULL)
		return usage_error("%s", "usage: sbx available PROJECT");
	if (check_slug("project", req.project) == -1)
		return EX_USAGE;
	return run(cl, &req, NULL, sbxf_available);
}

static int
cmd_request(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "request_sandbox" };
	struct sbxc_req_ext x = { .bind_pid = cl->bind_pid };
	size_t i, j;
	int rc;

	if ((rc = no_extra(cl, TAKES_AGENT | TAKES_PROJECT | TAKES_FORMAT |
	    TAKES_BIND_PID, cl->nargs)) != EX_OK)
		return rc;
	if (cl->agent == NULL || cl->project == NULL)
		return usage_error("%s", "usage: sbx request -a AGENT "
		    "-p PROJECT SERVICE...");
	if (check_slug("agent", cl->agent) == -1 ||
	    check_slug("project", cl->project) == -1)
		return EX_USAGE;
	for (i = 0; i < cl->nargs; i++) {
		if (check_slug("service", cl->args[i]) == -1)
			return EX_USAGE;
		for (j = 0; j < i; j++)
			if (strcmp(cl->args[i], cl->args[j]) == 0)
				return usage_error("service '%s' is named "
				    "twice", cl->args[i]);
	}
	if ((rc = one_format(cl)) != EX_OK)
		return rc;
	req.agent = cl->agent;
	req.project = cl->project;
	req.services = cl->args;
	req.nservices = cl->nargs;
	return run(cl, &req, &x, request_fmt);
}

static int
cmd_reset(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "reset" };
	struct sbxc_req_ext x = { .to = cl->to };
	int rc;

	if ((rc = no_extra(cl, TAKES_AGENT | TAKES_FORMAT | TAKES_TO, 0)) !=
	    EX_OK ||
	    (rc = need_agent(cl, "sbx reset -a AGENT [--to NAME]")) != EX_OK)
		return rc;
	if (cl->to != NULL && check_slug("snapshot name", cl->to) == -1)
		return EX_USAGE;
	if ((rc = one_format(cl)) != EX_OK)
		return rc;
	req.agent = cl->agent;
	return run(cl, &req, &x, request_fmt);
}

static int
cmd_snapshot(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "snapshot" };
	struct sbxc_req_ext x = { 0 };
	int rc;

	if ((rc = no_extra(cl, TAKES_AGENT, 1)) != EX_OK ||
	    (rc = need_agent(cl, "sbx snapshot -a AGENT NAME")) != EX_OK)
		return rc;
	if (cl->nargs != 1)
		return usage_error("%s", "usage: sbx snapshot -a AGENT NAME");
	if (check_slug("snapshot name", cl->args[0]) == -1)
		return EX_USAGE;
	req.agent = cl->agent;
	x.name = cl->args[0];
	return run(cl, &req, &x, sbxf_snapshot);
}

static int
cmd_release(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "release" };
	int rc;

	if ((rc = no_extra(cl, TAKES_AGENT, 0)) != EX_OK ||
	    (rc = need_agent(cl, "sbx release -a AGENT")) != EX_OK)
		return rc;
	req.agent = cl->agent;
	return run(cl, &req, NULL, sbxf_release);
}

/* Anyone may ask: the server answers with the caller's own sandboxes,
 * and root's with everyone's. */
static int
cmd_status(const struct cmdline *cl)
{
	struct sbxc_req req = { .op = "status" };
	int rc;

	if ((rc = no_extra(cl, 0, 0)) != EX_OK)
		return rc;
	return run(cl, &req, NULL, sbxf_status);
}

static const struct {
	const char	*name;
	int		(*fn)(const struct cmdline *);
} commands[] = {
	{ "ping",	cmd_ping },
	{ "available",	cmd_available },
	{ "request",	cmd_request },
	{ "reset",	cmd_reset },
	{ "snapshot",	cmd_snapshot },
	{ "release",	cmd_release },
	{ "status",	cmd_status },
};

/*
 * `eval "$(sbx request ...)"` runs nothing when sbx fails, and an empty
 * eval succeeds: a set -e script would go on without its variables.  So
 * request and reset in the env format (the default) end a failure with
 * "false" on stdout, whatever failed, a usage error included.  Not on a
 * terminal, where nobody evals it.
 */
static void
owe_false(const struct cmdline *cl)
{
	if (cl->cmd == NULL || cl->json || isatty(STDOUT_FILENO) ||
	    (strcmp(cl->cmd, "request") != 0 && strcmp(cl->cmd, "reset") != 0))
		return;
	sbxf_request_failed(stdout, cl->format);
	(void)fflush(stdout);
}

int
main(int argc, char **argv)
{
	struct cmdline cl;
	int rc;

	rc = parse_cmdline(argc, argv, &cl);
	if (rc == -1) {
		free(cl.args);
		return finish_output();		/* -h, -V */
	}
	if (rc == EX_OK && strcmp(cl.cmd, "help") == 0) {	/* NOLINT: EX_OK means cmd is set */
		fputs(usage_text, stdout);
		rc = finish_output();
	} else if (rc == EX_OK) {
		size_t i;

		rc = -2;
		for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (strcmp(cl.cmd, commands[i].name) == 0) {
				rc = commands[i].fn(&cl);
				break;
			}
		if (rc == -2) {
			fputs("sbx: unknown command ", stderr);
			print_arg(stderr, cl.cmd);
			fputs("\nTry 'sbx -h' for help.\n", stderr);
			rc = EX_USAGE;
		}
	}
	if (rc != EX_OK)
		owe_false(&cl);
	free(cl.args);
	return rc;
}
