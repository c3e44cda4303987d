#!/usr/bin/env bash
# faults.sh - what breaks, and what must hold when it does: processes
# killed -9 mid-request, a runtime that hangs or vanishes, an unusable
# state_dir, a monitor killed and restarted, fd exhaustion, clients that
# go away mid-provision. Real monitor, broker and podman; run as root under
# `flock /tmp/sbx-podman.lock`. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

MOUNTS=
cleanup_hook() {
	local m
	for m in $MOUNTS; do umount -l "$m" 2>/dev/null; done
}

# The monitor's runtime workers: its forked children that are still
# sbx-monitor. Not every child: as child subreaper it also adopts conmon
# and the processes of containers whose conmon died, and killing those
# would be a different fault (a killed conmon mid-start).
workers_of() { job_workers "$1"; }
ncont() { containers "$1" 0 | wc -w; }
# Containers of an agent in any state, created or running.
made() { $RT ps -aq --filter "label=sbx.agent=$1" | wc -l; }
no_zombies() { [ "$(zombies "$MON_PID")" -eq 0 ] && { b=$(broker_pid); [ -z "$b" ] || [ "$(zombies "$b")" -eq 0 ]; }; }
# Does the monitor hold a connection accepted on $SOCK (a request's)?
# Its socket inodes against /proc/net/unix: state 03, connected, on our path.
mon_holds_agent() {
	local ino
	for ino in $(readlink /proc/"$MON_PID"/fd/* 2>/dev/null |
	    sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p'); do
		awk -v i="$ino" -v p="$SOCK" '$7 == i && $8 == p && $6 == "03" { f = 1 }
		    END { exit !f }' /proc/net/unix && return 0
	done
	return 1
}
nchildren() { [ "$(pgrep -P "$1" | wc -l)" -eq "$2" ]; }
no_workers() { [ -z "$(workers_of "$MON_PID")" ]; }
made_is() { [ "$(made "$1")" -eq "$2" ]; }
gone() { [ ! -e "/proc/$1" ]; }
# Every process named is stopped (state T).
stopped() { local p; for p; do [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = T ] || return 1; done; }
cached() { grep -q "\"$1\"" <<<"$(sbx status --json)"; }
ms_since() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# One stderr line, naming $2, and a non-zero exit from a monitor start.
refuses() {  # rc stderr-file word
	[ "$1" -ne 0 ] && [ "$(wc -l < "$2")" -eq 1 ] && grep -qi "$3" "$2"
}
restart_with() {  # write_conf, the gate runtime, then KEY VALUE pairs, then start
	stop_monitor
	write_conf yes
	set_conf runtime "$GATE/podman"
	while [ $# -ge 2 ]; do set_conf "$1" "$2"; shift 2; done
	start_monitor
}

# The runtime is the gate (lib.sh): podman, except where a test holds
# an agent's runs at a known point. Every kill below is made there.
gate_runtime
write_conf yes
set_conf runtime "$GATE/podman"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
start_monitor || exit 1

echo "# the broker is killed -9 mid-request"
env1=$(sbx request -a f1 -p demo postgres)
ids1=$(containers f1 0)
bpid=$(broker_pid)
gate_hold f2 before
sbx request -a f2 -p demo postgres > "$WORK/f2.out" 2>&1 &
cpid=$!
# Both services' runs held: the monitor has the request and the agent's
# socket; the broker's child handed them over and is gone.
wait_for 30 gate_held f2 2
check "the request is with the monitor (both runs held)" gate_held f2 2
kill -9 "$bpid"
wait_for 5 gone "$bpid"
check "the broker is dead while the provision is still held" gone "$bpid"
gate_release f2
wait "$cpid"; rc=$?
# The monitor holds the agent's socket and answers on it itself: the
# broker's death costs the request nothing.
check "the client of the killed broker got its sandbox" test "$rc" -eq 0 -a -n "$(grep POSTGRES_PASSWORD= "$WORK/f2.out")"
wait_for 5 pings
check "the monitor started a new broker" test -n "$(broker_pid)" -a "$(broker_pid)" != "$bpid"
t0=$(date +%s%N)
env1b=$(sbx request -a f1 -p demo postgres)
hit_ms=$(ms_since "$t0")
check "the cache survived: same credentials" test "$env1" = "$env1b"
check "and it was a hit (no new container, ${hit_ms} ms)" test "$(containers f1 0)" = "$ids1" -a "$hit_ms" -lt 1000
check "the interrupted request's provision was cached" cached f2
check "with exactly one set of containers" test "$(ncont f2)" -eq 2
check "and the answer relayed was that sandbox (the next request is a hit on it)" test "$(sbx request -a f2 -p demo postgres)" = "$(cat "$WORK/f2.out")"
sbx release -a f2 >/dev/null

echo "# the per-request child is gone once it has handed the request over"
wait_for 10 no_workers
fds0=$(rest_fds)
bpid=$(broker_pid)
wait_for 5 broker_serves "$bpid" 0
gate_hold f3 before
sbx request -a f3 -p demo postgres > "$WORK/f3.out" 2>&1 &
cpid=$!
wait_for 30 gate_held f3 2
wait_for 5 broker_serves "$bpid" 0
# One-way answers: nothing of the request is left in the broker while the
# monitor provisions; the agent's socket is the monitor's alone.
check "the provision is held and no process of the broker holds the agent's connection" test "$(gate_held f3 2 && echo held)" = held -a "$(conns_held "$bpid" $(pgrep -P "$bpid"))" -eq 0
check "the monitor holds an accepted connection of the agent socket" mon_holds_agent
gate_release f3
wait "$cpid"; rc=$?
check "its agent got the sandbox from the monitor" test "$rc" -eq 0 -a -n "$(grep POSTGRES_PASSWORD= "$WORK/f3.out")"
check "no leaked container: one set" test "$(ncont f3)" -eq 2
ids3=$(containers f3 0)
t0=$(date +%s%N)
sbx request -a f3 -p demo postgres >/dev/null
check "the next request is a hit ($(ms_since "$t0") ms, same containers)" test "$(containers f3 0)" = "$ids3"
check "the broker is the same process" test "$(broker_pid)" = "$bpid"
sbx release -a f3 >/dev/null
wait_for 10 no_workers
wait_for 5 mon_fds_are "$fds0"
check "no leaked fd in the monitor after release ($fds0 -> $(fd_count "$MON_PID"))" wait_for 5 mon_fds_are "$fds0"
check "no zombie under the monitor or the broker" wait_for 5 no_zombies

echo "# a provisioning worker is killed -9"
fds0=$(rest_fds)
gate_hold f4 after
sbx request -a f4 -p demo postgres > "$WORK/f4.out" 2>&1 &
cpid=$!
# Both runs held after podman run: the containers exist, the worker has
# not heard of them yet.
wait_for 60 gate_held f4 2
check "the half-made sandbox exists: two containers, the worker not yet told" test "$(made f4)" -eq 2 -a "$(gate_held f4 2 && echo held)" = held
w=$(workers_of "$MON_PID")
check "one worker runs the provision" test "$(wc -w <<<"$w")" -eq 1
kill -9 $w
# Its service processes (forked from it, holding its result pipe) are
# let go: they find the containers, then nobody to tell, and exit; only
# then does the monitor see the worker's pipe close.
gate_release f4
wait "$cpid"; rc=$?
check "the request failed with runtime_failed" test "$rc" -eq 1 -a -n "$(grep runtime_failed "$WORK/f4.out")"
wait_for 20 made_is f4 0
check "no leaked container: the worker's half-made sandbox was removed" made_is f4 0
check "nothing cached for it" lacks '"f4"' "$(sbx status --json)"
wait_for 20 no_workers
wait_for 5 mon_fds_are "$fds0"
check "no leaked fd in the monitor ($fds0 -> $(fd_count "$MON_PID"))" wait_for 5 mon_fds_are "$fds0"
check "no zombie under the monitor or the broker" wait_for 5 no_zombies
env4=$(sbx request -a f4 -p demo postgres)
eval "$env4"
check "the next request provisions a working sandbox" uses_sandbox
check "with one set of containers" test "$(ncont f4)" -eq 2

echo "# the runtime hangs on run"
{
	printf '#!/bin/sh\n# podman, except that run and start never return.\n'
	printf 'for a; do case $a in run|start)\n'
	printf '\techo $$ >> %s; exec sleep 7777777 ;;\n' "$WORK/hang.at"
	printf 'esac; done\nexec podman "$@"\n'
} > "$WORK/hang-rt"
chmod 0755 "$WORK/hang-rt"
restart_with runtime "$WORK/hang-rt" runtime_timeout 3
t0=$(date +%s%N)
sbx request -a f5 -p cache-only redis > "$WORK/f5.out" 2>&1 &
cpid=$!
wait_for 10 test -s "$WORK/hang.at"
check "the runtime hangs in run" test "$(wc -l < "$WORK/hang.at")" -eq 1
hung=$(cat "$WORK/hang.at")
t1=$(date +%s%N); sbx ping >/dev/null; ping_ms=$(ms_since "$t1")
check "ping answers while the runtime hangs (${ping_ms} ms)" test "$ping_ms" -lt 1000
t1=$(date +%s%N); av=$(sbx available demo | tr '\n' ' '); av_ms=$(ms_since "$t1")
check "available answers while the runtime hangs (${av_ms} ms)" test "$av" = "postgres redis " -a "$av_ms" -lt 1000
wait "$cpid"
req_ms=$(ms_since "$t0")
check "the request is runtime_failed: the runtime did not answer in time" grep -q '^sbx: runtime_failed: redis: the container runtime did not answer in time\.$' "$WORK/f5.out"
check "at the runtime deadline, not before, not forever (${req_ms} ms; runtime_timeout 3 s)" test "$req_ms" -ge 3000 -a "$req_ms" -lt 15000
# The worker kills and reaps the runtime before it answers.
check "the hung runtime process was killed" gone "$hung"
check "the monitor is still up" kill -0 "$MON_PID"
check "nothing cached for it" lacks '"f5"' "$(sbx status --json)"

echo "# the runtime binary"
stop_monitor
write_conf yes
set_conf runtime "$WORK/nosuch-podman"
timeout 20 "$B/sbx-monitor" -d -f "$CONF" 2> "$WORK/err" >/dev/null; rc=$?
check "with a non-zero exit and one stderr line naming the runtime" refuses "$rc" "$WORK/err" nosuch-podman
note "$(cat "$WORK/err")"
printf '#!/bin/sh\nexec podman "$@"\n' > "$WORK/gone-rt"; chmod 0755 "$WORK/gone-rt"
restart_with runtime "$WORK/gone-rt"
rm -f "$WORK/gone-rt"
out=$(sbx request -a f6 -p cache-only redis 2>&1)
check "gone after start-up: the request is runtime_failed" grep -q runtime_failed <<<"$out"
check "the monitor stays up" kill -0 "$MON_PID"
check "and answers ping" pings

echo "# an unusable state_dir"
mkdir -p "$WORK/ro" "$WORK/full"
mount -t tmpfs -o ro,size=1m sbx-ro "$WORK/ro" && MOUNTS="$MOUNTS $WORK/ro"
stop_monitor
STATE_DIR=$WORK/ro/state write_conf yes
timeout 20 "$B/sbx-monitor" -d -f "$CONF" 2> "$WORK/err" >/dev/null; rc=$?
check "read-only state_dir: the monitor refuses with one line" refuses "$rc" "$WORK/err" "$WORK/ro/state"
note "$(cat "$WORK/err")"
mount -t tmpfs -o size=64k,nr_inodes=8 sbx-full "$WORK/full" && MOUNTS="$MOUNTS $WORK/full"
mkdir -p "$WORK/full/state/empty"
mkdir -m 0700 "$WORK/full/state/sandboxes"
dd if=/dev/zero of="$WORK/full/fill" bs=4k 2>/dev/null
for i in $(seq 20); do : 2>/dev/null > "$WORK/full/i$i" || break; done
check "the tmpfs is full (no space, no inodes)" bash -c "! : 2>/dev/null > '$WORK/full/state/x'"
STATE_DIR=$WORK/full/state write_conf yes
start_monitor
check "full state_dir (its directories made before): the monitor starts" kill -0 "$MON_PID"
# A sandbox the monitor cannot record would not survive a restart: the
# agent gets no credentials for it.
out=$(sbx request -a f7 -p cache-only redis 2>&1 >/dev/null); rc=$?
check "a request on a full state_dir fails: internal, cannot record it" test "$rc" -eq 1 -a "$out" = "sbx: internal: the monitor could not record the sandbox (see its log)."
check "and its log says why" grep -q 'cannot record sandbox uid=0 agent=f7: No space left on device' "$LOG"
wait_for 30 made_is f7 0
check "its container was removed" made_is f7 0
stop_monitor
rm -rf "$WORK/full/state"
for i in $(seq 20); do : 2>/dev/null > "$WORK/full/j$i" || break; done
timeout 20 "$B/sbx-monitor" -d -f "$CONF" 2> "$WORK/err" >/dev/null; rc=$?
check "state_dir cannot be created on a full fs: refuses with one line" refuses "$rc" "$WORK/err" "$WORK/full/state"
note "$(cat "$WORK/err")"

echo "# the monitor is killed -9 mid-provision and restarted"
write_conf yes
set_conf runtime "$GATE/podman"
start_monitor
# Held after podman run: the containers exist, the worker has not heard
# of them, no record was written.
gate_hold f8 after
sbx request -a f8 -p demo postgres > "$WORK/f8.out" 2>&1 &
cpid=$!
wait_for 60 gate_held f8 2
check "mid-provision: two containers made, the worker not yet told" test "$(made f8)" -eq 2 -a "$(gate_held f8 2 && echo held)" = held
bpid=$(broker_pid)
wpids=$(workers_of "$MON_PID" | tr "\n" " ")
held=$(tr '\n' ' ' < "$GATE/at-f8")
kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID=
kill -9 "$bpid"
wait "$cpid"; rc=$?
# The agent's socket was the monitor's alone: it closed unanswered.
check "the agent saw the connection close without a reply (exit 4)" test "$rc" -eq 4 -a -n "$(grep 'closed the connection without a reply' "$WORK/f8.out")"
wait_for 10 bash -c "! kill -0 $wpids $held 2>/dev/null"
check "its workers and their runtime calls died with it" bash -c "! kill -0 $wpids $held 2>/dev/null"
start_monitor
check "the restart removed the half-made sandbox: no container of it" test "$(made f8)" -eq 0
check "and said why: no record of it" grep -q 'audit event=discard uid=0 agent=f8 .*reason=no_record' "$LOG"
gate_release f8
# Held before podman run: the run must never happen once the monitor is
# gone, or it would make a container after the next start looked.
gate_hold f9 before
sbx request -a f9 -p cache-only redis > "$WORK/f9.out" 2>&1 &
cpid=$!
wait_for 60 gate_held f9 1
held=$(tr '\n' ' ' < "$GATE/at-f9")
bpid=$(broker_pid)
kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID=
kill -9 "$bpid"
wait "$cpid"
wait_for 10 bash -c "! kill -0 $held 2>/dev/null"
check "a run held before podman died with the monitor" bash -c "! kill -0 $held 2>/dev/null"
gate_release f9
start_monitor
check "nothing of it appears after the restart" test "$(made f9)" -eq 0
check "the restarted monitor serves" pings

echo "# fd exhaustion"
# The broker inherits the monitor's RLIMIT_NOFILE (fork + exec, no
# setrlimit). The broker closes each connection after forking its child,
# so its own table never fills; past max_connections_per_uid a uid gets
# busy, past max_children everyone does. Two uids (nobody and daemon)
# hold 150 connections each: 16 children each fill the broker's 32.
restart_with max_children 32 max_connections_per_uid 16
stop_monitor
start_monitor prlimit --nofile=64:64
bpid=$(broker_pid)
check "the broker runs with RLIMIT_NOFILE 64" grep -Eq '^Max open files +64 +64' "/proc/$bpid/limits"
# All 32 places free: the start-up ping's child is gone.
wait_for 5 broker_serves "$bpid" 0
mkdir -m 1777 "$WORK/hold"
cat > "$WORK/hold/hold.py" <<'PY'
# Open N connections at once, send nothing, say so, then read what each
# got: busy at once for those past the limits, timeout (request_timeout)
# for those the broker took.
import socket, sys, collections
n = int(sys.argv[2]); socks = []; errs = 0
for _ in range(n):
    s = socket.socket(socket.AF_UNIX)
    try: s.connect(sys.argv[1]); socks.append(s)
    except OSError: errs += 1
open(sys.argv[3], 'w').close()
got = collections.Counter()
for s in socks:
    s.settimeout(30); data = b''
    try:
        while True:
            c = s.recv(4096)
            if not c: break
            data += c
    except OSError: pass
    got['busy' if b'busy' in data else 'timeout' if b'timeout' in data else 'closed' if not data else 'other'] += 1
    s.close()
print(' '.join('%s=%d' % kv for kv in sorted(got.items())), 'connect_errors=%d' % errs)
PY
# /usr/bin/python3: root's PATH may name a python other users cannot run.
hold_as() {  # USER: 150 connections as USER, its tally in hold-USER.out
	setpriv --reuid="$1" --regid="$(id -g "$1")" --clear-groups \
	    /usr/bin/python3 "$WORK/hold/hold.py" "$SOCK" 150 "$WORK/hold/connected-$1" \
	    > "$WORK/hold-$1.out"
}
hold_as nobody & hpid1=$!
hold_as daemon & hpid2=$!
# The broker's 32 places taken: its children wait for a request. They
# are stopped there, so none can time out and free a place while we look.
wait_for 10 test -e "$WORK/hold/connected-nobody" -a -e "$WORK/hold/connected-daemon"
wait_for 10 nchildren "$bpid" 32
kids=$(pgrep -P "$bpid")
kill -STOP $kids
wait_for 5 stopped $kids
check "at capacity: 32 children (max_children), stopped waiting for a request" test "$(wc -w <<<"$kids")" -eq 32 -a "$(stopped $kids && echo yes)" = yes
check "with 300 connections held the broker is alive" kill -0 "$bpid"
bfds=$(fd_count "$bpid")
check "and its own fd table is small ($bfds of 64)" test "$bfds" -lt 32
out=$(sbx ping 2>&1); rc=$?
check "a new client (a third uid) at capacity gets busy" test "$rc" -eq 1 -a "$out" = "sbx: busy: too many connections, try again soon (retry after 500 ms)"
out=$(setpriv --reuid=nobody --regid="$(id -g nobody)" --clear-groups "$SBX" -S "$SOCK" ping 2>&1); rc=$?
check "a uid at its own limit is told which limit" test "$rc" -eq 1 -a "$out" = "sbx: busy: too many connections open for your uid, close one or try again later (retry after 200 ms)"
kill -CONT $kids
wait "$hpid1" "$hpid2"
held="$(cat "$WORK/hold-nobody.out") / $(cat "$WORK/hold-daemon.out")"
note "held connections (nobody / daemon): $held"
check "each uid: 134 past its 16 got busy, its 16 taken timeout, none else" test "$held" = "busy=134 timeout=16 connect_errors=0 / busy=134 timeout=16 connect_errors=0"
wait_for 10 pings
check "service resumes once they are gone" pings
check "the same broker (never restarted)" test "$(broker_pid)" = "$bpid"
# The monitor under the same limit: 100 requests waiting on one hung
# provision each leave the agent's socket with it, more than 64 fds. (A
# real podman cannot start containers under a hard limit of 64.)
stop_monitor
write_conf yes
set_conf max_children 200
set_conf max_connections_per_uid 100
set_conf runtime "$WORK/hang-rt"
set_conf runtime_timeout 3
start_monitor prlimit --nofile=64:64
bpid=$(broker_pid)
: > "$WORK/hang.at"
python3 - "$SOCK" 100 > "$WORK/many.out" <<'PY'
import socket, sys, collections
def s(x): b = x.encode(); return bytes([0xa0 | len(b)]) + b
req = (bytes([0x84]) + s('op') + s('request_sandbox') + s('agent') + s('fx') +
       s('project') + s('cache-only') + s('services') + bytes([0x91]) + s('redis'))
socks = []
for _ in range(int(sys.argv[2])):
    c = socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); c.sendall(req); socks.append(c)
got = collections.Counter()
for c in socks:
    c.settimeout(60); data = b''
    try:
        while True:
            d = c.recv(4096)
            if not d: break
            data += d
    except OSError: pass
    for code in (b'password', b'busy', b'internal', b'timeout', b'runtime_failed'):
        if code in data: got[code.decode()] += 1; break
    else: got['closed' if not data else 'other'] += 1
for k in ('password', 'busy', 'internal', 'timeout', 'runtime_failed', 'closed', 'other'):
    print('%s=%d' % (k, got[k]), end=' ')
print()
PY
many=$(cat "$WORK/many.out")
note "100 waiting requests, monitor RLIMIT_NOFILE 64: $many"
check "the monitor at its fd limit did not kill the broker" test "$(broker_pid)" = "$bpid"
check "it did not take it for a hostile one" lacks "killing the broker" "$(cat "$LOG")"
# Two answers, each for one reason. runtime_failed: the request reached
# the monitor and waited on the hung provision. internal: a child whose
# hand-over failed (ETOOMANYREFS: nobody's in-flight fds past its limit
# while the monitor, at its own limit, leaves them in the channel); the
# broker logs each.
n_int=$(sed -n 's/.*internal=\([0-9]*\).*/\1/p' <<<"$many")
n_rf=$(sed -n 's/.*runtime_failed=\([0-9]*\).*/\1/p' <<<"$many")
n_busy=$(sed -n 's/.*busy=\([0-9]*\).*/\1/p' <<<"$many")
n_relay=$(grep -c '^sbx-broker: hand-over to the monitor: Too many references' "$LOG")
# busy: past the requests one uid may have waiting, which the budget
# of 64 descriptors shrinks to its share (the log's "N for requests").
n_share=$(sed -n 's/.*descriptors: 64: .* \([0-9]*\) for requests.*/\1/p' "$LOG" | tail -1)
check "every request got runtime_failed, busy or internal ($n_rf + $n_busy + $n_int), nothing else" test "$(sed 's/ *$//' <<<"$many")" = "password=0 busy=$n_busy internal=$n_int timeout=0 runtime_failed=$n_rf closed=0 other=0" -a $((n_int + n_rf + n_busy)) -eq 100
# Each busy is a refuse line, or counted in the monitor's suppressed
# line for uid 0 (refusal lines are limited per uid) once its window ends.
busy_lines() { grep -c 'agent=fx .*result=busy op=request_sandbox' "$LOG"; }
mon_suppressed() { sed -n 's/^sbx-monitor: audit event=suppressed uid=0 .* count=\([0-9]*\) by=monitor$/\1/p' "$LOG" | awk '{ n += $1 } END { print n + 0 }'; }
busy_accounted() { [ $(( $(busy_lines) + $(mon_suppressed) )) -eq "$n_busy" ]; }
wait_for 15 busy_accounted
check "at most the budget's share of requests waited ($n_rf <= ${n_share:-?}), the rest busy, each audited ($(busy_lines) lines + $(mon_suppressed) suppressed)" test -n "$n_share" -a "$n_rf" -le "${n_share:-0}" -a "$(busy_lines)" -ge 1
check "each busy accounted for in the log" busy_accounted
check "each internal is a hand-over the kernel refused ($n_relay logged)" test "$n_int" -eq "$n_relay"
check "the runtime was run, and hung, for them" test -s "$WORK/hang.at"
check "the monitor still serves" pings

echo "# the descriptor budget: a monitor at 64 descriptors, real podman"
# max_open_files 64 sets the monitor's soft limit (the hard one stays, so
# podman, which raises its own, still runs). The budget the log states
# is what fills: one pidfd per redis sandbox. Filled to busy, every
# release and every expiry must still work, and nothing may leak.
# Nothing of the sections before is adopted: the budget is all ours.
stop_monitor
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
restart_with max_open_files 64 idle_ttl 25 max_sandboxes_per_uid 0
mpid=$MON_PID
check "the monitor runs with a soft RLIMIT_NOFILE of 64" grep -Eq '^Max open files +64 ' "/proc/$mpid/limits"
nsvc=$(sed -n 's/.*descriptors: 64: .* \([0-9]*\) for services.*/\1/p' "$LOG" | tail -1)
check "it states its budget: ${nsvc:-?} descriptors for services" test -n "$nsvc" -a "${nsvc:-0}" -gt 4
note "$(grep 'descriptors: 64:' "$LOG" | tail -1)"
wait_for 10 no_workers
fds0=$(rest_fds)
fill=$(( ${nsvc:-0} + 3 ))
# Four at a time: the provisions one uid may run at once.
seq "$fill" | xargs -P 4 -I{} sh -c \
    '"$1" -S "$2" request -a d{} -p cache-only redis > "$3/d{}.out" 2>&1' _ "$SBX" "$SOCK" "$WORK"
n_ok=$(grep -l 'REDIS_PASSWORD=' "$WORK"/d*.out | wc -l)
n_busy=$(grep -lx "sbx: busy: the monitor's descriptor budget for sandboxes is spent; try again after a release. (retry after 30000 ms)" "$WORK"/d*.out | wc -l)
note "answers other than a sandbox: $(grep -Lh 'REDIS_PASSWORD=' "$WORK"/d*.out | xargs -r cat | sort | uniq -c | tr '\n' ' ')"
check "filled to busy: $n_ok sandboxes (the budget), $n_busy busy naming it, no other answer" test "$n_ok" -eq "${nsvc:-0}" -a "$n_busy" -eq 3
check "each sandbox is one redis container ($(labelled) labelled)" test "$(labelled)" -eq "$n_ok"
wait_for 10 no_workers
held=$(rest_fds)
check "the monitor holds one pidfd per sandbox ($fds0 + $n_ok = $held of 64)" test "$held" -eq $((fds0 + n_ok)) -a "$held" -le 64
check "no descriptor ran out in the monitor" lacks "Too many open files" "$(cat "$LOG")"
# The newest: the oldest has the least time left before idle_ttl.
first=$(grep -l 'REDIS_PASSWORD=' "$WORK"/d*.out | sort -V | tail -1)
a1=$(basename "$first" .out)
check "a hit at the limit: same credentials" test "$(sbx request -a "$a1" -p cache-only redis 2>&1)" = "$(cat "$first")"
# Release every other sandbox: each must answer "released". In the
# order they were provisioned (d1 d3 d5 ..., not d1 d11 d13 ... d3): each
# is then released about as long after its provision as the fill took,
# well inside idle_ttl (25 s; the fill takes 5-6 s here). In glob order
# d3, of the first four, came tenth, some 10 s idle by then.
released=0 rel_total=0
for f in $(grep -l 'REDIS_PASSWORD=' "$WORK"/d*.out | sort -V | awk 'NR % 2'); do
	rel_total=$((rel_total + 1))
	[ "$(sbx release -a "$(basename "$f" .out)" 2>&1)" = released ] && released=$((released + 1))
done
check "every release at the limit worked ($released of $rel_total)" test "$released" -eq "$rel_total" -a "$rel_total" -gt 0
check "the monitor never failed to start a teardown" lacks "could not start the teardown" "$(cat "$LOG")"
out=$(sbx request -a dnew -p cache-only redis 2>&1)
check "after the releases a new sandbox fits again" grep -q 'REDIS_PASSWORD=' <<<"$out"
left=$(( n_ok - rel_total + 1 ))
# None expired before the releases: a slow host fails here, by name.
check "no sandbox expired while the budget was checked (idle_ttl 25 s)" lacks "audit event=expire" "$(grep 'agent=d' "$LOG")"
# The rest expire (idle_ttl 25 s): every one of them.
none_left() { [ "$(labelled)" -eq 0 ] && [ "$(sbx status --json | grep -c '"agent"')" -eq 0 ]; }
wait_for 75 none_left
n_exp=$(grep -c 'audit event=expire .*agent=d' "$LOG")
check "every remaining sandbox expired ($n_exp of $left), no container left" test "$n_exp" -eq "$left" -a "$(labelled)" -eq 0
wait_for 20 no_workers
wait_for 10 mon_fds_are "$fds0"
check "no leaked fd: the monitor at rest holds what it held before the fill ($fds0 -> $(fd_count "$mpid"))" wait_for 5 mon_fds_are "$fds0"
check "no zombie under the monitor or the broker" wait_for 5 no_zombies
check "the same monitor throughout" test "$MON_PID" = "$mpid" -a -e "/proc/$mpid"

echo "# a pidfd that cannot be opened does not leak its container"
# A runtime that names a pid that cannot exist, in the pid file of a
# unix-only service (and in inspect, for tcp): the provision fails at
# pidfd_open, after the container started. Named podman, so that the
# monitor gives it podman's argv (its own uid range, --pidfile).
mkdir -p "$WORK/lie"
cat > "$WORK/lie/podman" <<'EOF'
#!/bin/sh
# podman, except that the container's pid it reports cannot exist.
pf=
for a; do
	case $a in
	--pidfile=*) pf=${a#--pidfile=} ;;
	inspect) out=$(podman "$@") || exit $?; echo "999999999 ${out#* }"; exit 0 ;;
	esac
done
podman "$@"; rc=$?
[ -n "$pf" ] && [ "$rc" -eq 0 ] && echo 999999999 > "$pf"
exit $rc
EOF
chmod 0755 "$WORK/lie/podman"
restart_with runtime "$WORK/lie/podman"
wait_for 10 no_workers
fds0=$(rest_fds)
out=$(sbx request -a pf1 -p cache-only redis 2>&1 >/dev/null)
check "the request fails: runtime_failed, the service is gone" test "$out" = "sbx: runtime_failed: redis exited right after it became ready."
wait_for 30 made_is pf1 0
check "its container was removed, not leaked" made_is pf1 0
wait_for 20 no_workers
wait_for 10 mon_fds_are "$fds0"
check "no leaked fd ($fds0 -> $(fd_count "$MON_PID"))" wait_for 5 mon_fds_are "$fds0"

echo "# the client goes away while its sandbox is provisioned"
restart_with
gate_hold f9 before
mkfifo "$WORK/f9-leave"
python3 - "$SOCK" "$WORK/f9-leave" <<'PY' &
# request_sandbox for f9/demo; when told, close without reading the reply.
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(bytes.fromhex('84a26f70af726571756573745f73616e64626f78a56167656e74a26639'
                        'a770726f6a656374a464656d6fa8736572766963657391a8706f737467726573'))
open(sys.argv[2]).readline()
s.close()
PY
ppid=$!
wait_for 30 gate_held f9 2
echo leave > "$WORK/f9-leave"
wait "$ppid"
check "the client left while both runs were held" gate_held f9 2
gate_release f9
wait_for 30 cached f9
check "the sandbox is still cached" cached f9
ids9=$(containers f9 0)
t0=$(date +%s%N)
env9=$(sbx request -a f9 -p demo postgres)
hit_ms=$(ms_since "$t0")
check "the next request is a hit, fast (${hit_ms} ms)" test "$hit_ms" -lt 1000
check "and no extra container exists" test "$(containers f9 0)" = "$ids9" -a "$(ncont f9)" -eq 2
eval "$env9"
check "the sandbox works" uses_sandbox

echo "# one uid at its limits costs another nothing"
# A runtime that holds every run for root's agents g1..g5 until
# $WORK/go exists (each held run appends a line to $WORK/held); the
# runs of other uids go straight through. Named podman: podman's argv.
mkdir -p "$WORK/slow"
{
	printf '#!/bin/sh\n# podman, holding the runs of agents g*.\n'
	printf 'for a; do case $a in --label=sbx.agent=g*)\n'
	printf '\techo $$ >> %s/held\n' "$WORK"
	printf '\twhile [ ! -e %s/go ]; do sleep 0.05; done ;;\n' "$WORK"
	printf 'esac; done\nexec podman "$@"\n'
} > "$WORK/slow/podman"
chmod 0755 "$WORK/slow/podman"
rm -f "$WORK/held" "$WORK/go"
restart_with runtime "$WORK/slow/podman"
held_is() { [ "$(cat "$WORK/held" 2>/dev/null | wc -l)" -eq "$1" ]; }
gpids=
for i in 1 2 3 4; do
	sbx request -a g$i -p cache-only redis > "$WORK/g$i.out" 2>&1 &
	gpids="$gpids $!"
done
wait_for 30 held_is 4
check "root runs 4 provisions (max_provisions_per_uid), all held" held_is 4
# Its fifth waits its turn in root's queue: no busy, no provision yet.
sbx request -a g5 -p cache-only redis > "$WORK/g5.out" 2>&1 &
gpids="$gpids $!"
sleep 1
check "its fifth waits its turn: no answer, no fifth run, while the 4 are held" test ! -s "$WORK/g5.out" -a "$(held_is 4 && echo held)" = held
t0=$(date +%s%N)
out=$(sbx_as nobody request -a n1 -p cache-only redis 2>&1)
n1_ms=$(ms_since "$t0")
check "another uid's miss is provisioned meanwhile (${n1_ms} ms), root's 4 still held" test -n "$(grep REDIS_PASSWORD= <<<"$out")" -a "$(held_is 4 && echo held)" = held -a ! -e "$WORK/go"
t0=$(date +%s%N)
sbx_as nobody request -a n1 -p cache-only redis > /dev/null 2>&1
hit_ms=$(ms_since "$t0")
check "and its hit is fast (${hit_ms} ms, runuser included)" test "$hit_ms" -lt 100
: > "$WORK/go"
wait $gpids	# not a bare wait: the monitor is a job of ours too
n_g=$(grep -l REDIS_PASSWORD= "$WORK"/g[1-5].out | wc -l)
check "once let go, root's 4 provisions answer with sandboxes, and the fifth in its turn ($n_g)" test "$n_g" -eq 5
for i in 1 2 3 4 5; do sbx release -a g$i >/dev/null; done

echo "# subordinate uids count toward their owner, or are refused"
# nobody owns 300000-300009 in a subuid file of our own; uid 300001 is
# what nobody would be inside a user namespace. nobody holds n1.
printf 'nobody:300000:10\n' > "$WORK/subuid"
restart_with runtime "$WORK/slow/podman" subuid_file "$WORK/subuid" max_sandboxes_per_uid 1
check "nobody's sandbox was adopted" test -n "$(sbx status --json | grep '"n1"')"
as_uid() { local u=$1; shift; setpriv --reuid="$u" --regid="$u" --clear-groups "$WORK/sbx" -S "$SOCK" "$@"; }
out=$(as_uid 300001 request -a s1 -p cache-only redis 2>&1 >/dev/null)
check "subuid = count: 300001 is busy on nobody's quota" test "$out" = "sbx: busy: this user already holds 1 sandboxes, the most one user may (max_sandboxes_per_uid). (retry after 10000 ms)"
out=$(as_uid 300010 request -a s1 -p cache-only redis 2>&1)
check "300010, past the range, is a user of its own: a sandbox" grep -q REDIS_PASSWORD= <<<"$out"
as_uid 300010 release -a s1 >/dev/null
sbx_as nobody release -a n1 >/dev/null
out=$(as_uid 300001 request -a s1 -p cache-only redis 2>&1)
check "once nobody released, 300001 gets one" grep -q REDIS_PASSWORD= <<<"$out"
as_uid 300001 release -a s1 >/dev/null
restart_with runtime "$WORK/slow/podman" subuid_file "$WORK/subuid" subuid refuse
out=$(as_uid 300001 request -a s1 -p cache-only redis 2>&1 >/dev/null)
check "subuid = refuse: 300001 is forbidden, the sentence says why" test "$out" = "sbx: forbidden: uid 300001 is a subordinate uid of uid 65534, and this host refuses those (subuid = refuse)."
check "and available offers it nothing" test -z "$(as_uid 300001 available cache-only 2>&1)"
check "nobody itself is served" grep -q REDIS_PASSWORD= <<<"$(sbx_as nobody request -a n2 -p cache-only redis 2>&1)"
sbx_as nobody release -a n2 >/dev/null

echo "# a SIGHUP that cannot read keeps what it had"
# The subuid file writable by others and the projects directory a plain
# file: the reload's worker takes neither, and the monitor keeps both
# tables as they were. Were either dropped, 300001 would be served (no ranges) or
# cache-only would be an unknown project (no policies).
reloads() { grep -c -e 'reloaded .* project policies' -e 'project policies were not read again' "$LOG"; }
hup() { local n; n=$(reloads); kill -HUP "$MON_PID"; wait_until 10 '[ "$(reloads)" -gt "$n" ]'; }
chmod 0666 "$WORK/subuid"
mv "$WORK/projects" "$WORK/projects.away"; : > "$WORK/projects"
hup
check "the policies are kept, and the log says so" grep -q 'reload: the project policies were not read again; keeping the 4 read before' "$LOG"
check "the subordinate uids too, naming why" grep -q "subordinate uids: $WORK/subuid must be a root-owned file that only root may write; keeping the 1 ranges read before" "$LOG"
out=$(as_uid 300001 request -a s1 -p cache-only redis 2>&1 >/dev/null)
check "300001 is still refused as nobody's subordinate uid" test "$out" = "sbx: forbidden: uid 300001 is a subordinate uid of uid 65534, and this host refuses those (subuid = refuse)."
check "nobody is still served cache-only" grep -q REDIS_PASSWORD= <<<"$(sbx_as nobody request -a n3 -p cache-only redis 2>&1)"
sbx_as nobody release -a n3 >/dev/null
rm "$WORK/projects"; mv "$WORK/projects.away" "$WORK/projects"
printf 'nobody:300000:1\n' > "$WORK/subuid"; chmod 0644 "$WORK/subuid"
hup
check "a reload that reads them takes them again" grep -q 'reloaded 4 project policies' "$LOG"
check "300001, now past nobody's one uid, is served" grep -q REDIS_PASSWORD= <<<"$(as_uid 300001 request -a s1 -p cache-only redis 2>&1)"
as_uid 300001 release -a s1 >/dev/null
printf 'nobody:300000:10\n' > "$WORK/subuid"

echo "# the broker counts a subordinate uid's connections toward its owner"
# max_connections_per_uid 2: two idle connections of 300001 and 300002
# (both nobody's) fill nobody's share, so a third from 300003 is busy
# for that reason, while 300010 (nobody's neighbour, its own user) and
# root are served.
restart_with runtime "$WORK/slow/podman" subuid_file "$WORK/subuid" max_connections_per_uid 2
hold() {  # uid: a connection that sends nothing, held until killed
	setpriv --reuid="$1" --regid="$1" --clear-groups /usr/bin/python3 -c '
import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
print("up", flush=True); time.sleep(30)' "$SOCK" > "$WORK/hold-$1" 2>&1 &
	HOLDERS="$HOLDERS $!"
}
HOLDERS=
hold 300001; hold 300002
# Counted once the broker has a child for each (accepted, not only queued).
wait_for 10 broker_serves "$(broker_pid)" 2
check "the broker holds both connections" broker_serves "$(broker_pid)" 2
out=$(as_uid 300003 ping 2>&1)
check "a third subordinate uid of nobody is busy: nobody's share is full" grep -q 'too many connections open for your uid' <<<"$out"
check "300010, past the range, is served" test "$(as_uid 300010 ping 2>&1)" = "$("$SBX" -S "$SOCK" ping)"
check "root is served" pings
kill $HOLDERS 2>/dev/null; wait $HOLDERS 2>/dev/null

echo "# a teardown the runtime refuses"
# The gate fails every rm while refuse-rm is there. The release says so
# in the runtime's words and changes nothing: the sandbox, its container
# and its record are still the agent's. Once the runtime works again, a
# release removes them.
restart_with
pw=$(sbx request -a td -p cache-only redis 2>&1 | grep REDIS_PASSWORD=)
check "td is served" test -n "$pw"
touch "$GATE/refuse-rm"
out=$(sbx release -a td 2>&1)
check "the release is runtime_failed, in the runtime's words" test "$out" = "sbx: runtime_failed: the sandbox could not be torn down: teardown: the runtime failed: Error: rm refused by the test's gate"
check "the log says which sandbox and why" grep -q "teardown uid=0 agent=td project=cache-only: teardown: the runtime failed: Error: rm refused by the test's gate" "$LOG"
check "its container is still there" made_is td 1
check "and its record" test -f "$WORK/state/sandboxes/0-td"
check "the next request is a hit with the same password" test "$(sbx request -a td -p cache-only redis 2>&1 | grep REDIS_PASSWORD=)" = "$pw"
rm -f "$GATE/refuse-rm"
check "a release once the runtime works again removes it" test "$(sbx release -a td 2>&1)" = released
check "its container is gone" made_is td 0
check "and its record" test ! -e "$WORK/state/sandboxes/0-td"

echo "# a reload that meets a provision in flight"
# Its project goes while the provision is held: the reload counts it as
# busy, the agent is still answered, and once idle the sandbox is torn
# down at the next tick (a request would be refused before the cache).
gate_hold hb before
sbx request -a hb -p cache-only redis > "$WORK/hb.out" 2>&1 &
hbp=$!
wait_for 30 gate_held hb 1
mv "$WORK/projects/cache-only.conf" "$WORK/cache-only.away"
hup
check "the reload counts the provision in flight" grep -q "reloaded 3 project policies; 0 sandboxes lose services, 1 busy ones are checked when idle" "$LOG"
gate_release hb
wait "$hbp"
check "its agent is answered" grep -q REDIS_PASSWORD= "$WORK/hb.out"
wait_for 10 made_is hb 0
check "then it is torn down: its project is gone" made_is hb 0
check "audited as a revocation" grep -q "audit event=revoke uid=0 agent=hb " "$LOG"
mv "$WORK/cache-only.away" "$WORK/projects/cache-only.conf"

echo "# the broker cannot fork all its spares"
# RLIMIT_NPROC 3 for the broker's uid (the monitor, root, is exempt):
# the broker and two children. A spare it cannot fork is tried again a
# second later; before, the loop tried again at once, forever.
stop_monitor
start_monitor prlimit --nproc=3 --
bpid=$(broker_pid)
check "it serves" pings
sleep 0.5
t0=$(awk '{print $14 + $15}' "/proc/${bpid:-0}/stat")
sleep 3
t1=$(awk '{print $14 + $15}' "/proc/${bpid:-0}/stat")
check "idle, it does not spin: $((t1 - t0)) ticks of CPU in 3 s" test "$((t1 - t0))" -le 10
check "and serves again" pings
stop_monitor
start_monitor

finish
