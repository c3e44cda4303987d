/*
 * slug.h - the contract's name syntax: [a-z0-9][a-z0-9._-]{0,62}.
 * runs in: the monitor (root, monitor allowlist once started); sbx-worker
 *   jobs and their children (root, runtime deny filter) and session children
 *   (the sandbox's prober uid, session allowlist); the broker's children
 *   (broker user, broker and child allowlists)
 */
#ifndef SBX_SLUG_H
#define SBX_SLUG_H

#include <stdbool.h>
#include <stddef.h>

/* The bytes of a slug; its first byte is one of the first SLUG_FIRST. */
#define SLUG_BYTES	"abcdefghijklmnopqrstuvwxyz0123456789._-"
#define SLUG_FIRST	36

bool	slug_byte(char c, bool first);
bool	slug_valid(const char *s, size_t len);
bool	slug_field_valid(const char *field, size_t size);

#endif
