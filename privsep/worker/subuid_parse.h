/*
 * subuid_parse.h - /etc/subuid read into a table (subuid_parse.c).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_SUBUID_PARSE_H
#define SBX_SUBUID_PARSE_H

#include <stddef.h>

struct job_files;
struct subuid_table;

/* /etc/subuid (path) from jf, sorted, no overlap; a missing file is an
 * empty table; -1 with err otherwise. */
int	subuid_parse(const struct job_files *, const char *path,
	    struct subuid_table *, char *err, size_t errlen);

#endif
