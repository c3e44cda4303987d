/*
 * adopt_check.c - JOB_ADOPT's answer, taken from the worker's memfd and
 * checked before adopt.c uses any of it: the worker read files on disk
 * and the runtime's listing, whose names tenants choose.
 * runs in: the monitor at its start (root, unfiltered)
 */
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "adopt_check.h"
#include "job.h"
#include "record_fmt.h"
#include "slug.h"

/* A record file's name: what record.c writes, nothing to escape. */
static bool
file_valid(const char *f, size_t cap)
{
	size_t n = strnlen(f, cap);

	return n > 0 && n < cap && f[0] != '.' &&
	    strspn(f, SLUG_BYTES) == n;
}

/* What the worker found, checked before any of it is used. */
bool
adopt_found_valid(const struct adopt_found *a)
{
	uint32_t i;

	if (!file_valid(a->file, sizeof(a->file)) || !record_valid(&a->r) ||
	    a->why >= ADOPT_NO_RECORD ||
	    (a->r.uid == RECORD_POOL_UID && (a->r.nservices != 1 ||
	    a->r.idmap == 0 || a->r.svc[0].warm != a->r.idmap)) ||
	    a->pool_named >> a->r.nservices != 0)
		return false;
	for (i = 0; i < a->r.nservices; i++)
		if (a->why == ADOPT_WHOLE && a->pid[i] <= 0)
			return false;
	return true;
}

/* A container's name in the runtime's alphabet (podman's and docker's):
 * adopt.c writes it in an audit line as it is. */
static bool
container_valid(const char *c, size_t cap)
{
	size_t n = strnlen(c, cap);

	return n < cap &&
	    strspn(c, SLUG_BYTES "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == n;
}

bool
adopt_gone_valid(const struct adopt_gone *g)
{
	const struct rt_gone *r = &g->g;

	if (g->why < ADOPT_NO_RECORD || g->why >= ADOPT_NWHY ||
	    !container_valid(g->container, sizeof(g->container)) ||
	    memchr(r->name, '\0', sizeof(r->name)) == NULL ||
	    memchr(r->service, '\0', sizeof(r->service)) == NULL)
		return false;
	if (g->why == ADOPT_POOL_NO_RECORD)
		return r->name[0] != '\0' && r->key.uid == (uid_t)-1;
	return r->name[0] == '\0' &&
	    slug_field_valid(r->key.agent, sizeof(r->key.agent)) &&
	    (r->service[0] == '\0') == (g->why == ADOPT_NO_RECORD) &&
	    (r->service[0] == '\0' || slug_valid(r->service,
	    strlen(r->service)));
}

/* The whole answer, mapped from the worker's memfd: a head whose counts
 * give the file's exact size, every entry checked. */
const struct adopt_head *
adopt_answer_take(int fd, size_t *len)
{
	const struct adopt_head *h;
	const struct adopt_found *f;
	const struct adopt_gone *g;
	struct stat st;
	uint32_t i;

	if (fstat(fd, &st) == -1 || st.st_size < (off_t)sizeof(*h) ||
	    (h = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
	    0)) == MAP_FAILED)
		return NULL;
	*len = (size_t)st.st_size;
	f = (const void *)(h + 1);
	g = (const void *)(f + h->nfound);
	if (h->magic != ADOPT_MAGIC || h->nfound > ADOPT_MAX ||
	    h->ngone > ADOPT_MAX || *len != sizeof(*h) + h->nfound *
	    sizeof(*f) + h->ngone * sizeof(*g))
		goto bad;
	for (i = 0; i < h->nfound; i++)
		if (!adopt_found_valid(&f[i]))
			goto bad;
	for (i = 0; i < h->ngone; i++)
		if (!adopt_gone_valid(&g[i]))
			goto bad;
	return h;
bad:
	munmap((void *)(uintptr_t)h, *len);
	return NULL;
}
