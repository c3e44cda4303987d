/* scfilter.h - seccomp filters built from policy/seccomp/<role>.list. */
#ifndef SBX_SCFILTER_H
#define SBX_SCFILTER_H

#include <stddef.h>

struct sc_rule {
	const char	*name;
	const char	*reason;
};

struct sc_list {
	const char		*role;
	const struct sc_rule	*rules;
	size_t			 n;
};

const struct sc_list *sc_list_find(const char *role);
const struct sc_list *sc_lists_all(size_t *n);
/* Default kill, the role's syscalls allowed: broker, child, probe. */
int	sc_load_allow(const char *role);
/* Default allow, the role's syscalls refused with an errno: runtime. */
int	sc_load_deny(const char *role);

#endif
