/*
 * relay_loop.h - the relay's copy of bytes, once dropped (relay_loop.c).
 * runs in: the relay that the prober and a session child fork, after its
 *   drop (the sandbox's prober uid, not dumpable, runtime deny filter)
 */
#ifndef SBX_RELAY_LOOP_H
#define SBX_RELAY_LOOP_H

#include <stdint.h>

/* Accept on the listener l, one connection at a time, and join each to
 * 127.0.0.1:port, passing bytes both ways unread; never returns. */
void	relay_loop(int l, uint16_t port) __attribute__((noreturn));

#endif
