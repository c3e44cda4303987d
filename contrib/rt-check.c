/*
 * rt-check.c - setup-host.sh's proof that the container runtime can do
 * what sbx asks of it. Built statically, it is the whole root file system
 * of a throwaway image: inside the container it serves, on the host it
 * connects.
 *
 *   rt-check serve SOCKET PORT   listen on the Unix socket SOCKET and on
 *                                TCP PORT (0: none), answer each
 *                                connection with one line, forever
 *   rt-check unix SOCKET         connect, expect that line
 *   rt-check tcp PORT            connect to 127.0.0.1:PORT, expect it
 *
 * Exit 0 on success; otherwise one line on stderr saying what failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define LINE	"sbx-rt-check ok\n"

static int
fail(const char *what, const char *arg)
{
	fprintf(stderr, "rt-check: %s %s: %s\n", what, arg, strerror(errno));
	return 1;
}

static int
unix_addr(struct sockaddr_un *sun, const char *path)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sun->sun_path, path);
	return 0;
}

static int
listen_unix(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	if (unix_addr(&sun, path) == -1 ||
	    (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1)
		return -1;
	unlink(path);
	umask(0);	/* the directory, not the socket's mode, guards it */
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 8) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
listen_tcp(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_port = htons((uint16_t)port), .sin_addr.s_addr = INADDR_ANY };
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 ||
	    listen(fd, 8) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
serve(const char *path, int port)
{
	struct pollfd pfd[2] = { { .fd = -1 }, { .fd = -1 } };
	int i, c;

	if ((pfd[0].fd = listen_unix(path)) == -1)
		return fail("cannot listen on", path);
	if (port > 0 && (pfd[1].fd = listen_tcp(port)) == -1)
		return fail("cannot listen on tcp port", "");
	pfd[0].events = pfd[1].events = POLLIN;
	for (;;) {
		if (poll(pfd, 2, -1) == -1)
			return fail("poll", "");
		for (i = 0; i < 2; i++) {
			if (pfd[i].revents == 0 ||
			    (c = accept(pfd[i].fd, NULL, NULL)) == -1)
				continue;
			(void)write(c, LINE, sizeof(LINE) - 1);
			close(c);
		}
	}
}

static int
expect_line(int fd, const char *where)
{
	char buf[64];
	ssize_t n;
	size_t got = 0;

	while (got < sizeof(buf) - 1 &&
	    (n = read(fd, buf + got, sizeof(buf) - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	close(fd);
	if (strcmp(buf, LINE) != 0) {
		fprintf(stderr, "rt-check: %s answered %zu bytes, not the "
		    "expected line\n", where, got);
		return 1;
	}
	return 0;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un sun;
	struct sockaddr_in sin = { .sin_family = AF_INET,
	    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd;

	if (argc == 4 && strcmp(argv[1], "serve") == 0)
		return serve(argv[2], atoi(argv[3]));
	if (argc == 3 && strcmp(argv[1], "unix") == 0) {
		if (unix_addr(&sun, argv[2]) == -1 ||
		    (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			return fail("cannot connect to", argv[2]);
		return expect_line(fd, argv[2]);
	}
	if (argc == 3 && strcmp(argv[1], "tcp") == 0) {
		sin.sin_port = htons((uint16_t)atoi(argv[2]));
		if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
		    connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1)
			return fail("cannot connect to 127.0.0.1 port", argv[2]);
		return expect_line(fd, "127.0.0.1");
	}
	fprintf(stderr, "usage: rt-check serve SOCKET PORT | unix SOCKET | "
	    "tcp PORT\n");
	return 2;
}
