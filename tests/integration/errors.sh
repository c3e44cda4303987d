#!/usr/bin/env bash
# errors.sh - a runtime failure names its cause: the agent gets one
# sentence (runtime not executable, network back-end broken, image
# missing, timeout, or the runtime's own first line), the monitor's log
# has the call's verb, its exit status and the runtime's own words, and
# no secret is in either. Runtime wrappers stand in for a broken host;
# everything else is real. Root, under `flock /tmp/sbx-podman.lock`.
# Prints "N passed, N failed".
set -u
. "$(dirname "$0")/lib.sh"

# wrapper NAME BODY: a runtime that is podman except for `run`.
wrapper() {
	printf '#!/bin/sh\nfor a; do [ "$a" = run ] && { %s; }; done\nexec podman "$@"\n' "$2" > "$WORK/$1"
	chmod 0755 "$WORK/$1"
}
# request AGENT: a redis sandbox; prints what the agent was told.
request() { sbx request -a "$1" -p cache-only redis 2>&1; }
with_runtime() { stop_monitor; write_conf yes; set_conf runtime "$1"; [ -n "${2:-}" ] && set_conf runtime_timeout "$2"; start_monitor; }
logged() { grep -qF -- "$1" "$LOG"; }

echo "# the network back-end is missing (netavark without iptables)"
wrapper netavark "echo 'Error: netavark: No such file or directory (os error 2)' >&2; exit 127"
with_runtime "$WORK/netavark" || exit 1
out=$(request e1)
check "the agent is told the network back-end failed, in the runtime's words" grep -q "runtime_failed.*network back-end failed: Error: netavark: No such file or directory" <<<"$out"
check "not that the runtime could not be executed (exit 127 is the runtime's own)" lacks "could not be executed" "$out"
check "the log has the verb, the exit status and what the runtime said" logged "run: exit status 127; said: Error: netavark: No such file or directory (os error 2)"

echo "# the runtime binary is gone"
wrapper gone "exit 0"
with_runtime "$WORK/gone"
rm -f "$WORK/gone"
out=$(request e2)
check "the agent is told the runtime could not be executed, and why" grep -q "could not be executed (No such file or directory)" <<<"$out"
check "the log says execve failed" logged "cannot execute: No such file or directory"

echo "# the image is missing"
stop_monitor
CONF_EXTRA='[service ghost]
image = localhost/sbx-no-such-image:1
port = 6379
probe = redis
user = default
database = 0
env = SBX_PASSWORD={password}' write_conf yes
printf '[project]\nsandbox_services = ghost\n' > "$WORK/projects/ghost.conf"
start_monitor
out=$(sbx request -a e3 -p ghost ghost 2>&1)
check "the agent is told which image is missing" grep -q "image localhost/sbx-no-such-image:1 is missing (run make images)" <<<"$out"
check "the log has podman's own words" grep -q "run: exit status 125; said: .*sbx-no-such-image" "$LOG"

echo "# the runtime does not answer"
wrapper hang "exec sleep 7777777"
with_runtime "$WORK/hang" 2
out=$(request e4)
check "the agent is told the runtime did not answer in time" grep -q "did not answer in time" <<<"$out"
check "the log says it was killed at its deadline" logged "run: killed at its deadline"

echo "# another failure, with a secret in what the runtime said"
wrapper leaky 'echo "Error: cannot start: SBX_PASSWORD=$SBX_PASSWORD rejected" >&2; exit 1'
with_runtime "$WORK/leaky"
out=$(request e5)
check "the agent gets the runtime's first line" grep -q "the runtime failed: Error: cannot start: SBX_PASSWORD=\*\*\* rejected" <<<"$out"
check "the log has it with the exit status, the secret scrubbed" logged "run: exit status 1; said: Error: cannot start: SBX_PASSWORD=*** rejected"
check "no 32-digit secret in the log" bash -c "! grep -Eq 'SBX_PASSWORD=[0-9a-f]{32}' '$LOG'"

finish
