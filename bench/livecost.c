/*
 * livecost.c - sbx-livecost PID PORT N: the cost of one hit's liveness
 * check, timed on the real code (rt_cli_ops.is_live, rt_is_live in
 * privsep/monitor/liveness.c: a pidfd poll and a non-blocking connect, to the
 * Unix socket or the loopback port, per service) against a real container, and against the cheapest loopback
 * TCP connect + close to a listener in this process, interleaved.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "liveness.h"
#include "runtime.h"
#include "timing.h"

static int
listener(struct sockaddr_in *sin)
{
	socklen_t len = sizeof(*sin);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	*sin = (struct sockaddr_in){ .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	if (fd == -1 || bind(fd, (struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    listen(fd, 4096) == -1 ||
	    getsockname(fd, (struct sockaddr *)sin, &len) == -1) {
		perror("listener");
		exit(1);
	}
	return fd;
}

/* The baseline: connect and close, accepting so the backlog stays empty. */
static int64_t
bare_connect(int lfd, const struct sockaddr_in *sin)
{
	int64_t t0 = now_ns(), t;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd == -1 || connect(fd, (const struct sockaddr *)sin,
	    sizeof(*sin)) == -1)
		exit(1);
	close(fd);
	t = now_ns() - t0;
	if ((fd = accept(lfd, NULL, NULL)) != -1)
		close(fd);
	return t;
}

int
main(int argc, char **argv)
{
	static struct sbx_sandbox sb;
	static struct sbx_svc svc;
	struct sockaddr_in sin;
	int64_t *a, *b, *f, t0;
	size_t n, i;
	int lfd;

	if (argc != 4 || (n = strtoul(argv[3], NULL, 10)) == 0)
		return fprintf(stderr, "usage: sbx-livecost PID PORT|SOCKET N\n"), 2;
	a = calloc(n, sizeof(*a));
	b = calloc(n, sizeof(*b));
	f = calloc(n, sizeof(*f));
	sb.svc = &svc;
	sb.nservices = 1;
	sb.svc[0].pid = atoi(argv[1]);
	if (argv[2][0] == '/')
		strlcpy(sb.svc[0].conn.socket, argv[2],
		    sizeof(sb.svc[0].conn.socket));
	else
		sb.svc[0].conn.port = (uint32_t)atoi(argv[2]);
	sb.svc[0].pidfd = (int)syscall(SYS_pidfd_open, sb.svc[0].pid, 0);
	lfd = listener(&sin);
	if (a == NULL || b == NULL || f == NULL || sb.svc[0].pidfd == -1 ||
	    !rt_cli_ops.is_live(NULL, &sb)) {
		fprintf(stderr, "sbx-livecost: pid %s port %s is not live\n",
		    argv[1], argv[2]);
		return 1;
	}
	for (i = 0; i < n; i++) {
		svc.port_seen_ms = 0;	/* the full check: pidfd and connect */
		t0 = now_ns();
		if (!rt_cli_ops.is_live(NULL, &sb))
			return fprintf(stderr, "went dead\n"), 1;
		a[i] = now_ns() - t0;
		t0 = now_ns();		/* within LIVE_PORT_FRESH_MS: pidfd only */
		if (!rt_cli_ops.is_live(NULL, &sb))
			return fprintf(stderr, "went dead\n"), 1;
		f[i] = now_ns() - t0;
		b[i] = bare_connect(lfd, &sin);
	}
	qsort(a, n, sizeof(*a), cmp_i64);
	qsort(b, n, sizeof(*b), cmp_i64);
	qsort(f, n, sizeof(*f), cmp_i64);
	printf("live p50_us %.1f p99_us %.1f bare p50_us %.1f p99_us %.1f "
	    "fresh p50_us %.1f\n", a[n / 2] / 1e3, a[n * 99 / 100] / 1e3,
	    b[n / 2] / 1e3, b[n * 99 / 100] / 1e3, f[n / 2] / 1e3);
	return 0;
}
