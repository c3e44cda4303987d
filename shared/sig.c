/*
 * sig.c - signals as poll events: no handlers, no async-signal races.
 * runs in: the monitor (root, monitor allowlist once started), the broker
 *   before its drop (root, unfiltered)
 */
#include <signal.h>
#include <sys/signalfd.h>

#include "sig.h"

int
signals_to_fd(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) == -1)
		return -1;
	signal(SIGPIPE, SIG_IGN);
	return signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK);
}
