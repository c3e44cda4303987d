/*
 * secret.h - fresh random secrets for service passwords.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#ifndef SBX_SECRET_H
#define SBX_SECRET_H

#include <stddef.h>

void	secret_fill(char *out, size_t size);

#endif
