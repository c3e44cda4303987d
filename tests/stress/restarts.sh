#!/usr/bin/env bash
# restarts.sh - sandboxes outlive the monitor (docs/contract.md, "Restarts and upgrades"):
# three uids hold sandboxes with data (a table in postgres, a key in
# redis); the monitor is restarted 20 times in a row, by SIGTERM, by
# kill -9 of the monitor alone, and by kill -9 of monitor and broker
# together. After each start every sandbox is adopted: the next request
# is a hit with the same credentials, the data is there, and nothing
# leaked (containers, the monitor's descriptors, socket directories,
# records). Then what must not be adopted is not: a service whose config
# changed, a project that no longer opts in. Real monitor, broker and
# podman; root. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxt-ra UB=sbxt-rb
throwaway_users $UA $UB
RESTARTS=${RESTARTS:-20}

# req USER AGENT: `sbx request` as USER (root: directly).
req() {
	if [ "$1" = root ]; then sbx request -a "$2" -p demo
	else sbx_as "$1" request -a "$2" -p demo; fi
}
# data_ok ENV: the table and the key written at the start are there.
data_ok() {
	local POSTGRES_URL REDIS_SOCKET REDIS_PASSWORD
	eval "$1"
	[ "$(psql "$POSTGRES_URL" -Atc 'select x from t' 2>&1)" = 42 ] &&
	    [ "$(REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" \
	    --user default --no-auth-warning get k 2>&1)" = v ]
}
put_data() {
	local POSTGRES_URL REDIS_SOCKET REDIS_PASSWORD
	eval "$1"
	psql "$POSTGRES_URL" -qc 'create table t(x int); insert into t values (42)' &&
	    REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" \
	    --user default --no-auth-warning set k v >/dev/null
}
count() { grep -c "audit event=$1 " "$LOG"; }
records() { ls "$WORK/state/sandboxes" | wc -l; }
sockdirs() { find "$WORK/run" -mindepth 2 -maxdepth 2 | sort | tr '\n' ' '; }

write_conf yes
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
start_monitor || exit 1

echo "# three uids, each a sandbox with data"
declare -A ENV
for u in root $UA $UB; do
	ENV[$u]=$(req "$u" "keep")
	put_data "${ENV[$u]}" || nok "data written for $u"
done
check "three sandboxes, six containers" test "$(labelled)" -eq 6
ids=$($RT ps -q --filter label=sbx.uid | sort | tr '\n' ' ')
dirs=$(sockdirs)
check "three records in state_dir" test "$(records)" -eq 3

echo "# $RESTARTS restarts"
fail0=$fail fds0= bad=
for i in $(seq "$RESTARTS"); do
	case $((i % 3)) in
	0) how="SIGTERM"; stop_monitor ;;
	1) how="kill -9 of the monitor"
	   kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID= ;;
	2) how="kill -9 of monitor and broker"
	   b=$(broker_pid); kill -9 "$MON_PID" $b
	   wait "$MON_PID" 2>/dev/null; MON_PID= ;;
	esac
	start_monitor || { nok "restart $i ($how): the monitor did not start"; break; }
	hits0=$(count hit) prov0=$(count provision)
	for u in root $UA $UB; do
		e=$(req "$u" keep)
		[ "$e" = "${ENV[$u]}" ] || bad="$bad $i:$u:creds"
		data_ok "$e" || bad="$bad $i:$u:data"
	done
	[ "$(count hit)" -eq $((hits0 + 3)) ] && [ "$(count provision)" -eq "$prov0" ] ||
	    bad="$bad $i:not-hits"
	[ "$($RT ps -aq --filter label=sbx.uid | sort | tr '\n' ' ')" = "$ids" ] ||
	    bad="$bad $i:containers"
	[ "$(sockdirs)" = "$dirs" ] && [ "$(records)" -eq 3 ] || bad="$bad $i:files"
	f=$(rest_fds)
	[ -n "$fds0" ] || fds0=$f
	[ "$f" = "$fds0" ] || bad="$bad $i:fds=$f"
done
check "after each of $RESTARTS restarts: same credentials, data intact, three hits and no provision, the same six containers, directories and records, $fds0 fds${bad:+ (failed:$bad)}" test -z "$bad"
check "each start logged its adoption of three" test "$(grep -c 'adopted 3 sandboxes and 0 warm containers, discarded 0' "$LOG")" -eq "$RESTARTS"

echo "# a second monitor on the host"
# Its own socket, state_dir and run_dir: none of the three sandboxes is
# in its records, so its adoption would discard them all as orphans.
sed -e "s|^socket *=.*|socket = $WORK/second.sock|" \
    -e "s|^state_dir *=.*|state_dir = $WORK/second-state|" \
    -e "s|^run_dir *=.*|run_dir = $WORK/run2|" "$CONF" > "$WORK/second.conf"
timeout 20 "$B/sbx-monitor" -d -f "$WORK/second.conf" 2> "$WORK/second.err" >/dev/null; rc=$?
check "refuses to start, naming the monitor that runs (pid $MON_PID) and the lock" test "$rc" -ne 0 -a -n "$(grep "another sbx-monitor (pid $MON_PID) manages the podman containers of this host (/run/sbx-monitor.podman.lock)" "$WORK/second.err")"
note "$(tail -1 "$WORK/second.err")"
check "and discarded nothing: the same six containers, three hits with the same credentials" test "$($RT ps -q --filter label=sbx.uid | sort | tr '\n' ' ')" = "$ids" -a "$(req root keep)" = "${ENV[root]}" -a "$(req $UA keep)" = "${ENV[$UA]}" -a "$(req $UB keep)" = "${ENV[$UB]}"

echo "# what is not adopted"
stop_monitor
# A container of an adopted sandbox's key that the sandbox does not have
# (a reshape cut short by the stop): removed, the sandbox adopted.
SBX_PASSWORD=x $RT run -d --name sbx-0-keep-extra --label sbx.uid=0 \
    --label sbx.agent=keep --label sbx.service=extra --env SBX_PASSWORD \
    --network=none localhost/sbx-redis:7 >/dev/null
start_monitor
check "a container the adopted sandbox does not have is removed, said why" test "$($RT ps -aq --filter name=sbx-0-keep-extra | wc -l)" -eq 0 -a -n "$(grep 'audit event=discard uid=0 agent=keep .*reason=not_in_sandbox container=sbx-0-keep-extra' "$LOG")"
check "and the sandbox is adopted" test "$(req root keep)" = "${ENV[root]}"
stop_monitor
# redis's section changes only in what no running container has: its
# readiness deadline and the order of its lines. The hash is of the
# section's keys, not of the struct's bytes (config_parse.c), so all three
# are adopted; as they are after an upgrade whose struct differs.
mem=$(sed -n '/^\[service redis\]$/,/^\[/s/^memory = //p' "$CONF")
sed -i -e '/^\[service redis\]$/,/^\[/{/^memory = /d;s/^ready_timeout = .*/ready_timeout = 20/}' \
    -e "s/^\[service redis\]\$/[service redis]\nmemory = $mem/" "$CONF"
a0=$(count adopt)
start_monitor
check "redis's readiness deadline and line order changed: all three adopted" test "$(($(count adopt) - a0))" -eq 3 -a "$(req root keep)" = "${ENV[root]}" -a "$(req $UA keep)" = "${ENV[$UA]}" -a "$(req $UB keep)" = "${ENV[$UB]}"
stop_monitor
# redis's section changes: every sandbox's redis is discarded, so the
# whole sandbox goes (a sandbox is adopted whole or not at all).
sed -i '/^\[service redis\]$/,/^\[/s/^memory = .*/memory = 200m/' "$CONF"
start_monitor
check "a changed service section: all three discarded, said why" test "$(grep -c 'audit event=discard .*reason=service_changed' "$LOG")" -eq 3
check "and their containers, records and directories are gone" test "$(labelled)" -eq 0 -a "$(records)" -eq 0 -a -z "$(sockdirs)"
e=$(req root keep)
check "the next request provisions anew: other credentials" test -n "$e" -a "$e" != "${ENV[root]}"
stop_monitor
printf '[project]\nsandbox_services = redis\n' > "$WORK/projects/demo.conf"
start_monitor </dev/null
check "a project that no longer opts in to the set: discarded" grep -q 'audit event=discard uid=0 agent=keep project=demo .*reason=set_changed' "$LOG"
check "nothing left of it" test "$(labelled)" -eq 0 -a "$(records)" -eq 0
# A record the policy refuses opens no pidfd: its discard closes none
# (it closed descriptor 0, once per service, which the next pidfd took).
check "the discard closed none of the monitor's descriptors: fd 0 is /dev/null" test "$(readlink /proc/$MON_PID/fd/0)" = /dev/null
# The set grows while the monitor is down: the redis-only sandbox is
# adopted, and the next request adds postgres alone (docs/contract.md, "Sandbox semantics": the
# live services keep their credentials and data).
g1=$(req root grow)
stop_monitor
printf '[project]\nsandbox_services = postgres redis\n' > "$WORK/projects/demo.conf"
start_monitor
check "a project whose set grew: its sandbox is adopted" grep -q 'audit event=adopt uid=0 agent=grow project=demo services=redis ' "$LOG"
g2=$(req root grow)
check "the next request adds postgres; redis keeps its password" test -n "$(grep 'REDIS_PASSWORD=' <<<"$g1")" -a "$(grep 'REDIS_PASSWORD=' <<<"$g2")" = "$(grep 'REDIS_PASSWORD=' <<<"$g1")" -a -n "$(grep ' PGPASSWORD=' <<<"$g2")"
sbx release -a grow >/dev/null

echo "# a stop that kills the monitor's whole cgroup and process group"
# What systemd's stop does to a unit with KillMode=control-group, and
# what a crash of the session that started the monitor does: every
# process in the monitor's cgroup and process group is killed -9. The
# containers and their conmon must not be among them (podman moves
# conmon to a cgroup of its own), so the next start adopts every sandbox.
# The pids controller stands for the unit's cgroup (cgroup v1 here).
CG=/sys/fs/cgroup/pids/sbx-restarts-$$
stop_monitor
printf '[project]\nsandbox_services = postgres redis\n' > "$WORK/projects/demo.conf"
mkdir "$CG" || nok "cannot make a cgroup $CG"
cleanup_hook() { [ -d "$CG" ] && rmdir "$CG" 2>/dev/null; }
# Its own session and process group, as systemd gives a service (in
# this script's own group, the kill below would take the test with it).
# shellcheck disable=SC2016
start_monitor setsid sh -c 'echo $$ > "$0"/cgroup.procs && exec "$@"' "$CG"
for u in root $UA; do ENV[$u]=$(req "$u" cg); put_data "${ENV[$u]}"; done
before=$($RT ps -q --filter label=sbx.agent=cg | sort | tr '\n' ' ')
pgid=$(ps -o pgid= -p "$MON_PID" | tr -d ' ')
check "the monitor leads its own process group and is in the test cgroup; its four containers are not" test "$pgid" = "$MON_PID" -a "$(grep -c . "$CG/cgroup.procs")" -ge 2 -a "$(wc -w <<<"$before")" -eq 4
[ "$pgid" = "$MON_PID" ] && kill -9 -- "-$pgid" 2>/dev/null
for _ in 1 2 3; do xargs -r kill -9 < "$CG/cgroup.procs" 2>/dev/null; done
wait "$MON_PID" 2>/dev/null; MON_PID=
wait_until 10 '[ -z "$(cat "$CG/cgroup.procs")" ]'
check "the cgroup is empty" test -z "$(cat "$CG/cgroup.procs")"
check "the containers run on" test "$($RT ps -q --filter label=sbx.agent=cg | sort | tr '\n' ' ')" = "$before"
start_monitor
ok_all=yes
for u in root $UA; do
	e=$(req "$u" cg)
	[ "$e" = "${ENV[$u]}" ] && data_ok "$e" || ok_all=no
done
check "the next start adopts both: same credentials, data intact" test "$ok_all" = yes
finish
