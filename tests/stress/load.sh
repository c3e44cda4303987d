#!/usr/bin/env bash
# load.sh - tests/stress/load.c against a real monitor: 200 concurrent
# clients, 20 000 requests (ping, available, cache hits, bad input, slow
# dribbling clients); then 16 clients at 32 places, whose exiting
# children fill the table (none told busy); then fairness between uids:
# one throwaway uid floods the broker with connections while another's
# hits and a miss are served as if it did not. Root, under `flock /tmp/sbx-podman.lock`.
# Prints the figures and "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

CLIENTS=${SBX_LOAD_CLIENTS:-200}
REQUESTS=${SBX_LOAD_REQUESTS:-20000}
write_conf yes
# Room for every client at once, so busy means a fault, not capacity:
# here one uid (root) runs all 200. A child holds its place until it has
# exited, and a client has its reply (from the monitor) before its child
# is gone, so a client's next connection can meet its last child still
# exiting (a CI run on a fast host saw 10 busy of 20,000 at 256 places
# for 200 clients; 114 in a run by hand). The most the config allows:
# ten places a client, each a whole round trip apart.
set_conf max_children 4096
set_conf max_connections_per_uid 2048
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
# Other uids run it too: a copy they may execute.
cp "$B/stress-load" "$WORK/stress-load" && chmod 0755 "$WORK/stress-load"
# hitting N AGENT HITS NAME [PREFIX...]: N clients at once, each HITS
# hits of AGENT's sandbox back to back (PREFIX runs each, e.g. as another
# user); prints how many had every answer the sandbox.
hitting() {
	local n=$1 agent=$2 hits=$3 name=$4 i pids=
	shift 4
	for i in $(seq "$n"); do
		"$@" "$WORK/stress-load" hits "$SOCK" "$agent" "$hits" \
		    > "$WORK/$name-$i.out" 2>&1 &
		pids="$pids $!"
	done
	wait $pids
	grep -l "^hits $hits: wrong 0," "$WORK/$name"-*.out | wc -l
}
start_monitor || exit 1
bpid=$(broker_pid)

echo "# $CLIENTS clients, $REQUESTS requests"
"$B/stress-load" "$SOCK" "$MON_PID" "$CLIENTS" "$REQUESTS" > "$WORK/load.out" 2>&1
rc=$?
sed 's/^/  /' "$WORK/load.out"
fig() { sed -n "s/.*$1 \([0-9]*\).*/\1/p" "$WORK/load.out" | head -1; }
check "the generator ran every request and found nothing wrong" test "$rc" -eq 0
check "zero wrong answers" test "$(fig 'wrong answers')" = 0
check "every reply within its deadline" test "$(fig late)" = 0
# Sized for all clients at once: busy would mean children not reaped.
check "no busy answer (max_connections_per_uid 2048 for $CLIENTS clients)" test "$(fig busy)" = 0
check "requests done: $REQUESTS" grep -q "requests $REQUESTS:" "$WORK/load.out"
read -r f0 f1 r0 r1 < <(sed -n 's/.*fds \([0-9]*\) -> \([0-9]*\), VmRSS \([0-9]*\) -> \([0-9]*\).*/\1 \2 \3 \4/p' "$WORK/load.out")
check "the monitor's fds at rest unchanged (${f0:-?} -> ${f1:-?})" test "${f1:-x}" = "${f0:-y}"
# 256 KiB: malloc keeps freed chunks and a page or two of heap top; a
# leak of even 20 bytes a request would be 400 KiB here.
check "no RSS growth in the monitor beyond 256 KiB (${r0:-?} -> ${r1:-?} KiB)" test "${r1:-999999}" -le $(( ${r0:-0} + 256 ))
check "the same broker throughout" test "$(broker_pid)" = "$bpid"
check "the monitor still serves" pings
# A client has its reply before its child exits: wait for the broker to
# reap them all (a zombie would stay listed).
# Its spares (at most 8, broker/spare.c) stay: they serve nobody yet.
at_rest() { [ "$(zombies "$bpid")" -eq 0 ] && broker_serves "$bpid" 0 && [ "$(pgrep -P "$bpid" | wc -l)" -le 8 ]; }
check "no zombie under the broker, no child holds a connection, at most its 8 spares are left" wait_for 5 at_rest
check "the hit agents still have one container each" test "$(labelled)" -eq 3

echo "# a table full of children that only exit: connections wait, not busy"
# 16 clients of one uid back to back, at 32 places (its share is 16):
# its children that handed their requests over still exit while its
# next connections come, and fill the table. The broker stops taking
# connections until the next reap rather than answer busy
# (broker.c, accepting): before, 1 to 16 of the 16 clients met a busy
# here (limit=children), in each of three runs.
stop_monitor
write_conf yes
set_conf max_children 32
set_conf max_connections_per_uid 16
start_monitor || exit 1
sbx request -a full-hit -p cache-only redis > "$WORK/full-hit.out" 2>&1
nfull=$(hitting 16 full-hit 300 full)
check "16 clients at 32 places, 300 hits each back to back: every answer the sandbox, none busy ($nfull of 16)" test "$nfull" -eq 16
check "no refusal for limit=children in the log" lacks "limit=children" "$(cat "$LOG")"
sbx release -a full-hit >/dev/null 2>&1

echo "# fairness: one uid floods the broker, another is served meanwhile"
# The shipped limits (max_children 128, max_connections_per_uid 16),
# the gate as runtime (lib.sh) to see when a provision starts.
UF=sbxl-flood UO=sbxl-other
FLOOD_THREADS=${SBX_FLOOD_THREADS:-200}
MADE= FPID=
for u in $UF $UO; do
	id "$u" >/dev/null 2>&1 && continue
	useradd -M -r -s /usr/sbin/nologin "$u" && MADE="$MADE $u"
done
cleanup_hook() {
	local u
	[ -z "$FPID" ] || { kill "$FPID" 2>/dev/null; wait "$FPID" 2>/dev/null; }
	for u in $MADE; do userdel "$u" 2>/dev/null; done
}
uf=$(id -u $UF) uo=$(id -u $UO)
# as USER: the prefix that runs a command as USER. setpriv execs it, and
# it is not a function (a function put in the background is a subshell),
# so $! is the program itself, which SIGTERM must reach.
as() { echo "setpriv --reuid=$1 --regid=$(id -g "$1") --clear-groups"; }
stop_monitor
write_conf yes
gate_runtime
set_conf runtime "$GATE/podman"
start_monitor || exit 1
bpid=$(broker_pid)
check "the shipped per-uid limit: 16 of 128" grep -q 'at most 128 connections, 16 per uid' "$LOG"
sbx_as $UO request -a fair-hit -p cache-only redis > "$WORK/fair-hit.out" 2>&1
check "the other uid has a sandbox to hit" grep -q REDIS_PASSWORD "$WORK/fair-hit.out"
# As many clients of one uid as its share (16), back to back: a child
# that has handed its request over no longer counts for its uid
# (conntab.c), and it stops counting before the monitor can answer, so
# a client's next connection never meets its own last one: zero busy,
# not "few". (Before, a child counted until it was reaped.)
# Its own agent: the hits of fair-hit are counted in the audit trail below.
sbx_as $UO request -a back-hit -p cache-only redis > "$WORK/back-hit.out" 2>&1
n16=$(hitting 16 back-hit 150 hits16 $(as $UO))
check "16 clients of one uid at its share of 16, 150 hits each back to back: every answer the sandbox, none busy ($n16 of 16 clients)" test "$n16" -eq 16

$(as $UF) "$WORK/stress-load" flood "$SOCK" "$FLOOD_THREADS" > "$WORK/flood.out" 2>&1 &
FPID=$!
FLOOD_T0=$(date +%s)
# Under way: the flood uid holds its 16 places and is refused past them.
flood_full() {
	[ "$(pgrep -P "$bpid" | wc -l)" -ge 16 ] &&
	    grep -q "audit event=refuse uid=$uf .*result=busy op=- by=broker limit=connections_per_uid\$" "$LOG"
}
wait_for 10 flood_full
check "the flood ($FLOOD_THREADS threads of uid $uf) holds its 16 places and is refused past them" flood_full

# 1000 hits, about 6 s: past request_timeout (5 s), so the flood's held
# places time out and are taken again while the other uid is served.
$(as $UO) "$WORK/stress-load" hits "$SOCK" fair-hit 1000 > "$WORK/hits.out" 2>&1; rc=$?
note "$(cat "$WORK/hits.out")"
hp99=$(sed -n 's/.*p99 \([0-9.]*\) ms.*/\1/p' "$WORK/hits.out")
hmax=$(sed -n 's/.*max \([0-9.]*\) ms.*/\1/p' "$WORK/hits.out")
check "the other uid's 1000 hits during the flood: every one right" test "$rc" -eq 0
# Under 100 ms (issue #15) as the 99th percentile, and none near
# starvation. The slowest of 1000 is not the figure: on this 2-core host
# it was 31-155 ms over twelve runs (three past 100 ms) while p99 stayed
# at 14-25 ms. perf sched: in those, the other uid's broker child, runnable
# among the flood's 200 threads, ran 0.1 ms slices some 5 ms apart; the
# scheduler's share per thread, not a queue of sbx's (bench/README.md).
check "and 99 % answered in under 100 ms (p99 ${hp99:-?} ms), every one in under 1 s (max ${hmax:-?} ms)" awk -v p="${hp99:-999}" -v m="${hmax:-9999}" 'BEGIN { exit !(p < 100 && m < 1000) }'

# A miss: the time from the request to its runtime's `run` (the gate
# holds it there and notes when), against request_timeout (5 s), which
# is what waiting behind the flood's idle connections would cost.
gate_hold fair-miss before
t0=$(date +%s.%N)
sbx_as $UO request -a fair-miss -p cache-only redis > "$WORK/fair-miss.out" 2>&1 &
mpid=$!
wait_for 10 gate_held fair-miss 1
started_ms=$(awk -v a="$t0" -v b="$(stat -c %.9Y "$GATE/at-fair-miss" 2>/dev/null || echo 0)" 'BEGIN { printf "%d", (b - a) * 1000 }')
check "the other uid's miss reached the runtime in ${started_ms} ms, under 1000, during the flood" test "$started_ms" -ge 0 -a "$started_ms" -lt 1000
gate_release fair-miss
wait "$mpid"
check "and its provision completed (credentials)" grep -q REDIS_PASSWORD "$WORK/fair-miss.out"

# The flood's held places time out after request_timeout (5 s) and are
# taken again: it runs two of those and more, however fast the hits
# above were, so that the check below does not hang on their speed.
while [ $(( $(date +%s) - FLOOD_T0 )) -lt 12 ]; do sleep 0.2; done
kill -TERM "$FPID"
wait "$FPID"; rc=$?
FPID=
note "$(cat "$WORK/flood.out")"
ffig() { sed -n "s/.*$1 \([0-9.]*\).*/\1/p" "$WORK/flood.out" | head -1; }
check "the flood ran and stopped cleanly" test "$rc" -eq 0
check "its held places were taken again after request_timeout ($(ffig timeout) timeouts > 16)" test "$(ffig timeout)" -gt 16
check "the flood uid got busy past its limit ($(ffig busy_uid) times), never the global busy" test "$(ffig busy_uid)" -gt 0 -a "$(ffig busy_all)" = 0
check "every flood connection got busy or timeout: none other, none refused" test "$(ffig other)" = 0 -a "$(ffig connect_errors)" = 0
# Every refusal is either a line or counted in a suppressed line, once
# the last window (5 s) has closed and every child is reaped.
refuse_lines() { grep -c "^sbx-broker: audit event=refuse uid=$uf " "$LOG"; }
suppressed() { sed -n "s/^sbx-broker: audit event=suppressed uid=$uf .* count=\([0-9]*\) by=broker\$/\1/p" "$LOG" | awk '{ n += $1 } END { print n + 0 }'; }
accounted() { [ $(( $(refuse_lines) + $(suppressed) )) -eq "$(ffig refusals || true)" ] 2>/dev/null; }
wait_for 15 accounted
secs=$(ffig seconds)
check "the flood's $(ffig refusals) refusals: $(refuse_lines) lines + $(suppressed) in suppressed lines, none lost" accounted
check "at most 10 + 1 a second of them logged ($(refuse_lines) in ${secs} s)" test "$(refuse_lines)" -le $(( 10 + ${secs%.*} + 1 ))
check "the log says what it suppressed" grep -q "^sbx-broker: audit event=suppressed uid=$uf agent=- project=- services=- result=refuse count=[0-9]* by=broker\$" "$LOG"
check "no refusal at all for the other uid" test "$(grep -c "audit event=refuse uid=$uo " "$LOG")" -eq 0
check "every one of its hits in the audit trail (1001)" test "$(grep -c "^sbx-monitor: audit event=hit uid=$uo agent=fair-hit " "$LOG")" -eq 1001
check "the same broker throughout the flood" test "$(broker_pid)" = "$bpid"

echo "# refusals the monitor makes, flooded by one uid"
# Well-formed requests the monitor refuses (an unknown project): their
# lines are limited per uid too, and the other uid's refusal still shows.
n=0
while [ "$n" -lt 60 ]; do sbx_as $UF request -a mflood -p no-such-project redis >/dev/null 2>&1; n=$((n + 1)); done
sbx_as $UO request -a other -p no-such-project redis >/dev/null 2>&1
mref() { grep -c "^sbx-monitor: audit event=refuse uid=$1 .*result=unknown_project" "$LOG"; }
msup() { sed -n "s/^sbx-monitor: audit event=suppressed uid=$uf .* count=\([0-9]*\) by=monitor\$/\1/p" "$LOG" | awk '{ n += $1 } END { print n + 0 }'; }
maccounted() { [ $(( $(mref "$uf") + $(msup) )) -eq 60 ]; }
wait_for 15 maccounted
check "60 refusals of one uid: $(mref "$uf") lines + $(msup) suppressed, none lost" maccounted
check "fewer than 60 lines for it" test "$(mref "$uf")" -lt 60
check "the other uid's refusal is logged" test "$(mref "$uo")" -eq 1
finish
