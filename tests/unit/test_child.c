/*
 * test_child.c - a broker spare (broker/child.c, child_spare) with real
 * forks and its real filter: it is confined before any agent socket
 * reaches it, it hands the request and the socket over, and it exits at
 * the lowered priority. The broker's own filter is not stacked here (the
 * test process would need its whole list); make seccomp-probe proves the
 * two together.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "fdpass.h"
#include "msg.h"
#include "scfilter.h"
#include "spare.h"

/* {"op": "ping"} */
static const char ping[] = "\x81\xa2op\xa4ping";

/* The value of "Key:" in /proc/PID/status, or -1. */
static long
status_field(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t klen = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* Field 19 of /proc/PID/stat, which a zombie still has. */
static long
nice_of(pid_t pid)
{
	char path[64], buf[1024], *p;
	long v = -100;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	cr_assert_neq(fd = open(path, O_RDONLY), -1);
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	cr_assert_gt(n, 0);
	buf[n] = '\0';
	/* After the command's closing parenthesis: state is field 3. */
	cr_assert_not_null(p = strrchr(buf, ')'));
	for (i = 2; i < 19 && (p = strchr(p + 1, ' ')) != NULL; i++)
		;
	cr_assert_not_null(p);
	sscanf(p + 1, "%ld", &v);
	return v;
}

/* ASan's _exit calls sigaltstack, which the child's filter answers
 * with SIGSYS: the plain build (make check) runs these. */
#if defined(__SANITIZE_ADDRESS__)
#define SKIP_UNDER_ASAN() cr_skip_test("the child's filter kills ASan's _exit")
#else
#define SKIP_UNDER_ASAN() ((void)0)
#endif

static void
sleep_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* A spare as the broker makes one, with a monitor channel (chan[0] is
 * the monitor's end) and a notice pipe (notice[0] the broker's). */
static pid_t
start_spare(struct spares *sp, int chan[2], int notice[2])
{
	struct child_opts o = { .request_timeout_ms = 5000 };
	pid_t pid;
	int end;

	cr_assert_eq(child_prepare(), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, chan), 0);
	cr_assert_eq(pipe(notice), 0);
	o.chan = chan[1];
	o.notice = notice[1];
	cr_assert_neq(pid = spare_fork(sp, &end), -1);
	if (pid == 0) {
		if (end != SC_SPARE_FD)
			close(SC_SPARE_FD);	/* the listener's, in the broker */
		child_spare(end, &o);
	}
	return pid;
}

Test(child, a_spare_is_confined_before_its_agent_and_exits_lowered)
{
	struct spares sp = { .n = 0 };
	struct fdpass_rx rx;
	union sbx_req_any req;
	int chan[2], notice[2], agent[2], i;
	pid_t pid, noticed = 0;
	siginfo_t si;
	ssize_t n;

	SKIP_UNDER_ASAN();
	pid = start_spare(&sp, chan, notice);
	/* Its filter comes before anything of an agent's: wait for it. */
	for (i = 0; i < 500 && status_field(pid, "Seccomp") != 2; i++)
		sleep_ms(10);
	cr_assert_eq(status_field(pid, "Seccomp"), 2, "filtered while it waits");
	cr_assert_eq(status_field(pid, "Seccomp_filters"), 1);
	cr_assert_eq(status_field(pid, "NoNewPrivs"), 1);
	/* the priority it was started with (the test's own: make may run
	 * under nice) */
	cr_assert_eq(nice_of(pid), nice_of(getpid()),
	    "full priority while it serves");

	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, agent), 0);
	cr_assert_eq(write(agent[0], ping, sizeof(ping) - 1),
	    (ssize_t)sizeof(ping) - 1);
	cr_assert_eq(spare_hand(&sp, agent[1]), pid);
	close(agent[1]);

	cr_assert_eq(poll(&(struct pollfd){ .fd = chan[0], .events = POLLIN },
	    1, 5000), 1);
	n = recv_fds(chan[0], &req, sizeof(req), &rx);
	cr_assert_eq(n, (ssize_t)sizeof(req.ping), "the ping, in fixed form");
	cr_assert_eq(rx.nfds, 1, "and the agent's socket with it");
	fdpass_close(&rx);
	cr_assert_eq(read(notice[0], &noticed, sizeof(noticed)),
	    (ssize_t)sizeof(noticed));
	cr_assert_eq(noticed, pid);

	/* Exited, not reaped: its nice is still there to read. */
	cr_assert_eq(waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(si.si_code, CLD_EXITED);
	cr_assert_eq(si.si_status, 0);
	cr_assert_eq(nice_of(pid), SC_EXIT_NICE, "its exit is no one's wait");
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}

Test(child, a_spare_whose_channel_closes_exits_having_read_nothing)
{
	struct spares sp = { .n = 0 };
	int chan[2], notice[2], status;
	pid_t pid;

	SKIP_UNDER_ASAN();
	pid = start_spare(&sp, chan, notice);
	spares_close(&sp);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	    "status %#x", status);
	close(notice[1]);
	cr_assert_eq(read(notice[0], &pid, sizeof(pid)), 0, "no hand-over");
}

/*
 * What the agent sent after its request is read and dropped, and it can
 * send nothing more, before its socket reaches the monitor: the monitor
 * refuses a socket with input queued (privsep/monitor/dispatch.c), and releasing
 * descriptors queued on it could hold the monitor's loop.
 */
Test(child, the_agents_input_is_shut_and_empty_at_the_hand_over)
{
	struct spares sp = { .n = 0 };
	struct fdpass_rx rx;
	union sbx_req_any req;
	int chan[2], notice[2], agent[2], queued = -1;
	pid_t pid;

	SKIP_UNDER_ASAN();
	pid = start_spare(&sp, chan, notice);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, agent), 0);
	cr_assert_eq(write(agent[0], ping, sizeof(ping) - 1),
	    (ssize_t)sizeof(ping) - 1);
	cr_assert_eq(write(agent[0], "trailing", 8), 8);
	cr_assert_eq(spare_hand(&sp, agent[1]), pid);
	close(agent[1]);

	cr_assert_eq(poll(&(struct pollfd){ .fd = chan[0], .events = POLLIN },
	    1, 5000), 1);
	cr_assert_eq(recv_fds(chan[0], &req, sizeof(req), &rx),
	    (ssize_t)sizeof(req.ping));
	cr_assert_eq(rx.nfds, 1);
	cr_assert_eq(ioctl(rx.fds[0], FIONREAD, &queued), 0);
	cr_assert_eq(queued, 0, "the trailing bytes were read");
	cr_assert_eq(send(agent[0], "x", 1, MSG_NOSIGNAL), -1);
	cr_assert_eq(errno, EPIPE, "the input is shut: %s", strerror(errno));
	fdpass_close(&rx);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
}
