#!/usr/bin/env bash
# ranges.sh - a uid range goes to no other sandbox while anything of its
# sandbox may still run as its uids: a failed provision whose removal the
# runtime refused, and a reset's worker that runs on after its reply
# (docs/contract.md, "Isolation"). A real podman behind the gate
# (lib.sh); root, under `flock /tmp/sbx-podman.lock`. Prints "N passed,
# N failed".
set -u
. "$(dirname "$0")/lib.sh"

cleanup_hook() {
	[ -n "${stopped:-}" ] && kill -CONT $stopped 2>/dev/null
	gate_open_all
}
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
gate_runtime
write_conf yes
set_conf runtime "$GATE/podman"
set_conf runtime_timeout 3
start_monitor || exit 1

# base AGENT: the first host uid of AGENT's redis container.
base() {
	local pid
	pid=$($RT inspect --format '{{.State.Pid}}' "sbx-0-$1-redis" 2>/dev/null) &&
	    awk 'NR == 1 { print $2 }' "/proc/$pid/uid_map"
}
request() { sbx request -a "$1" -p cache-only redis 2>&1; }

echo "# a failed provision whose removal the runtime refuses"
# r1's run is held after its container started, past the run's deadline:
# the provision fails, and its removal of r1's containers is refused.
touch "$GATE/refuse-rm"
gate_hold r1 after
out=$(request r1)
gate_release r1
check "r1's provision fails" grep -q runtime_failed <<<"$out"
b1=$(base r1)
check "its container runs on, in a range of its own" test -n "$b1"
out=$(request r2)
check "r2 is served" grep -q REDIS_PASSWORD= <<<"$out"
b2=$(base r2)
check "r2 does not get the range r1's container runs in" test -n "$b2" -a "$b2" != "$b1"
check "the log says the range stays taken" grep -q "stays taken until the runtime removes" "$LOG"
rm -f "$GATE/refuse-rm"
request r1 >/dev/null
check "once the runtime removes r1's containers, a release says so" test "$(sbx release -a r1 2>&1)" = released
check "r1 has no container left" test -z "$(containers r1)"
sbx release -a r2 >/dev/null

echo "# a reset whose worker runs on after its reply"
# r3's redis is stopped, so the reset's session child waits for it: the
# reply comes at the deadline, and its worker, stopped then, runs on. A
# release of r3 and a provision of r4 meanwhile: r4 must not get the
# range the worker and its child run in.
request r3 >/dev/null
b3=$(base r3)
top=$((b3 + 65535))
svc=$($RT inspect --format '{{.State.Pid}}' sbx-0-r3-redis)
kill -STOP "$svc"
sbx reset -a r3 > "$WORK/r3.out" 2>&1 &
rp=$!
child=
wait_for 10 pgrep -u "$top" >/dev/null && child=$(pgrep -u "$top" | head -1)
check "the reset's session child runs as the range's top uid" test -n "$child"
worker=$(ps -o ppid= -p "${child:-1}" | tr -d ' ')
stopped="$svc"
# The worker answers at its own deadline; then it is stopped.
wait "$rp"
kill -STOP "$worker"
stopped="$svc $worker"
check "the reset is answered" test -s "$WORK/r3.out"
check "its worker still runs after the reply" kill -0 "$worker"
check "r3 is released" test "$(sbx release -a r3 2>&1)" = released
out=$(request r4)
check "r4 is served" grep -q REDIS_PASSWORD= <<<"$out"
b4=$(base r4)
check "r4 does not get the range r3's worker runs in" test -n "$b4" -a "$b4" != "$b3"
kill -CONT $stopped 2>/dev/null
stopped=
sbx release -a r4 >/dev/null
finish
