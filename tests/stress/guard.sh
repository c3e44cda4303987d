#!/usr/bin/env bash
# guard.sh - a tcp port is its owner's from the moment it is published
# until its container is gone (docs/contract.md, "Reaching a sandbox"),
# with warm containers and across a restart, proved with two real uids:
# the runtime is never asked to publish a port that no rule guards; a warm
# container's port refuses every uid but root; a claim hands it to the
# owner alone before its reply; a monitor killed and started again never
# leaves a port open, while another uid tries it all along; a release
# takes the rule after the container. Root, under
# `flock /tmp/sbx-podman.lock`. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxg-a UB=sbxg-b
throwaway_users $UA $UB
uid_a=$(id -u $UA)
GATE=$WORK/gate
PROBE=
cleanup_hook() { [ -n "$PROBE" ] && kill "$PROBE" 2>/dev/null; }

# A runtime that is podman, but first writes down each port it is asked
# to publish and whether a rule of SBX_GUARD named it at that moment.
mkdir -p "$GATE"
cat > "$GATE/podman" <<EOF
#!/bin/sh
for a; do
	case \$a in --publish=127.0.0.1:*:*)
		p=\${a#--publish=127.0.0.1:}; p=\${p%%:*}
		if iptables -w -S SBX_GUARD 2>/dev/null | grep -q -- "--dport \$p "; then
			echo "\$p guarded" >> '$GATE/published'
		else
			echo "\$p open" >> '$GATE/published'
		fi ;;
	esac
done
exec podman "\$@"
EOF
chmod 0755 "$GATE/podman"
: > "$GATE/published"

TRANSPORT=both WARM=1 write_conf yes
sed -i "s|^runtime *=.*|runtime = $GATE/podman|" "$CONF"
$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
start_monitor || exit 1

# pool_port SVC: the loopback port of the warm container of SVC.
pool_port() {
	$RT ps --filter label=sbx.pool --filter "name=^sbx-pool-$1-" \
	    --format '{{.Ports}}' | sed -n 's/^127\.0\.0\.1:\([0-9]*\)->.*/\1/p' | head -1
}
pool_ready() { [ -n "$(pool_port redis)" ] && [ -n "$(pool_port postgres)" ] &&
	[ "$(grep -c 'warm .*: ready' "$LOG")" -ge 2 ]; }
# reaches USER PORT: a tcp connection to 127.0.0.1:PORT as USER gets
# redis' or postgres' own answer (reached), or is reset (refused).
reaches() {
	runuser -u "$1" -- python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"PING\r\n")
try:
    d = s.recv(64)
except ConnectionResetError:
    d = b""
sys.exit(0 if d else 1)' "$2" 2>/dev/null
}
refused() { ! reaches "$@"; }
root_reaches() {
	python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"PING\r\n")
sys.exit(0 if s.recv(64) else 1)' "$1" 2>/dev/null
}
rules_of() { iptables -w -S SBX_GUARD | grep -c -- "--dport $1 "; }

echo "# warm containers: published only once guarded, open to nobody"
check "a warm postgres and a warm redis, each on a loopback port" wait_for 90 pool_ready
rport=$(pool_port redis) pport=$(pool_port postgres)
check "every port the runtime was asked to publish was guarded first" \
    bash -c "test -s '$GATE/published' && ! grep -q ' open\$' '$GATE/published'"
check "root reaches the warm redis's port $rport" root_reaches "$rport"
check "A cannot reach the warm redis's port (reset)" refused $UA "$rport"
check "B cannot reach the warm postgres's port (reset)" refused $UB "$pport"

echo "# a claim gives the ports to the owner before its reply"
envA=$(sbx_as $UA request -a a -p demo)
check "A's request is a claim" grep -q "audit event=provision uid=$uid_a agent=a .*warm=yes" "$LOG"
url=$(sed -n "s/^export REDIS_URL=//p" <<<"$envA" | tr -d "'")
aport=$(sed -n "s/^export REDIS_PORT=//p" <<<"$envA" | tr -d "'")
check "A's redis is the warm one, on its port ($aport)" test "$aport" = "$rport"
check "A's REDIS_URL is redis://default:…@127.0.0.1:$rport/0" bash -c "[[ '$url' == redis://default:*@127.0.0.1:$rport/0 ]]"
check "A reaches its redis with the printed URL, at once" test "$(runuser -u $UA -- redis-cli -u "$url" --no-auth-warning ping 2>&1)" = PONG
dburl=$(sed -n "s/^export DATABASE_URL=//p" <<<"$envA" | tr -d "'")
check "A reaches its postgres with the printed DATABASE_URL" test "$(cd / && runuser -u $UA -- psql "$dburl" -tAc 'select 40+2' 2>&1)" = 42
out=$(runuser -u $UB -- redis-cli -u "$url" --no-auth-warning ping 2>&1)
check "B cannot reach A's redis, even with A's URL ($out)" lacks PONG "$out"
check "one rule for A's redis port, the owner's" test "$(rules_of "$rport")" -eq 1 -a \
    "$(iptables -w -S SBX_GUARD | grep -- "--dport $rport " | grep -c "sbx:$uid_a:a:redis")" -eq 1

echo "# a restart never leaves a port open"
# B tries A's port all along: any answer of redis's is a breach.
runuser -u $UB -- python3 -c '
import socket, sys, time
end = time.time() + float(sys.argv[2])
while time.time() < end:
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=1)
        s.sendall(b"PING\r\n")
        if s.recv(64):
            open(sys.argv[3], "a").write("reached\n")
        s.close()
    except OSError:
        pass
    time.sleep(0.005)' "$rport" 20 "$GATE/breach" &
PROBE=$!
kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID=
start_monitor || exit 1
check "the restart adopts A's sandbox" wait_for 30 grep -q "audit event=adopt uid=$uid_a agent=a " "$LOG"
wait "$PROBE"; PROBE=
check "B never reached A's port while the monitor restarted" test ! -e "$GATE/breach"
check "A still reaches its redis after the restart" test "$(runuser -u $UA -- redis-cli -u "$url" --no-auth-warning ping 2>&1)" = PONG
check "A's port keeps exactly its owner's rule" test "$(rules_of "$rport")" -eq 1

echo "# a release takes the rule after the container"
sbx_as $UA release -a a >/dev/null
unpublished() { ! $RT ps --format '{{.Ports}}' | grep -q "127.0.0.1:$1->"; }
check "the release removed A's redis (its port is published no more)" unpublished "$rport"
check "no rule but a new warm container's is left for A's port" \
    test "$(iptables -w -S SBX_GUARD | grep -- "--dport $rport " | grep -vc 'sbx:pool:')" -eq 0
check "no rule of A's key is left" test "$(iptables -w -S SBX_GUARD | grep -c "sbx:$uid_a:")" -eq 0

finish
