/*
 * config_parse.h - sbx.conf read with libinih and every value checked
 * (config_parse.c).
 * runs in: sbx-worker's JOB_CONFIG, and JOB_RELOAD's project files, in
 *   their child that dropped to sbx-job (runtime deny filter and job
 *   allowlist: jobuser.c)
 */
#ifndef SBX_CONFIG_PARSE_H
#define SBX_CONFIG_PARSE_H

#include <stddef.h>

struct sbx_config;

/* sbx.conf from fd, opened by root as path (fd -1: its open failed with
 * open_errno); 0, or -1 with one line in err (file:line: cause). */
int	config_parse(int fd, int open_errno, const char *path,
	    struct sbx_config *, char *err, size_t errlen);
/* s split in place at spaces and tabs into out: the number of words, or
 * max + 1 if there are more than max. */
size_t	split_words(char *s, char **out, size_t max);

#endif
