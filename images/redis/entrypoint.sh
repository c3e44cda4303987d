#!/bin/sh
# sbx-entrypoint (redis): runs as redis (uid 999) with no capabilities.
# Writes the config, with the "default" user's ACL (password SBX_PASSWORD;
# every command but the @admin category and ACL, MODULE, DEBUG,
# SHUTDOWN, CONFIG, so the agent cannot reconfigure, load code into or
# stop the server; CLIENT LIST and KILL are let back in, for sbx's reset to end
# the agent's connections), to the tmpfs at SBX_RUN_DIR (default /srv/redis, a path the
# image lacks so that podman honours the tmpfs mode=; mode=0700,U or
# mode=1777 both work; without a tmpfs there, /var/lib/redis in the
# container is used) and execs redis-server as PID 1 on it. It listens on
# SBX_SOCKET_DIR/redis.sock when sbx binds a socket directory in, and on
# TCP 6379 when SBX_LISTEN_TCP=1 or there is no socket. 32 databases:
# the agent's are 0-15, sbx keeps snapshots in 16-31 (sbx-worker's
# redis_data.c). The password is never in any argv: printf is a shell builtin
# and sed reads it from a pipe. No persistence: save "", appendonly no.
#
# Extra container args are passed to redis-server, e.g. `--maxmemory 100mb`.
set -eu
umask 077

DIR=${SBX_RUN_DIR:-/srv/redis}

die() { printf 'sbx-entrypoint: %s\n' "$*" >&2; exit 1; }

if [ ! -d "$DIR" ]; then
	printf 'sbx-entrypoint: no tmpfs at %s, using the container file system\n' \
	    "$DIR" >&2
	DIR=/var/lib/redis
fi
CONF=$DIR/redis.conf

pw=${SBX_PASSWORD:-}
unset SBX_PASSWORD	# the server does not inherit it
[ -n "$pw" ] || die "SBX_PASSWORD is not set"
nl='
'
cr=$(printf '\r')
case $pw in *"$nl"*|*"$cr"*) die "SBX_PASSWORD contains a line break" ;; esac
[ -w "$DIR" ] || die "$DIR is not writable by uid $(id -u) (tmpfs options?)"

# Inside redis.conf double quotes: escape \ and ".
esc=$(printf '%s' "$pw" | sed 's/[\\"]/\\&/g')
pw=
sock=${SBX_SOCKET_DIR:-}
tcp=${SBX_LISTEN_TCP:-}
[ -n "$sock" ] || tcp=1		# started by hand: TCP, as before sockets
{
	if [ "$tcp" = 1 ]; then
		printf '%s\n' 'bind 0.0.0.0' 'port 6379'
	else
		printf '%s\n' 'port 0'
	fi
	[ -z "$sock" ] || printf '%s\n' "unixsocket $sock/redis.sock" \
	    'unixsocketperm 777'
	printf '%s\n' \
	    'protected-mode no' \
	    'daemonize no' \
	    'supervised no' \
	    'logfile ""' \
	    'always-show-logo no' \
	    'save ""' \
	    'appendonly no' \
	    'maxclients 1000' \
	    'databases 32' \
	    "dir $DIR"
	printf 'user default reset on ~* &* +@all -@admin +client|list +client|kill -acl -module -debug -shutdown -config ">%s"\n' "$esc"
} > "$CONF.tmp"
esc=
mv -f "$CONF.tmp" "$CONF"

exec /usr/bin/redis-server "$CONF" "$@"
