/*
 * projects.h - the project files, read into the projects' table
 * (projects.c).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 */
#ifndef SBX_PROJECTS_H
#define SBX_PROJECTS_H

#include <stdbool.h>

struct job_files;
struct project_table;
struct sbx_config;

/* Every <slug>.conf of cfg->projects, from jf, an invalid file's project
 * kept as invalid with why; -1 if the directory is unreadable. check:
 * each problem on stderr as file:line: cause. */
int	projects_parse(const struct sbx_config *, const struct job_files *,
	    struct project_table *, bool check);

#endif
