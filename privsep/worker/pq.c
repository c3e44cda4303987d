/*
 * pq.c - libpq, dlopen()ed by a postgres session (see pq.h for why).
 * runs in: a postgres's session child (root until its drop: pq_load, before
 *   its filter and its connect; then the sandbox's prober uid, session
 *   allowlist); pq_load also in a data spare and a resident data worker,
 *   ahead of the session children they fork (root, runtime deny filter)
 *
 * By its soname, from the system's library path: the worker's
 * environment is the monitor's clean one, so no LD_LIBRARY_PATH of
 * anyone's chooses the file.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "log.h"
#include "pq.h"

#define LIBPQ	"libpq.so.5"
/* openssl/crypto.h's, for a libpq built with OpenSSL */
#define OPENSSL_INIT_LOAD_CONFIG	0x00000040L

struct pq_api pq;

/* Each slot of the table with its symbol's name, in the table's order. */
static const char *const names[] = {
	"PQconnectdbParams", "PQstatus", "PQerrorMessage", "PQfinish",
	"PQsetNoticeProcessor", "PQparameterStatus", "PQexec",
	"PQresultStatus", "PQresultErrorField", "PQntuples", "PQnfields",
	"PQgetvalue", "PQclear", "PQescapeIdentifier", "PQescapeLiteral",
	"PQfreemem", "PQsocket",
};

/*
 * OpenSSL, which draws SCRAM's nonce for libpq, reads its configuration
 * file at its first use; made now, so that the session's filter, loaded
 * next (svc_session.c), need allow no open.
 */
static void
openssl_config(void *h)
{
	int (*init)(uint64_t, const void *);
	void *f;

	if ((f = dlsym(h, "OPENSSL_init_crypto")) == NULL)
		return;		/* a libpq without OpenSSL */
	memcpy(&init, &f, sizeof(init));
	if (init(OPENSSL_INIT_LOAD_CONFIG, NULL) != 1)
		log_warnx("%s: OpenSSL's configuration cannot be read", LIBPQ);
}

int
pq_load(void)
{
	static int tried;
	void *h, *f[sizeof(names) / sizeof(names[0])];
	size_t i;

	_Static_assert(sizeof(f) == sizeof(pq), "a name for each slot");
	/* Once: after the filter a second dlopen would be killed. */
	if (tried)
		return pq.freemem != NULL ? 0 : -1;
	tried = 1;
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
	openssl_config(h);
	return 0;
}
