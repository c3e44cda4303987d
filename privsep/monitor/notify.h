/*
 * notify.h - systemd's readiness protocol (sd_notify); a no-op outside.
 * runs in: the monitor (root, monitor allowlist once started)
 */
#ifndef SBX_NOTIFY_H
#define SBX_NOTIFY_H

#include <stddef.h>
#include <stdint.h>

void	notify_ready(size_t sandboxes, size_t adopted);
void	notify_tick(int64_t now, size_t sandboxes);
void	notify_reloading(void);
void	notify_reloaded(size_t sandboxes);
void	notify_stopping(void);

#endif
