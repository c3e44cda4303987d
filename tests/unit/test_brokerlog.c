/*
 * test_brokerlog.c - the broker's lines as its log worker logs them
 * (privsep/worker/brokerlog.c, JOB_BROKERLOG): what a broker writes is untrusted, so each line
 * comes out printable, under "sbx-broker[PID]: " or "sbx-broker[?]: ",
 * whole however the pipe cut it, in pieces when it is too long.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "brokerlog.h"
#include "log.h"

static struct brokerlog bl = { .fd = -1 };
static int w = -1;	/* the broker's end */

static void
setup(void)
{
	log_init("t", LOG_TO_STDERR);
	cr_redirect_stderr();
	int p[2];

	cr_assert_eq(pipe2(p, O_CLOEXEC | O_NONBLOCK), 0);
	bl.fd = p[0];
	w = p[1];
}

/* What the broker's end gets, read the way the worker does. */
static void
feed(const void *bytes, size_t len)
{
	cr_assert_eq(write(w, bytes, len), (ssize_t)len);
	brokerlog_read(&bl);
}

static void
feeds(const char *s)
{
	feed(s, strlen(s));
}

TestSuite(brokerlog, .init = setup);

Test(brokerlog, a_broker_line_under_its_pid)
{
	feeds("<6>4242 serving as 100:100\n<4>7 accept: Too many open files\n");
	fflush(stderr);
	cr_assert_stderr_eq_str("t: sbx-broker[4242]: serving as 100:100\n"
	    "t: sbx-broker[7]: accept: Too many open files\n");
}

Test(brokerlog, a_line_cut_by_the_pipe_is_logged_whole)
{
	feeds("<6>12 audit event=refuse uid=1000 ");
	feeds("agent=- project=- services=- result=bad_request\n");
	fflush(stderr);
	cr_assert_stderr_eq_str("t: sbx-broker[12]: audit event=refuse "
	    "uid=1000 agent=- project=- services=- result=bad_request\n");
}

/* A subverted broker cannot write a line that reads as the monitor's. */
Test(brokerlog, an_unframed_line_is_marked_as_the_brokers)
{
	feeds("audit event=provision uid=0 agent=a result=ok\n"
	    "<8>1 no such priority\n<6>0 no pid 0\n<6>x no pid\n"
	    "<6>99999999999 too large\n<6>5\n");
	fflush(stderr);
	cr_assert_stderr_eq_str(
	    "t: sbx-broker[?]: audit event=provision uid=0 agent=a result=ok\n"
	    "t: sbx-broker[?]: <8>1 no such priority\n"
	    "t: sbx-broker[?]: <6>0 no pid 0\n"
	    "t: sbx-broker[?]: <6>x no pid\n"
	    "t: sbx-broker[?]: <6>99999999999 too large\n"
	    "t: sbx-broker[?]: <6>5\n");
}

Test(brokerlog, control_bytes_and_nul_are_made_printable)
{
	static const char line[] = "<6>9 a\033[2Jb\0c\rd\x7f" "e\n";

	feed(line, sizeof(line) - 1);
	fflush(stderr);
	cr_assert_stderr_eq_str("t: sbx-broker[9]: a?[2Jb?c?d?e\n");
}

/* Past 0x7e too: C1 controls, a right-to-left override (U+202E) that
 * would turn the rest of the line around, a byte of no UTF-8. */
Test(brokerlog, bytes_past_ascii_are_made_printable)
{
	static const char line[] = "<6>9 a\xc2\x9b" "b\xe2\x80\xae" "c\xff" "d\n";

	feed(line, sizeof(line) - 1);
	fflush(stderr);
	cr_assert_stderr_eq_str("t: sbx-broker[9]: a??b???c?d\n");
}

Test(brokerlog, a_line_longer_than_the_buffer_comes_in_pieces)
{
	const size_t piece = sizeof(bl.buf) - 1;
	char line[5001], want[6000];
	size_t left, at = 0;

	memset(line, 'x', sizeof(line));
	line[sizeof(line) - 1] = '\n';
	feed(line, sizeof(line));
	for (left = sizeof(line) - 1; left > 0; left -= left < piece ? left : piece)
		at += (size_t)snprintf(want + at, sizeof(want) - at,
		    "t: sbx-broker[?]: %.*s\n", (int)(left < piece ? left : piece), line);
	fflush(stderr);
	cr_assert_stderr_eq_str(want);
}

Test(brokerlog, nothing_to_read_returns_at_once)
{
	cr_assert_eq(brokerlog_read(&bl), 0);	/* EAGAIN: no wait */
	fflush(stderr);
	cr_assert_stderr_eq_str("");
}

/* A flood of short lines costs a turn a bounded number of them: the rest
 * waits in the pipe for the next turn, none is lost. */
Test(brokerlog, a_flood_of_lines_is_taken_a_bounded_number_a_turn)
{
	char line[] = "<6>9 x\n";
	char buf[64];
	FILE *f;
	int i, first = 0, all = 0;

	for (i = 0; i < 1000; i++)
		cr_assert_eq(write(w, line, sizeof(line) - 1),
		    (ssize_t)sizeof(line) - 1);
	brokerlog_read(&bl);
	fflush(stderr);
	f = cr_get_redirected_stderr();
	while (fgets(buf, sizeof(buf), f) != NULL)
		first++;
	cr_assert(first > 0 && first <= 256 + 2304 / 7,
	    "%d lines in one turn", first);
	for (i = 0; i < 10; i++)
		brokerlog_read(&bl);
	fflush(stderr);
	while (fgets(buf, sizeof(buf), f) != NULL)
		all++;
	cr_assert_eq(first + all, 1000, "the rest came in later turns");
}

/* The job ends when the last writer (the monitor) is gone, with what the
 * pipe still held logged, an unfinished last line too. */
Test(brokerlog, the_job_logs_what_is_left_and_ends_at_eof)
{
	static const char lines[] = "<5>31 last words\n<6>31 cut";

	cr_assert_eq(write(w, lines, sizeof(lines) - 1),
	    (ssize_t)sizeof(lines) - 1);
	close(w);
	/* The job's loop; brokerlog_body drops to sbx-job first, which a
	 * test process does not (test_jobuser runs the real worker). */
	cr_assert_eq(brokerlog_until_eof(bl.fd), 0);
	fflush(stderr);
	cr_assert_stderr_eq_str("t: sbx-broker[31]: last words\n"
	    "t: sbx-broker[31]: cut\n");
}
