/*
 * bench.c - sbx-bench: the measuring half of `make bench` (bench/run.sh
 * starts the monitors and prints the table).
 *
 *   serve PATH                   the baseline: the cheapest fork-per-
 *                                connection Unix server, one read, one write
 *   lat N SPEC...                round-trip latency, targets interleaved
 *                                request by request; p50/p99 per target
 *   tput SECS CONC ROUNDS SPEC...  round trips per second with CONC
 *                                clients, targets alternated per round
 *   once SPEC                    one round trip: ms, ok or the error
 *   par N SPEC                   N fresh agents at once: wall ms
 *   byhand NAME PORT/tcp|SOCKDIR KIND -- ARGV  podman run by hand, then
 *                                 poll (published port or socket) until ready
 *
 * SPEC is PATH,OP[,AGENT,PROJECT,SERVICE[,K]]. OP is ping, status, sandbox
 * or release. SERVICE may name several, joined by '+' (postgres+redis).
 * With K, the agent is AGENT<i % K>, so a run spreads over K cached
 * entries. Requests are msgpack-encoded once, before timing;
 * every reply is decoded and checked for ok: true after its timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "timing.h"

#define REPLY_MAX	(64 * 1024)
#define MAX_TARGETS	8
#define WARMUP		20
#define POLL_NS		10000000L	/* by hand: 10 ms between polls */

struct req {
	char	*buf;
	size_t	 len;
};

struct target {
	struct sockaddr_un sun;
	struct req	*reqs;		/* k pre-encoded requests */
	size_t		 k;
	int64_t		*ns;		/* latency samples */
	size_t		 n, errors;
	double		 rates[64];
};

static void __attribute__((noreturn, format(printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sbx-bench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static void
pack_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

static struct req
encode(const char *op, const char *agent, const char *project,
    const char *service)
{
	msgpack_sbuffer sb;
	msgpack_packer pk;
	struct req r;
	int sandbox = !strcmp(op, "sandbox");

	msgpack_sbuffer_init(&sb);
	msgpack_packer_init(&pk, &sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, sandbox ? 4 : agent != NULL ? 2 : 1);
	pack_str(&pk, "op");
	pack_str(&pk, sandbox ? "request_sandbox" : op);
	if (agent != NULL) {
		pack_str(&pk, "agent");
		pack_str(&pk, agent);
	}
	if (sandbox) {
		pack_str(&pk, "project");
		pack_str(&pk, project);
		char *v = strdup(service), *w[8], *save = NULL;
		uint32_t n = 0;

		if (v == NULL)
			die("out of memory");
		for (char *p = strtok_r(v, "+", &save); p != NULL && n < 8;
		    p = strtok_r(NULL, "+", &save))
			w[n++] = p;
		pack_str(&pk, "services");
		msgpack_pack_array(&pk, n);
		for (uint32_t i = 0; i < n; i++)
			pack_str(&pk, w[i]);
		free(v);
	}
	r.buf = sb.data;
	r.len = sb.size;
	return r;
}

/* PATH,OP[,AGENT,PROJECT,SERVICE[,K]] */
static void
parse_spec(struct target *t, const char *spec, size_t nsamples)
{
	char *s = strdup(spec), *f[6] = { 0 }, name[80];
	size_t nf = 0, i;

	if (s == NULL)
		die("out of memory");
	for (char *p = strtok(s, ","); p != NULL && nf < 6;
	    p = strtok(NULL, ","))
		f[nf++] = p;
	if (nf < 2 || (strcmp(f[1], "ping") && strcmp(f[1], "status") &&
	    nf < 3) ||
	    (!strcmp(f[1], "sandbox") && nf < 5))
		die("bad target %s", spec);
	memset(t, 0, sizeof(*t));
	t->sun.sun_family = AF_UNIX;
	strlcpy(t->sun.sun_path, f[0], sizeof(t->sun.sun_path));
	t->k = nf == 6 ? strtoul(f[5], NULL, 10) : 1;
	if (t->k == 0 || (t->reqs = calloc(t->k, sizeof(*t->reqs))) == NULL ||
	    (t->ns = calloc(nsamples + 1, sizeof(*t->ns))) == NULL)
		die("bad target %s", spec);
	for (i = 0; i < t->k; i++) {
		if (nf == 6)
			snprintf(name, sizeof(name), "%s%zu", f[2], i);
		else if (nf > 2)
			strlcpy(name, f[2], sizeof(name));
		t->reqs[i] = encode(f[1], nf > 2 ? name : NULL, f[3], f[4]);
	}
	free(s);
}

/* Does buf hold a map with ok: true? */
static int
reply_ok(const char *buf, size_t len)
{
	msgpack_unpacked u;
	size_t off = 0, i;
	int ok = 0;

	msgpack_unpacked_init(&u);
	if (msgpack_unpack_next(&u, buf, len, &off) == MSGPACK_UNPACK_SUCCESS &&
	    u.data.type == MSGPACK_OBJECT_MAP)
		for (i = 0; i < u.data.via.map.size; i++) {
			const msgpack_object_kv *kv = &u.data.via.map.ptr[i];

			if (kv->key.type == MSGPACK_OBJECT_STR &&
			    kv->key.via.str.size == 2 &&
			    !memcmp(kv->key.via.str.ptr, "ok", 2) &&
			    kv->val.type == MSGPACK_OBJECT_BOOLEAN)
				ok = kv->val.via.boolean;
		}
	msgpack_unpacked_destroy(&u);
	return ok;
}

/* connect, one request, read to EOF, close. Bytes read, or -1. */
static ssize_t
round_trip(const struct target *t, const struct req *r, char *buf)
{
	size_t got = 0;
	ssize_t n;
	int fd;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	/* A cold provision takes seconds; a dead broker must not hang us. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ 90, 0 },
	    sizeof(struct timeval));
	if (connect(fd, (const struct sockaddr *)&t->sun, sizeof(t->sun)) ==
	    -1 || write(fd, r->buf, r->len) != (ssize_t)r->len) {
		close(fd);
		return -1;
	}
	while (got < REPLY_MAX && (n = read(fd, buf + got, REPLY_MAX - got)) > 0)
		got += (size_t)n;
	close(fd);
	return (ssize_t)got;
}

static int
one(struct target *t, size_t i, char *buf, int64_t *ns)
{
	int64_t t0 = now_ns();
	ssize_t n = round_trip(t, &t->reqs[i % t->k], buf);

	*ns = now_ns() - t0;
	if (n <= 0 || !reply_ok(buf, (size_t)n)) {
		t->errors++;
		return -1;
	}
	return 0;
}

static int
cmd_lat(int argc, char **argv)
{
	struct target t[MAX_TARGETS];
	static char buf[REPLY_MAX];
	size_t n, i, j, nt = (size_t)argc - 1;
	int64_t ns;

	if (argc < 2 || nt > MAX_TARGETS)
		die("usage: lat N SPEC...");
	n = strtoul(argv[0], NULL, 10);
	for (j = 0; j < nt; j++)
		parse_spec(&t[j], argv[1 + j], n);
	for (i = 0; i < WARMUP; i++)
		for (j = 0; j < nt; j++)
			one(&t[j], i, buf, &ns);
	for (j = 0; j < nt; j++)
		t[j].errors = 0;
	/* Interleaved, so a noisy moment hits every target alike. */
	for (i = 0; i < n; i++)
		for (j = 0; j < nt; j++)
			if (one(&t[j], i, buf, &ns) == 0)
				t[j].ns[t[j].n++] = ns;
	for (j = 0; j < nt; j++) {
		if (t[j].n == 0)
			die("target %zu: every request failed", j);
		qsort(t[j].ns, t[j].n, sizeof(int64_t), cmp_i64);
		printf("lat %zu p50_us %.1f p99_us %.1f n %zu errors %zu\n", j,
		    t[j].ns[t[j].n / 2] / 1e3, t[j].ns[t[j].n * 99 / 100] / 1e3,
		    t[j].n, t[j].errors);
	}
	return 0;
}

struct tput_arg {
	struct target	*t;
	atomic_int	*stop;
	size_t		 seed, done, errors;
};

/* SBX_BENCH_WHY=N: the first N failures on stderr (errno or the reply's
 * printable bytes), to tell a refusal from a dropped connection. */
static void
why(ssize_t n, const char *buf)
{
	static atomic_int shown;
	const char *e = getenv("SBX_BENCH_WHY");
	int saved = errno;
	char out[161];
	size_t i, k = 0;

	if (e == NULL || atomic_fetch_add(&shown, 1) >= atoi(e))
		return;
	if (n <= 0) {
		fprintf(stderr, "why: %s\n", n < 0 ? strerror(saved) : "EOF, no reply");
		return;
	}
	for (i = 0; i < (size_t)n && k < sizeof(out) - 1; i++)
		out[k++] = buf[i] >= 0x20 && buf[i] < 0x7f ? buf[i] : '.';
	out[k] = '\0';
	fprintf(stderr, "why: %zd bytes: %s\n", n, out);
}

static void *
tput_client(void *p)
{
	struct tput_arg *a = p;
	char *buf = malloc(REPLY_MAX);
	size_t i = a->seed;
	ssize_t n;

	if (buf == NULL)
		return NULL;
	while (!atomic_load(a->stop)) {
		n = round_trip(a->t, &a->t->reqs[i++ % a->t->k], buf);
		if (n > 0 && reply_ok(buf, (size_t)n))
			a->done++;
		else {
			a->errors++;
			why(n, buf);
		}
	}
	free(buf);
	return NULL;
}

static double
tput_round(struct target *t, double secs, size_t conc)
{
	pthread_t th[256];
	struct tput_arg a[256];
	struct timespec d = { (time_t)secs,
	    (long)((secs - (double)(time_t)secs) * 1e9) };
	atomic_int stop = 0;
	size_t i, done = 0;
	int64_t t0 = now_ns();

	for (i = 0; i < conc; i++) {
		a[i] = (struct tput_arg){ .t = t, .stop = &stop, .seed = i * 7 };
		if (pthread_create(&th[i], NULL, tput_client, &a[i]) != 0)
			die("pthread_create");
	}
	nanosleep(&d, NULL);
	atomic_store(&stop, 1);
	for (i = 0; i < conc; i++) {
		pthread_join(th[i], NULL);
		done += a[i].done;
		t->errors += a[i].errors;
	}
	return (double)done / ((double)(now_ns() - t0) / 1e9);
}

static int
cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static int
cmd_tput(int argc, char **argv)
{
	struct target t[MAX_TARGETS];
	size_t conc, rounds, r, j, nt = (size_t)argc - 3;
	double secs;

	if (argc < 4 || nt > MAX_TARGETS)
		die("usage: tput SECS CONC ROUNDS SPEC...");
	secs = strtod(argv[0], NULL);
	conc = strtoul(argv[1], NULL, 10);
	rounds = strtoul(argv[2], NULL, 10);
	if (conc == 0 || conc > 256 || rounds == 0 || rounds > 64)
		die("CONC 1..256, ROUNDS 1..64");
	for (j = 0; j < nt; j++)
		parse_spec(&t[j], argv[3 + j], 0);
	for (r = 0; r < rounds; r++)
		for (j = 0; j < nt; j++)
			t[j].rates[r] = tput_round(&t[j], secs, conc);
	for (j = 0; j < nt; j++) {
		qsort(t[j].rates, rounds, sizeof(double), cmp_dbl);
		printf("tput %zu per_s %.0f errors %zu\n", j,
		    t[j].rates[rounds / 2], t[j].errors);
	}
	return 0;
}

static int
cmd_once(int argc, char **argv)
{
	static char buf[REPLY_MAX];
	struct target t;
	int64_t ns;
	int rc;

	if (argc != 1)
		die("usage: once SPEC");
	parse_spec(&t, argv[0], 1);
	rc = one(&t, 0, buf, &ns);
	printf("once ms %.3f %s\n", ns / 1e6, rc == 0 ? "ok" : "failed");
	return rc == 0 ? 0 : 1;
}

struct par_arg {
	struct target	*t;
	size_t		 i;
	int		 rc;
	pthread_barrier_t *go;
};

static void *
par_client(void *p)
{
	struct par_arg *a = p;
	char *buf = malloc(REPLY_MAX);
	ssize_t n;

	a->rc = -1;
	if (buf == NULL)
		return NULL;
	pthread_barrier_wait(a->go);
	n = round_trip(a->t, &a->t->reqs[a->i], buf);
	if (n > 0 && reply_ok(buf, (size_t)n))
		a->rc = 0;
	free(buf);
	return NULL;
}

/* N requests for N different agents (SPEC's K is set to N) at once. */
static int
cmd_par(int argc, char **argv)
{
	pthread_t th[256];
	struct par_arg a[256];
	pthread_barrier_t go;
	struct target t;
	char spec[512];
	size_t n, i, failed = 0;
	int64_t t0;

	if (argc != 2 || (n = strtoul(argv[0], NULL, 10)) == 0 || n > 256)
		die("usage: par N PATH,sandbox,AGENT,PROJECT,SERVICE");
	snprintf(spec, sizeof(spec), "%s,%zu", argv[1], n);
	parse_spec(&t, spec, 0);
	pthread_barrier_init(&go, NULL, (unsigned)n + 1);
	for (i = 0; i < n; i++) {
		a[i] = (struct par_arg){ .t = &t, .i = i, .go = &go };
		if (pthread_create(&th[i], NULL, par_client, &a[i]) != 0)
			die("pthread_create");
	}
	pthread_barrier_wait(&go);
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		pthread_join(th[i], NULL);
		failed += a[i].rc != 0;
	}
	printf("par ms %.3f failed %zu\n", (now_ns() - t0) / 1e6, failed);
	return failed == 0 ? 0 : 1;
}

/* The baseline. Children are reaped by the kernel (SIGCHLD ignored). */
static int
cmd_serve(int argc, char **argv)
{
	static const char reply[] = "\x81\xa2ok\xc3";
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	char buf[4096];
	int lfd, fd;

	if (argc != 1)
		die("usage: serve PATH");
	signal(SIGCHLD, SIG_IGN);
	strlcpy(sun.sun_path, argv[0], sizeof(sun.sun_path));
	unlink(argv[0]);
	if ((lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(lfd, SOMAXCONN) == -1)
		die("serve %s: %s", argv[0], strerror(errno));
	for (;;) {
		if ((fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC)) == -1)
			continue;
		if (fork() == 0) {
			if (read(fd, buf, sizeof(buf)) > 0 &&
			    write(fd, reply, sizeof(reply) - 1) < 0)
				_exit(1);
			_exit(0);
		}
		close(fd);
	}
}

/* Run argv, wait; its stdout (first line) in out if asked. Exit status. */
static int
run(char *const argv[], char *out, size_t cap)
{
	int p[2], status;
	ssize_t n;
	size_t got = 0;
	pid_t pid;

	if (pipe(p) == -1 || (pid = fork()) == -1)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(p[1], 1);
		/* A poll that is refused says so on stderr: not our output. */
		dup2(out == NULL ? p[1] : null, 2);
		close(p[0]);
		close(p[1]);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out ? out + got : (char[256]){ 0 },
	    out ? cap - 1 - got : 256)) > 0)
		if (out != NULL && (got += (size_t)n) + 1 >= cap)
			break;
	if (out != NULL)
		out[got] = '\0';
	close(p[0]);
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/*
 * By hand, as an agent without sbx would do it: podman run -d with the
 * monitor's options (the host port is picked by podman, as the monitor
 * has it), podman port to learn it, then pg_isready / redis-cli ping
 * every 10 ms until the service answers.
 */
static int
cmd_byhand(int argc, char **argv)
{
	char out[256], port[16], sock[256], *colon;
	char *portv[] = { "podman", "port", argv[0], argv[1], NULL };
	char *pg[] = { "pg_isready", "-q", "-h", "127.0.0.1", "-p", port,
	    "-U", getenv("SBX_USER") ? getenv("SBX_USER") : "sbx",
	    "-d", "postgres", NULL };
	char *rd_tcp[] = { "redis-cli", "--no-auth-warning", "-h", "127.0.0.1",
	    "-p", port, "--user", "default", "ping", NULL };
	char *rd_unix[] = { "redis-cli", "--no-auth-warning", "-s", sock,
	    "--user", "default", "ping", NULL };
	char **rd = rd_tcp;
	struct timespec pause = { 0, POLL_NS };
	int64_t t0;
	int tries = 0;

	if (argc < 5 || strcmp(argv[3], "--"))
		die("usage: byhand NAME PORT/tcp|SOCKDIR pg|redis -- podman run ...");
	t0 = now_ns();
	if (run(argv + 4, NULL, 0) != 0)
		die("podman run failed");
	if (argv[1][0] == '/') {	/* a socket directory, as sbx's unix */
		pg[3] = argv[1];
		strlcpy(port, "5432", sizeof(port));
		snprintf(sock, sizeof(sock), "%s/redis.sock", argv[1]);
		rd = rd_unix;
	} else {
		if (run(portv, out, sizeof(out)) != 0 ||
		    (colon = strrchr(out, ':')) == NULL)
			die("podman port: %s", out);
		strlcpy(port, colon + 1, sizeof(port));
		port[strcspn(port, "\n")] = '\0';
	}
	setenv("REDISCLI_AUTH", getenv("SBX_PASSWORD") ?
	    getenv("SBX_PASSWORD") : "", 1);
	for (;;) {
		tries++;
		if (!strcmp(argv[2], "pg") && run(pg, NULL, 0) == 0)
			break;
		if (!strcmp(argv[2], "redis") && run(rd, out, sizeof(out)) == 0 &&
		    !strncmp(out, "PONG", 4))
			break;
		if (now_ns() - t0 > 60000000000LL)
			die("not ready after 60 s");
		nanosleep(&pause, NULL);
	}
	printf("byhand ms %.1f polls %d\n", (now_ns() - t0) / 1e6, tries);
	return 0;
}

int
main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "lat", cmd_lat }, { "tput", cmd_tput }, { "once", cmd_once },
		{ "par", cmd_par }, { "serve", cmd_serve },
		{ "byhand", cmd_byhand },
	};
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; argc > 1 && i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 2, argv + 2);
	die("usage: sbx-bench lat|tput|once|par|serve|byhand ...");
}
