#!/usr/bin/env bash
# run.sh - integration tests: a real sbx-monitor and sbx-broker, a real
# podman, real postgres and redis containers, real psql and redis-cli.
# Needs root, `make` and `make images` done. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/lib.sh"

# The runtime is the gate (lib.sh): podman, except where a check holds
# an agent's runs at a known point.
gate_runtime
write_conf yes
set_conf runtime "$GATE/podman"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
start_monitor || exit 1

echo "# process separation"
BPID=$(pgrep -P "$MON_PID" -x sbx-broker | head -1)
check "broker runs as nobody" test "$(awk '/^Uid:/{print $2 $3 $4 $5}' /proc/$BPID/status)" = 65534655346553465534
check "broker has no capabilities" grep -q '^CapEff:[[:space:]]*0000000000000000' /proc/$BPID/status
check "broker is seccomp-filtered" grep -q '^Seccomp:[[:space:]]*2' /proc/$BPID/status
check "broker has no_new_privs" grep -q '^NoNewPrivs:[[:space:]]*1' /proc/$BPID/status

echo "# protocol"
check "ping answers a version" bash -c "'$SBX' -S '$SOCK' ping | grep -Eq '^[0-9]+\.[0-9]+\.[0-9]+$'"
check "available lists the opted-in set" test "$(sbx available demo | tr '\n' ' ')" = "postgres redis "
check "available for an unknown project is empty" test -z "$(sbx available nosuch)"
out=$(sbx request -a a1 -p demo mysql 2>&1); rc=$?
refused_with() { [ "$1" -ne 0 ] && grep -q "$2" <<<"$3"; }
check "a service outside the set is not_opted_in" refused_with "$rc" not_opted_in "$out"
check "not_opted_in provisioned nothing" test "$(labelled)" -eq 0
out=$(sbx request -a a1 -p nosuch postgres 2>&1)
check "unknown project is unknown_project" grep -q unknown_project <<<"$out"
# The broker's spares (broker/spare.c), forked once it is quiet, wait for
# an agent socket already confined: its filter and a child's, stacked.
# All 8 (a quarter of max_children 128): then no child is still exiting
# or being forked, and none comes or goes while this looks.
spares_confined() {
	local p n=0
	for p in $(pgrep -P "$BPID"); do
		grep -q '^Seccomp_filters:[[:space:]]*2$' "/proc/$p/status" || return 1
		n=$((n + 1))
	done
	[ "$n" -eq 8 ]
}
check "the broker's spares wait confined (its filter and a child's)" wait_for 5 spares_confined

echo "# real services, as root"
t0=$(date +%s.%N)
env1=$(sbx request -a a1 -p demo postgres) || nok "request as root" "$env1"
t1=$(date +%s.%N)
note "cold provision postgres+redis: $(awk "BEGIN{printf \"%.2f\", $t1 - $t0}") s"
eval "$env1"
check "psql and redis-cli work with the returned credentials" uses_sandbox
check "a subset request got the full set (redis too)" test -n "${REDIS_PASSWORD:-}"
check "containers are labelled" test "$($RT ps -q --filter label=sbx.agent=a1 --filter label=sbx.uid=0 --filter label=sbx.project=demo --filter label=sbx.service=postgres | wc -l)" -eq 1
# transport = unix (policy/local.conf): no network, no published port.
unix_only() { [ -z "$($RT port "$1")" ] && [ "$($RT inspect --format '{{.HostConfig.NetworkMode}}' "$1")" = none ]; }
check "postgres has no network and publishes nothing (transport unix)" unix_only sbx-0-a1-postgres
check "redis has no network and publishes nothing (transport unix)" unix_only sbx-0-a1-redis
ids1=$(containers a1 0)
pw1=$POSTGRES_PASSWORD
env2=$(sbx request -a a1 -p demo postgres redis)
check "second request is a hit with the same credentials" test "$env1" = "$env2"
check "a hit starts no container" test "$(containers a1 0)" = "$ids1"
# The password goes in a file: a grep pattern in argv would be found.
no_argv_has() {
	printf '%s\n' "$1" > "$WORK/needle"
	for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' 2>/dev/null < "$f"; echo; done |
	    grep -qF -f "$WORK/needle" && return 1
	return 0
}
check "no password in argv of any process" no_argv_has "$pw1"
st=$(sbx status --json)
check "status lists the sandbox" grep -q '"a1"' <<<"$st"
check "status never shows a password" lacks "$pw1" "$st"
check "status has no password key" lacks password "$st"
check "the monitor log never shows a password" lacks "$pw1" "$(cat "$LOG")"

echo "# concurrency"
# The first request's provision is held before podman run; four more
# for the same agent come while it is held. Each one waiting leaves its
# agent's socket with the monitor, so its fd count at rest says when all
# four wait.
gate_hold c5 before
sbx request -a c5 -p demo postgres > "$WORK/c5.1" 2>&1 & pids=$!
wait_for 30 gate_held c5 2
fds1=$(rest_fds)
for i in 2 3 4 5; do sbx request -a c5 -p demo postgres > "$WORK/c5.$i" 2>&1 & pids="$pids $!"; done
wait_for 10 mon_fds_are $((fds1 + 4))
check "four more requests wait on the held provision (monitor fds $fds1 -> $(fd_count "$MON_PID"))" wait_for 5 mon_fds_are $((fds1 + 4))
check "and it is still one provision (its two runs held, no other)" gate_held c5 2
gate_release c5
wait $pids
same5() {
	local i
	for i in 2 3 4 5; do cmp -s "$WORK/c5.1" "$WORK/c5.$i" || return 1; done
	grep -q POSTGRES_PASSWORD= "$WORK/c5.1"
}
check "five concurrent requests got one answer, a sandbox" same5
check "five concurrent requests made one set of containers" test "$(containers c5 0 | wc -w)" -eq 2
eval "$(cat "$WORK/c5.3")"
check "the concurrent sandbox works" uses_sandbox

echo "# isolation between uids"
envn=$(sbx_as nobody request -a a1 -p demo postgres) || nok "request as nobody" "$envn"
check "another uid with the same slug gets other credentials" test "$envn" != "$env1"
check "another uid with the same slug gets other containers" test "$(containers a1 65534)" != "$ids1"
check "the first uid's containers are untouched" test "$(containers a1 0)" = "$ids1"
eval "$envn"
check "nobody's sandbox works" uses_sandbox
out=$(sbx_as nobody release -a c5)
check "nobody cannot release root's agent" grep -q nothing <<<"$out"
check "root's containers survived nobody's release" test "$(containers c5 0 | wc -w)" -eq 2
# status for everyone: a second real uid with a sandbox of its own; each
# non-root uid sees its own only, root sees every uid's.
throwaway_users sbx-it-st
UST=$(id -u sbx-it-st)
envs=$(sbx_as sbx-it-st request -a s1 -p demo postgres) || nok "request as sbx-it-st" "$envs"
status_of() {  # user field: that field of each sandbox its status lists
	if [ "$1" = root ]; then sbx status --json; else sbx_as "$1" status --json; fi |
	    python3 -c 'import json,sys; r=json.load(sys.stdin); assert r["ok"], r; print(" ".join(sorted({str(s[sys.argv[1]]) for s in r["sandboxes"]})))' "$2"
}
check "nobody's status lists its own sandboxes only" test "$(status_of nobody uid)" = 65534
check "sbx-it-st's status lists its own sandbox only" test "$(status_of sbx-it-st uid)" = "$UST"
check "sbx-it-st's status names its agent alone" test "$(status_of sbx-it-st agent)" = s1
check "root's status lists every uid's" test "$(status_of root uid)" = "$(printf '%s\n' 0 65534 "$UST" | sort | tr '\n' ' ' | sed 's/ $//')"
check "sbx-it-st releases its own" grep -qx released <<<"$(sbx_as sbx-it-st release -a s1)"

echo "# a dead container is replaced"
$RT rm -f -t 0 sbx-0-a1-postgres >/dev/null
env3=$(sbx request -a a1 -p demo postgres)
eval "$env3"
check "after podman rm -f the next request gets a new password" test "$POSTGRES_PASSWORD" != "$pw1"
check "and the new postgres works" uses_sandbox

echo "# the broker dies"
kill -9 "$(pgrep -P "$MON_PID" -x sbx-broker | head -1)"
wait_for 5 pings
check "the monitor restarted the broker" pings
check "the cache survived: the next request is a hit" test "$(sbx request -a a1 -p demo postgres)" = "$env3"

echo "# release"
out=$(sbx release -a a1)
check "release says released" grep -qx released <<<"$out"
check "release removed the containers" test -z "$(containers a1 0)"
check "release again has nothing to release" grep -q nothing <<<"$(sbx release -a a1)"

echo "# readiness deadline"
t0=$(date +%s)
sbx request -a slow1 -p slow never-ready > "$WORK/slow1.out" 2>&1 &
slow=$!
# Its prober probes for ready_timeout (2 s) from the container's start.
wait_until 30 'prober_seen || ! kill -0 "$slow" 2>/dev/null'
wait "$slow"
t1=$(date +%s)
out=$(cat "$WORK/slow1.out")
check "a service that never becomes ready is runtime_failed" grep -q runtime_failed <<<"$out"
check "within the deadline (2 s + start-up)" test $((t1 - t0)) -lt 30
check "its container was removed" test -z "$($RT ps -aq --filter label=sbx.agent=slow1)"
check "nothing was cached" lacks slow1 "$(sbx status --json)"
prober_check podman

echo "# a socket's queued descriptors"
# The monitor's last close of an agent's socket releases what is queued
# on it: a TCP socket with SO_LINGER and unsent data would hold the loop
# for its linger time (10 s here). The broker's child shuts the input
# before the hand-over, and the monitor shuts it again and finds it empty
# (dispatch.c): nothing can be queued after.
# The agent is uid nobody; the ping after it is root's: another uid.
rm -f "$WORK/go" "$WORK/done"
cp tests/integration/linger.py "$WORK/linger.py"
runuser -u nobody -- python3 "$WORK/linger.py" "$SOCK" "$WORK/go" \
    "$WORK/done" 10 > "$WORK/linger.out" 2>&1 &
lpid=$!
PROBER=
wait_until 30 'prober_seen || ! kill -0 "$lpid" 2>/dev/null'
touch "$WORK/go"
wait_until 30 'grep -q "^reply: " "$WORK/linger.out" || ! kill -0 "$lpid" 2>/dev/null'
t0=$(date +%s%N)
pings
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
touch "$WORK/done"
wait "$lpid"
check "the monitor had the request (its prober probed) when the agent sent more" test -n "$PROBER"
check "that send failed: the input was shut at the hand-over" grep -qx 'send: EPIPE' "$WORK/linger.out"
check "the request was answered: not ready" grep -qx 'reply: runtime_failed' "$WORK/linger.out"
check "root's next ping is answered at once ($ms ms), not after the linger" test "$ms" -lt 2000

echo "# bad input"
check "garbage gets bad_request" grep -q bad_request <<<"$(rawreply c1c1c1c1)"
check "an array gets bad_request" grep -q bad_request <<<"$(rawreply 9101)"
check "a bad slug gets bad_request" grep -q bad_request <<<"$(rawreply 82a26f70a772656c65617365a56167656e74a3412121)"
check "a request over 64 KiB gets bad_request" grep -q bad_request <<<"$(rawreply '' big)"
check "a truncated map gets bad_request" grep -q bad_request <<<"$(rawreply 82a26f70a470696e67 shut)"
t0=$(date +%s%N)
check "a client that sends nothing gets timeout" grep -q timeout <<<"$(rawreply '')"
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "at the request deadline (5 s), not before, not much later ($ms ms)" test "$ms" -ge 5000 -a "$ms" -le 8000
check "the broker still serves after bad input" pings

echo "# enabled = no"
stop_monitor
write_conf no
start_monitor
check "flag off: available is empty" test -z "$(sbx available demo)"
check "flag off: request is disabled" grep -q disabled <<<"$(sbx request -a a9 -p demo postgres 2>&1)"

echo "# a sandbox outlives kill -9 of the monitor and its broker"
stop_monitor
write_conf yes
start_monitor
env3=$(sbx request -a orphan -p cache-only redis)
ids3=$(containers orphan 0)
check "a sandbox exists before the crash" test "$(wc -w <<<"$ids3")" -eq 1
eval "$env3"
redis_as_env() { REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" --user default --no-auth-warning "$@" 2>&1; }
redis_as_env set survivor yes >/dev/null
bpid=$(broker_pid)
kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID=
# Only our broker: other suites' monitors may run (outside the lock).
[ -n "$bpid" ] && kill -9 "$bpid" 2>/dev/null
start_monitor
check "after kill -9 and a restart the same container is there" test "$(containers orphan 0)" = "$ids3"
env4=$(sbx request -a orphan -p cache-only redis)
check "the next request is a hit: the same credentials" test "$env4" = "$env3"
check "and the data is there" test "$(redis_as_env get survivor)" = yes
check "the restart was logged as an adoption" grep -q 'audit event=adopt uid=0 agent=orphan project=cache-only services=redis result=ok' "$LOG"

echo "# SIGTERM"
stop_at=$(wc -l < "$LOG")
kill -TERM "$MON_PID"; wait "$MON_PID"; rc=$?; MON_PID=
check "SIGTERM exits 0" test "$rc" -eq 0
stop_log=$(tail -n +$((stop_at + 1)) "$LOG" | grep '^sbx-monitor:' | sed 's/^sbx-monitor: //' | tr '\n' '|')
check "a clean stop logs exactly what it does, no warning ($stop_log)" test "$stop_log" = "stopping: finishing requests in flight|broker stopped|stopped|"
check "SIGTERM leaves sandboxes up" test "$(containers orphan 0 | wc -w)" -eq 1

finish
