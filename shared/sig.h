/* sig.h - the daemons' signals, read from a signalfd in the poll loop. */
#ifndef SBX_SIG_H
#define SBX_SIG_H

/* Blocks CHLD, TERM, INT and HUP, ignores PIPE; returns the signalfd. */
int	signals_to_fd(void);

#endif
