/*
 * sig.h - the daemons' signals, read from a signalfd in the poll loop.
 * runs in: the monitor (root, monitor allowlist once started), the broker
 *   (root until its drop, then broker user; unfiltered, then the broker
 *   allowlist)
 */
#ifndef SBX_SIG_H
#define SBX_SIG_H

/* Blocks CHLD, TERM, INT and HUP, ignores PIPE; returns the signalfd. */
int	signals_to_fd(void);

#endif
