/*
 * rt_seen.c - the runtime's listing of sbx's containers, as fixed entries
 * (struct rt_seen, job.h).
 * runs in: sbx-worker's JOB_ADOPT and JOB_PURGE, in their child that
 *   dropped to sbx-job (runtime deny filter and job allowlist: jobuser.c)
 *
 * The listing names containers after agents, whose names tenants choose,
 * so the monitor does not parse it, nor root: the adoption job's child
 * that dropped to sbx-job does (rt_run.c's rt_list), and the monitor
 * checks what that job concludes
 * (privsep/monitor/adopt_check.c) as it would a message from the broker.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "log.h"
#include "rt_seen.h"

/* One line of rt_argv_list's output; 0 when every field is sound. */
static int
parse_seen(char *line, struct rt_seen *c)
{
	char *f[5] = { NULL }, *save = NULL, *end, *p;
	long v;
	int i;

	memset(c, 0, sizeof(*c));
	for (i = 0; i < 5; i++)
		if ((f[i] = strtok_r(i ? NULL : line, " ", &save)) == NULL)
			break;
	if (i < 4 || f[2][0] != 'u' || f[3][0] != 'a' ||
	    strlcpy(c->name, f[0], sizeof(c->name)) >= sizeof(c->name) ||
	    strlcpy(c->agent, f[3] + 1, sizeof(c->agent)) >= sizeof(c->agent))
		return -1;
	errno = 0;
	v = strtol(f[1], &end, 10);
	if (errno || *end != '\0' || v < 0 || v > INT_MAX)
		return -1;
	c->pid = (int)v;
	/* A warm container has neither label (runtime_argv.c). */
	c->pool = f[2][1] == '\0' && f[3][1] == '\0';
	v = c->pool ? 0 : strtol(f[2] + 1, &end, 10);
	if (!c->pool && (errno || *end != '\0' || v < 0 || v > INT_MAX))
		return -1;
	c->uid = c->pool ? (uid_t)-1 : (uid_t)v;
	c->port = 0;
	if (f[4] != NULL && (p = strstr(f[4], "127.0.0.1:")) != NULL) {
		v = strtol(p + 10, &end, 10);
		if (errno || strncmp(end, "->", 2) != 0 || v <= 0 || v > 65535)
			return -1;
		c->port = (int)v;
	}
	return 0;
}

/* rt_argv_list's output, a container a line, into an array to free;
 * -1, logged, if a line is not sound. */
int
rt_seen_parse(char *text, struct rt_seen **out, size_t *n)
{
	struct rt_seen *v = NULL, *nv;
	char *line, *save = NULL, shown[81];
	size_t cap = 0;

	*n = 0;
	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			if ((nv = reallocarray(v, cap, sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		strlcpy(shown, line, sizeof(shown));	/* before strtok */
		if (parse_seen(line, &v[*n]) == -1) {
			log_warnx("runtime ps: an unexpected line: %s", shown);
			goto fail;
		}
		(*n)++;
	}
	*out = v;
	return 0;
fail:
	free(v);
	return -1;
}
