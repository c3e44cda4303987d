/*
 * keeper.c - the password of a postgres's keeper role (sbx's own, which
 * owns what a reset goes back to and the snapshots: pg_data.c), derived
 * from the agent's password and a key of the host's that only root reads,
 * state_dir/keeper.key.
 * runs in: sbx-worker's JOB_DATA and JOB_WARM_START and a provision's service
 *   children (root, runtime deny filter)
 *
 * The worker gives the container its SCRAM verifier at its start
 * (SBX_KEEPER_VERIFIER, images/postgres/entrypoint.sh), never the
 * password, and each session the password later, so that a postgres
 * reached over tcp alone has a keeper too. The agent knows its own
 * password, never the key: it cannot derive the keeper's. The container
 * holds the verifier alone: code running in it can check a guess, not
 * log in as the keeper.
 *
 * The verifier's iteration count is KEEPER_SCRAM_ITERATIONS, not
 * postgres's 4096: stretching a password makes guessing it slower, and
 * this one is 128 bits of an HMAC under a key no guess reaches. At 4096
 * a login cost each reset more than the reset's own work (bench/README.md,
 * figure 8).
 */
#include <sys/random.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

#include "config.h"
#include "iox.h"
#include "keeper.h"
#include "log.h"

#define KEY_FILE	"keeper.key"
#define KEY_LEN		32
#define SALT_LEN	16

/* The key as it is, exactly KEY_LEN bytes of a root-owned regular file
 * not opened through a link. -1: missing (errno ENOENT) or unsound. */
static int
key_read(int dir, unsigned char *key)
{
	struct stat st;
	int fd;

	if ((fd = openat(dir, KEY_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) ==
	    -1)
		return -1;
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 077) != 0 || st.st_size != KEY_LEN ||
	    read(fd, key, KEY_LEN) != KEY_LEN) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	close(fd);
	return 0;
}

/* A new key, written whole under a name of our own and linked into
 * place: a reader sees none or all of it; of two workers, the first
 * link wins and both read that one. */
static int
key_make(int dir)
{
	unsigned char key[KEY_LEN];
	char tmp[32];
	int fd, rc = -1;

	snprintf(tmp, sizeof(tmp), KEY_FILE ".%ld", (long)getpid());
	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key))
		return -1;
	(void)unlinkat(dir, tmp, 0);
	if ((fd = openat(dir, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) != -1) {
		if (write_all(fd, key, sizeof(key), now_ms() + 1000) == 0 &&
		    fsync(fd) == 0 && (linkat(dir, tmp, dir, KEY_FILE, 0) == 0 ||
		    errno == EEXIST))
			rc = 0;
		close(fd);
		(void)unlinkat(dir, tmp, 0);
	}
	explicit_bzero(key, sizeof(key));
	return rc;
}

int
keeper_derive(const struct sbx_config *cfg, const char *password,
    char out[KEEPER_PW_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	unsigned char key[KEY_LEN], md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	size_t i;
	int dir, rc;

	out[0] = '\0';
	if ((dir = open(cfg->state_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
	    O_CLOEXEC)) == -1) {
		log_warn("keeper: %s", cfg->state_dir);
		return -1;
	}
	rc = key_read(dir, key);
	if (rc == -1 && errno == ENOENT && key_make(dir) == 0)
		rc = key_read(dir, key);
	close(dir);
	if (rc == -1) {
		log_warn("keeper: %s/" KEY_FILE, cfg->state_dir);
		return -1;
	}
	if (HMAC(EVP_sha256(), key, KEY_LEN, (const unsigned char *)password,
	    strlen(password), md, &mdlen) == NULL || mdlen < KEEPER_PW_LEN / 2)
		rc = -1;
	for (i = 0; rc == 0 && i < KEEPER_PW_LEN / 2; i++) {
		out[2 * i] = hex[md[i] >> 4];
		out[2 * i + 1] = hex[md[i] & 0xf];
	}
	out[rc == 0 ? KEEPER_PW_LEN : 0] = '\0';
	explicit_bzero(key, sizeof(key));
	explicit_bzero(md, sizeof(md));
	return rc;
}

/* Base64 of n bytes at out, NUL-terminated: its length. */
static size_t
b64(char *out, const unsigned char *in, size_t n)
{
	return (size_t)EVP_EncodeBlock((unsigned char *)out, in, (int)n);
}

int
keeper_verifier_salted(const char *password, const unsigned char *salt,
    size_t saltlen, unsigned iterations, char *out, size_t cap)
{
	unsigned char salted[SHA256_DIGEST_LENGTH];
	unsigned char client[SHA256_DIGEST_LENGTH];
	unsigned char stored[SHA256_DIGEST_LENGTH];
	unsigned char server[SHA256_DIGEST_LENGTH];
	char s64[4 * ((SALT_LEN + 2) / 3) + 1];
	char k64[2][4 * ((SHA256_DIGEST_LENGTH + 2) / 3) + 1];
	unsigned int len = 0;
	int n, rc = -1;

	if (cap > 0)
		out[0] = '\0';
	if (saltlen > SALT_LEN || iterations == 0 ||
	    PKCS5_PBKDF2_HMAC(password, (int)strlen(password), salt,
	    (int)saltlen, (int)iterations, EVP_sha256(), sizeof(salted),
	    salted) != 1 ||
	    HMAC(EVP_sha256(), salted, sizeof(salted),
	    (const unsigned char *)"Client Key", 10, client, &len) == NULL ||
	    SHA256(client, sizeof(client), stored) == NULL ||
	    HMAC(EVP_sha256(), salted, sizeof(salted),
	    (const unsigned char *)"Server Key", 10, server, &len) == NULL)
		goto out;
	(void)b64(s64, salt, saltlen);
	(void)b64(k64[0], stored, sizeof(stored));
	(void)b64(k64[1], server, sizeof(server));
	n = snprintf(out, cap, "SCRAM-SHA-256$%u:%s$%s:%s", iterations, s64,
	    k64[0], k64[1]);
	rc = n > 0 && (size_t)n < cap ? 0 : -1;
	if (rc == -1 && cap > 0)
		out[0] = '\0';
out:
	explicit_bzero(salted, sizeof(salted));
	explicit_bzero(client, sizeof(client));
	return rc;
}

int
keeper_verifier(const char *password, char *out, size_t cap)
{
	unsigned char salt[SALT_LEN];

	if (getrandom(salt, sizeof(salt), 0) != (ssize_t)sizeof(salt)) {
		if (cap > 0)
			out[0] = '\0';
		return -1;
	}
	return keeper_verifier_salted(password, salt, sizeof(salt),
	    KEEPER_SCRAM_ITERATIONS, out, cap);
}
