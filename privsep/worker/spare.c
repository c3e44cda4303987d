/*
 * spare.c - a data worker made ahead of its job: libpq loaded, then the
 * job awaited.
 * runs in: sbx-worker's JOB_DATA started as a spare (root, runtime deny
 *   filter), until its job comes
 *
 * The spawner (privsep/monitor/spawner.c) keeps one sbx-worker executed
 * ahead of the next reset or snapshot, with a SOCK_SEQPACKET channel of
 * its own on stdin. It pays now what a reset would pay on its path, the
 * exec and libpq's load (pq.c), and waits. One message, the byte
 * JOB_SPARE_GO with the job's sealed memfd and its result socket, puts
 * them at stdin and fd 3, as a worker executed with them has them; from
 * there main.c checks and runs the job as any other. The channel closed
 * (the spawner gone at a clean stop) ends it quietly.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include "fdpass.h"
#include "job.h"
#include "log.h"
#include "pq.h"
#include "spare.h"

/* The job's descriptors at stdin and fd 3 (closed when there is none),
 * nothing else of what came left open. */
static int
spare_place(struct fdpass_rx *rx)
{
	int hi[2] = { -1, -1 }, i, rc = 0;

	for (i = 0; i < rx->nfds; i++)
		if ((hi[i] = fcntl(rx->fds[i], F_DUPFD_CLOEXEC, 10)) == -1)
			rc = -1;
	fdpass_close(rx);
	if (rc == 0 && (dup2(hi[0], STDIN_FILENO) == -1 || (hi[1] != -1 ?
	    dup2(hi[1], 3) == -1 : close(3) == -1 && errno != EBADF)))
		rc = -1;
	for (i = 0; i < 2; i++)
		if (hi[i] != -1)
			close(hi[i]);
	return rc;
}

int
spare_wait(void)
{
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	struct fdpass_rx rx;
	char b[2];
	ssize_t n;

	(void)pq_load();	/* a libpq that fails is the session's to say */
	while (poll(&pfd, 1, -1) == -1)
		if (errno != EINTR)
			return -1;
	if ((n = recv_fds(STDIN_FILENO, b, sizeof(b), &rx)) == 0)
		return 1;
	if (n == 1 && b[0] == JOB_SPARE_GO && !rx.truncated && !rx.foreign &&
	    (rx.nfds == 1 || rx.nfds == 2))
		return spare_place(&rx);
	if (n != -1)
		fdpass_close(&rx);
	log_warnx("spare: not a job of the spawner's");
	return -1;
}
