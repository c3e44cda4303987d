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
# TCP 6379 when SBX_LISTEN_TCP=1 or there is no socket. 16 databases,
# all the agent's. The password is never in any argv: printf is a shell
# builtin and sed reads it from a pipe. No persistence: save "", appendonly no.
#
# With a socket directory, a second server, the keeper, holds sbx's
# snapshots (sbx-worker's redis_data.c), one database each: it listens
# on SBX_SOCKET_DIR/keep/redis.sock alone, in a directory of mode 0750
# and a socket of mode 0770, so that only this uid and its group (sbx's
# data sessions run with the socket directory's group) reach it; the
# agent, another uid, cannot, nor can anything the agent's server does
# (it is no client of the keeper). It has no password: the file system
# keeps others out.
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
	    'databases 16' \
	    "dir $DIR"
	printf 'user default reset on ~* &* +@all -@admin +client|list +client|kill -acl -module -debug -shutdown -config ">%s"\n' "$esc"
} > "$CONF.tmp"
esc=
mv -f "$CONF.tmp" "$CONF"

# The keeper: started first, and serving before the agent's server is.
if [ -n "$sock" ]; then
	keep=$sock/keep
	mkdir -p "$keep"
	chmod 0750 "$keep"
	rm -f "$keep/redis.sock"
	printf '%s\n' 'port 0' "unixsocket $keep/redis.sock" \
	    'unixsocketperm 770' 'protected-mode no' 'daemonize no' \
	    'supervised no' 'logfile ""' 'always-show-logo no' 'save ""' \
	    'appendonly no' 'maxclients 16' 'databases 16' "dir $DIR" \
	    'user default reset on nopass ~* &* +@all -@admin -debug -module -shutdown -config' \
	    > "$DIR/keep.conf"
	/usr/bin/redis-server "$DIR/keep.conf" &
	n=0
	until [ -S "$keep/redis.sock" ]; do
		n=$((n + 1))
		[ $n -le 500 ] || die "the keeper did not start"
		sleep 0.01
	done
fi

exec /usr/bin/redis-server "$CONF" "$@"
