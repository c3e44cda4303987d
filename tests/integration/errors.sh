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
# syslogd FILE: a syslog daemon of the test's own on /dev/log, which any
# uid may write to, as rsyslog's and journald's: the monitor's log
# workers connect again as sbx-job. Made 0666 before it is /dev/log.
syslogd() {
	python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind("/dev/log.sbx-test")
os.chmod("/dev/log.sbx-test", 0o666); os.rename("/dev/log.sbx-test", "/dev/log")
f = open(sys.argv[1], "ab", 0)
while True: f.write(s.recv(65536) + b"\n")' "$1" &
	SYSLOGD=$!
	wait_for 5 test -S /dev/log
}
# A daemon left by a failed check would hold the host lock.
# So would our syslog daemon's /dev/log.
cleanup_hook() {
	[ -n "${dpid:-}" ] && kill "$dpid" 2>/dev/null
	[ -n "${SYSLOGD:-}" ] && kill "$SYSLOGD" && rm -f /dev/log
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

echo "# -d under systemd: stderr is the journal, each line with its priority"
# JOURNAL_STREAM names the stream systemd gave (device:inode); here the
# log file stands in for it. Lines then start "<N>" (sd-daemon(3)), the
# broker's coming through its log worker with theirs.
stop_monitor
: > "$LOG"
start_monitor env JOURNAL_STREAM="$(stat -c %d:%i "$LOG")"
bpid=$(broker_pid)
kill -9 "${bpid:-0}"
check "a warning is at LOG_WARNING" wait_until 5 'grep -q "^<4>sbx-monitor: broker died; restarting in" "$LOG"'
check "the monitor's start at LOG_INFO" grep -q "^<6>sbx-monitor: serving $SOCK" "$LOG"
check "the broker's, through its log worker, at LOG_INFO" grep -q "^<6>sbx-worker: sbx-broker\[[0-9]*\]: serving as" "$LOG"
bare=$(grep -v '^<[0-7]>' "$LOG")
check "every line has a priority${bare:+ (not: $bare)}" test -z "$bare"
stop_monitor
JOURNAL_STREAM=1:1 start_monitor
check "with JOURNAL_STREAM naming another stream: plain lines" bash -c "grep -q '^sbx-monitor: serving $SOCK' '$LOG' && grep -q '^sbx-broker: serving as' '$LOG'"

echo "# start-up: a refusal is one line on stderr; without -d, a daemon"
stop_monitor
write_conf yes
sed 's/^idle_ttl *=.*/idle_ttl = banana/' "$CONF" > "$WORK/bad.conf"
"$B/sbx-monitor" -f "$WORK/bad.conf" > "$WORK/bad.out" 2> "$WORK/bad.err"; rc=$?
check "an invalid config: exit $rc, one line on stderr naming the file, line and key" test "$rc" -ne 0 -a "$(wc -l < "$WORK/bad.err")" -eq 1 -a -n "$(grep -F "$WORK/bad.conf:" "$WORK/bad.err" | grep idle_ttl)"
sed "s|^socket *=.*|socket = $WORK/no-such-dir/sbx.sock|" "$CONF" > "$WORK/bad.conf"
"$B/sbx-monitor" -f "$WORK/bad.conf" > "$WORK/bad.out" 2> "$WORK/bad.err"; rc=$?
check "a socket that cannot be bound: exit $rc, one line on stderr saying so" test "$rc" -ne 0 -a "$(wc -l < "$WORK/bad.err")" -eq 1 -a -n "$(grep -F "cannot bind $WORK/no-such-dir/sbx.sock: No such file or directory" "$WORK/bad.err")"
check "and nothing on stdout" test ! -s "$WORK/bad.out"
# Without its projects, adoption would find every sandbox's project gone
# and discard them all.
sed "s|^projects *=.*|projects = $WORK/no-such-projects|" "$CONF" > "$WORK/bad.conf"
"$B/sbx-monitor" -f "$WORK/bad.conf" > "$WORK/bad.out" 2> "$WORK/bad.err"; rc=$?
check "a projects directory that cannot be read: exit $rc, not started, naming it" test "$rc" -ne 0 -a -n "$(grep -F "the projects in $WORK/no-such-projects cannot be read: not starting" "$WORK/bad.err")"
# /etc/subuid that cannot be used: with subuid = refuse, its uids would
# be served as owners of their own. Not started.
printf 'root:100000:65536\n' > "$WORK/subuid.bad"; chmod 0666 "$WORK/subuid.bad"
sed "s|^subuid_file *=.*|subuid_file = $WORK/subuid.bad|" "$CONF" > "$WORK/bad.conf"
grep -q '^subuid_file' "$WORK/bad.conf" || sed -i "s|^\[sbx\]\$|[sbx]\nsubuid_file = $WORK/subuid.bad|" "$WORK/bad.conf"
"$B/sbx-monitor" -f "$WORK/bad.conf" > "$WORK/bad.out" 2> "$WORK/bad.err"; rc=$?
check "a subuid_file others may write: exit $rc, not started, saying why" test "$rc" -ne 0 -a -n "$(grep -F "subordinate uids: $WORK/subuid.bad must be a root-owned file" "$WORK/bad.err")"

echo "# sbx-monitor -t: the config and every project file, checked"
rm -f "$WORK/projects/ghost.conf"	# its service went with CONF_EXTRA
"$B/sbx-monitor" -t -f "$CONF" > "$WORK/t.out" 2>&1; rc=$?
check "a sound config and projects: exit $rc, nothing said" test "$rc" -eq 0 -a ! -s "$WORK/t.out"
# An indented key continues the value above (libinih): pids inside cpus.
awk '{ print } /^\[service redis\]/ { print "cpus = 1"; print "   pids = 64" }' "$CONF" > "$WORK/bad.conf"
line=$(grep -n '^   pids = 64' "$WORK/bad.conf" | cut -d: -f1)
"$B/sbx-monitor" -t -f "$WORK/bad.conf" > "$WORK/t.out" 2>&1; rc=$?
check "an indented key: exit $rc, its file and line ($line)" test "$rc" -eq 1 -a -n "$(grep -F "$WORK/bad.conf:$line: an indented line that looks like a key" "$WORK/t.out")"
"$B/sbx-monitor" -d -f "$WORK/bad.conf" > "$WORK/bad.out" 2> "$WORK/bad.err"; rc=$?
check "and at start: exit $rc, the same line on stderr" test "$rc" -ne 0 -a "$(wc -l < "$WORK/bad.err")" -eq 1 -a -n "$(grep -F "$WORK/bad.conf:$line: an indented line" "$WORK/bad.err")"
printf '[project]\nsandbox_services = redis\nsandbox_services = nosuch\n' > "$WORK/projects/typo.conf"
printf '[project]\nallow_users = root\n  allow_groups = x\n' > "$WORK/projects/indent.conf"
"$B/sbx-monitor" -t -f "$CONF" > "$WORK/t.out" 2>&1; rc=$?
check "bad project files: exit $rc" test "$rc" -eq 1
check "each named with its line and cause (typo.conf:3)" grep -qF "$WORK/projects/typo.conf:3: sandbox_services: not offered by sbx.conf: nosuch" "$WORK/t.out"
check "each named with its line and cause (indent.conf:3)" grep -qF "$WORK/projects/indent.conf:3: an indented line that looks like a key" "$WORK/t.out"
"$B/sbx-monitor" -t -f "$WORK/no-such.conf" > "$WORK/t.out" 2>&1; rc=$?
check "a config that is not there: exit $rc, saying so" test "$rc" -eq 1 -a -n "$(grep -F "$WORK/no-such.conf: No such file or directory" "$WORK/t.out")"

echo "# the caller is told why"
start_monitor
out=$(sbx_as nobody request -a why1 -p typo redis 2>&1)
check "a project refused for its file: the reply says so" grep -qxF "sbx: unknown_project: the project's file is invalid; the host's log says why." <<<"$out"
check "and no more: not the file, its line or its cause" lacks "typo.conf" "$out"
check "the admin's log names the uid, file, line, key and service" grep -qF "uid=$(id -u nobody) project=typo refused: invalid project file typo.conf:3: sandbox_services: not offered by sbx.conf: nosuch" "$LOG"
out=$(sbx request -a why2 -p cache-only postgres 2>&1)
check "not_opted_in names the service" grep -qF "not_opted_in: postgres is not in the project's sandbox_services" <<<"$out"
stop_monitor
rm -f "$WORK/projects/typo.conf" "$WORK/projects/indent.conf"

echo "# busy: the reply says when to ask again (retry_after_ms)"
CONF_EXTRA='' write_conf yes
set_conf max_sandboxes_per_uid 1
set_conf max_connections_per_uid 1
start_monitor
out=$(sbx_as nobody request -a b1 -p cache-only redis 2>&1)
check "nobody's first sandbox, within max_sandboxes_per_uid 1" grep -q REDIS_PASSWORD= <<<"$out"
out=$(sbx_as nobody request -a b2 -p cache-only redis 2>&1)
check "its second: busy naming max_sandboxes_per_uid, retry_after_ms 10000" grep -q "^sbx: busy: .*(max_sandboxes_per_uid).* (retry after 10000 ms)$" <<<"$out"
note "$out"
# One connection of nobody's held open (a child waits for its request),
# then another: the broker answers it busy itself.
runuser -u nobody -- python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); time.sleep(4)' "$SOCK" &
holder=$!
sleep 1
out=$(sbx_as nobody ping 2>&1)
check "past max_connections_per_uid 1: busy from the broker, retry_after_ms 200" grep -q "^sbx: busy: too many connections open for your uid.* (retry after 200 ms)$" <<<"$out"
note "$out"
wait "$holder"
check "nobody releases its sandbox" grep -qx released <<<"$(sbx_as nobody release -a b1)"
stop_monitor

# Without -d: the command returns once the socket is bound and the
# sandboxes adopted, and the daemon serves.
# The broker logs to syslog then: with no syslog daemon on the host, its
# filter killed it at its first line (socket(2) in glibc's syslog), and
# the monitor restarted it forever; now it logs to stderr, /dev/null.
timeout 60 "$B/sbx-monitor" -f "$CONF" > "$WORK/daemon.out" 2>&1; rc=$?
check "without -d, the command exits 0 once the socket is bound (the start-up lines on stderr: $(wc -l < "$WORK/daemon.out"))" test "$rc" -eq 0 -a -S "$SOCK"
check "the daemon serves$([ -e /dev/log ] || echo ', with no syslog daemon on this host')" pings
if [ ! -e /dev/log ]; then
	check "with no syslog daemon, it says so on stderr before it goes" grep -q "^sbx-monitor: no syslog daemon listens on /dev/log: logging to stderr$" "$WORK/daemon.out"
	check "and that it is said once" test "$(grep -c 'no syslog daemon listens' "$WORK/daemon.out")" -eq 1
fi
# Read once it serves: daemon(3)'s parent exits before the daemon has put
# its own pid in the lock, and the broker, which answered, starts after.
dpid=$(head -1 /run/sbx-monitor.podman.lock 2>/dev/null)
check "the host lock names the daemon (pid ${dpid:-none})" test -n "$dpid" -a "$(cat "/proc/${dpid:-0}/comm" 2>/dev/null)" = sbx-monitor
check "it leads a session of its own" test "$(ps -o sid= -p "${dpid:-0}" | tr -d ' ')" = "$dpid"
check "its stdin, stdout and stderr are /dev/null" test "$(readlink "/proc/$dpid/fd/0") $(readlink "/proc/$dpid/fd/1") $(readlink "/proc/$dpid/fd/2")" = "/dev/null /dev/null /dev/null"
check "the broker is the daemon's child" test -n "$(pgrep -P "${dpid:-0}" -x sbx-broker)"
kill "${dpid:-0}"
check "SIGTERM ends it" wait_until 10 '! kill -0 "$dpid" 2>/dev/null'
# With a syslog daemon (the test's own, when the host has none): the
# lines of both go there, and the broker, connected before its filter,
# serves.
if [ ! -e /dev/log ]; then
	syslogd "$WORK/syslog"
	timeout 60 "$B/sbx-monitor" -f "$CONF" > "$WORK/daemon2.out" 2>&1
	check "with a syslog daemon, the daemon serves" pings
	check "and says nothing of a missing one" lacks "no syslog daemon" "$(cat "$WORK/daemon2.out")"
	dpid=$(head -1 /run/sbx-monitor.podman.lock 2>/dev/null)
	check "the broker's lines are in syslog" wait_until 5 'grep -q "sbx-broker\[[0-9]*\]: serving as" "$WORK/syslog"'
	check "and the monitor's" grep -q "sbx-monitor\[$dpid\]: serving $SOCK" "$WORK/syslog"
	# The syslog daemon restarts (a new socket on /dev/log). glibc's
	# syslog() then makes a socket and connects again: the broker's
	# filter killed it for that, and a chrooted process cannot reach
	# /dev/log anyway. Its lines go through a log worker of the
	# monitor's, much as OpenSSH's privsep child's do.
	bpid=$(pgrep -P "${dpid:-0}" -x sbx-broker)
	kill "$SYSLOGD"; wait "$SYSLOGD" 2>/dev/null; rm -f /dev/log
	syslogd "$WORK/syslog2"
	rawreply c1c1c1c1 > /dev/null
	check "after the syslog daemon restarts, a refusal's audit line from the broker reaches it, at LOG_INFO" wait_until 5 'grep -q "^<30>.* sbx-monitor\[$dpid\]: sbx-broker\[[0-9]*\]: audit event=refuse uid=0 " "$WORK/syslog2"'
	check "and the broker lives on (pid ${bpid:-none})" test -n "$bpid" -a "$(pgrep -P "${dpid:-0}" -x sbx-broker)" = "$bpid"
	# A subverted broker writes what it likes into that pipe: an
	# emergency (which syslog daemons broadcast to every terminal), a
	# line with no frame posing as the monitor's audit, escapes.
	printf '<0>1 audit event=provision uid=0 agent=forged1\naudit event=provision uid=0 agent=forged2 \033[2J\n' > "/proc/${bpid:-0}/fd/2"
	check "its emergency is logged at LOG_CRIT, under its name" wait_until 5 'grep -q "^<26>.* sbx-monitor\[$dpid\]: sbx-broker\[1\]: audit event=provision uid=0 agent=forged1$" "$WORK/syslog2"'
	check "an unframed line at LOG_WARNING, marked as the broker's, made printable" wait_until 5 'grep -q "^<28>.* sbx-monitor\[$dpid\]: sbx-broker\[?\]: audit event=provision uid=0 agent=forged2 ?\[2J$" "$WORK/syslog2"'
	check "and neither passes for the monitor's own audit line" bash -c "! grep -q 'sbx-monitor\[[0-9]*\]: audit event=provision uid=0 agent=forged' '$WORK/syslog2'"
	# A syslog daemon that reads nothing: syslog(3) would wait for it.
	# Its /dev/log is 0666 too: the logger connects again as sbx-job.
	# The loop's lines go through a pipe it never waits on, to a logger
	# that does; what the pipe does not take is counted and said later.
	kill "$SYSLOGD"; wait "$SYSLOGD" 2>/dev/null; rm -f /dev/log
	qlen=$(cat /proc/sys/net/unix/max_dgram_qlen)
	echo 4 > /proc/sys/net/unix/max_dgram_qlen
	python3 -c 'import os, socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); s.bind("/dev/log.sbx-test")
os.chmod("/dev/log.sbx-test", 0o666); os.rename("/dev/log.sbx-test", "/dev/log")
time.sleep(60)' &
	SYSLOGD=$!
	wait_for 5 test -S /dev/log
	# The logger's pipe made one page, so that a few dozen lines fill it.
	lpid=$(pgrep -P "${dpid:-0}" -f '^sbx-worker log$')
	python3 -c 'import fcntl, os, sys
fd = os.open("/proc/%s/fd/3" % sys.argv[1], os.O_RDONLY | os.O_NONBLOCK)
fcntl.fcntl(fd, 1031, 4096)' "${lpid:-0}"
	# Long audit lines: a refusal names agent, project and services.
	long=$(printf 'x%.0s' $(seq 59))
	svcs=$(for i in $(seq 10 25); do printf 's%s%s ' "$i" "${long:3}"; done)
	# shellcheck disable=SC2086
	for i in $(seq 10 30); do sbx request -a "a$i$long" -p "p$long" $svcs >/dev/null 2>&1; done
	t0=$(date +%s%N); pings; rc=$?; t1=$(date +%s%N)
	check "with a syslog daemon that reads nothing, the monitor answers at once ($(( (t1 - t0) / 1000000 )) ms)" test "$rc" -eq 0 -a $(( (t1 - t0) / 1000000 )) -lt 1000
	# The reading syslog daemon is up on /dev/log before the silent one
	# goes: the logger, blocked on the silent one, then reconnects at
	# once, and no line meets a host without /dev/log (syslog(3) would
	# drop it, the monitor's count among them, and not say so).
	silent=$SYSLOGD
	rm -f /dev/log
	echo "$qlen" > /proc/sys/net/unix/max_dgram_qlen
	syslogd "$WORK/syslog3"
	kill "$silent"; wait "$silent" 2>/dev/null
	check "the lines it could not write are counted and said" wait_until 10 'grep -Eq "sbx-monitor\[$dpid\]: [0-9]+ log lines could not be written without waiting" "$WORK/syslog3"'
	kill "${dpid:-0}"
	wait_until 10 '! kill -0 "$dpid" 2>/dev/null'
	kill "$SYSLOGD"; rm -f /dev/log; SYSLOGD=
else
	note "this host has a syslog daemon of its own: its lines are not read here"
fi

finish
