/*
 * pq.c - libpq, dlopen()ed by a postgres session (see pq.h for why).
 * runs in: a session child (svc_session.c), before it connects
 *
 * By its soname, from the system's library path: the worker's
 * environment is the monitor's clean one, so no LD_LIBRARY_PATH of
 * anyone's chooses the file.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

#include "log.h"
#include "pq.h"

#define LIBPQ	"libpq.so.5"

struct pq_api pq;

/* Each slot of the table with its symbol's name, in the table's order. */
static const char *const names[] = {
	"PQconnectdbParams", "PQstatus", "PQerrorMessage", "PQfinish",
	"PQsetNoticeProcessor", "PQparameterStatus", "PQexec",
	"PQresultStatus", "PQresultErrorField", "PQntuples", "PQnfields",
	"PQgetvalue", "PQclear", "PQescapeIdentifier", "PQescapeLiteral",
	"PQfreemem",
};

int
pq_load(void)
{
	void *h, *f[sizeof(names) / sizeof(names[0])];
	size_t i;

	_Static_assert(sizeof(f) == sizeof(pq), "a name for each slot");
	if (pq.freemem != NULL)
		return 0;
	/* Lazy: of its 23 libraries' functions a session calls few; binding
	 * them all at load costs a reset about 1 ms (bench/README.md). */
	if ((h = dlopen(LIBPQ, RTLD_LAZY | RTLD_LOCAL)) == NULL) {
		log_warnx("%s: %s", LIBPQ, dlerror());
		return -1;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if ((f[i] = dlsym(h, names[i])) == NULL) {
			log_warnx("%s: no %s", LIBPQ, names[i]);
			return -1;
		}
	/* Function and object pointers are alike on every target of ours
	 * (POSIX asks it of dlsym); the table takes them in order. */
	memcpy(&pq, f, sizeof(pq));
	return 0;
}
