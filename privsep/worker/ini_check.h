/*
 * ini_check.h - an indented line that looks like a key, which libinih would
 * take as the previous value's (ini_check.c).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_INI_CHECK_H
#define SBX_INI_CHECK_H

#include <stddef.h>
#include <stdio.h>

/* The number of the first line of f that is indented and looks like a
 * key (err says so), or 0. */
int	indented_key(FILE *, char *err, size_t errlen);

#endif
