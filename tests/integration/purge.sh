#!/usr/bin/env bash
# purge.sh - sbx-monitor --purge (sbx-monitor(8)): it refuses while a
# monitor serves this host, and once that one stopped it removes every
# sandbox and warm container with their records and socket directories,
# and says each on stdout. A real monitor, a real podman.
set -u
. "$(dirname "$0")/lib.sh"

# A warm redis container; postgres is provisioned cold.
write_conf yes
sed -i '/^\[service redis\]$/,/^\[/s/^warm *=.*/warm = 1/' "$CONF"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
start_monitor || exit 1
pool_ready() { [ -n "$($RT ps -q --filter label=sbx.pool=redis --filter name='^sbx-pool-')" ] && grep -q 'warm redis-[0-9]*: ready' "$LOG"; }
wait_for 90 pool_ready
env1=$(sbx request -a p1 -p demo postgres) || nok "a sandbox to purge" "$env1"
wait_for 90 pool_ready
pooled=$($RT ps --format '{{.Names}}' --filter label=sbx.pool --filter name='^sbx-pool-' | head -1)
note "sandbox p1: $(containers p1 0 | wc -w) containers; warm: ${pooled:-none}"

echo "# while a monitor serves"
out=$("$B/sbx-monitor" --purge -f "$CONF" 2>"$WORK/purge.err"); rc=$?
check "--purge refuses, exit 1" test "$rc" -eq 1
check "it says why: the monitor that holds the host (pid $MON_PID)" grep -q "another sbx-monitor (pid $MON_PID).*stop it before --purge" "$WORK/purge.err"
check "and removes nothing" test -z "$out" -a "$(containers p1 0 | wc -w)" -eq 2
check "the monitor still serves the sandbox" test "$(sbx request -a p1 -p demo postgres)" = "$env1"

echo "# once it stopped"
stop_monitor
records=$(ls "$WORK/state/sandboxes")
check "the sandbox outlived its monitor, with its record" test "$(containers p1 0 | wc -w)" -eq 2 -a -f "$WORK/state/sandboxes/0-p1"
out=$("$B/sbx-monitor" --purge -f "$CONF" 2>"$WORK/purge.err"); rc=$?
note "$(printf '%s\n' "$out" | head -12)"
check "--purge exits 0" test "$rc" -eq 0
check "and says nothing on stderr" test ! -s "$WORK/purge.err"
check "the sandbox's containers are gone" test -z "$(containers p1)"
check "every sbx container is gone (sandboxes' and warm)" test -z "$($RT ps -aq --filter label=sbx.service)"
check "it named the sandbox's postgres" grep -qx "removed container sbx-0-p1-postgres" <<<"$out"
check "and the warm container ($pooled)" grep -qx "removed container $pooled" <<<"$out"
said_records() {
	local r
	for r in $records; do grep -qx "removed record $WORK/state/sandboxes/$r" <<<"$out" || return 1; done
}
check "it named every record ($(echo $records))" said_records
check "the records are gone" test -z "$(ls -A "$WORK/state/sandboxes")"
check "it named the sandbox's socket directory" grep -qx "removed directory $WORK/run/0/p1" <<<"$out"
check "the socket directories are gone" test -z "$(ls -A "$WORK/run")"
out=$("$B/sbx-monitor" --purge -f "$CONF" 2>&1); rc=$?
check "a second purge finds nothing, exit 0" test "$rc" -eq 0 -a -z "$out"
start_monitor || exit 1
check "a monitor starts after it, and serves" test "$(sbx available demo | tr '\n' ' ')" = "postgres redis "

finish
