/*
 * secret.c - 128 bits from arc4random_buf (libbsd), as 32 hex digits, so
 * a password needs no quoting in a URL, a shell or a config file.
 * runs in: the monitor's loop (root, monitor allowlist)
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"

#define SECRET_BYTES	16

void
secret_fill(char *out, size_t size)
{
	static const char hex[] = "0123456789abcdef";
	uint8_t raw[SECRET_BYTES];
	size_t i;

	if (size < 2 * SECRET_BYTES + 1)
		abort();
	arc4random_buf(raw, sizeof(raw));
	for (i = 0; i < SECRET_BYTES; i++) {
		out[2 * i] = hex[raw[i] >> 4];
		out[2 * i + 1] = hex[raw[i] & 0xf];
	}
	out[2 * SECRET_BYTES] = '\0';
	explicit_bzero(raw, sizeof(raw));
}
