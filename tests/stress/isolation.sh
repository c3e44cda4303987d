#!/usr/bin/env bash
# isolation.sh - agents under different uids cannot reach each other's
# sandboxes by any slug, project or request shape; no password shows in
# status or the log; socket and state_dir modes are as documented;
# containers listen on loopback only. Root, under
# `flock /tmp/sbx-podman.lock`. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxt-a UB=sbxt-b
DUMMY=
throwaway_users $UA $UB
cleanup_hook() {
	$RT rm -f -t 0 sbxt-control >/dev/null 2>&1
	pkill -u "$UA" -f flood.py 2>/dev/null
	[ -z "$DUMMY" ] || ip link del "$DUMMY" 2>/dev/null
}
uid_a=$(id -u $UA) uid_b=$(id -u $UB)
PW=$WORK/passwords	# every password issued, one a line
SEEN_B=$WORK/seen-b	# everything B was told
: > "$PW"; : > "$SEEN_B"
passwords_of() { sed -n 's/^\(export \)\{0,1\}[A-Z]*_PASSWORD=//p' <<<"$1" | tr -d "'\""; }
as_b() { sbx_as $UB "$@" 2>&1 | tee -a "$SEEN_B"; }
# pw VAR ENV: a service's password from `sbx request` output.
pw() { sed -n "s/^\(export \)\{0,1\}$1_PASSWORD=//p" <<<"$2" | tr -d "'\""; }
lacks_re() { ! grep -Eq -- "$1" <<<"$2"; }
has_any_of() { [ -s "$1" ] && grep -qF -f "$1" "$2"; }

# The runtime is the gate (lib.sh): podman, except where a test holds a
# provision mid-way to look into its worker.
gate_runtime
write_conf yes
set_conf runtime "$GATE/podman"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
start_monitor || exit 1

echo "# two uids, the same agent slug"
envA=$(sbx_as $UA request -a shared -p demo postgres)
envA2=$(sbx_as $UA request -a secret-a -p demo postgres)
passwords_of "$envA" >> "$PW"; passwords_of "$envA2" >> "$PW"
cp "$PW" "$WORK/pw-a"
idsA=$(containers shared "$uid_a") idsA2=$(containers secret-a "$uid_a")
envB=$(as_b request -a shared -p demo postgres)
passwords_of "$envB" >> "$PW"
check "A got a sandbox" test "$(wc -l < "$WORK/pw-a")" -eq 4
check "B with A's slug gets other postgres credentials" test -n "$(pw POSTGRES "$envB")" -a "$(pw POSTGRES "$envB")" != "$(pw POSTGRES "$envA")"
check "and other redis credentials" test -n "$(pw REDIS "$envB")" -a "$(pw REDIS "$envB")" != "$(pw REDIS "$envA")"
check "and other containers, labelled with B's uid" test "$(containers shared "$uid_b" | wc -w)" -eq 2 -a "$(containers shared "$uid_b")" != "$idsA"
eval "$envB"
check "B's sandbox works" uses_sandbox
eval "$envA"
check "A's sandbox still works" uses_sandbox

echo "# B tries every way to A's sandboxes"
sleep 2	# so a renewal of A's entries would show in idle_s
envB2=$(as_b request -a secret-a -p demo postgres)
passwords_of "$envB2" >> "$PW"
check "B asking for A's other slug gets a fresh sandbox of its own" test "$(containers secret-a "$uid_b" | wc -w)" -eq 2
as_b request -a secret-a -p cache-only redis >/dev/null
as_b request -a shared -p demo postgres redis >/dev/null
as_b request -a SHARED -p demo postgres >/dev/null
as_b request -a shared -p nosuch postgres >/dev/null
# A raw request with keys a client never sends (uid, peer): ignored.
runuser -u $UB -- python3 - "$SOCK" "$uid_a" <<'PY' >> "$SEEN_B" 2>&1
import socket, sys
def s(x): b = x.encode(); return bytes([0xa0 | len(b)]) + b
uid = int(sys.argv[2])
req = (bytes([0x86]) + s('op') + s('request_sandbox') + s('agent') + s('secret-a') +
       s('project') + s('demo') + s('services') + bytes([0x91]) + s('postgres') +
       s('uid') + bytes([0xcd]) + uid.to_bytes(2, 'big') + s('peer') + bytes([0xcd]) + uid.to_bytes(2, 'big'))
c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.sendall(req)
data = b''
while True:
    d = c.recv(65536)
    if not d: break
    data += d
sys.stdout.write(data.decode('latin1') + '\n')
PY
check "nothing B was told contains any of A's passwords" bash -c "! grep -qF -f '$WORK/pw-a' '$SEEN_B'"
check "A's containers are untouched" test "$(containers shared "$uid_a")" = "$idsA" -a "$(containers secret-a "$uid_a")" = "$idsA2"
idle_a() { sbx status --json | tr '{' '\n' | grep "\"uid\": *$uid_a\b.*\"agent\": *\"$1\"" | sed -n 's/.*"idle_s": *\([0-9]*\).*/\1/p'; }
check "B's requests did not renew A's entry (idle_s $(idle_a secret-a))" test "$(idle_a secret-a)" -ge 2
out=$(as_b release -a secret-a)
check "B's release of secret-a releases B's own" grep -qx released <<<"$out"
check "and leaves A's secret-a up" test "$(containers secret-a "$uid_a")" = "$idsA2"
out=$(as_b release -a secret-a)
check "B releasing again has nothing to release" grep -q nothing <<<"$out"
check "A's secret-a still up" test "$(containers secret-a "$uid_a")" = "$idsA2"
out=$(sbx_as $UA request -a secret-a -p demo postgres)
check "A's next request is a hit with A's credentials" test "$out" = "$envA2"

echo "# what non-root callers learn"
# only_uid UID JSON: status lists sandboxes, all of uid UID, no password.
only_uid() {
	python3 -c 'import json, sys
d = json.loads(sys.argv[2])
u = {s["uid"] for s in d["sandboxes"]}
sys.exit(not (d["ok"] and u == {int(sys.argv[1])} and
    all("password" not in s for s in d["sandboxes"])))' "$1" "$2"
}
for u in $UA $UB; do
	out=$(sbx_as $u status --json 2>&1)
	check "status as $u lists its own sandboxes only" only_uid "$(id -u $u)" "$out"
done
out=$(sbx status --json 2>&1)
check "root's lists both uids'" python3 -c 'import json, sys
d = json.loads(sys.argv[1]); u = {s["uid"] for s in d["sandboxes"]}
sys.exit(not {int(sys.argv[2]), int(sys.argv[3])} <= u)' "$out" "$uid_a" "$uid_b"
out=$(as_b available demo)
check "available as B is the service list only" test "$(tr '\n' ' ' <<<"$out")" = "postgres redis "

echo "# passwords never shown"
{ sbx status --json; sbx status; } > "$WORK/status.out"
check "status has every live sandbox, no other (A's two, B's one)" test "$(sbx status --json | grep -o '"agent"' | wc -l)" -eq 3
check "$(wc -l < "$PW") passwords issued, none in root's status" bash -c "! grep -qF -f '$PW' '$WORK/status.out'"
check "none in the monitor log" bash -c "! grep -qF -f '$PW' '$LOG'"
check "none in any process's argv" bash -c "! for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' 2>/dev/null < \$f; echo; done | grep -qF -f '$PW'"

echo "# a worker holds its own job's secrets, no other tenant's"
# memdump PID...: every readable mapping of each process, to stdout.
memdump() {
	/usr/bin/python3 - "$@" <<-'PY'
	import re, sys
	out = sys.stdout.buffer
	for pid in sys.argv[1:]:
	    try:
	        m, mem = open(f"/proc/{pid}/maps"), open(f"/proc/{pid}/mem", "rb", 0)
	    except FileNotFoundError:
	        continue    # gone since ps listed it: it holds nothing now
	    with m, mem:
	        for line in m:
	            a, b, perm = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line).groups()
	            if perm[0] != "r" or "[vvar]" in line or "[vsyscall]" in line:
	                continue
	            try:
	                mem.seek(int(a, 16)); out.write(mem.read(int(b, 16) - int(a, 16)))
	            except OSError:
	                pass
	PY
}
# The exec'd workers and their forks: argv "sbx-worker JOB".
workers() { ps -eo pid=,args= | awk '$2 == "sbx-worker" {print $1}'; }
gate_hold mem-b before
as_b request -a mem-b -p demo postgres > "$WORK/env-mem-b" & req=$!
wait_for 30 gate_held mem-b 2
nw=$(workers | wc -w)
check "B's provision is held, its two runs started by workers ($nw sbx-worker processes)" test "$(gate_held mem-b 2 && echo held)" = held -a "$nw" -gt 0
memdump $(workers) > "$WORK/mem-workers"
memdump "$MON_PID" > "$WORK/mem-monitor"
gate_release mem-b; wait "$req"
pw_b=$(pw POSTGRES "$(cat "$WORK/env-mem-b")")
check "control: the monitor's memory holds A's passwords" grep -qaF -f "$WORK/pw-a" "$WORK/mem-monitor"
check "control: B's workers' memory holds B's new password" test -n "$pw_b" -a "$(grep -caF -- "$pw_b" "$WORK/mem-workers")" -gt 0
check "B's workers hold none of A's passwords" bash -c "! grep -qaF -f '$WORK/pw-a' '$WORK/mem-workers'"
rm -f "$WORK/mem-workers" "$WORK/mem-monitor"
as_b release -a mem-b >/dev/null

echo "# modes, as sbx.conf(5) and the monitor document them"
check "the socket is a socket, root-owned, mode 0666 (socket_mode)" test "$(stat -c '%F %U %a' "$SOCK")" = "socket root 666"
check "state_dir is root-owned, mode 0711" test "$(stat -c '%U %a' "$WORK/state")" = "root 711"
check "state_dir/empty (the broker's chroot) is root-owned 0755 and empty" test "$(stat -c '%U %a' "$WORK/state/empty")" = "root 755" -a -z "$(ls -A "$WORK/state/empty")"

echo "# no port at all with the default transport (unix)"
ports=$($RT ps -q --filter label=sbx.uid | xargs -r -n1 $RT port | wc -l)
check "no container publishes a port ($($RT ps -q --filter label=sbx.uid | wc -l) containers)" test "$ports" -eq 0 -a "$($RT ps -q --filter label=sbx.uid | wc -l)" -ge 4

echo "# loopback only (transport tcp)"
# A restart reaps every labelled container: the tcp sandboxes are new.
stop_monitor
set_transport postgres tcp; set_transport redis tcp
start_monitor || exit 1
sbx_as $UA request -a tcp-a -p demo postgres >/dev/null 2>&1
sbx_as $UB request -a tcp-b -p demo postgres >/dev/null 2>&1
ext=$(ip -4 -o addr show scope global | awk '{sub("/.*", "", $4); print $4; exit}')
if [ -z "$ext" ]; then
	# Loopback only: an address the test owns (TEST-NET-1, never
	# routed) on a veth pair of its own, removed at the end. (A dummy
	# link needs a module some kernels lack.)
	ip link add sbxt0 type veth peer name sbxt1 && DUMMY=sbxt0 &&
	    ip addr add 192.0.2.123/32 dev sbxt0 && ip link set sbxt1 up &&
	    ip link set sbxt0 up && ext=192.0.2.123
fi
check "the host has an address besides loopback to try (${ext:-none})" test -n "$ext"
ports= wide=0
for c in $($RT ps -q --filter label=sbx.uid); do
	hips=$($RT inspect --format '{{range $p, $b := .NetworkSettings.Ports}}{{range $b}}{{.HostIP}}:{{.HostPort}} {{end}}{{end}}' "$c")
	for hp in $hips; do
		[ "${hp%%:*}" = 127.0.0.1 ] || { wide=$((wide + 1)); note "container $c publishes on ${hp%%:*}"; }
		ports="$ports ${hp##*:}"
	done
done
check "every published port is bound to 127.0.0.1 ($(wc -w <<<"$ports") ports)" test "$wide" -eq 0 -a -n "$ports"
reach() { timeout 2 bash -c "exec 3<>/dev/tcp/$1/$2" 2>/dev/null; }
bad=0 good=0
for p in $ports; do
	reach 127.0.0.1 "$p" && good=$((good + 1))
	reach "$ext" "$p" && bad=$((bad + 1))
done
check "every port answers on 127.0.0.1 ($good)" test "$good" -eq "$(wc -w <<<"$ports")"
check "none answers on $ext" test -n "$ext" -a "$bad" -eq 0
# The control: the same image published on every address does answer
# on $ext, so the ports above are bound to loopback, not unreachable
# there for some other reason.
SBX_PASSWORD=control $RT run -d --rm --name sbxt-control --env SBX_PASSWORD \
    --publish 0.0.0.0::6379 localhost/sbx-redis:7 >/dev/null 2>&1
cport=$($RT port sbxt-control 6379/tcp 2>/dev/null | sed -n '1s/.*://p')
wait_for 20 reach 127.0.0.1 "${cport:-0}"
check "control: a port published on every address answers on $ext (${cport:-none})" reach "$ext" "${cport:-0}"
$RT rm -f -t 0 sbxt-control >/dev/null 2>&1

echo "# a tcp service that takes no logins is not live"
# A's own connections fill its postgres (max_connections): the port
# still accepts, no login gets through. A hit has a worker check its
# logins; the next hit provisions the sandbox anew.
# flood.py PORT N [SECONDS]: N connections to the loopback PORT, how
# many were accepted, and they are held SECONDS more (here and below).
cat > "$WORK/flood.py" <<'PY'
import socket, sys, time
port, n, held = int(sys.argv[1]), int(sys.argv[2]), []
for _ in range(n):
    s = socket.socket()
    s.settimeout(2)
    try:
        s.connect(("127.0.0.1", port)); held.append(s)
    except OSError:
        s.close()
print(len(held), flush=True)
time.sleep(float(sys.argv[3]) if len(sys.argv) > 3 else 0)
PY
chmod a+r "$WORK/flood.py"
envT=$(sbx_as $UA request -a tcp-a -p demo postgres 2>&1)
pgv() { sed -n "s/^\(export \)\{0,1\}POSTGRES_$1=//p" <<<"$2" | tr -d "'\""; }
pgport=$(pgv PORT "$envT") pgpw=$(pgv PASSWORD "$envT")
# 260: past what the postmaster takes (2 x its connection slots); they
# come through the runtime's port forwarding, some 10 a second.
runuser -u $UA -- python3 "$WORK/flood.py" "$pgport" 260 120 > "$WORK/hold.out" 2>&1 &
hold=$!
login_as_a() ( cd / && runuser -u $UA -- env PGPASSWORD="$pgpw" PGCONNECT_TIMEOUT=3 psql -X -h 127.0.0.1 -p "$pgport" -U sbx -d sbx -tAc 'select 40+2' 2>&1 )
full() { grep -q "too many clients" <<<"$(login_as_a)"; }
wait_for 90 full
check "A's own connections take every slot: no login gets through" full
sbx_as $UA request -a tcp-a -p demo postgres >/dev/null 2>&1
wait_until 20 'grep -q "agent=tcp-a: postgres takes no logins" "$LOG"'
check "a hit had its logins checked: it takes none (logged)" grep -q "uid=$(id -u $UA) agent=tcp-a: postgres takes no logins" "$LOG"
kill "$hold" 2>/dev/null; pkill -u $UA -f flood.py 2>/dev/null; wait "$hold" 2>/dev/null
envT2=$(sbx_as $UA request -a tcp-a -p demo postgres 2>&1)
check "the next request provisions it anew (new credentials)" test -n "$(pgv PASSWORD "$envT2")" -a "$(pgv PASSWORD "$envT2")" != "$pgpw"
check "audited as not live" grep -q "audit event=evict uid=$(id -u $UA) agent=tcp-a .*reason=not_live" "$LOG"
pgport=$(pgv PORT "$envT2") pgpw=$(pgv PASSWORD "$envT2")
out=$(login_as_a)
check "and it takes logins" test "$out" = 42
[ "$out" = 42 ] || note "psql said: $out"

echo "# both transports (transport both)"
stop_monitor
set_transport redis both
start_monitor || exit 1
envA=$(sbx_as $UA request -a both-a -p cache-only redis 2>&1)
var() { sed -n "s/^\(export \)\{0,1\}$1=//p" <<<"$envA" | tr -d "'\""; }
sock=$(var REDIS_SOCKET) host=$(var REDIS_HOST) port=$(var REDIS_PORT) pwA=$(pw REDIS "$envA")
check "the reply has a socket and a loopback port (${sock:-no socket}, ${host:-no host}:${port:-no port})" test -n "$sock" -a "$host" = 127.0.0.1 -a -n "$port" -a -n "$pwA"
check "the port is published on 127.0.0.1 only" test "$($RT port sbx-$(id -u $UA)-both-a-redis 6379/tcp 2>&1)" = "127.0.0.1:$port"
check "A reaches its redis on the socket" test "$(redis_as $UA "$sock" "$pwA" ping)" = PONG
tcp_as() { local u=$1 p=$2; shift 2; runuser -u "$u" -- env REDISCLI_AUTH="$p" redis-cli -h 127.0.0.1 -p "$port" --user default --no-auth-warning "$@" 2>&1; }
check "and on the port" test "$(tcp_as $UA "$pwA" ping)" = PONG
out=$(redis_as $UB "$sock" "$pwA" ping)
check "B cannot reach A's socket, even with A's password: the kernel refuses" grep -qi "permission denied" <<<"$out"
out=$(tcp_as $UB wrong ping)
check "on the port, B is refused by the kernel before redis hears it" grep -Eqi "reset|refused" <<<"$out"
out=$(tcp_as $UB "$pwA" ping)
check "even with A's password" grep -Eqi "reset|refused" <<<"$out"
# A flood of unauthenticated connections by B cannot keep A out: none
# of them is accepted (flood.py, above).
held=$(runuser -u $UB -- python3 "$WORK/flood.py" "$port" 250)
check "B's flood of 250 connections: none accepted ($held)" test "$held" = 0
check "A still reaches its redis on the port" test "$(tcp_as $UA "$pwA" ping)" = PONG
check "root too" test "$(REDISCLI_AUTH="$pwA" redis-cli -h 127.0.0.1 -p "$port" --user default --no-auth-warning ping 2>&1)" = PONG
guarded() { iptables -w -S SBX_GUARD | grep -q -- "--dport $port .*sbx:$(id -u $UA):both-a:redis"; }
check "the rule names A's sandbox and port" guarded
stop_monitor; start_monitor || exit 1
check "after a restart, adopted, it is still there (the chain laid anew)" guarded
check "and B is still refused" grep -Eqi "reset|refused" <<<"$(tcp_as $UB wrong ping)"
sbx_as $UA release -a both-a >/dev/null 2>&1
check "released: the rule is gone" bash -c "! iptables -w -S SBX_GUARD | grep -q -- '--dport $port '"

echo "# uid ranges: a routine edit of sbx.conf between starts"
# A section before postgres, then none: every service's position moves,
# and with it where the layout puts each slot's ranges; then userns_slots
# changes too. Containers of adopted sandboxes keep the ranges they run
# in (/proc/PID/uid_map); no new container may share one.
stop_monitor
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
write_conf yes
set_conf runtime "$GATE/podman"
sed -i '/^\[service postgres\]$/i [service aaa]\nimage = localhost/sbx-redis:7\nport = 6379\nprobe = redis\nuser = default\ndatabase = 0\nenv = SBX_PASSWORD={password}\ntmpfs = /srv/redis:rw,size=16m,mode=1777\nenv = SBX_RUN_DIR=/srv/redis\n' "$CONF"
start_monitor || exit 1
eA=$(sbx_as $UA request -a rng-a -p demo postgres 2>&1)
eB=$(sbx_as $UB request -a rng-b -p demo postgres 2>&1)
stop_monitor
sed -i '/^\[service aaa\]$/,/^\[/{/^\[service aaa\]$/d;/^\[/!d}' "$CONF"
set_conf userns_slots 300
start_monitor || exit 1
check "the edited sbx.conf has no section aaa" test "$(grep -c '^\[service aaa\]' "$CONF")" -eq 0
eA2=$(sbx_as $UA request -a rng-a -p demo postgres 2>&1)
eB2=$(sbx_as $UB request -a rng-b -p demo postgres 2>&1)
check "A's and B's sandboxes were adopted (the same credentials)" test -n "$(pw POSTGRES "$eA")" -a "$(pw POSTGRES "$eA2")" = "$(pw POSTGRES "$eA")" -a "$(pw POSTGRES "$eB2")" = "$(pw POSTGRES "$eB")"
sbx_as $UA request -a rng-a-new -p demo postgres >/dev/null 2>&1
sbx_as $UB request -a rng-b-new -p demo postgres >/dev/null 2>&1
# Every sbx container's host range, from its main process's uid_map.
ranges=$($RT ps -q --filter label=sbx.uid | while read -r id; do
	p=$($RT inspect --format '{{.State.Pid}}' "$id")
	awk 'NR == 1 { print $2, $3 }' "/proc/$p/uid_map"
done | sort -n)
n=$(wc -l <<<"$ranges")
check "eight containers of four sandboxes, two uids ($n)" test "$n" -eq 8
disjoint() {
	awk 'BEGIN { end = -1 } { if ($1 < end) exit 1; end = $1 + $2 }' <<<"$ranges"
}
check "no two of them share a host uid" disjoint
note "$(tr '\n' ' ' <<<"$ranges")"
for a in rng-a rng-a-new; do sbx_as $UA release -a $a >/dev/null 2>&1; done
for a in rng-b rng-b-new; do sbx_as $UB release -a $a >/dev/null 2>&1; done

echo "# socket_mode"
# Last: a restart reaps every labelled container.
set_conf socket_mode 0660
stop_monitor; start_monitor
check "socket_mode 0660 is applied" test "$(stat -c '%a' "$SOCK")" = 660
out=$(sbx_as $UB ping 2>&1); rc=$?
check "and then another user cannot connect: exit 3, permission denied" test "$rc" -eq 3 -a -n "$(grep -i 'permission denied' <<<"$out")"

finish
