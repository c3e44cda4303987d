/*
 * jobfiles.h - what JOB_RELOAD and sbx-monitor -t parse, opened by root
 * (jobfiles.c).
 * runs in: sbx-worker's JOB_RELOAD and JOB_CONFIG (root, runtime deny filter)
 */
#ifndef SBX_JOBFILES_H
#define SBX_JOBFILES_H

#include <stddef.h>

#include "job.h"

#define JOB_FILES_MAX	(2 * RELOAD_MAX_PROJECTS)
struct job_files {
	int		 dir_err;	/* the projects directory's, or 0 */
	size_t		 n, cap;
	struct job_file {
		char	 name[256];
		int	 fd;		/* -1: err says why */
		int	 err;
	}		*v;
	int		 subuid_fd;	/* -1: subuid_err says why */
	int		 subuid_err;
};
/* The projects directory's files and the subordinate uids' (subuid NULL:
 * none); -1 if the directory cannot be listed (dir_err). */
int	job_files_open(const char *projects, const char *subuid,
	    struct job_files *);
void	job_files_close(struct job_files *);

#endif
