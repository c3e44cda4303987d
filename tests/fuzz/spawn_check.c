/*
 * spawn_check.c - fuzz_results' part for the spawner (spawner.c): the
 * spawner's check of a request (spawn_req_valid) against real descriptors
 * of every kind, and the monitor's check of an answer (spawn_ans_valid)
 * against real pids, each compared with a model of what must pass.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "scfilter.h"
#include "spawn_check.h"
#include "spawner.h"

/* No worker is started here: a spawn would load this, and it aborts. */
int
sc_load_deny(const char *role)
{
	(void)role;
	abort();
}

enum {
	S_JOBFD,	/* a memfd with every seal of a job */
	S_RANGES,	/* a memfd the broker may read, still sealable */
	S_LOOSE,	/* a memfd sealed against shrinking alone */
	S_OPEN,		/* a memfd without a seal */
	S_PIPE_R,
	S_PIPE_W,
	S_LISTEN,	/* a Unix stream socket, listening */
	S_SEQPACKET,	/* a socketpair's end */
	S_STREAM,	/* a socketpair's end */
	S_DEVNULL,
	S_DIR,
	S_MAX
};

static int	fd_of[S_MAX];
static pid_t	child;		/* ours, paused for the harness's life */

static int
memfd_sealed(int seals)
{
	int fd = memfd_create("f", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	assert(fd != -1 && write(fd, "x", 1) == 1);
	assert(seals == 0 || fcntl(fd, F_ADD_SEALS, seals) == 0);
	return fd;
}

static void
fixtures(void)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int p[2];

	fd_of[S_JOBFD] = memfd_sealed(JOB_SEALS);
	fd_of[S_RANGES] = memfd_sealed(F_SEAL_WRITE | F_SEAL_SHRINK |
	    F_SEAL_GROW);
	fd_of[S_LOOSE] = memfd_sealed(F_SEAL_SHRINK);
	fd_of[S_OPEN] = memfd_sealed(0);
	assert(pipe2(p, O_CLOEXEC) == 0);
	fd_of[S_PIPE_R] = p[0];
	fd_of[S_PIPE_W] = p[1];
	fd_of[S_LISTEN] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sun.sun_path + 1, sizeof(sun.sun_path) - 1,
	    "sbx-fuzz-spawn-%d", (int)getpid());
	assert(bind(fd_of[S_LISTEN], (struct sockaddr *)&sun,
	    sizeof(sun)) == 0 && listen(fd_of[S_LISTEN], 1) == 0);
	assert(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, p) == 0);
	fd_of[S_SEQPACKET] = p[0];
	assert(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) == 0);
	fd_of[S_STREAM] = p[0];
	fd_of[S_DEVNULL] = open("/dev/null", O_RDWR | O_CLOEXEC);
	fd_of[S_DIR] = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if ((child = fork()) == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	assert(child > 0);
}

static bool
fd3_kind(int k)
{
	return k == S_PIPE_R || k == S_PIPE_W || k == S_LISTEN ||
	    k == S_SEQPACKET || k == S_STREAM;
}

/* What spawn_req_valid must say, from the kinds alone. */
static bool
req_model(const struct spawn_req *r, size_t len, int nfds, const int *kind)
{
	if (len != sizeof(*r) || r->magic != SPAWN_MAGIC)
		return false;
	if (r->what == SPAWN_WORKER)
		return r->foreground == 0 && job_name(r->type) != NULL &&
		    (nfds == 1 || nfds == 2) && kind[0] == S_JOBFD &&
		    (nfds == 1 || fd3_kind(kind[1]));
	if (r->what == SPAWN_BROKER)
		return r->type == 0 && r->foreground <= 1 &&
		    nfds == (r->foreground ? 3 : 4) && kind[0] == S_LISTEN &&
		    kind[1] == S_SEQPACKET &&
		    (kind[2] == S_JOBFD || kind[2] == S_RANGES) &&
		    (nfds == 3 || kind[3] == S_PIPE_R || kind[3] == S_PIPE_W);
	return false;
}

/*
 * Bytes: a request's 16 bytes (the low byte of its what and type folded
 * toward the sound values), its length's edit, its count of descriptors
 * and their kinds; then an answer's 8 bytes, its length's edit and which
 * pid it names.
 */
void
check_spawn(const uint8_t *data, size_t size)
{
	static int ready;
	struct spawn_req r;
	struct spawn_ans a;
	int kind[4] = { 0 }, fds[4] = { -1, -1, -1, -1 }, nfds, i;
	size_t len;
	ssize_t alen;
	pid_t got, want;
	char why[96];

	if (!ready++)
		fixtures();
	if (size < sizeof(r) + 6 + sizeof(a) + 2)
		return;
	memcpy(&r, data, sizeof(r));
	data += sizeof(r);
	if (data[0] & 1)
		r.magic = SPAWN_MAGIC;
	if (data[0] & 2)
		r.what = 1 + (r.what & 1);
	if (data[0] & 4)
		r.type &= 0x1f;
	if (data[0] & 8)
		r.foreground &= 3;
	len = (data[0] >> 4) == 0 ? sizeof(r) : (data[0] >> 4) + 8;
	nfds = data[1] % 5;
	for (i = 0; i < 4; i++) {
		kind[i] = data[2 + i] % S_MAX;
		fds[i] = fd_of[kind[i]];
	}
	data += 6;
	errno = 0;
	assert((spawn_req_valid(&r, len, nfds, fds, why, sizeof(why)) == 0) ==
	    req_model(&r, len, nfds, kind));

	memcpy(&a, data, sizeof(a));
	data += sizeof(a);
	if (data[0] & 1)
		a.magic = SPAWN_MAGIC;
	alen = (data[0] >> 1) % 4 == 0 ? (ssize_t)sizeof(a) :
	    (ssize_t)((data[0] >> 1) % 12) - 2;
	switch (data[1] % 5) {
	case 0: a.pid = child; break;
	case 1: a.pid = 1; break;
	case 2: a.pid = getpid(); break;
	case 3: a.pid = -(int32_t)(data[1] % 200); break;
	default: break;		/* as the bytes say */
	}
	if (alen != (ssize_t)sizeof(a) || a.magic != SPAWN_MAGIC ||
	    a.pid <= 0)
		want = -1;
	else
		want = a.pid == child ? child : -1;
	got = spawn_ans_valid(&a, alen);
	assert(got == want);
	assert(got != -1 || errno != 0);
}
