/*
 * slug.c - slug syntax, checked on both sides of the privilege boundary.
 * runs in: the monitor (root, unfiltered); sbx-worker jobs and their children
 *   (root, runtime deny filter) and session children (the sandbox's prober
 *   uid, session allowlist); the broker's children (broker user, broker and
 *   child allowlists)
 */
#include <string.h>

#include "msg.h"
#include "slug.h"

static bool
slug_char(char c, bool first)
{
	if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
		return true;
	return !first && (c == '.' || c == '_' || c == '-');
}

/* A slug of exactly len bytes (no NUL needed). */
bool
slug_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= SBX_SLUG_MAX)
		return false;
	for (i = 0; i < len; i++)
		if (!slug_char(s[i], i == 0))
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
