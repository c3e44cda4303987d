/*
 * notify.c - tell systemd (Type=notify) what the monitor is doing.
 * runs in: the monitor (root, monitor allowlist once started): once its start
 *   is done, then its loop
 *
 * READY=1 only once the socket serves and adoption is done (the start is
 * then complete: an agent that connects gets its old sandbox back);
 * STATUS= with the sandbox count when it changes; WATCHDOG=1 from the
 * loop itself, at half the unit's WatchdogSec=, so a wedged loop is
 * restarted; RELOADING=1 around SIGHUP; STOPPING=1 at SIGTERM. Outside
 * systemd (no NOTIFY_SOCKET) sd_notify does nothing and costs nothing.
 * The datagrams go to a root-owned socket systemd made; nothing a tenant
 * sends reaches them but the count.
 */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <systemd/sd-daemon.h>

#include "notify.h"

static uint64_t watchdog_usec;	/* 0: no watchdog asked for */
static int64_t next_ping_ms;
static size_t last_count = (size_t)-1;

static int64_t
monotonic_usec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

/* sd_notify's CLOCK_MONOTONIC for RELOADING=1 (systemd 253+ wants it;
 * older ones ignore the extra field). */
void
notify_reloading(void)
{
	sd_notifyf(0, "RELOADING=1\nMONOTONIC_USEC=%lld",
	    (long long)monotonic_usec());
}

static void
status(size_t sandboxes)
{
	last_count = sandboxes;
	sd_notifyf(0, "STATUS=serving, %zu sandboxes", sandboxes);
}

void
notify_reloaded(size_t sandboxes)
{
	sd_notify(0, "READY=1");
	status(sandboxes);
}

void
notify_ready(size_t sandboxes, size_t adopted)
{
	if (sd_watchdog_enabled(0, &watchdog_usec) <= 0)
		watchdog_usec = 0;
	sd_notifyf(0, "READY=1\nSTATUS=serving, %zu sandboxes (%zu adopted)",
	    sandboxes, adopted);
	last_count = sandboxes;
}

void
notify_tick(int64_t now, size_t sandboxes)
{
	if (watchdog_usec != 0 && now >= next_ping_ms) {
		sd_notify(0, "WATCHDOG=1");
		next_ping_ms = now + (int64_t)(watchdog_usec / 2000);
	}
	if (sandboxes != last_count)
		status(sandboxes);
}

void
notify_stopping(void)
{
	sd_notify(0, "STOPPING=1\nSTATUS=stopping: finishing requests in "
	    "flight");
}
