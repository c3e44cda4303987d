/*
 * sbx.h - libsbx, the client side of the sbx agent protocol
 * (docs/contract.md, "Wire protocol"; docs/protocol.md): connect to the Unix socket, send one
 * request map, read one reply map, all by one deadline.  It needs msgpack-c
 * only; the sbx command line is built on it.
 *
 *	cc prog.c $(pkg-config --cflags --libs libsbx)
 *
 * One connection carries exactly one request and one reply.  The whole
 * request is sent while the reply is read (poll() on both directions), so a
 * server that answers early, e.g. with bad_request, and closes is still
 * heard.  The write side is never shut down: the broker answers as soon as
 * the map is complete.  Reading stops at the first complete msgpack object;
 * bytes after it are ignored.
 */
#ifndef SBX_H
#define SBX_H

#include <stddef.h>
#include <stdint.h>

#include <msgpack.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The library's release; the ABI is the soname, libsbx.so.0. */
#define SBXC_VERSION		"0.1.0"

#define SBXC_DEFAULT_SOCKET	"/run/sbx.sock"
#define SBXC_DEFAULT_TIMEOUT_MS	120000		/* provisioning is slow */
#define SBXC_REQUEST_MAX	(64 * 1024)	/* the contract's limit */
#define SBXC_REPLY_MAX		(1024 * 1024)	/* ours */

enum sbxc_status {
	SBXC_OK = 0,
	SBXC_ECONNECT,	/* no socket, refused, permission denied, path too long */
	SBXC_ETIMEOUT,	/* the deadline passed before a complete reply */
	SBXC_EIO,	/* send/recv failed, connection reset */
	SBXC_EPROTO,	/* closed early, truncated, not msgpack, not a map, >1 MiB */
	SBXC_EREQUEST,	/* the request itself is unusable (too large, no op) */
	SBXC_ENOMEM,
};

struct sbxc_error {
	enum sbxc_status status;
	int		 sys_errno;	/* errno behind ECONNECT/EIO, else 0 */
	char		 msg[256];	/* one line, no trailing newline */
};

/*
 * The request of any op of the contract.  NULL (or services == NULL) means
 * "key not sent"; services with nservices == 0 sends an empty array.
 */
struct sbxc_req {
	const char		*op;
	const char		*agent;
	const char		*project;
	const char *const	*services;
	size_t			 nservices;
};

/* Called while waiting, about every tick_ms, with the time since the start. */
typedef void sbxc_tick_fn(void *arg, int64_t elapsed_ms);

struct sbxc_opts {
	int64_t		 timeout_ms;	/* <= 0: SBXC_DEFAULT_TIMEOUT_MS */
	sbxc_tick_fn	*tick;		/* NULL: none */
	void		*tick_arg;
	int64_t		 tick_ms;	/* <= 0: 250 */
};

/* CLOCK_MONOTONIC in milliseconds. */
int64_t		sbxc_now_ms(void);

/* Appends the request map to sb.  -1 (nothing useful in sb) without op. */
int		sbxc_pack_request(msgpack_sbuffer *sb, const struct sbxc_req *);

/*
 * Connects, sends r, reads the reply.  On SBXC_OK, reply holds a map and
 * the caller frees it with msgpack_unpacked_destroy(); on any other status
 * reply is left initialised and empty (destroying it is harmless) and *err
 * says what happened.  opts may be NULL.  err may be NULL.
 */
enum sbxc_status sbxc_call(const char *socket_path, const struct sbxc_req *r,
		    const struct sbxc_opts *opts, msgpack_unpacked *reply,
		    struct sbxc_error *err);

/*
 * The same, on a socket the caller connected (or a socketpair end), with a
 * request already packed (len bytes, not checked against SBXC_REQUEST_MAX).
 * fd's flags are not changed (I/O uses MSG_DONTWAIT) and fd is not closed.
 */
enum sbxc_status sbxc_exchange(int fd, const void *req, size_t len,
		    const struct sbxc_opts *opts, msgpack_unpacked *reply,
		    struct sbxc_error *err);

/* A connected SOCK_STREAM | SOCK_CLOEXEC socket, or -1 with *err set. */
int		sbxc_connect(const char *socket_path, int64_t deadline_ms,
		    struct sbxc_error *err);

/* Sizes of the strings of struct sbxc_service, their NUL included. */
#define SBXC_SOCKET_MAX		108	/* sun_path */
#define SBXC_FIELD_MAX		256

/*
 * One service of a request_sandbox reply.  Which of socket, host and port
 * a service has depends on its transport (docs/protocol.md, "Reaching a
 * sandbox"): unix gives socket, the socket file's absolute path, and for
 * postgres also host, the socket's directory, and port, the number in its
 * .s.PGSQL.<port> name (libpq's convention); tcp gives host 127.0.0.1 and
 * port; both gives socket and tcp's host and port.  What the reply does
 * not give is "" (or port 0).  Every string is NUL-terminated.
 */
struct sbxc_service {
	char		name[SBXC_FIELD_MAX];
	char		socket[SBXC_SOCKET_MAX];
	char		host[SBXC_FIELD_MAX];
	unsigned	port;			/* 1..65535, or 0: none */
	char		user[SBXC_FIELD_MAX];
	char		password[SBXC_FIELD_MAX];
	char		database[SBXC_FIELD_MAX];
};

/*
 * Parses one entry of a request_sandbox reply's services map: key and
 * val are .key and .val of one element of its via.map.ptr.  SBXC_OK, or
 * SBXC_EPROTO with *err naming the service and saying what is wrong: not
 * a map; a user, password or database that is missing, not a string,
 * holds a NUL or is too long; a socket that is not an absolute path; a
 * host without a port or a port (an integer or a decimal string,
 * 1..65535) without a host; neither socket nor host.  A key whose value
 * is nil counts as absent.  out is all zero on failure.  err may be NULL.
 */
enum sbxc_status sbxc_service_parse(const msgpack_object *key,
		    const msgpack_object *val, struct sbxc_service *out,
		    struct sbxc_error *err);

/* Reply helpers: the value of a string key of a map, NULL if absent/not map. */
const msgpack_object *sbxc_map_get(const msgpack_object *map, const char *key);
/* 1 if o is a string equal to s. */
int		sbxc_str_eq(const msgpack_object *o, const char *s);

const char	*sbxc_status_name(enum sbxc_status);

/*
 * ---- Since API 2: reset, snapshot, bind_pid, the server's codes ----
 *
 * Additive only: the structs above keep their sizes (programs built
 * against API 1 allocate them), so what is new comes in new structs and
 * functions, exported under the LIBSBX_0.2 version node.
 */
#define SBXC_API		2	/* 1: 0.1.0's; 2: what follows */

/*
 * The codes of a refusal, {ok: false, error: CODE} (docs/contract.md), in the
 * contract's order: new ones are appended, no value ever changes.
 * SBXC_CODE_UNKNOWN: no code, or one this library does not know (a newer
 * server's); struct sbxc_refusal's error keeps what was sent.
 */
enum sbxc_code {
	SBXC_CODE_UNKNOWN = -1,
	SBXC_CODE_NONE = 0,		/* not a refusal */
	SBXC_CODE_BAD_REQUEST,
	SBXC_CODE_DISABLED,
	SBXC_CODE_UNKNOWN_PROJECT,
	SBXC_CODE_NOT_OPTED_IN,
	SBXC_CODE_FORBIDDEN,
	SBXC_CODE_CONFLICT,
	SBXC_CODE_RUNTIME_FAILED,
	SBXC_CODE_TIMEOUT,
	SBXC_CODE_BUSY,
	SBXC_CODE_INTERNAL,
	SBXC_CODE_NO_SANDBOX,		/* reset, snapshot: no sandbox */
	SBXC_CODE_UNKNOWN_SNAPSHOT,	/* reset --to: nothing changed */
	SBXC_CODE_SEED_FAILED,		/* the message names file and line */
};

/* "bad_request", ...; "ok" for NONE, "unknown" for anything else. */
const char	*sbxc_code_name(enum sbxc_code);
/* The code named by the len bytes at s; SBXC_CODE_UNKNOWN if none. */
enum sbxc_code	 sbxc_code_parse(const char *s, size_t len);

/* What a refusal says.  Strings are NUL-terminated, cut to fit. */
struct sbxc_refusal {
	enum sbxc_code	 code;
	char		 error[64];	/* the code as sent; "" if none */
	char		 message[1024];	/* as sent (a NUL as '?'); "" if none */
	int64_t		 retry_after_ms; /* busy's hint, >= 0; -1: none */
};

/*
 * Reads the ok key of a reply map.  1: ok is true (out says
 * SBXC_CODE_NONE).  0: ok is false, out says what the refusal carries.
 * -1: no ok boolean (out as for 1).  retry_after_ms is taken from any
 * refusal that carries it as a non-negative integer.
 */
int		 sbxc_refusal_parse(const msgpack_object *reply,
		    struct sbxc_refusal *out);

/*
 * The keys of the ops added in API 2, beside a struct sbxc_req: NULL
 * (or 0) means "key not sent".
 */
struct sbxc_req_ext {
	const char	*to;		/* reset: the snapshot to go back to */
	const char	*name;		/* snapshot: the name to save under */
	int64_t		 bind_pid;	/* request_sandbox: > 0 is sent */
};

/*
 * sbxc_pack_request with x's keys too (x may be NULL).  -1 (nothing
 * useful in sb) without op, or with a negative bind_pid.
 */
int		 sbxc_pack_request_ext(msgpack_sbuffer *sb,
		    const struct sbxc_req *r, const struct sbxc_req_ext *x);

/* sbxc_call with x's keys too (x may be NULL): how to send bind_pid. */
enum sbxc_status sbxc_call_ext(const char *socket_path,
		    const struct sbxc_req *r, const struct sbxc_req_ext *x,
		    const struct sbxc_opts *opts, msgpack_unpacked *reply,
		    struct sbxc_error *err);

/*
 * {op: reset, agent, to?}: to NULL sends no "to" (back to the state at
 * hand-out).  The reply, on success, is request_sandbox's: its services
 * go through sbxc_service_parse.  SBXC_EREQUEST if agent is NULL.
 */
enum sbxc_status sbxc_reset(const char *socket_path, const char *agent,
		    const char *to, const struct sbxc_opts *opts,
		    msgpack_unpacked *reply, struct sbxc_error *err);

/*
 * {op: snapshot, agent, name}; the reply on success is {ok: true, name}.
 * SBXC_EREQUEST if agent or name is NULL.
 */
enum sbxc_status sbxc_snapshot(const char *socket_path, const char *agent,
		    const char *name, const struct sbxc_opts *opts,
		    msgpack_unpacked *reply, struct sbxc_error *err);

#ifdef __cplusplus
}
#endif

#endif /* SBX_H */
