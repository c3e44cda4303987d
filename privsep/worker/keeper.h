/*
 * keeper.h - the password of a postgres's keeper role, sbx's own, and its
 * SCRAM verifier (keeper.c).
 * runs in: sbx-worker's JOB_DATA and JOB_WARM_START and a provision's service
 *   children (root, runtime deny filter)
 */
#ifndef SBX_KEEPER_H
#define SBX_KEEPER_H

#include <stddef.h>

/* sbx's own role on a postgres (images/postgres/entrypoint.sh), and
 * the length of its password (hex). */
#define KEEPER_ROLE	"sbx_keeper"
#define KEEPER_PW_LEN	32
/* Its SCRAM verifier: the iterations (keeper.c says why so few), and
 * room for "SCRAM-SHA-256$<iterations>:<salt>$<stored key>:<server key>". */
#define KEEPER_SCRAM_ITERATIONS	1
#define KEEPER_VERIFIER_MAX	160

struct sbx_config;

/* The keeper's password for a postgres whose agent has password, from
 * state_dir/keeper.key (made if missing); 0, or -1 (logged) with out "". */
int	keeper_derive(const struct sbx_config *, const char *password,
	    char out[KEEPER_PW_LEN + 1]);
/* The SCRAM-SHA-256 verifier postgres stores for password, with a fresh
 * salt; 0, or -1 with out "". The same of a given salt and count, apart
 * for its unit test. */
int	keeper_verifier(const char *password, char *out, size_t cap);
int	keeper_verifier_salted(const char *password, const unsigned char *salt,
	    size_t saltlen, unsigned iterations, char *out, size_t cap);

#endif
