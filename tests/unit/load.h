/*
 * load.h - the unit tests' loaders: a file opened and parsed in the test's
 * own process, by path, as sbx-worker does in two (load.c).
 * runs in: the unit tests (root or the tester, unfiltered)
 */
#ifndef SBX_TEST_LOAD_H
#define SBX_TEST_LOAD_H

#include <stdbool.h>
#include <stddef.h>

struct project_table;
struct sbx_config;
struct subuid_table;

/* sbx.conf at path: config_parse's answer. */
int	config_load(const char *path, struct sbx_config *, char *err,
	    size_t errlen);
/* cfg->projects' files: projects_parse's answer. */
int	projects_load(const struct sbx_config *, struct project_table *,
	    bool check);
/* The subordinate uids' file at path: subuid_parse's answer. */
int	subuid_load(const char *path, struct subuid_table *, char *err,
	    size_t errlen);

#endif
