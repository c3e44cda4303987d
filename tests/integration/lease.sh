#!/usr/bin/env bash
# lease.sh - bind_pid (docs/contract.md, "Wire protocol"): a sandbox bound
# to a process of its owner's goes when that process exits, however it
# exits, across a restart of the monitor too; a process of another uid
# cannot be bound; a hit re-binds. Two real uids, a real podman.
set -u
. "$(dirname "$0")/lib.sh"

UA=sbx-it-la UB=sbx-it-lb
throwaway_users $UA $UB
uid_a=$(id -u $UA)
# The sleepers are the throwaway users' only processes: none outlives us
# (each holds a copy of the host lock's descriptor).
cleanup_hook() {
	pkill -u "$UA" -x sleep 2>/dev/null
	pkill -u "$UB" -x sleep 2>/dev/null
}
# sleeper USER: a process of USER's that lives until killed; its pid.
sleeper() {
	runuser -u "$1" -- sleep 600 >/dev/null 2>&1 &
	local p=$!
	# runuser's child is the sleep: the process USER owns.
	wait_for 5 test -n "$(pgrep -P "$p" -x sleep)"
	pgrep -P "$p" -x sleep
}
held() { test "$(containers "$1" "$uid_a" | wc -w)" -gt 0; }
# gone_within MS AGENT: the key's containers are gone within MS ms;
# prints how long it took.
gone_ms() {
	local t0=$1 agent=$2 n=400
	while [ $n -gt 0 ] && held "$agent"; do sleep 0.01; n=$((n - 1)); done
	held "$agent" && { echo 99999; return; }
	echo $(( ($(date +%s%N) - t0) / 1000000 ))
}

$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
write_conf yes
start_monitor || exit 1

echo "# bound to a process that exits"
p=$(sleeper $UA)
out=$(sbx_as $UA request -a l1 -p cache-only --bind-pid "$p" redis 2>&1)
check "A binds its sandbox to its own process ($p)" held l1
check "status shows the bound pid" grep -q "\"bind_pid\":$p" <<<"$(sbx_as $UA status --json 2>&1)"
t0=$(date +%s%N); kill "$p"
ms=$(gone_ms "$t0" l1)
check "the process exits: its sandbox goes within 2 s ($ms ms)" test "$ms" -le 2000
check "audited with why" grep -q "audit event=release uid=$uid_a agent=l1 .*reason=bind_pid_exited pid=$p" "$LOG"

echo "# killed with SIGKILL"
p=$(sleeper $UA)
sbx_as $UA request -a l2 -p cache-only --bind-pid "$p" redis >/dev/null 2>&1
t0=$(date +%s%N); kill -9 "$p"
ms=$(gone_ms "$t0" l2)
check "kill -9: gone within 2 s ($ms ms)" test "$ms" -le 2000

echo "# another uid's process"
q=$(sleeper $UB)
out=$(sbx_as $UA request -a l3 -p cache-only --bind-pid "$q" redis 2>&1); rc=$?
check "A cannot bind B's process: forbidden" test "$rc" -ne 0 -a -n "$(grep forbidden <<<"$out")"
check "and nothing was made" test "$(containers l3 "$uid_a" | wc -w)" -eq 0
out=$(sbx_as $UA request -a l3 -p cache-only --bind-pid 1 redis 2>&1)
check "nor root's (pid 1)" grep -q forbidden <<<"$out"

echo "# a hit re-binds"
p1=$(sleeper $UA); p2=$(sleeper $UA)
e1=$(sbx_as $UA request -a l4 -p cache-only --bind-pid "$p1" redis 2>&1)
e2=$(sbx_as $UA request -a l4 -p cache-only --bind-pid "$p2" redis 2>&1)
check "the second request is a hit (the same credentials)" test -n "$e1" -a "$e1" = "$e2"
kill "$p1"; sleep 1
check "the first process exits: the sandbox stays (bound to the second)" held l4
kill "$p2"
check "the second exits: it goes" wait_for 3 bash -c "! $RT ps -q --filter label=sbx.agent=l4 | grep -q ."

echo "# across a restart"
p=$(sleeper $UA); pk=$(sleeper $UA)
sbx_as $UA request -a l5 -p cache-only --bind-pid "$p" redis >/dev/null 2>&1
sbx_as $UA request -a l6 -p cache-only --bind-pid "$pk" redis >/dev/null 2>&1
stop_monitor
kill "$p"
start_monitor || exit 1
check "a process that exited while the monitor was down: found at adoption" wait_for 10 bash -c "! $RT ps -q --filter label=sbx.agent=l5 | grep -q ."
check "said why" grep -q "audit event=discard uid=$uid_a agent=l5 .*reason=bind_pid_exited" "$LOG"
check "a live one's sandbox is adopted" held l6
check "still bound (status)" grep -q "\"bind_pid\":$pk" <<<"$(sbx_as $UA status --json 2>&1)"
t0=$(date +%s%N); kill "$pk"
ms=$(gone_ms "$t0" l6)
check "its process exits: gone within 2 s ($ms ms)" test "$ms" -le 2000

echo "# twenty leases, each gone within 2 s"
worst=0
for i in $(seq 20); do
	p=$(sleeper $UA)
	sbx_as $UA request -a "lr$i" -p cache-only --bind-pid "$p" redis >/dev/null 2>&1
	t0=$(date +%s%N); kill "$p"
	ms=$(gone_ms "$t0" "lr$i")
	[ "$ms" -gt "$worst" ] && worst=$ms
done
check "the slowest of 20 went in $worst ms (<= 2000)" test "$worst" -le 2000

finish
