/*
 * keeper.c - the password of a postgres's keeper role (sbx's own, which
 * owns what a reset goes back to and the snapshots: pg_data.c), derived
 * from the agent's password and a key of the host's that only root reads,
 * state_dir/keeper.key.
 * runs in: sbx-worker's JOB_DATA and JOB_WARM_START and a provision's service
 *   children (root, runtime deny filter)
 *
 * The worker gives it to the container at its start (SBX_KEEPER_PASSWORD,
 * images/postgres/entrypoint.sh) and to each session later, so that a
 * postgres reached over tcp alone, with no socket directory to hold
 * keep/pg.secret, has a keeper too. The agent knows its own password,
 * never the key: it cannot derive the keeper's.
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

#include "iox.h"
#include "log.h"
#include "session.h"

#define KEY_FILE	"keeper.key"
#define KEY_LEN		32

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
