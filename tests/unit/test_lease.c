/*
 * test_lease.c - bind_pid's check (privsep/monitor/lease.c): a pidfd is taken only
 * for a live process of the caller's uid, and, given a start time, only
 * for the process that started then (not a later one with its pid).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lease.h"
#include "proc.h"

Test(lease, its_own_process_is_taken)
{
	struct sbx_lease l;

	cr_assert_eq(lease_open(getpid(), getuid(), 0, &l), 0);
	cr_assert_geq(l.pidfd, 0);
	cr_assert_eq(l.pid, getpid());
	cr_assert_eq(l.start, proc_start(getpid()));
	cr_assert_neq(l.start, 0);
	close(l.pidfd);
	cr_assert_eq(lease_open(getpid(), getuid(), proc_start(getpid()), &l),
	    0, "the same start: the same process");
	close(l.pidfd);
}

Test(lease, another_uids_process_is_refused)
{
	struct sbx_lease l;

	cr_assert_eq(lease_open(getpid(), getuid() + 1, 0, &l), -1);
	cr_assert_eq(l.pidfd, -1, "nothing held");
}

Test(lease, a_process_that_is_gone_is_refused)
{
	struct sbx_lease l;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	cr_assert_eq(waitpid(pid, NULL, 0), pid);
	cr_assert_eq(lease_open(pid, getuid(), 0, &l), -1);
	cr_assert_eq(lease_open(0, getuid(), 0, &l), -1, "pid 0");
	cr_assert_eq(lease_open(-1, getuid(), 0, &l), -1, "pid -1");
}

Test(lease, another_start_is_another_process)
{
	struct sbx_lease l;

	cr_assert_eq(lease_open(getpid(), getuid(), proc_start(getpid()) + 1,
	    &l), -1, "a later process with this pid");
}
