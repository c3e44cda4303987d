/*
 * spawncost.c - what a worker's start costs, binary against binary:
 * fork, execve of BIN as "sbx-worker" with no job on stdin (it reads
 * none, says so and exits 1, as far as any job's start goes: the dynamic
 * loader, the libraries' constructors, main's first checks), wait. The
 * binaries are interleaved run by run; p50 and p90 of N each.
 *
 *   sbx-spawncost N BIN...
 *
 * bench/README.md: the split's cost per job, the old monitor re-executing
 * itself (ac91412: sbx-monitor, 14 shared objects) against sbx-worker.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "timing.h"

int
main(int argc, char *argv[])
{
	int n, nb, i, j, null;
	int64_t *t;

	if (argc < 3 || (n = atoi(argv[1])) < 1) {
		fprintf(stderr, "usage: sbx-spawncost N BIN...\n");
		return 2;
	}
	nb = argc - 2;
	if ((t = calloc((size_t)n * (size_t)nb, sizeof(*t))) == NULL ||
	    (null = open("/dev/null", O_RDWR)) == -1)
		return 1;
	for (i = 0; i < n; i++)
		for (j = 0; j < nb; j++) {
			char *av[] = { "sbx-worker", "none", NULL }, *ev[] = { NULL };
			int64_t t0 = now_ns();
			pid_t p = fork();
			int st;

			if (p == 0) {
				dup2(null, 0);
				dup2(null, 2);
				execve(argv[2 + j], av, ev);
				_exit(127);
			}
			if (p == -1 || waitpid(p, &st, 0) != p ||
			    !WIFEXITED(st) || WEXITSTATUS(st) == 127) {
				fprintf(stderr, "spawncost: %s failed\n", argv[2 + j]);
				return 1;
			}
			t[j * n + i] = now_ns() - t0;
		}
	for (j = 0; j < nb; j++) {
		qsort(t + j * n, (size_t)n, sizeof(*t), cmp_i64);
		printf("spawn %d p50_us %.1f p90_us %.1f n %d %s\n", j,
		    t[j * n + n / 2] / 1e3, t[j * n + n * 9 / 10] / 1e3, n,
		    argv[2 + j]);
	}
	return 0;
}
