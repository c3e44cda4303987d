/*
 * filtercost.c - what a broker child's own seccomp filter costs at each
 * connection: fork, then time sc_install of the program the broker
 * compiles once for its children (sc_compile_allow("child"), as
 * broker/child.c), then _exit; against a program of one rule, which
 * shows what the kernel spends on any filter whatever its length. The
 * two are interleaved; p50 and p90 of N each.
 *
 *   sbx-filtercost N
 *
 * run.sh sets the p50 beside the bare server's whole hit (figure 1).
 */
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scfilter.h"
#include "timing.h"

/* Everything allowed but one call nobody here makes. */
static int
one_rule(struct sc_prog *p)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);

	if (ctx == NULL)
		return -1;
	if (seccomp_rule_add(ctx, SCMP_ACT_ERRNO(1), SCMP_SYS(acct), 0) != 0) {
		seccomp_release(ctx);
		return -1;
	}
	return sc_export(ctx, "one rule", p);
}

/* The install's time in the child, in ns, or -1. */
static int64_t
install_ns(const struct sc_prog *p)
{
	int64_t t;
	int fd[2], st;
	pid_t pid;

	if (pipe(fd) == -1)
		return -1;
	if ((pid = fork()) == 0) {
		int64_t t0 = now_ns();

		t = sc_install(p) == 0 ? now_ns() - t0 : -1;
		_exit(write(fd[1], &t, sizeof(t)) == sizeof(t) ? 0 : 1);
	}
	if (pid == -1 || read(fd[0], &t, sizeof(t)) != sizeof(t))
		t = -1;
	close(fd[0]);
	close(fd[1]);
	if (pid != -1 && (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) ||
	    WEXITSTATUS(st) != 0))
		t = -1;
	return t;
}

int
main(int argc, char *argv[])
{
	static struct sc_prog prog[2];
	int64_t *t;
	int n, i, j;

	if (argc != 2 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: sbx-filtercost N\n");
		return 2;
	}
	if (sc_compile_allow("child", &prog[0]) == -1 || one_rule(&prog[1]) == -1 ||
	    (t = calloc((size_t)n * 2, sizeof(*t))) == NULL) {
		fprintf(stderr, "filtercost: cannot compile the filters\n");
		return 1;
	}
	for (i = 0; i < n; i++)
		for (j = 0; j < 2; j++)
			if ((t[j * n + i] = install_ns(&prog[j])) < 0) {
				fprintf(stderr, "filtercost: an install failed\n");
				return 1;
			}
	for (j = 0; j < 2; j++) {
		qsort(t + j * n, (size_t)n, sizeof(*t), cmp_i64);
		printf("filter %s insns %u p50_us %.1f p90_us %.1f n %d\n",
		    j == 0 ? "child" : "one_rule", prog[j].fprog.len,
		    t[j * n + n / 2] / 1e3, t[j * n + n * 9 / 10] / 1e3, n);
	}
	return 0;
}
