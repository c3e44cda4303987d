/*
 * runtime_argv.h - every argv and environment sbx-worker gives
 * the container runtime, built from fixed templates (runtime_argv.c).
 * runs in: sbx-worker jobs and a provision's service children (root, runtime
 *   deny filter)
 */
#ifndef SBX_RUNTIME_ARGV_H
#define SBX_RUNTIME_ARGV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "conn.h"
#include "rtname.h"

#define RT_MAX_ARGV	160
#define RT_NBASE_ENV	3

struct argv_buf {
	char	*v[RT_MAX_ARGV + 1];
	char	 store[16384];
	size_t	 n, used;
	int	 overflow;	/* something did not fit: do not run it */
};

/* What one service's `run` needs besides the config. */
struct run_spec {
	uid_t			 uid;
	const char		*agent;		/* NULL: a warm pool member */
	const char		*project;
	const char		*name;		/* the container's name */
	const char		*sockdir;	/* host directory, unix transport */
	const char		*datadir;	/* host directory (datadir.c), or NULL */
	uint32_t		 idmap_uid;	/* first host uid (podman maps onto it); 0: none */
	const char		*pidfile;	/* podman writes the pid here */
	unsigned		 port;		/* tcp: the loopback port to
						 * publish, its guard laid */
	bool			 keeper;	/* postgres: pass the keeper's
						 * verifier (SBX_KEEPER_VERIFIER) */
	const struct sbx_conn	*conn;		/* user, database, password */
};

extern const char *const rt_base_env[RT_NBASE_ENV + 1];

void	rt_argv_run(struct argv_buf *, const struct sbx_config *,
	    const struct service_cfg *, const struct run_spec *);
int	rt_env_run(char *envp[], char store[][CFG_STR * 2],
	    const struct service_cfg *, const struct sbx_conn *);
void	rt_argv_rm_key(struct argv_buf *, const struct sbx_config *,
	    uid_t, const char *agent);
void	rt_argv_list(struct argv_buf *, const struct sbx_config *);
void	rt_argv_rm_name(struct argv_buf *, const struct sbx_config *,
	    const char *name);
void	rt_argv_rm_storage(struct argv_buf *, const struct sbx_config *,
	    const char *name);
void	rt_argv_inspect(struct argv_buf *, const struct sbx_config *,
	    const char *name);
/* docker only (rt_run.c, provision.c): its rm has no filter, its ps no pid, its
 * volumes no option U. ids: what its ps -q printed, checked. */
void	rt_argv_rm_ids(struct argv_buf *, const struct sbx_config *,
	    char *const ids[], size_t n);
void	rt_argv_list_ids(struct argv_buf *, const struct sbx_config *,
	    char *const ids[], size_t n);
void	rt_argv_image_user(struct argv_buf *, const struct sbx_config *,
	    const char *image);
/* rm -f of these names, a name that is not there being no error. */
void	rt_argv_rm_names(struct argv_buf *, const struct sbx_config *,
	    const char *const *names, size_t n);
void	rt_argv_rename(struct argv_buf *, const struct sbx_config *,
	    const char *from, const char *to);

#endif
