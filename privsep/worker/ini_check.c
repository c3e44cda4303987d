/*
 * ini_check.c - what libinih would take silently: an indented line that
 * looks like "key = value" continues the previous value (inih's
 * multi-line values), so a key indented by mistake would end up inside
 * another key's value.
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * sbx.conf and the project files keep their keys at column 0, and such a
 * line is an error with its number.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "ini_check.h"

/* "  name = ...": blanks, a key's characters, blanks, '='. */
static int
looks_like_key(const char *s)
{
	const char *k;

	if (*s != ' ' && *s != '\t')
		return 0;
	s += strspn(s, " \t");
	for (k = s; isalnum((unsigned char)*s) || *s == '_'; s++)
		;
	if (s == k || isdigit((unsigned char)*k))
		return 0;
	s += strspn(s, " \t");
	return *s == '=';
}

int
indented_key(FILE *f, char *err, size_t errlen)
{
	char line[1024];
	int n = 0, whole = 1;

	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (whole)
			n++;
		if (whole && looks_like_key(line)) {
			snprintf(err, errlen, "an indented line that looks like "
			    "a key (keys start at column 0; an indented line "
			    "continues the value above)");
			return n;
		}
		whole = strchr(line, '\n') != NULL;
	}
	return 0;
}
