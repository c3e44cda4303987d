#!/bin/sh
# sbx-entrypoint (postgres): runs as postgres (uid 999) with no capabilities.
#
# 1. where sbx laid the template itself at SBX_DATA_DIR/pgdata (sbx.conf(5),
#    data: the host's copy of this image's template, under a tmpfs that
#    holds what changes), set it up in place: its mark, sbx.template,
#    says it has not been yet. Otherwise copy the prebuilt, password-less
#    cluster template onto the tmpfs at SBX_DATA_DIR (default /srv/pgdata,
#    a path the image lacks so that podman honours the tmpfs mode=;
#    mode=0700,U or mode=1777 both work: PGDATA is a 0700 subdirectory),
#    without the mark. Without a tmpfs there, the container's own
#    /var/lib/postgresql/data is used (slower, but it works);
# 2. one single-user session creates the login role SBX_USER (NOT a
#    superuser: it may create databases, and owns its database, so it can
#    create tables, schemas and trusted extensions, but cannot run
#    programs, read server files or change roles; scram-sha-256 password
#    SBX_PASSWORD) and renames the prebuilt database "sbx" to SBX_DATABASE.
#    The SQL travels on a pipe: the password is never in any argv, and
#    log_min_error_statement=panic keeps it out of the log. With a keeper's
#    password, the same session creates the keeper role sbx_keeper, sbx's
#    own (sbx-worker's pg_data.c): it owns the hand-out state and the
#    snapshots, which the agent's role can neither alter, drop nor
#    connect to; it is a member of SBX_USER (to swap the agent's database)
#    and of pg_signal_backend (to end the agent's sessions), and the agent's
#    role is no member of it. sbx gives its SCRAM verifier alone,
#    SBX_KEEPER_VERIFIER (of a password derived from a key only the host's
#    root reads: over tcp alone too): the container never holds the
#    password. Without one, the password is random and, with a socket
#    directory, written to SBX_SOCKET_DIR/keep/pg.secret (directory 0750,
#    file 0640): only this uid and its group (sbx's data sessions) may
#    read it, not the agent;
# 3. exec the server as PID 1 (stop signal SIGINT: fast shutdown), with its
#    socket in SBX_SOCKET_DIR (the directory sbx binds in; no socket
#    without it) and TCP on every address of the container's own network
#    namespace only when SBX_LISTEN_TCP=1 (or when there is no socket).
#    log_min_error_statement=panic: a failing statement is not logged, so
#    a project's seed (sbx-worker applies it as the agent's role) never
#    reaches the container's log; its error alone is said.
#
# Extra container args are passed to the server, e.g. `-c work_mem=64MB`.
set -eu
umask 077

BIN=/usr/lib/postgresql/15/bin
TEMPLATE=/var/lib/postgresql/template
RUNDIR=${SBX_DATA_DIR:-/srv/pgdata}
# shellcheck disable=SC2016 # a dollar quote for the password, literally
TAG='$sbx_pw$'
KEEPER=sbx_keeper
# In the template: a cluster sbx has not set up yet.
MARK=sbx.template

die() { printf 'sbx-entrypoint: %s\n' "$*" >&2; exit 1; }

if [ ! -d "$RUNDIR" ]; then
	printf 'sbx-entrypoint: no tmpfs at %s, using the container file system\n' \
	    "$RUNDIR" >&2
	RUNDIR=/var/lib/postgresql/data
fi
PGDATA=$RUNDIR/pgdata

pw=${SBX_PASSWORD:-}
user=${SBX_USER:-sbx}
db=${SBX_DATABASE:-$user}
keeper_v=${SBX_KEEPER_VERIFIER:-}
unset SBX_PASSWORD SBX_KEEPER_VERIFIER	# the server inherits neither

ident_ok() {
	case $1 in ''|*[!A-Za-z0-9_.-]*) return 1 ;; esac
	[ ${#1} -le 63 ]
}

# The keeper's verifier: sbx's (SBX_KEEPER_VERIFIER), else one of a random
# password where the socket directory can tell sbx (keep/pg.secret), else
# no keeper (kv empty).
keeper_setup() {
	kpw='' kv=$keeper_v
	if [ -n "$kv" ]; then
		case $kv in
		*[!A-Za-z0-9+/=:\$-]*) die "SBX_KEEPER_VERIFIER has a character no verifier has" ;;
		'SCRAM-SHA-256$'[1-9]*:*'$'*:*) ;;
		*) die "SBX_KEEPER_VERIFIER is not a SCRAM-SHA-256 verifier" ;;
		esac
		[ ${#kv} -le 160 ] || die "SBX_KEEPER_VERIFIER is too long"
	elif [ -n "$sock" ]; then
		kpw=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
		[ ${#kpw} -eq 32 ] || die "no random bytes for the keeper"
		kv=$kpw		# postgres makes the verifier
	fi
}

# The roles and the database, in one single-user session on cluster $1.
setup_cluster() {
	[ -n "$pw" ] || die "SBX_PASSWORD is not set"
	nl='
'
	cr=$(printf '\r')
	case $pw in
	*"$nl"*|*"$cr"*|*"$TAG"*) die "SBX_PASSWORD contains a forbidden sequence" ;;
	esac
	ident_ok "$user" || die "SBX_USER must be 1-63 of [A-Za-z0-9_.-]"
	[ "$user" != postgres ] || die "SBX_USER may not be postgres (the superuser)"
	[ "$user" != $KEEPER ] || die "SBX_USER may not be $KEEPER (sbx's own)"
	ident_ok "$db" || die "SBX_DATABASE must be 1-63 of [A-Za-z0-9_.-]"
	keeper_setup
	{
		printf 'CREATE ROLE "%s" LOGIN NOSUPERUSER CREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD %s%s%s;\n\n' \
		    "$user" "$TAG" "$pw" "$TAG"
		case $db in
		sbx)	;;
		postgres|template0|template1)
			printf 'DROP DATABASE sbx;\n\n' ;;
		*)	printf 'ALTER DATABASE sbx RENAME TO "%s";\n\n' "$db" ;;
		esac
		case $db in
		template0|template1) ;;
		*)	printf 'ALTER DATABASE "%s" OWNER TO "%s";\n\n' "$db" "$user" ;;
		esac
		if [ -n "$kv" ]; then
			printf "CREATE ROLE %s LOGIN NOSUPERUSER CREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD '%s';\n\n" \
			    $KEEPER "$kv"
			printf 'GRANT "%s", pg_signal_backend TO %s;\n\n' "$user" $KEEPER
		fi
	} | "$BIN/postgres" --single -j -D "$1" \
	    -c exit_on_error=on -c log_min_error_statement=panic \
	    -c log_min_messages=warning postgres >/dev/null ||
	    die "could not set up role $user and database $db"
	if [ -n "$kpw" ] && [ -n "$sock" ]; then
		mkdir -p "$sock/keep"
		chmod 0750 "$sock/keep"
		printf '%s\n' "$kpw" > "$sock/keep/pg.secret.tmp"
		chmod 0640 "$sock/keep/pg.secret.tmp"
		mv -f "$sock/keep/pg.secret.tmp" "$sock/keep/pg.secret"
	fi
	kpw='' kv=''
}

sock=${SBX_SOCKET_DIR:-}
if [ ! -f "$PGDATA/PG_VERSION" ]; then
	[ -w "$RUNDIR" ] || die "$RUNDIR is not writable by uid $(id -u) (tmpfs options?)"
	rm -rf "$PGDATA.tmp"	# a start that died half-way
	cp -a "$TEMPLATE" "$PGDATA.tmp"
	rm -f "$PGDATA.tmp/$MARK"
	chmod 0700 "$PGDATA.tmp"
	setup_cluster "$PGDATA.tmp"
	mv "$PGDATA.tmp" "$PGDATA"
elif [ -f "$PGDATA/$MARK" ]; then
	# sbx laid the template itself here (sbx.conf(5), data): set up in
	# place, once; a start that died half-way fails again, never serves
	# a cluster half set up.
	[ -f "$PGDATA/$MARK.begun" ] && die "a set-up of $PGDATA died half-way"
	: > "$PGDATA/$MARK.begun"
	setup_cluster "$PGDATA"
	rm -f "$PGDATA/$MARK" "$PGDATA/$MARK.begun"
fi
pw=

tcp=
[ "${SBX_LISTEN_TCP:-}" = 1 ] && tcp='*'
[ -n "$sock" ] || tcp='*'	# started by hand: TCP, as before sockets
exec "$BIN/postgres" -D "$PGDATA" -c unix_socket_directories="$sock" \
    -c unix_socket_permissions=0777 -c listen_addresses="$tcp" \
    -c log_min_error_statement=panic "$@"
