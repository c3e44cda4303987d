/*
 * load.c - a load generator for the agent socket.
 *
 *   stress-load SOCKET MONITOR_PID [CLIENTS [REQUESTS]]
 *
 * CLIENTS threads (default 200) share REQUESTS requests (default 20000),
 * one connection each, as the protocol has it. The mix: ping, available,
 * request_sandbox hits on a few agents provisioned first, bad input
 * (garbage, wrong types, oversized, truncated then shut), and some slow
 * clients that dribble their request a byte at a time. Every reply is
 * decoded and compared with the one answer that request must get; every
 * reply must come within its deadline; the monitor's fd count at rest
 * after the load must equal the one before, its RSS not exceed it.
 * Prints the figures and exits 1 on any wrong answer, late answer or
 * growth.
 *
 * Fairness between uids (issue 15), run as two different uids by
 * load.sh:
 *
 *   stress-load flood SOCKET THREADS
 *	THREADS threads connect as fast as they can, each holding its
 *	connection until the broker closes it (busy at once, or timeout
 *	after request_timeout for those it took), until SIGTERM; then
 *	prints what they got.
 *   stress-load hits SOCKET AGENT N
 *	N cache hits on AGENT (project cache-only, redis, provisioned
 *	before), one after another, each timed and compared byte for byte
 *	with the first; prints the latencies, exits 1 on any other answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

#include <msgpack.h>

#define NAGENTS		3
#define SLOW_CLIENTS	10	/* of CLIENTS, dribbling pings */
#define SLOW_EACH	4	/* requests per slow client */
#define DRIBBLE_MS	100	/* between bytes: 9 bytes ~ 0.9 s < 5 s */
#define DEADLINE_MS	3000	/* for a reply, past any dribbling */
#define RSS_SLACK_KIB	256
#define PROJECT		"cache-only"

enum kind { K_PING, K_AVAIL, K_HIT, K_BAD, K_SLOW, K_MAX };
static const char *kind_name[K_MAX] = { "ping", "available", "hit", "bad",
    "slow" };

struct buf {
	char	*p;
	size_t	 len;
};

static struct {
	const char	*sock;
	struct buf	 hit_reply[NAGENTS];	/* what each hit must get */
	char		 version[64];
	pthread_mutex_t	 mu;
	unsigned	 next;			/* requests handed out */
	unsigned	 total;
	unsigned	 by_kind[K_MAX];
	unsigned	 wrong, late, busy;
	double		*lat_ms;
	unsigned	 nlat;
	double		 max_fast_ms;		/* all but the dribblers */
} G = { .mu = PTHREAD_MUTEX_INITIALIZER };

static double
now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int
dial(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd;

	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", G.sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Read until the broker closes; bounded so a runaway reply cannot grow. */
static int
read_all(int fd, struct buf *b)
{
	char tmp[4096];
	ssize_t n;

	b->p = NULL;
	b->len = 0;
	while ((n = read(fd, tmp, sizeof(tmp))) != 0) {
		if (n == -1) {
			if (errno == EINTR)
				continue;
			return errno == ECONNRESET ? 0 : -1;
		}
		if (b->len + (size_t)n > 1 << 20 ||
		    (b->p = realloc(b->p, b->len + (size_t)n)) == NULL)
			return -1;
		memcpy(b->p + b->len, tmp, (size_t)n);
		b->len += (size_t)n;
	}
	return 0;
}

static int
send_all(int fd, const void *p, size_t len)
{
	const char *c = p;
	ssize_t n;

	while (len > 0) {
		if ((n = send(fd, c, len, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static void
pk_str(msgpack_packer *pk, const char *s)
{
	msgpack_pack_str(pk, strlen(s));
	msgpack_pack_str_body(pk, s, strlen(s));
}

/* Requests, encoded with msgpack-c. */
static void
enc_op(msgpack_sbuffer *sb, const char *op, const char *key, const char *val)
{
	msgpack_packer pk;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, key ? 2 : 1);
	pk_str(&pk, "op");
	pk_str(&pk, op);
	if (key) {
		pk_str(&pk, key);
		pk_str(&pk, val);
	}
}

static void
enc_sandbox(msgpack_sbuffer *sb, const char *agent)
{
	msgpack_packer pk;

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	msgpack_pack_map(&pk, 4);
	pk_str(&pk, "op");
	pk_str(&pk, "request_sandbox");
	pk_str(&pk, "agent");
	pk_str(&pk, agent);
	pk_str(&pk, "project");
	pk_str(&pk, PROJECT);
	pk_str(&pk, "services");
	msgpack_pack_array(&pk, 1);
	pk_str(&pk, "redis");
}

/* Bad input number v (mod 5). *shut: close our side after sending. */
static void
enc_bad(msgpack_sbuffer *sb, unsigned v, int *shut)
{
	msgpack_packer pk;
	static char big[70000];

	msgpack_packer_init(&pk, sb, msgpack_sbuffer_write);
	*shut = 0;
	switch (v % 5) {
	case 0:		/* bytes msgpack never uses */
		msgpack_sbuffer_write(sb, "\xc1\xc1\xc1\xc1", 4);
		break;
	case 1:		/* op is an integer */
		msgpack_pack_map(&pk, 1);
		pk_str(&pk, "op");
		msgpack_pack_int(&pk, 1);
		break;
	case 2:		/* agent is an integer */
		msgpack_pack_map(&pk, 4);
		pk_str(&pk, "op");
		pk_str(&pk, "request_sandbox");
		pk_str(&pk, "agent");
		msgpack_pack_int(&pk, 7);
		pk_str(&pk, "project");
		pk_str(&pk, PROJECT);
		pk_str(&pk, "services");
		msgpack_pack_array(&pk, 0);
		break;
	case 3:		/* over 64 KiB */
		memset(big, 'a', sizeof(big));
		msgpack_pack_map(&pk, 1);
		pk_str(&pk, "op");
		msgpack_pack_str(&pk, sizeof(big));
		msgpack_pack_str_body(&pk, big, sizeof(big));
		break;
	default:	/* a map of 2 with one pair, then shut */
		msgpack_pack_map(&pk, 2);
		pk_str(&pk, "op");
		pk_str(&pk, "ping");
		*shut = 1;
		break;
	}
}

static const msgpack_object *
map_get(const msgpack_object *m, const char *key)
{
	uint32_t i;

	if (m->type != MSGPACK_OBJECT_MAP)
		return NULL;
	for (i = 0; i < m->via.map.size; i++) {
		const msgpack_object *k = &m->via.map.ptr[i].key;

		if (k->type == MSGPACK_OBJECT_STR &&
		    k->via.str.size == strlen(key) &&
		    !memcmp(k->via.str.ptr, key, k->via.str.size))
			return &m->via.map.ptr[i].val;
	}
	return NULL;
}

static int
is_str(const msgpack_object *o, const char *s)
{
	return o && o->type == MSGPACK_OBJECT_STR &&
	    o->via.str.size == strlen(s) && !memcmp(o->via.str.ptr, s, o->via.str.size);
}

static int
is_bool(const msgpack_object *o, int v)
{
	return o && o->type == MSGPACK_OBJECT_BOOLEAN && o->via.boolean == v;
}

/* available for PROJECT: exactly ["redis"]. */
static int
services_right(const msgpack_object *s)
{
	return s && s->type == MSGPACK_OBJECT_ARRAY && s->via.array.size == 1 &&
	    is_str(&s->via.array.ptr[0], "redis");
}

enum verdict { V_RIGHT, V_WRONG, V_BUSY };

/*
 * The one answer request kind k (hit on agent) must get. busy is a
 * contract code for a broker at capacity: counted apart, not wrong.
 */
static enum verdict
judge(enum kind k, unsigned agent, const struct buf *b)
{
	msgpack_unpacked u;
	const msgpack_object *o, *ok;
	size_t off = 0;
	enum verdict v = V_WRONG;

	msgpack_unpacked_init(&u);
	if (b->len == 0 || msgpack_unpack_next(&u, b->p, b->len, &off) !=
	    MSGPACK_UNPACK_SUCCESS || off != b->len)
		goto out;
	o = &u.data;
	ok = map_get(o, "ok");
	if (is_bool(ok, 0) && is_str(map_get(o, "error"), "busy")) {
		v = V_BUSY;
		goto out;
	}
	switch (k) {
	case K_PING:
	case K_SLOW:
		if (is_bool(ok, 1) && is_str(map_get(o, "version"), G.version))
			v = V_RIGHT;
		break;
	case K_AVAIL:
		if (is_bool(ok, 1) && services_right(map_get(o, "services")))
			v = V_RIGHT;
		break;
	case K_HIT:
		/* The same entry, encoded by the same code: the same bytes. */
		if (is_bool(ok, 1) && b->len == G.hit_reply[agent].len &&
		    !memcmp(b->p, G.hit_reply[agent].p, b->len))
			v = V_RIGHT;
		break;
	default:
		if (is_bool(ok, 0) && is_str(map_get(o, "error"), "bad_request"))
			v = V_RIGHT;
		break;
	}
out:
	msgpack_unpacked_destroy(&u);
	return v;
}

/* One request of kind k (variant i); its reply in *b; -1: no reply. */
static int
exchange(enum kind k, unsigned i, struct buf *b)
{
	msgpack_sbuffer sb;
	char agent[16];
	int fd, shut = 0, rc = -1;
	size_t j;

	msgpack_sbuffer_init(&sb);
	snprintf(agent, sizeof(agent), "ld%u", i % NAGENTS);
	switch (k) {
	case K_PING: case K_SLOW: enc_op(&sb, "ping", NULL, NULL); break;
	case K_AVAIL: enc_op(&sb, "available", "project", PROJECT); break;
	case K_HIT: enc_sandbox(&sb, agent); break;
	default: enc_bad(&sb, i, &shut); break;
	}
	if ((fd = dial()) == -1)
		goto out;
	if (k == K_SLOW) {
		for (j = 0; j < sb.size; j++) {
			if (send_all(fd, sb.data + j, 1) == -1)
				goto out;
			usleep(DRIBBLE_MS * 1000);
		}
	} else if (send_all(fd, sb.data, sb.size) == -1 && errno != EPIPE &&
	    errno != ECONNRESET)
		goto out;	/* oversized: the broker may stop reading */
	if (shut)
		shutdown(fd, SHUT_WR);
	rc = read_all(fd, b);
out:
	if (fd != -1)
		close(fd);
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

/* The mix, by request number: 2 ping, 2 available, 4 hits, 2 bad in 10. */
static enum kind
kind_of(unsigned n)
{
	static const enum kind mix[10] = { K_PING, K_HIT, K_AVAIL, K_BAD,
	    K_HIT, K_PING, K_HIT, K_AVAIL, K_BAD, K_HIT };

	return mix[n % 10];
}

static void
record(enum kind k, enum verdict v, double ms, double deadline)
{
	pthread_mutex_lock(&G.mu);
	G.by_kind[k]++;
	if (v == V_WRONG)
		G.wrong++;
	else if (v == V_BUSY)
		G.busy++;
	if (ms > deadline)
		G.late++;
	G.lat_ms[G.nlat++] = ms;
	if (k != K_SLOW && ms > G.max_fast_ms)
		G.max_fast_ms = ms;
	pthread_mutex_unlock(&G.mu);
}

/* A request number to do, or -1 when all are handed out. */
static long
take(void)
{
	long n = -1;

	pthread_mutex_lock(&G.mu);
	if (G.next < G.total)
		n = G.next++;
	pthread_mutex_unlock(&G.mu);
	return n;
}

static void
one(enum kind k, unsigned n)
{
	struct buf b;
	double t0 = now_ms(), deadline = DEADLINE_MS;
	enum verdict v = V_WRONG;
	static unsigned reported;

	if (k == K_SLOW)
		deadline += 16 * DRIBBLE_MS;
	if (exchange(k, n / 10, &b) == 0)
		v = judge(k, (n / 10) % NAGENTS, &b);
	if (v == V_WRONG && __atomic_fetch_add(&reported, 1, __ATOMIC_RELAXED) < 5)
		fprintf(stderr, "wrong answer to %s #%u (%zu bytes)\n",
		    kind_name[k], n, b.len);
	record(k, v, now_ms() - t0, deadline);
	free(b.p);
}

static void *
fast_client(void *arg)
{
	long n;

	(void)arg;
	while ((n = take()) >= 0)
		one(kind_of((unsigned)n), (unsigned)n);
	return NULL;
}

static void *
slow_client(void *arg)
{
	unsigned i;

	for (i = 0; i < SLOW_EACH; i++)
		one(K_SLOW, (unsigned)(uintptr_t)arg);
	return NULL;
}

/* Provision the hit agents and learn the version: the reference answers. */
static int
prime(void)
{
	msgpack_unpacked u;
	const msgpack_object *v;
	struct buf b;
	size_t off = 0;
	unsigned a;
	int ok;

	for (a = 0; a < NAGENTS; a++) {
		/* ld<a> is what exchange() names hit variant a. */
		if (exchange(K_HIT, a, &G.hit_reply[a]) == -1 ||
		    G.hit_reply[a].len == 0 ||
		    memmem(G.hit_reply[a].p, G.hit_reply[a].len, "password", 8) == NULL) {
			fprintf(stderr, "provisioning ld%u failed\n", a);
			return -1;
		}
	}
	if (exchange(K_PING, 0, &b) == -1)
		return -1;
	msgpack_unpacked_init(&u);
	ok = msgpack_unpack_next(&u, b.p, b.len, &off) == MSGPACK_UNPACK_SUCCESS &&
	    (v = map_get(&u.data, "version")) != NULL &&
	    v->type == MSGPACK_OBJECT_STR && v->via.str.size < sizeof(G.version);
	if (ok)
		memcpy(G.version, v->via.str.ptr, v->via.str.size);
	msgpack_unpacked_destroy(&u);
	free(b.p);
	return ok ? 0 : -1;
}

static int
fd_count(int pid)
{
	char path[64];
	struct dirent *d;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", pid);
	if ((dir = opendir(path)) == NULL)
		return -1;
	while ((d = readdir(dir)) != NULL)
		n += d->d_name[0] != '.';
	closedir(dir);
	return n;
}

static long
rss_kib(int pid)
{
	char path[64], line[256];
	long kib = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

/* Is the monitor blocked in poll()? -1 if it is gone. */
static int
in_poll(int pid)
{
	char path[64];
	long nr;
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "/proc/%d/syscall", pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	ok = fscanf(f, "%ld", &nr) == 1 && (nr == SYS_poll || nr == SYS_ppoll);
	fclose(f);
	return ok;
}

/*
 * The monitor's fd count at rest. It closes each agent's socket right
 * after sending on it, in the same turn of its loop, so once every client
 * has its reply and the monitor is in poll, its count is the count at
 * rest. One look before one read is not enough (it may wake for its tick
 * between them): the count is read twice, each time between two looks
 * that find it in poll, and must be the same. Waits at most 5 s; -1 if
 * never.
 */
static int
rest_fds(int pid)
{
	int i, st, a, b;

	for (i = 0; i < 500; i++) {
		if ((st = in_poll(pid)) < 0)
			return -1;
		if (st == 1 && (a = fd_count(pid)) >= 0 &&
		    in_poll(pid) == 1 && (b = fd_count(pid)) == a &&
		    in_poll(pid) == 1)
			return a;
		usleep(10000);
	}
	return -1;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Run `total` requests on `clients` threads; returns the wall time, ms. */
static double
run(unsigned clients, unsigned total)
{
	pthread_t *t = calloc(clients, sizeof(*t));
	unsigned i, slow = clients > SLOW_CLIENTS * 2 ? SLOW_CLIENTS : 0;
	double t0 = now_ms();

	G.next = 0;
	G.total = total - slow * SLOW_EACH;
	for (i = 0; i < clients; i++)
		if (pthread_create(&t[i], NULL, i < slow ? slow_client :
		    fast_client, (void *)(uintptr_t)i) != 0) {
			fprintf(stderr, "pthread_create failed\n");
			exit(1);
		}
	for (i = 0; i < clients; i++)
		pthread_join(t[i], NULL);
	free(t);
	return now_ms() - t0;
}

static void
reset_counts(void)
{
	memset(G.by_kind, 0, sizeof(G.by_kind));
	G.wrong = G.late = G.busy = G.nlat = 0;
	G.max_fast_ms = 0;
}

/* The flood: what its connections got, by kind. */
enum flood_got { FG_BUSY_UID, FG_BUSY_ALL, FG_TIMEOUT, FG_OTHER, FG_NOCONN,
    FG_MAX };
static volatile sig_atomic_t flood_stop;
static unsigned flood_count[FG_MAX];

static void
on_term(int sig)
{
	(void)sig;
	flood_stop = 1;
}

static enum flood_got
flood_kind(const struct buf *b)
{
	msgpack_unpacked u;
	const msgpack_object *m;
	size_t off = 0;
	enum flood_got g = FG_OTHER;

	msgpack_unpacked_init(&u);
	if (b->len > 0 && msgpack_unpack_next(&u, b->p, b->len, &off) ==
	    MSGPACK_UNPACK_SUCCESS && off == b->len) {
		m = map_get(&u.data, "message");
		if (is_str(map_get(&u.data, "error"), "timeout"))
			g = FG_TIMEOUT;
		else if (is_str(map_get(&u.data, "error"), "busy"))
			g = m != NULL && m->type == MSGPACK_OBJECT_STR &&
			    memmem(m->via.str.ptr, m->via.str.size, "your uid",
			    8) != NULL ? FG_BUSY_UID : FG_BUSY_ALL;
	}
	msgpack_unpacked_destroy(&u);
	return g;
}

/* Connect, say nothing, read until the broker closes; again. */
static void *
flood_client(void *arg)
{
	struct buf b;
	enum flood_got g;
	int fd;

	(void)arg;
	while (!flood_stop) {
		if ((fd = dial()) == -1) {
			g = FG_NOCONN;
		} else {
			g = read_all(fd, &b) == 0 ? flood_kind(&b) : FG_OTHER;
			close(fd);
			free(b.p);
		}
		__atomic_fetch_add(&flood_count[g], 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static int
flood(const char *threads_arg)
{
	unsigned i, n = (unsigned)atoi(threads_arg);
	pthread_t *t = calloc(n, sizeof(*t));
	struct sigaction sa = { .sa_handler = on_term };
	sigset_t term;
	double t0 = now_ms();

	sigemptyset(&term);
	sigaddset(&term, SIGTERM);
	/* Only the main thread takes SIGTERM: the clients' reads are never
	 * cut short, so every connection is read to its end. */
	sigaction(SIGTERM, &sa, NULL);
	pthread_sigmask(SIG_BLOCK, &term, NULL);
	for (i = 0; i < n; i++)
		if (t == NULL || pthread_create(&t[i], NULL, flood_client,
		    NULL) != 0) {
			fprintf(stderr, "flood: cannot start threads\n");
			return 1;
		}
	/* Blocked until sigsuspend: a SIGTERM cannot slip in between the
	 * test and the wait. */
	sigemptyset(&term);
	while (!flood_stop)
		sigsuspend(&term);
	for (i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("flood: threads %u, seconds %.1f, busy_uid %u, busy_all %u, "
	    "timeout %u, other %u, connect_errors %u, refusals %u\n", n,
	    (now_ms() - t0) / 1e3, flood_count[FG_BUSY_UID],
	    flood_count[FG_BUSY_ALL], flood_count[FG_TIMEOUT],
	    flood_count[FG_OTHER], flood_count[FG_NOCONN],
	    flood_count[FG_BUSY_UID] + flood_count[FG_BUSY_ALL] +
	    flood_count[FG_TIMEOUT]);
	free(t);
	return 0;
}

/* One request_sandbox for agent, its reply in *b; -1: no reply. */
static int
hit_once(const char *agent, struct buf *b)
{
	msgpack_sbuffer sb;
	int fd, rc = -1;

	msgpack_sbuffer_init(&sb);
	enc_sandbox(&sb, agent);
	if ((fd = dial()) != -1) {
		if (send_all(fd, sb.data, sb.size) == 0)
			rc = read_all(fd, b);
		close(fd);
	}
	msgpack_sbuffer_destroy(&sb);
	return rc;
}

static int
hits(const char *agent, const char *n_arg)
{
	struct buf ref, b;
	unsigned i, n = (unsigned)atoi(n_arg), wrong = 0;
	double *ms = calloc(n ? n : 1, sizeof(*ms)), t0;

	if (ms == NULL || n == 0 || hit_once(agent, &ref) == -1 ||
	    ref.len == 0 || memmem(ref.p, ref.len, "password", 8) == NULL) {
		fprintf(stderr, "hits: no first answer for %s\n", agent);
		return 1;
	}
	for (i = 0; i < n; i++) {
		t0 = now_ms();
		if (hit_once(agent, &b) == -1 || b.len != ref.len ||
		    memcmp(b.p, ref.p, b.len) != 0)
			wrong++;
		ms[i] = now_ms() - t0;
		free(b.p);
	}
	qsort(ms, n, sizeof(*ms), cmp_double);
	printf("hits %u: wrong %u, p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
	    n, wrong, ms[n / 2], ms[n * 99 / 100], ms[n - 1]);
	free(ms);
	free(ref.p);
	return wrong > 0;
}

int
main(int argc, char *argv[])
{
	unsigned clients = 200, total = 20000, k;
	int pid, fds0, fds1, fail;
	long rss0, rss1;
	double wall;

	if (argc == 4 && !strcmp(argv[1], "flood")) {
		G.sock = argv[2];
		return flood(argv[3]);
	}
	if (argc == 5 && !strcmp(argv[1], "hits")) {
		G.sock = argv[2];
		return hits(argv[3], argv[4]);
	}
	if (argc < 3) {
		fprintf(stderr, "usage: stress-load SOCKET MONITOR_PID "
		    "[CLIENTS [REQUESTS]]\n       stress-load flood SOCKET "
		    "THREADS\n       stress-load hits SOCKET AGENT N\n");
		return 2;
	}
	G.sock = argv[1];
	pid = atoi(argv[2]);
	if (argc > 3)
		clients = (unsigned)atoi(argv[3]);
	if (argc > 4)
		total = (unsigned)atoi(argv[4]);
	if ((G.lat_ms = calloc(total, sizeof(double))) == NULL || prime() == -1)
		return 1;
	/* A warm-up round first: what the allocator keeps after first use
	 * (arenas, outq buffers) is not growth. */
	run(clients, clients * 5 > SLOW_CLIENTS * SLOW_EACH * 2 ?
	    clients * 5 : SLOW_CLIENTS * SLOW_EACH * 2);
	reset_counts();
	if ((fds0 = rest_fds(pid)) < 0) {
		fprintf(stderr, "the monitor did not come to rest\n");
		return 1;
	}
	rss0 = rss_kib(pid);
	wall = run(clients, total);
	if ((fds1 = rest_fds(pid)) < 0) {
		fprintf(stderr, "the monitor did not come to rest\n");
		return 1;
	}
	rss1 = rss_kib(pid);
	qsort(G.lat_ms, G.nlat, sizeof(double), cmp_double);

	printf("clients %u (%u slow), requests %u:", clients,
	    clients > SLOW_CLIENTS * 2 ? SLOW_CLIENTS : 0, G.nlat);
	for (k = 0; k < K_MAX; k++)
		printf(" %s %u", kind_name[k], G.by_kind[k]);
	printf("\nwrong answers %u, late %u, busy %u\n", G.wrong, G.late,
	    G.busy);
	printf("latency p50 %.1f ms, p99 %.1f ms, max %.1f ms (%.1f ms but "
	    "the dribblers); %.0f requests/s\n", G.lat_ms[G.nlat / 2],
	    G.lat_ms[G.nlat * 99 / 100], G.lat_ms[G.nlat - 1], G.max_fast_ms,
	    G.nlat * 1000.0 / wall);
	printf("monitor fds %d -> %d, VmRSS %ld -> %ld KiB (slack %d)\n", fds0,
	    fds1, rss0, rss1, RSS_SLACK_KIB);
	fail = G.wrong > 0 || G.late > 0 || G.nlat != total ||
	    fds1 != fds0 || fds0 < 0 || rss0 < 0 || rss1 > rss0 + RSS_SLACK_KIB;
	return fail;
}
