#!/usr/bin/env bash
# run.sh - does sbx fit the host: make install/uninstall, the systemd unit,
# the man pages, libsbx through pkg-config, and against a real monitor and
# podman the audit trail, the Python and C examples, the progress line and
# the status table.  Run it as root under `flock /tmp/sbx-podman.lock`
# (make host-checks does).  Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

# The sub-makes must not talk to a parent make's jobserver.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s ${SBX_BUILD:+O=$B} "$@"; }
has() { grep -q -- "$1" "$2"; }

echo "# make install and uninstall"
D=$WORK/dest
mkdir -p "$D/etc/sbx"
printf '; an admin wrote this\n' > "$D/etc/sbx/sbx.conf"
mk install DESTDIR="$D" > "$WORK/install.out" 2>&1 || nok "make install" "$(cat "$WORK/install.out")"
U=$D/usr/local
V=$(mk version)	# GNUmakefile's VERSION
missing=
for f in sbin/sbx-monitor sbin/sbx-worker sbin/sbx-broker bin/sbx include/sbx.h \
    lib/libsbx.a lib/libsbx.so.$V lib/libsbx.so.0 lib/libsbx.so \
    lib/pkgconfig/libsbx.pc share/man/man1/sbx.1 share/man/man5/sbx.conf.5 \
    share/man/man8/sbx-monitor.8 share/man/man8/sbx-broker.8 \
    share/doc/sbx/protocol.md share/doc/sbx/examples/sbx_request.py \
    share/doc/sbx/examples/sbx_request.c lib/systemd/system/sbx-monitor.service \
    share/bash-completion/completions/sbx; do
	[ -e "$U/$f" ] || missing="$missing $f"
done
check "install puts everything under PREFIX in DESTDIR" test -z "$missing"
check "install keeps an existing sbx.conf" has 'an admin wrote this' "$D/etc/sbx/sbx.conf"
check "install adds the project example" test -f "$D/etc/sbx/projects.d/demo.conf.example"
check "the installed bash completion completes sbx's commands" test \
    "$(bash --norc --noprofile -c ". '$U/share/bash-completion/completions/sbx'; COMP_WORDS=(sbx re); COMP_CWORD=1; _sbx; echo \"\${COMPREPLY[*]}\"")" = "request reset release"
check "the unit names the installed monitor" has "ExecStart=/usr/local/sbin/sbx-monitor -d -f /etc/sbx/sbx.conf" "$U/lib/systemd/system/sbx-monitor.service"
exports=$(nm -D --defined-only "$U/lib/libsbx.so.$V" | awk '{print $3}' | grep -Ev '^sbxc_.*@@LIBSBX_0(\.2)?$' | grep -Ev '^LIBSBX_0(\.2)?$')
check "libsbx.so exports only sbxc_*" test -z "$exports"
check "libsbx.so has soname libsbx.so.0" bash -c "objdump -p '$U/lib/libsbx.so.$V' | grep -q 'SONAME *libsbx.so.0\$'"

echo "# libsbx through pkg-config"
pc() { PKG_CONFIG_PATH=$U/lib/pkgconfig pkg-config --define-prefix "$@"; }
check "pkg-config knows libsbx $V" test "$(pc --modversion libsbx)" = "$V"
check "its flags point into DESTDIR" bash -c "[[ '$(pc --cflags --libs libsbx)' == *'-I$U/include'*'-L$U/lib'*'-lsbx'* ]]"
# shellcheck disable=SC2046
cc -std=c11 -Wall -Wextra -Werror -o "$WORK/sbx_request" contrib/examples/sbx_request.c \
    $(pc --cflags --libs libsbx) 2> "$WORK/cc.out"
check "the C example compiles against the installed header and library" test -x "$WORK/sbx_request"
creq() { LD_LIBRARY_PATH=$U/lib "$WORK/sbx_request" "$@"; }
check "it loads the installed libsbx.so.0" bash -c "LD_LIBRARY_PATH='$U/lib' ldd '$WORK/sbx_request' | grep -q '$U/lib/libsbx.so.0'"
out=$(creq "$WORK/no.sock" 2>&1); rc=$?
check "it runs: no socket is exit 3, cannot connect" bash -c "[ $rc -eq 3 ] && grep -q 'cannot connect' <<<'$out'"

mk uninstall DESTDIR="$D" > "$WORK/uninstall.out" 2>&1 || nok "make uninstall" "$(cat "$WORK/uninstall.out")"
check "uninstall keeps the admin's sbx.conf" has 'an admin wrote this' "$D/etc/sbx/sbx.conf"
rm -f "$D/etc/sbx/sbx.conf"
mk install DESTDIR="$D" >/dev/null 2>&1 && mk uninstall DESTDIR="$D" >/dev/null 2>&1
left=$(find "$D" ! -type d)
check "install then uninstall leaves nothing but directories" test -z "$left"
[ -z "$left" ] || note "left: $left"

echo "# systemd unit"
P=$WORK/px
mk install PREFIX="$P" ETCDIR="$P/etc/sbx" > /dev/null 2>&1
UNIT=$P/lib/systemd/system/sbx-monitor.service
out=$(MANPATH=$P/share/man systemd-analyze verify "$UNIT" 2>&1); rc=$?
check "systemd-analyze verify passes (ExecStart installed)" test "$rc" -eq 0 -a -z "$out"
[ -z "$out" ] || note "$out"
check "the unit leaves the sandboxes up on stop" has '^KillMode=process' "$UNIT"
check "the unit is Type=notify with a watchdog" bash -c "grep -q '^Type=notify$' '$UNIT' && grep -Eq '^WatchdogSec=[0-9]+' '$UNIT' && grep -q '^NotifyAccess=main$' '$UNIT'"
check "the unit has no filter that breaks runc" bash -c "! grep -Eq '^(ProtectHostname|RestrictSUIDSGID|MemoryDenyWriteExecute|ProtectSystem|PrivateTmp|ProtectClock)=' '$UNIT'"

echo "# man pages"
# mandoc checks .Xr only against /usr/share/man: look there, in a private
# mount namespace, at the installed pages.
M=$P/share/man
makewhatis "$M"
out=$(unshare -m sh -c "mount --bind '$M' /usr/share/man && mandoc -T lint -W all docs/sbx.1 docs/sbx.conf.5 docs/sbx-monitor.8 docs/sbx-broker.8" 2>&1); rc=$?
check "mandoc -T lint -W all is clean, cross-references included" test "$rc" -eq 0 -a -z "$out"
[ -z "$out" ] || note "$out"
for f in docs/sbx.1 docs/sbx.conf.5 docs/sbx-monitor.8 docs/sbx-broker.8; do
	out=$(MANWIDTH=80 man -l "$f" 2>&1 >/dev/null)
	check "man -l $f renders without warnings" test -z "$out"
done
check "sbx-monitor(8) documents the audit format" bash -c "man -l docs/sbx-monitor.8 2>/dev/null | grep -q 'audit event=E uid=U agent=A project=P services=S result=R'"
keys=$(cat privsep/worker/config_parse.c privsep/worker/projects.c | grep -o 'strcmp(k, "[a-z_]*")' | cut -d'"' -f2 | sort -u)
undoc=
for k in $keys; do
	grep -Eq "Cm ([a-z_]+ , )*$k( |\$)" docs/sbx.conf.5 || undoc="$undoc $k"
done
check "sbx.conf(5) documents every key of privsep/worker/config_parse.c and privsep/worker/projects.c" test -n "$keys" -a -z "$undoc"
[ -z "$undoc" ] || note "undocumented:$undoc"
mk uninstall PREFIX="$P" ETCDIR="$P/etc/sbx" > /dev/null 2>&1

echo "# audit trail, examples and the CLI against a real monitor"
write_conf yes
start_monitor || { finish; exit 1; }
pws=$WORK/passwords; : > "$pws"
keep_pw() { grep -o "PASSWORD=[^ ]*" <<<"$1" | cut -d= -f2 | tr -d "'" >> "$pws"; }

sbx request -a au1 -p cache-only postgres >/dev/null 2>&1
sbx request -a au1 -p nosuch redis >/dev/null 2>&1
sbx_as nobody request -a au9 -p cache-only --bind-pid 1 redis >/dev/null 2>&1
e1=$(sbx request -a au1 -p cache-only redis 2>/dev/null); keep_pw "$e1"
e2=$(sbx request -a au1 -p cache-only redis 2>/dev/null); keep_pw "$e2"
check "a hit answers the same credentials" test -n "$e1" -a "$e1" = "$e2"
$RT rm -f -t 0 sbx-0-au1-redis >/dev/null 2>&1
e3=$(sbx request -a au1 -p cache-only redis 2>/dev/null); keep_pw "$e3"
check "a dead container is replaced with a new password" test -n "$e3" -a "$e3" != "$e1"

# The Python example, with the Debian msgpack, and the credentials it prints.
py=$(/usr/bin/python3 contrib/examples/sbx_request.py -S "$SOCK" py1 cache-only redis 2>&1)
read -r name host port user pw db sock <<<"$py"
echo "$pw" >> "$pws"
check "sbx_request.py prints the redis credentials and socket (no host, port with transport unix)" test "$name" = redis -a -n "${pw:-}" -a "$host" = - -a "$port" = - -a -S "${sock:-none}"
check "redis-cli works with what sbx_request.py printed" test "$(redis-cli -s "$sock" --user "$user" -a "$pw" --no-auth-warning ping 2>&1)" = PONG
py2=$(/usr/bin/python3 contrib/examples/sbx_request.py -S "$SOCK" py1 cache-only postgres 2>&1); rc=$?
check "sbx_request.py reports a refusal" test "$rc" -eq 1 -a "$py2" = "sbx: not_opted_in: postgres is not in the project's sandbox_services."

# The C example through the installed library, once more.
mk install DESTDIR="$D" >/dev/null 2>&1
check "the C example pings the monitor" test "$(creq "$SOCK")" = " $("$SBX" -S "$SOCK" ping)"
cl=$(creq "$SOCK" c1 cache-only redis); read -r name host port user pw db sock <<<"$cl"
echo "$pw" >> "$pws"
check "redis-cli works with what the C example printed (its socket)" test "$(redis-cli -s "$sock" --user "$user" -a "$pw" --no-auth-warning ping 2>&1)" = PONG
mk uninstall DESTDIR="$D" >/dev/null 2>&1

# Progress on a terminal only: the "slow" project's service never gets
# ready, so its provision runs out its 2 s ready_timeout.
tty=$(script -qec "'$SBX' -S '$SOCK' request -a sp1 -p slow" /dev/null 2>&1)
# The line shows the rounded seconds, redrawn from 0.5 s on; the
# provision takes over 2 s (ready_timeout), so it counts 1s, 2s (and
# maybe 3s): from 1, one by one.
shown=$(grep -o 'provisioning\.\.\. [0-9]*s' <<<"$tty" | grep -o '[0-9]*' | tr '\n' ' ')
counts_up() { local n; n=$(wc -w <<<"$shown"); [ "$n" -ge 2 ] && [ "$shown" = "$(seq -s ' ' 1 "$n") " ]; }
check "request on a terminal counts the seconds of a cold provision: $shown" counts_up
sbx request -a sp2 -p slow > "$WORK/sp2.out" 2> "$WORK/sp2.err"
check "request piped: the error on stderr, and false for an eval on stdout" test "$(wc -l < "$WORK/sp2.err")" -eq 1 -a "$(cat "$WORK/sp2.out")" = false
check "the error is the readiness deadline" grep -q "^sbx: runtime_failed: never-ready was not ready within 2 s.$" "$WORK/sp2.err"
check "request piped never writes a carriage return" bash -c "! grep -q \$'\\r' '$WORK/sp2.err'"

# The status table, aligned, and its JSON.
st=$(sbx status)
col() { awk -v w="$2" 'NR == 1 { print index($0, w) }' <<<"$1"; }
row=$(grep ' au1 ' <<<"$st")
check "status prints a header" grep -Eq '^UID +AGENT +PROJECT +SERVICES +AGE +IDLE$' <<<"$st"
check "status columns line up" test "$(col "$st" AGENT)" = "$(awk '{ print index($0, "au1") }' <<<"$row")" -a "$(col "$st" SERVICES)" = "$(awk '{ print index($0, "redis") }' <<<"$row")"
check "status --json is JSON with the sandboxes" bash -c "'$SBX' -S '$SOCK' status --json | python3 -c 'import json,sys; d=json.load(sys.stdin); assert d[\"ok\"] and any(s[\"agent\"]==\"au1\" for s in d[\"sandboxes\"])'"

sbx release -a au1 >/dev/null
sbx release -a au1 >/dev/null
# Nothing held: a restart adopts what is, and the next monitor allows
# uid 0 one sandbox.
sbx release -a py1 >/dev/null
sbx release -a c1 >/dev/null
check "nothing is held now" test -z "$(sbx status | sed 1d)"
stop_monitor

# The per-uid limit: a monitor with max_sandboxes_per_uid = 1 (and no
# expiry in sight, so ex1 is certainly still held when ex2 asks).
set_conf max_sandboxes_per_uid 1
start_monitor || { finish; exit 1; }
sbx request -a ex0 -p cache-only redis > "$WORK/ex0.out" 2>/dev/null; keep_pw "$(cat "$WORK/ex0.out")"
sbx request -a ex2 -p cache-only redis >/dev/null 2>&1
# Released: a restart would adopt it, and keep ex1 out at the limit.
sbx release -a ex0 >/dev/null 2>&1
stop_monitor
# Expiry: a monitor with idle_ttl = 1.
set_conf idle_ttl 1
start_monitor || { finish; exit 1; }
sbx request -a ex1 -p cache-only redis > "$WORK/ex1.out" 2>/dev/null; keep_pw "$(cat "$WORK/ex1.out")"
expired() { grep -q 'audit event=expire .*agent=ex1 ' "$LOG"; }
wait_for 10 expired
stop_monitor
# Refusals when sandboxes are off.
set_conf enabled no
start_monitor || { finish; exit 1; }
sbx request -a off1 -p cache-only redis >/dev/null 2>&1
# A refusal the broker makes itself: a map whose op is not a string.
rawreply 81a26f7001 >/dev/null
stop_monitor

a() { grep -Eq "^sbx-monitor: audit event=$1 uid=[0-9]+ $2" "$LOG"; }
check "audit: provision, with result and ms" a provision 'agent=au1 project=cache-only services=redis result=ok ms=[0-9]+$'
check "audit: provision that failed" a provision 'agent=sp1 project=slow services=never-ready result=runtime_failed ms=[0-9]+$'
check "audit: hit" a hit 'agent=au1 project=cache-only services=redis result=ok idle_s=[0-9]+$'
check "audit: eviction of a dead container" a evict 'agent=au1 project=cache-only services=redis result=ok reason=not_live$'
check "audit: release" a release 'agent=au1 project=cache-only services=redis result=ok released=yes ms=[0-9]+$'
check "audit: release of nothing" a release 'agent=au1 project=- services=- result=ok released=no$'
check "audit: expiry" a expire 'agent=ex1 project=cache-only services=redis result=ok idle_s=[0-9]+$'
check "audit: refusal not_opted_in" a refuse 'agent=au1 project=cache-only services=postgres result=not_opted_in op=request_sandbox$'
check "audit: refusal unknown_project" a refuse 'agent=au1 project=nosuch services=redis result=unknown_project op=request_sandbox$'
check "audit: refusal forbidden (nobody binding pid 1)" a refuse 'agent=au9 project=cache-only services=redis result=forbidden op=request_sandbox$'
check "audit: refusal busy (max_sandboxes_per_uid)" a refuse 'agent=ex2 project=cache-only services=redis result=busy op=request_sandbox$'
check "audit: refusal disabled" a refuse 'agent=off1 project=cache-only services=redis result=disabled op=request_sandbox$'
check "audit: refusal by the broker, with the uid" grep -Eq '^sbx-broker: audit event=refuse uid=0 agent=- project=- services=- result=bad_request op=- by=broker$' "$LOG"
bad=$(grep 'audit ' "$LOG" | grep -Ev '^sbx-(monitor|broker): audit event=(provision|hit|evict|release|expire|refuse|suppressed|adopt|discard|revoke) uid=[0-9]+ agent=[a-z0-9._-]+ project=[a-z0-9._-]+ services=[a-z0-9._,-]+ result=[a-z_]+( [a-z_]+=[a-z0-9_-]+)+$')
check "every audit line is key=value in the documented order" test -z "$bad"
[ -z "$bad" ] || note "$bad"
sort -u "$pws" | grep -v '^$' > "$pws.u"
check "passwords were collected to look for (au1 twice, py1, c1, ex0, ex1)" test "$(wc -l < "$pws.u")" -eq 6
check "no password ever appears in the log" bash -c "! grep -qF -f '$pws.u' '$LOG'"

echo "# sd_notify, with systemd's socket protocol (PID 1 here is not systemd)"
write_conf yes
# A listener on NOTIFY_SOCKET, as systemd is for a Type=notify unit: it
# writes each datagram, and on READY=1 tries the agent socket at once, so
# READY=1 before the socket serves would show as "ready-not-serving".
stop_monitor
NS=$WORK/notify.sock NL=$WORK/notify.log
python3 - "$NS" "$NL" "$SOCK" <<'PY' &
import socket, sys
ns, log, sbx = sys.argv[1:]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(ns)
with open(log, "a", buffering=1) as f:
    while True:
        msg = s.recv(4096).decode()
        for line in msg.split("\n"):
            f.write(line + "\n")
        if "READY=1" in msg.split("\n"):
            c = socket.socket(socket.AF_UNIX)
            try:
                c.connect(sbx)
                f.write("ready-and-serving\n")
            except OSError:
                f.write("ready-not-serving\n")
            c.close()
        if "STOPPING=1" in msg.split("\n"):
            break
PY
LPID=$!
wait_for 5 test -S "$NS"
start_monitor env NOTIFY_SOCKET="$NS" WATCHDOG_USEC=2000000
wait_for 10 grep -q '^ready-' "$NL"
check "READY=1 once the socket serves" test "$(grep -c '^ready-and-serving$' "$NL")" -eq 1 -a "$(grep -c '^ready-not-serving$' "$NL")" -eq 0
check "with a STATUS= line and the sandbox count" grep -Eq '^STATUS=serving, [0-9]+ sandboxes' "$NL"
wait_until 5 '[ "$(grep -c "^WATCHDOG=1\$" "$NL")" -ge 3 ]'
check "WATCHDOG=1 from the loop, at half of WATCHDOG_USEC (2 s)" test "$(grep -c '^WATCHDOG=1$' "$NL")" -ge 3
n0=$(sed -n 's/^STATUS=serving, \([0-9]*\) sandboxes.*/\1/p' "$NL" | head -1)
sbx request -a nt1 -p cache-only redis >/dev/null 2>&1
wait_for 5 grep -q "^STATUS=serving, $((n0 + 1)) sandboxes\$" "$NL"
check "STATUS= follows the sandbox count ($n0 -> $((n0 + 1)))" grep -q "^STATUS=serving, $((n0 + 1)) sandboxes\$" "$NL"
kill -HUP "$MON_PID"
wait_until 5 '[ "$(grep -c "^ready-" "$NL")" -eq 2 ]'
check "SIGHUP: RELOADING=1, then READY=1 again" bash -c "grep -n -e '^RELOADING=1$' -e '^ready-and-serving$' '$NL' | tail -2 | cut -d: -f2 | tr '\n' ' ' | grep -q '^RELOADING=1 ready-and-serving $'"
kill -TERM "$MON_PID"; wait "$MON_PID"; MON_PID=
wait_for 5 bash -c "! kill -0 $LPID 2>/dev/null"
check "SIGTERM: STOPPING=1" grep -q '^STOPPING=1$' "$NL"
kill "$LPID" 2>/dev/null
start_monitor
check "without NOTIFY_SOCKET the monitor starts as before" pings

echo "# metrics for node_exporter's textfile collector"
# Debian's prometheus-node-exporter, unpacked by setup-host.sh, on a
# loopback port of its own, reading the directory metrics_file is in.
NEB=/var/lib/sbx-setup/node-exporter/usr/bin/prometheus-node-exporter
stop_monitor
mkdir -p "$WORK/metrics"
set_conf metrics_file "$WORK/metrics/sbx.prom"
"$NEB" --web.listen-address=127.0.0.1:19100 --collector.disable-defaults \
    --collector.textfile --collector.textfile.directory="$WORK/metrics" \
    > "$WORK/ne.log" 2>&1 &
NEPID=$!
cleanup_hook() { kill "$NEPID" 2>/dev/null; }
scrape() { python3 -c 'import urllib.request; print(urllib.request.urlopen("http://127.0.0.1:19100/metrics", timeout=2).read().decode())' 2>/dev/null; }
metric() { scrape | awk -v k="$1" '$1 == k { print $2 }'; }
start_monitor
wait_until 15 '[ -n "$(metric sbx_sandboxes)" ]'
check "node_exporter serves the monitor's figures" test -n "$(metric sbx_sandboxes)" -a -n "$(metric sbx_max_fds)" -a -n "$(metric sbx_open_fds)" -a -n "$(metric sbx_uid_ranges)" -a -n "$(metric sbx_max_uid_ranges)"
snap=$(scrape)
snap() { awk -v k="$1" '$1 == k { print $2 }' <<<"$snap"; }
s0=$(snap sbx_sandboxes)
r0=$(snap 'sbx_requests_total{op="request_sandbox",result="ok"}')
p0=$(snap 'sbx_provision_seconds_count{service="redis"}')
check "one scrape before the requests has the sandbox count (${s0:-none})" test -n "$s0"
sbx request -a mx1 -p cache-only redis >/dev/null 2>&1
sbx request -a mx1 -p cache-only redis >/dev/null 2>&1
sbx request -a mx2 -p nosuch redis >/dev/null 2>&1
# The file is written every 5 s, so one written between the provision
# and the last answer has only part of them: wait for a write after the
# last (the refusal counted), then read one scrape.
refused() { [ -n "$(metric 'sbx_requests_total{op="request_sandbox",result="unknown_project"}')" ]; }
wait_for 15 refused
snap=$(scrape)
check "the refusal counted by its code" test -n "$(snap 'sbx_requests_total{op="request_sandbox",result="unknown_project"}')"
check "after real requests: one sandbox more ($s0 -> $(snap sbx_sandboxes))" test "$(snap sbx_sandboxes)" = $((s0 + 1))
check "two more request_sandbox answers ok" test "$(snap 'sbx_requests_total{op="request_sandbox",result="ok"}')" = $((${r0:-0} + 2))
check "one provision more in redis's latency histogram" test "$(snap 'sbx_provision_seconds_count{service="redis"}')" = $((${p0:-0} + 1))
check "no uid, agent or project is a label" bash -c "! grep -Eq 'uid=|agent=|project=' '$WORK/metrics/sbx.prom'"

echo "# the Grafana dashboard against what node_exporter serves"
DASH=contrib/grafana/sbx-dashboard.json
check "$DASH is JSON" /usr/bin/python3 -m json.tool "$DASH" /dev/null
# The series names in its queries (expr, and the variable's definition).
used=$(/usr/bin/python3 -c '
import json, sys
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("expr", "definition") and isinstance(v, str): print(v)
            else: walk(v)
    elif isinstance(o, list):
        for v in o: walk(v)
walk(json.load(open(sys.argv[1])))' "$DASH" 2>/dev/null | grep -oE '\b(sbx|node_textfile)_[a-z_]+' | sort -u)
served=$(scrape | grep -v '^#' | grep -oE '^[a-zA-Z_:][a-zA-Z0-9_:]*' | sort -u)
missing=$(comm -23 <(echo "$used") <(echo "$served") | tr '\n' ' ')
check "every series the dashboard queries is served: $(wc -w <<<"$used") names" test -n "$used" -a -z "$missing"
[ -z "$missing" ] || note "not served: $missing"
unshown=
for fam in $(awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$WORK/metrics/sbx.prom"); do
	grep -Eqx "$fam(_bucket|_sum|_count)?" <<<"$used" || unshown="$unshown $fam"
done
check "the dashboard shows every family the monitor writes" test -z "$unshown"
[ -z "$unshown" ] || note "not on the dashboard:$unshown"
kill "$NEPID" 2>/dev/null
stop_monitor

finish
