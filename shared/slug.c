/*
 * slug.c - slug syntax, checked on both sides of the privilege boundary.
 * runs in: the monitor (root, monitor allowlist once started); sbx-worker
 *   jobs and their children (root, runtime deny filter) and session children
 *   (the sandbox's prober uid, session allowlist); the broker's children
 *   (broker user, broker and child allowlists)
 */
#include <string.h>

#include "msg.h"
#include "slug.h"

bool
slug_byte(char c, bool first)
{
	return c != '\0' && memchr(SLUG_BYTES, c, first ? SLUG_FIRST :
	    sizeof(SLUG_BYTES) - 1) != NULL;
}

/* A slug of exactly len bytes (no NUL needed). */
bool
slug_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= SBX_SLUG_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!slug_byte(s[i], i == 0))
			return false;
	return true;
}

/* A fixed-size field from a message: NUL inside it, a valid slug before
 * the NUL, and only NULs after it (no smuggled bytes). */
bool
slug_field_valid(const char *field, size_t size)
{
	const char *nul = memchr(field, '\0', size);
	size_t len, i;

	if (nul == NULL)
		return false;
	len = (size_t)(nul - field);
	for (i = len; i < size; i++)
		if (field[i] != '\0')
			return false;
	return slug_valid(field, len);
}
