/*
 * fake_worker.c - a stand-in for sbx-worker in test_pool.c: what it does
 * with its result pipe (fd 3) depends on its job's name, argv[1], so that
 * the pool meets an honest worker and each kind of broken one.
 */
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fdpass.h"
#include "job.h"

/* A spare's wait: the byte JOB_SPARE_GO with the job and fd 3's. */
static int
spare(void)
{
	struct pollfd pfd = { .fd = 0, .events = POLLIN };
	struct fdpass_rx rx;
	char b;

	if (poll(&pfd, 1, 10000) != 1 || recv_fds(0, &b, 1, &rx) != 1 ||
	    b != JOB_SPARE_GO || rx.nfds != 2 || dup2(rx.fds[0], 0) == -1 ||
	    dup2(rx.fds[1], 3) == -1)
		return 1;
	return write(3, "SPAREDAT", 8) == 8 ? 0 : 1;
}

/* The job's body: its last bytes, after head, env and sections. */
static int
body_back(void)
{
	struct job_head h;
	struct job_env e;
	struct stat st;
	char buf[8];
	off_t at;

	if (fcntl(0, F_GET_SEALS) == -1 || fstat(0, &st) == -1 ||
	    pread(0, &h, sizeof(h), 0) != sizeof(h) ||
	    pread(0, &e, sizeof(e), sizeof(h)) != sizeof(e))
		return 1;
	at = (off_t)(sizeof(h) + sizeof(e) +
	    e.nservices * sizeof(struct service_cfg));
	if (h.magic != JOB_MAGIC || h.len != sizeof(buf) ||
	    st.st_size != at + (off_t)sizeof(buf) ||
	    pread(0, buf, sizeof(buf), at) != sizeof(buf))
		return 1;
	return write(3, buf, sizeof(buf)) == sizeof(buf) ? 0 : 1;
}

int
main(int argc, char *argv[])
{
	if (argc == 3 && strcmp(argv[1], "data") == 0 &&
	    strcmp(argv[2], JOB_SPARE_ARG) == 0)
		return spare();
	if (argc != 2)
		return 1;
	if (strcmp(argv[1], "provision") == 0)	/* honest */
		return write(3, "ABCDEFGH", 8) == 8 ? 0 : 1;
	if (strcmp(argv[1], "teardown") == 0)	/* a short result */
		return write(3, "ABC", 3) == 3 ? 0 : 1;
	if (strcmp(argv[1], "evict") == 0) {	/* never answers */
		for (;;)
			pause();
	}
	if (strcmp(argv[1], "rename") == 0)	/* more than its result */
		return write(3, "ABCDEFGHIJKLMNOP", 16) == 16 ? 0 : 1;
	if (strcmp(argv[1], "reload") == 0)	/* the job, as it came */
		return body_back();
	if (strcmp(argv[1], "data") == 0) {	/* a tidy-up after its result */
		if (write(3, "ABCDEFGH", 8) != 8)
			return 1;
		close(3);
		usleep(400 * 1000);
		return 0;
	}
	return 1;
}
