/*
 * pq.h - libpq, loaded by the sessions that need it (pq.c).
 * runs in: a postgres's session child (root until its drop: pq_load; then the
 *   sandbox's prober uid, session allowlist)
 *
 * libpq brings libssl, libcrypto, Kerberos, LDAP and GnuTLS: linked in,
 * their loading and relocations cost every job's exec about 4 ms (23
 * more objects), though only a seed and a data job use them. So the
 * worker does not link libpq: a postgres session dlopen()s it and calls
 * it through this table. Its types are libpq-fe.h's.
 */
#ifndef SBX_PQ_H
#define SBX_PQ_H

#include <libpq-fe.h>

struct pq_api {
	PGconn		*(*connectdbParams)(const char *const *,
			    const char *const *, int);
	ConnStatusType	 (*status)(const PGconn *);
	char		*(*errorMessage)(const PGconn *);
	void		 (*finish)(PGconn *);
	PQnoticeProcessor (*setNoticeProcessor)(PGconn *, PQnoticeProcessor,
			    void *);
	const char	*(*parameterStatus)(const PGconn *, const char *);
	PGresult	*(*exec)(PGconn *, const char *);
	ExecStatusType	 (*resultStatus)(const PGresult *);
	char		*(*resultErrorField)(const PGresult *, int);
	int		 (*ntuples)(const PGresult *);
	int		 (*nfields)(const PGresult *);
	char		*(*getvalue)(const PGresult *, int, int);
	void		 (*clear)(PGresult *);
	char		*(*escapeIdentifier)(PGconn *, const char *, size_t);
	char		*(*escapeLiteral)(PGconn *, const char *, size_t);
	void		 (*freemem)(void *);
	int		 (*socket)(const PGconn *);
};

/* Filled by pq_load(); all NULL before. */
extern struct pq_api pq;

/* libpq loaded and every function of the table found: 0, or -1
 * (logged). Once per process; again is a no-op. */
int	pq_load(void);

#endif
