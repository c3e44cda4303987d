/*
 * format.h - the pure parts of the sbx CLI: slug checks, shell quoting,
 * environment names, JSON, and turning reply maps into output.  Nothing
 * here does I/O except writing to the FILE it is handed.
 */
#ifndef SBX_FORMAT_H
#define SBX_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <msgpack.h>

#define SBXF_SLUG_MAX	63	/* [a-z0-9][a-z0-9._-]{0,62} */
#define SBXF_ENV_MAX	80	/* name part of POSTGRES_HOST etc. */

/* s matches [a-z0-9][a-z0-9._-]{0,62}. */
bool	sbxf_slug_ok(const char *s);

/*
 * Writes s (len bytes) so that a POSIX shell reads it back as one word with
 * exactly those bytes: unchanged when it is made of [A-Za-z0-9_@%+=:,./-]
 * only (and is not empty), else in single quotes, each ' as '\''.
 */
void	sbxf_shell_quote(FILE *, const char *s, size_t len);

/*
 * The variable prefix of a service: upper-cased, every byte other than
 * [A-Za-z0-9] as '_', and a leading '_' if it would start with a digit.
 * -1 if name is empty or the result does not fit in cap (with its NUL).
 */
int	sbxf_env_name(char *buf, size_t cap, const char *name, size_t len);

/*
 * Length of the well-formed UTF-8 sequence at p (1..4), 0 if the bytes
 * there are not one (overlong, surrogate, > U+10FFFF, truncated, stray
 * continuation).  *cp gets the code point.  len must be > 0.
 */
size_t	sbxf_utf8_next(const unsigned char *p, size_t len, uint32_t *cp);

/*
 * A JSON string literal, quotes included: ", \ and controls (C0, DEL, C1,
 * U+2028/9) escaped, well-formed UTF-8 kept, every byte of ill-formed
 * UTF-8 as \ufffd.
 */
void	sbxf_json_string(FILE *, const char *s, size_t len);
/* Any msgpack object as JSON, on one line, no newline. */
void	sbxf_json(FILE *, const msgpack_object *);

/*
 * Writes s for a terminal: well-formed printable UTF-8 as is, everything
 * else (controls, C1, bad bytes) as '?'.
 */
void	sbxf_print_safe(FILE *, const char *s, size_t len);

/* "42s", "5m03s", "2h05m", "3d04h". */
void	sbxf_duration(char *buf, size_t cap, uint64_t secs);

/*
 * Checks the ok key of a reply.  1: ok is true.  0: ok is false, and
 * "sbx: CODE: message\n" was written to errf, with " (retry after N ms)"
 * before the newline when the refusal carries retry_after_ms.  -1: no
 * usable ok.
 */
int	sbxf_check_ok(FILE *errf, const msgpack_object *reply);

/*
 * Success replies to output.  Each returns 0, or -1 with a one-line
 * reason in err when the reply lacks what it needs.  sbxf_env writes
 * nothing at all on failure, so that eval never sees half of it.
 */
int	sbxf_ping(FILE *, const msgpack_object *reply, char *err, size_t cap);
int	sbxf_available(FILE *, const msgpack_object *reply, char *err,
	    size_t cap);
int	sbxf_env(FILE *, FILE *warnf, const msgpack_object *reply, char *err,
	    size_t cap);

/*
 * The output formats of `sbx request --format`: env (export lines for
 * eval, sbxf_env), dotenv (NAME=value lines, quoted as .env readers take
 * them, sbxf_dotenv_quote), json (the services as one JSON object, each
 * with its "url" where it has one).  env and dotenv end with DATABASE_URL
 * and REDIS_URL, the URLs of the reply's only postgres and only redis.
 */
enum sbxf_format {
	SBXF_FMT_ENV,
	SBXF_FMT_DOTENV,
	SBXF_FMT_JSON,
};

/* "env", "dotenv" or "json"; -1 for anything else. */
int	sbxf_format_parse(const char *s, enum sbxf_format *fmt);
/* A request_sandbox (or reset) reply in fmt; all or nothing, as sbxf_env. */
int	sbxf_request(FILE *, FILE *warnf, enum sbxf_format fmt,
	    const msgpack_object *reply, char *err, size_t cap);

/*
 * What stdout gets when request or reset fails in fmt, whatever the
 * reason: for env, "false", so that `eval "$(sbx request ...)"` fails
 * too (an empty eval succeeds, and set -e would go on without the
 * variables).  Nothing for dotenv and json: they are data, not code, and
 * an empty .env or JSON stream says "nothing" without being misread.
 */
void	sbxf_request_failed(FILE *, enum sbxf_format fmt);

/*
 * A dotenv value: as is when it is made of [A-Za-z0-9_@%+=:,./-] only
 * (and not empty); else in single quotes, which docker compose, node's
 * dotenv, python-dotenv and systemd take literally; a value holding a
 * ', a \ or a line break in double quotes with \\, \", \n and \r
 * escaped.
 */
void	sbxf_dotenv_quote(FILE *, const char *s, size_t len);
int	sbxf_release(FILE *, const msgpack_object *reply, char *err,
	    size_t cap);
/* "saved snapshot NAME" from a snapshot reply's name. */
int	sbxf_snapshot(FILE *, const msgpack_object *reply, char *err,
	    size_t cap);
/*
 * The sandboxes of a status reply as a table, with a BIND_PID column
 * when any of them carries a bind_pid ("-" for the others).
 */
int	sbxf_status(FILE *, const msgpack_object *reply, char *err,
	    size_t cap);

#endif
