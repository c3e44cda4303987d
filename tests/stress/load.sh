#!/usr/bin/env bash
# load.sh - tests/stress/load.c against a real monitor: 200 concurrent
# clients, 20 000 requests (ping, available, cache hits, bad input, slow
# dribbling clients). Root, under `flock /tmp/sbx-podman.lock`.
# Prints the figures and "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

CLIENTS=${SBX_LOAD_CLIENTS:-200}
REQUESTS=${SBX_LOAD_REQUESTS:-20000}
write_conf yes
# Room for every client at once, so busy means a fault, not capacity.
set_conf max_children 256
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
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
check "no busy answer (max_children 256 > $CLIENTS clients)" test "$(fig busy)" = 0
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
no_children() { [ -z "$(pgrep -P "$bpid")" ]; }
wait_for 5 no_children
check "no zombie under the broker: every child exited and was reaped" no_children
check "the hit agents still have one container each" test "$(labelled)" -eq 3
finish
