#!/usr/bin/env bash
# tenancy.sh - tenant isolation enforced by the kernel (docs/contract.md,
# "Isolation"), with two real throwaway
# uids: one uid cannot open or list another's socket directory, even with
# the password; a container has no address but loopback (unix) or none
# the host can reach (tcp: slirp4netns, 127.0.0.1 only); sandboxes run as
# different host uids, never 0; a process storm and a write storm stay
# inside their sandbox; the log stays bounded; the agent's database role
# is no superuser and its redis user cannot reconfigure the server;
# postgres's data lies over the host's template in a tmpfs of its own
# that the sandbox fills alone, and a release follows no link in it. Root,
# under `flock /tmp/sbx-podman.lock`. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxt-a UB=sbxt-b
throwaway_users $UA $UB
STORM=
cleanup_hook() {
	[ -n "$STORM" ] && kill "$STORM" 2>/dev/null
}
uid_a=$(id -u $UA) uid_b=$(id -u $UB)
# env_of OUTPUT VAR: one variable of `sbx request` output.
env_of() { sed -n "s/^export $2=//p" <<<"$1" | tr -d "'"; }
main_pid() { $RT inspect --format '{{.State.Pid}}' "$1"; }
host_uid() { stat -c %u "/proc/$(main_pid "$1")"; }
ctr() { $RT ps -q --filter "label=sbx.uid=$1" --filter "label=sbx.agent=$2" --filter "label=sbx.service=$3"; }
# addrs CTR: every address in the container's network namespace.
addrs() { nsenter -t "$(main_pid "$1")" -n ip -o addr show | awk '{print $2, $4}'; }
only_loopback() { [ -n "$1" ] && ! grep -qv '^lo ' <<<"$1"; }
as() { local u=$1; shift; runuser -u "$u" -- "$@"; }

CONF_EXTRA='[service redis-tcp]
image = localhost/sbx-redis:7
port = 6379
probe = redis
transport = tcp
user = default
database = 0
env = SBX_PASSWORD={password}
tmpfs = /srv/redis:rw,size=16m,mode=0700,U,nosuid,nodev,noexec
env = SBX_RUN_DIR=/srv/redis
pids = 64
memory = 128m

[service redis-chatty]
image = localhost/sbx-redis:7
port = 6379
probe = redis
user = default
database = 0
env = SBX_PASSWORD={password}
tmpfs = /srv/redis:rw,size=16m,mode=0700,U,nosuid,nodev,noexec
env = SBX_RUN_DIR=/srv/redis
args = --loglevel verbose'
write_conf yes
printf '[project]\nsandbox_services = redis-tcp\n' > "$WORK/projects/tcp.conf"
printf '[project]\nsandbox_services = redis-chatty\n' > "$WORK/projects/chatty.conf"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
start_monitor || exit 1

echo "# sockets: only the owner (and root) can enter"
envA=$(sbx_as $UA request -a a -p demo postgres)
envB=$(sbx_as $UB request -a b -p demo postgres)
sockA=$(env_of "$envA" REDIS_SOCKET) pwA=$(env_of "$envA" REDIS_PASSWORD)
pgdirA=$(env_of "$envA" POSTGRES_HOST) pgpwA=$(env_of "$envA" POSTGRES_PASSWORD)
dirA=$WORK/run/$uid_a
check "A's reply names sockets under run_dir/$uid_a" test "${sockA#"$dirA"/}" != "$sockA" -a "${pgdirA#"$dirA"/}" != "$pgdirA"
check "A reaches its redis over the socket" test "$(redis_as $UA "$sockA" "$pwA" ping)" = PONG
check "A reaches its postgres over the socket (psql -h DIR)" bash -c "cd / && runuser -u $UA -- env PGPASSWORD='$pgpwA' psql -h '$pgdirA' -p 5432 -U sbx -d sbx -tAc 'select 40+2' | grep -qx 42"
out=$(redis_as $UB "$sockA" "$pwA" ping)
check "B cannot open A's redis socket, even with the password (EACCES)" grep -q "Permission denied" <<<"$out"
out=$(as $UB env PGPASSWORD="$pgpwA" PGCONNECT_TIMEOUT=5 psql -h "$pgdirA" -p 5432 -U sbx -d sbx -tAc 'select 1' 2>&1)
check "B cannot open A's postgres socket, even with the password" grep -q "Permission denied" <<<"$out"
out=$(as $UB ls "$dirA" 2>&1)
check "B cannot list A's directory" grep -q "Permission denied" <<<"$out"
check "A's directory is root's, 0750, with an ACL for A alone" test "$(stat -c '%U %a' "$dirA")" = "root 750" -a "$(getfacl -pn "$dirA" 2>/dev/null | grep -c '^user:[0-9]')" -eq 1 -a "$(getfacl -pn "$dirA" | grep '^user:[0-9]')" = "user:$uid_a:r-x"
check "run_dir is root's, 0711 (nobody lists it)" test "$(stat -c '%U %a' "$WORK/run")" = "root 711"
out=$(as $UB ls "$WORK/run" 2>&1)
check "B cannot list run_dir" grep -q "Permission denied" <<<"$out"
check "nothing of B's is inside A's directory" test "$(find "$dirA" -user "$uid_b" | wc -l)" -eq 0

echo "# networks"
ra=$(ctr "$uid_a" a redis) pa=$(ctr "$uid_a" a postgres)
check "unix: A's redis has nothing but loopback ($(addrs "$ra" | tr '\n' ';'))" only_loopback "$(addrs "$ra")"
check "unix: A's postgres has nothing but loopback" only_loopback "$(addrs "$pa")"
check "unix: no port is published" test -z "$($RT port "$ra")$($RT port "$pa")"
envT=$(sbx_as $UA request -a t -p tcp redis-tcp)
tport=$(env_of "$envT" REDIS_TCP_PORT) tpw=$(env_of "$envT" REDIS_TCP_PASSWORD)
rt=$(ctr "$uid_a" t redis-tcp)
check "tcp: the reply gives 127.0.0.1 and a port" test "$(env_of "$envT" REDIS_TCP_HOST)" = 127.0.0.1 -a -n "$tport"
check "tcp: the service answers on 127.0.0.1:$tport" test "$(REDISCLI_AUTH=$tpw redis-cli -h 127.0.0.1 -p "$tport" --user default --no-auth-warning ping)" = PONG
hips=$($RT inspect --format '{{range $p, $b := .NetworkSettings.Ports}}{{range $b}}{{.HostIP}} {{end}}{{end}}' "$rt")
check "tcp: published on 127.0.0.1 only ($hips)" test "$(tr -d ' ' <<<"$hips")" = 127.0.0.1
check "tcp: no bridge: the runtime gives the container no IP address" test -z "$($RT inspect --format '{{.NetworkSettings.IPAddress}}' "$rt")"
# The container's own addresses are never connected to from here: no
# host interface is in their network, so a packet to one would leave the
# machine (and slirp4netns's prefixes may even equal the host's own).
# What must hold is structural: each non-loopback link of the container
# is a tap device, whose only other end is the user-mode slirp4netns
# process (not a veth whose peer is on the host or on a bridge).
links=$(nsenter -t "$(main_pid "$rt")" -n ip -d -o link show | awk -F': ' '$2 != "lo" { print $2 }')
taps=$(nsenter -t "$(main_pid "$rt")" -n ip -d -o link show | grep -v ': lo:' | grep -c 'tun type tap')
check "tcp: the container's only non-loopback link is slirp4netns's tap ($(tr '\n' ' ' <<<"$links"))" test "$(wc -l <<<"$links")" -eq 1 -a "$taps" -eq 1
slirp_of() { pgrep -f "slirp4netns.* $1 tap0" >/dev/null; }
check "tcp: its network's other end is slirp4netns" slirp_of "$(main_pid "$rt")"
check "tcp: no bridge or veth on the host for it" test -z "$(ip -o link show type veth; ip -o link show type bridge | grep -i -e podman -e cni)"
out=$(nsenter -t "$(main_pid "$ra")" -n bash -c "exec 3<>/dev/tcp/127.0.0.1/$tport" 2>&1 && echo reached)
check "tcp: another sandbox's network cannot reach the published port" lacks reached "$out"

echo "# host uids"
ua=$(host_uid "$ra") ub=$(host_uid "$(ctr "$uid_b" b redis)") up=$(host_uid "$pa")
check "two sandboxes' main processes run as different host uids ($ua, $ub)" test -n "$ua" -a -n "$ub" -a "$ua" != "$ub"
check "and two services of one sandbox too ($ua, $up)" test "$ua" != "$up"
check "none runs as host root, nor as any uid below 65536" test "$ua" -ge 65536 -a "$ub" -ge 65536 -a "$up" -ge 65536

echo "# the process list: nothing of A's for B"
# podman's and conmon's arguments name A's uid and agent (container name,
# labels); with /proc mounted hidepid=invisible (contrib/setup-host.sh)
# B sees none of root's processes.
cpid=
for p in $(pgrep -x conmon); do
	grep -q "sbx-$uid_a-" "/proc/$p/cmdline" 2>/dev/null && cpid=$p
done
seen=$(as $UB ps -eo args 2>&1)
check "there is a conmon whose arguments name A's container (${cpid:-none})" test -n "$cpid"
check "B's ps lists no process that names A's uid or agent" lacks "sbx-$uid_a-" "$seen"
check "B's ps lists no process of root's at all" test -z "$(as $UB ps -o user= -e 2>&1 | grep -x root)"
check "B cannot read conmon's arguments by its pid" bash -c "! runuser -u $UB -- cat /proc/${cpid:-0}/cmdline >/dev/null 2>&1"

echo "# a process storm in A's redis"
$RT exec "$ra" sh -c 'i=0; while [ $i -lt 500 ]; do sleep 300 & i=$((i+1)); done; wait' >/dev/null 2>&1 &
STORM=$!
# The kernel's own counters say whether the limit held: "podman exec true"
# is no measure (runc may add its init to the cgroup after it has forked).
pids_dir() {
	local p
	p=$(awk -F: '$2 == "pids" { print $3 }' "/proc/$(main_pid "$1")/cgroup")
	if [ -n "$p" ]; then echo "/sys/fs/cgroup/pids$p"
	else echo "/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' "/proc/$(main_pid "$1")/cgroup")"; fi
}
pdir=$(pids_dir "$ra")
refused() { awk '$1 == "max" { print $2 }' "$pdir/pids.events"; }
storm_met() { test "$(refused)" -gt 0; }
wait_until 30 storm_met
check "A's redis is limited to 64 processes ($(cat "$pdir/pids.max"))" test "$(cat "$pdir/pids.max")" = 64
check "the storm met the limit: the kernel refused its forks ($(refused) times)" test "$(refused)" -gt 0
cur=$(cat "$pdir/pids.current")
check "it filled the limit and holds no more ($cur of 64)" test "$cur" -le 64 -a "$cur" -ge 60
check "B's sandbox still serves" test "$(redis_as $UB "$(env_of "$envB" REDIS_SOCKET)" "$(env_of "$envB" REDIS_PASSWORD)" ping)" = PONG
out=$(sbx_as $UB request -a b2 -p demo postgres 2>&1)
check "B can still be provisioned" grep -q '^export REDIS_SOCKET=' <<<"$out"
kill "$STORM" 2>/dev/null; wait "$STORM" 2>/dev/null; STORM=
sbx_as $UA release -a a >/dev/null
envA=$(sbx_as $UA request -a a -p demo postgres)
ra=$(ctr "$uid_a" a redis)

echo "# a write storm in A's redis"
out=$($RT exec "$ra" sh -c 'dd if=/dev/zero of=/srv/redis/fill bs=1M count=200 2>&1; echo rc=$?')
check "writing 200 MiB to its tmpfs stops at the tmpfs size (ENOSPC)" grep -q "No space left" <<<"$out"
written=$($RT exec "$ra" stat -c %s /srv/redis/fill)
check "having written at most 64 MiB ($written bytes)" test "$written" -le $((64 * 1048576))
out=$($RT exec "$ra" sh -c 'for d in / /tmp /var/tmp /etc /usr; do (: > $d/x) 2>&1; done' 2>&1)
check "the root file system is read-only everywhere else (/ /tmp /var/tmp /etc /usr)" test "$(grep -c 'Read-only file system' <<<"$out")" -eq 5
echo "# a write storm in A's socket directory, as its service user"
out=$($RT exec --user 999 "$ra" sh -c 'dd if=/dev/zero of=/sbx/fill bs=1M count=200 2>&1; echo rc=$?')
check "writing 200 MiB into /sbx stops at its cap (ENOSPC)" grep -q "No space left" <<<"$out"
written=$($RT exec "$ra" stat -c %s /sbx/fill 2>/dev/null || echo 0)
check "having written at most 4 MiB there ($written bytes)" test "$written" -le $((4 * 1048576))
out=$($RT exec --user 999 "$ra" sh -c 'i=0; while [ $i -lt 500 ]; do : > /sbx/f$i || exit 1; i=$((i+1)); done' 2>&1)
check "and at most a few dozen files (nr_inodes)" grep -q "No space left" <<<"$out"
out=$(sbx_as $UB request -a storm -p demo postgres 2>&1)
check "B provisions after A's storm" grep -q "^export REDIS_SOCKET=" <<<"$out"
check "A still reaches its redis over the socket" test "$(redis_as $UA "$sockA" "$(env_of "$envA" REDIS_PASSWORD)" ping)" = PONG
sbx_as $UB release -a storm >/dev/null 2>&1
$RT exec "$ra" rm -f /sbx/fill >/dev/null 2>&1
$RT exec "$ra" sh -c 'rm -f /sbx/f*' >/dev/null 2>&1
# redis-chatty logs two lines per connection: 30000 connections, ~3 MiB.
envC=$(sbx_as $UA request -a c -p chatty redis-chatty)
rc=$(ctr "$uid_a" c redis-chatty)
logp=$($RT inspect --format '{{.HostConfig.LogConfig.Path}}' "$rc")
python3 - "$(env_of "$envC" REDIS_CHATTY_SOCKET)" <<'PY'
import socket, sys
for _ in range(30000):
    s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.close()
PY
# conmon writes (and rotates) the log behind the container: read the
# file itself once it has stopped growing, not `podman logs` in the middle
# of a rotation (which once gave 0 lines). After its last rotation the
# file holds at least the flood's last line (redis-chatty logs two per
# connection: "Accepted connection" and "Client closed connection").
log_settled() { local a; a=$(stat -c %s "$logp"); sleep 0.5; [ "$(stat -c %s "$logp")" = "$a" ]; }
wait_until 20 log_settled
accepted() { grep -Ec 'Accepted connection|Client closed connection' "$logp"; }
check "the flood reached the container's log ($(accepted) of its lines since the last rotation)" test "$(accepted)" -gt 0
check "3 MiB logged: the log file stays within 1 MiB + a write ($(stat -c %s "$logp") bytes)" test "$(stat -c %s "$logp")" -le $((1048576 + 65536))
check "the log is capped by the runtime (max-size 1m)" test "$($RT inspect --format '{{.HostConfig.LogConfig.Size}}' "$rc")" = 1MB

echo "# postgres's data: the host's template under a tmpfs of the sandbox's own"
TPL=$(readlink -f "$(sed -n 's/^data_template *= *//p' "$CONF" | head -1)")
tsum() { tar -C "$TPL" --sort=name -cf - . | sha256sum; }
before=$(tsum)
pa=$(ctr "$uid_a" a postgres) pb=$(ctr "$uid_b" b postgres)
dA=$WORK/run/$uid_a/a/postgres/d dB=$WORK/run/$uid_b/b/postgres/d
check "A's data: a tmpfs of 256m beside its sockets, an overlay on it" test "$(findmnt -n -o FSTYPE "$dA")" = tmpfs -a "$(findmnt -n -o FSTYPE "$dA/m")" = overlay -a -n "$(findmnt -n -o OPTIONS "$dA" | grep size=262144k)"
vols=$($RT inspect --format '{{range .Mounts}}{{.Source}}={{.Destination}} {{end}}' "$pa")
check "A's container has that overlay at /srv/pgdata/pgdata ($vols)" grep -qF "$dA/m=/srv/pgdata/pgdata" <<<"$vols"
check "A's data belongs to the uid its postgres runs as ($(host_uid "$pa")), not A's" test "$(stat -c %u "$dA/m/PG_VERSION")" = "$(host_uid "$pa")" -a "$(host_uid "$pa")" != "$uid_a"
check "B's data belongs to B's postgres's uid, another ($(host_uid "$pb"))" test "$(stat -c %u "$dB/m/PG_VERSION")" = "$(host_uid "$pb")" -a "$(host_uid "$pb")" != "$(host_uid "$pa")"
out=$(as $UA ls "$dA" 2>&1)
check "A cannot enter its own data directory on the host" grep -q "Permission denied" <<<"$out"
out=$(as $UB ls "$dA" 2>&1)
check "nor can B enter A's" grep -q "Permission denied" <<<"$out"
used() { df -k --output=used "$1" | tail -1 | tr -d ' '; }
u0=$(used "$dA")
check "a new sandbox's tmpfs holds only what its start changed (${u0} KiB, the template is $(du -sk "$TPL" | cut -f1) KiB)" test "$u0" -lt 10240
out=$(PGPASSWORD=$(env_of "$envA" POSTGRES_PASSWORD) psql -h "$(env_of "$envA" POSTGRES_HOST)" -p 5432 -U sbx -d sbx -qtAc "create table big as select g, md5(g::text) from generate_series(1, 50000) g; select count(*) from big" 2>&1)
check "A's postgres writes a table of 50000 rows ($out)" test "$out" = 50000
check "what A's postgres writes lands in A's tmpfs ($u0 -> $(used "$dA") KiB)" test "$(used "$dA")" -gt $((u0 + 2048))
out=$($RT exec --user 999 "$pa" sh -c 'dd if=/dev/zero of=/srv/pgdata/pgdata/fill bs=1M count=300 2>&1; echo rc=$?')
check "writing 300 MiB into its data stops at data_size (ENOSPC)" grep -q "No space left" <<<"$out"
check "A's tmpfs is full at 256 MiB, no more ($(used "$dA") KiB)" test "$(used "$dA")" -le 262144
$RT exec --user 999 "$pa" rm -f /srv/pgdata/pgdata/fill
check "B's data took none of it ($(used "$dB") KiB)" test "$(used "$dB")" -lt 10240
check "the template is unchanged by either" test "$(tsum)" = "$before"
echo root > "$WORK/victim"
$RT exec --user 999 "$pa" sh -c "ln -s '$WORK/victim' /srv/pgdata/pgdata/v; ln -s / /srv/pgdata/pgdata/base/root; mkdir -p /srv/pgdata/pgdata/deep/a/b/c"
sbx_as $UA release -a a >/dev/null
check "A's release leaves no mount of its data" test -z "$(findmnt -rn -o TARGET | grep "^$WORK/run/$uid_a/a/")"
check "and followed none of the links A's postgres planted" test "$(cat "$WORK/victim")" = root
check "B's data is still mounted and served" test "$(findmnt -n -o FSTYPE "$dB/m")" = overlay -a "$(PGPASSWORD=$(env_of "$envB" POSTGRES_PASSWORD) psql -h "$(env_of "$envB" POSTGRES_HOST)" -p 5432 -U sbx -d sbx -tAc 'select 6*7' 2>&1)" = 42
envA=$(sbx_as $UA request -a a -p demo postgres)

echo "# what the agent may do"
pgA() { PGPASSWORD=$(env_of "$envA" POSTGRES_PASSWORD) psql -h "$(env_of "$envA" POSTGRES_HOST)" -p 5432 -U sbx -d sbx -tAc "$1" 2>&1; }
check "the agent's role is not a superuser" test "$(pgA 'select rolsuper from pg_roles where rolname = current_user')" = f
out=$(pgA "copy (select 1) to program 'id'")
check "COPY ... TO PROGRAM is refused" grep -q "must be superuser or have privileges of the pg_execute_server_program" <<<"$out"
out=$(pgA "create schema app; create table app.t(x int); insert into app.t values (1); create extension pgcrypto; select count(*) from app.t")
check "it creates schemas, tables and trusted extensions" test "$(tail -1 <<<"$out")" = 1
sockA=$(env_of "$envA" REDIS_SOCKET) pwA=$(env_of "$envA" REDIS_PASSWORD)
for c in "config get maxmemory" "module list" "shutdown" "acl list"; do
	# shellcheck disable=SC2086
	out=$(redis_as $UA "$sockA" "$pwA" $c)
	check "redis: '$c' is refused (NOPERM)" grep -q NOPERM <<<"$out"
done
# DEBUG is off in the server itself (enable-debug-command no), which
# answers before the ACL would.
out=$(redis_as $UA "$sockA" "$pwA" debug sleep 0)
check "redis: 'debug sleep 0' is refused (DEBUG command not allowed)" grep -q "DEBUG command not allowed" <<<"$out"
check "redis: the data commands work" test "$(redis_as $UA "$sockA" "$pwA" set k v)" = OK

finish
