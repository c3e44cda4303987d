/*
 * test_spare.c - the broker's spares (broker/spare.c), with real forks:
 * a spare serves the one socket handed to it; one that died before it
 * was reaped is passed over; a spare whose broker closes its end exits
 * having served nobody; a reaped spare is forgotten.
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spare.h"

static struct spares sp;

/* A spare as the broker makes one: it writes "served" to the socket it
 * gets and exits 0, or exits 3 if none comes. */
static pid_t
make_spare(void)
{
	int end, agent;
	pid_t pid = spare_fork(&sp, &end);

	cr_assert_neq(pid, -1);
	if (pid != 0)
		return pid;
	if ((agent = spare_wait(end)) == -1)
		_exit(3);
	_exit(write(agent, "served", 6) == 6 ? 0 : 1);
}

static int
exit_code(pid_t pid)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

Test(spare, the_newest_spare_serves_the_socket_handed_to_it)
{
	char buf[16] = "";
	int pair[2];
	pid_t a = make_spare(), b = make_spare();

	cr_assert_eq(sp.n, 2);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	cr_assert_eq(spare_hand(&sp, pair[1]), b);
	close(pair[1]);
	cr_assert_eq(read(pair[0], buf, sizeof(buf)), 6);
	cr_assert_str_eq(buf, "served");
	cr_assert_eq(exit_code(b), 0);
	cr_assert_eq(sp.n, 1);
	spares_close(&sp);
	cr_assert_eq(exit_code(a), 3, "its end closed, a spare exits");
	cr_assert_eq(sp.n, 0);
}

Test(spare, a_dead_spare_not_yet_reaped_is_passed_over)
{
	char buf[16] = "";
	int pair[2];
	pid_t a = make_spare(), b = make_spare();
	siginfo_t si;

	kill(b, SIGKILL);
	/* Dead, not reaped: its end of the pair is closed. */
	cr_assert_eq(waitid(P_PID, (id_t)b, &si, WEXITED | WNOWAIT), 0);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
	cr_assert_eq(spare_hand(&sp, pair[1]), a);
	close(pair[1]);
	cr_assert_eq(read(pair[0], buf, sizeof(buf)), 6);
	cr_assert_eq(exit_code(a), 0);
	cr_assert_eq(spare_hand(&sp, pair[0]), -1, "none left");
	cr_assert_eq(waitpid(b, NULL, 0), b);
	cr_assert_not(spare_reaped(&sp, b), "already dropped by spare_hand");
}

Test(spare, a_reaped_spare_is_forgotten)
{
	pid_t a = make_spare(), b = make_spare(), c = make_spare();

	kill(b, SIGKILL);
	cr_assert_eq(waitpid(b, NULL, 0), b);
	cr_assert(spare_reaped(&sp, b));
	cr_assert_eq(sp.n, 2);
	cr_assert_not(spare_reaped(&sp, b));
	cr_assert_not(spare_reaped(&sp, getpid()), "not a spare");
	spares_close(&sp);
	cr_assert_eq(exit_code(a), 3);
	cr_assert_eq(exit_code(c), 3);
}

Test(spare, a_spare_takes_only_a_message_with_one_descriptor)
{
	int end, agent;
	pid_t pid;

	pid = spare_fork(&sp, &end);
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		agent = spare_wait(end);
		_exit(agent == -1 ? 3 : 0);
	}
	/* A byte with no descriptor: refused, the spare serves nobody. */
	cr_assert_eq(send(sp.sock[0], "a", 1, 0), 1);
	cr_assert_eq(exit_code(pid), 3);
	spares_close(&sp);
}

Test(spare, never_more_than_spares_max)
{
	pid_t pids[SPARES_MAX];
	int end;
	size_t i;

	for (i = 0; i < SPARES_MAX; i++)
		pids[i] = make_spare();
	cr_assert_eq(spare_fork(&sp, &end), -1);
	spares_close(&sp);
	for (i = 0; i < SPARES_MAX; i++)
		cr_assert_eq(exit_code(pids[i]), 3);
}
