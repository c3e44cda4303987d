# lib.sh - shared shell for the suites that run a real sbx-monitor against
# a real podman: tests/integration/run.sh, tests/stress/*.sh, tests/host/*.sh.
#
# Source it from bash with `set -u`; it cds to the checkout's top, makes a
# private work directory and sets:
#   TOP B SBX RT WORK SOCK CONF LOG MON_PID pass fail
# and the helpers below. A suite ends with `finish`, which prints
# "N passed, N failed" and returns non-zero on any failure.
#
# Run a suite under `flock /tmp/sbx-podman.lock`: cleanup removes every
# sbx-labelled container and a starting monitor reaps sbx-labelled orphans,
# so two suites at once would destroy each other's sandboxes.

cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
TOP=$PWD
B=${SBX_BUILD:-$TOP/build}
SBX=$B/sbx
RT=${SBX_TEST_RUNTIME:-podman}
WORK=$(mktemp -d /tmp/sbx-it.XXXXXX)
chmod 0755 "$WORK"
SOCK=$WORK/sbx.sock
CONF=$WORK/sbx.conf
LOG=$WORK/monitor.log
MON_PID=
pass=0 fail=0

note() { printf '  %s\n' "$*"; }
ok()   { pass=$((pass + 1)); printf 'ok %d - %s\n' $((pass + fail)) "$1"; }
nok()  { fail=$((fail + 1)); printf 'not ok %d - %s\n' $((pass + fail)) "$1"; [ -n "${2:-}" ] && note "$2"; return 0; }
check() { local name=$1; shift; if "$@"; then ok "$name"; else nok "$name" "failed: $*"; fi; }
# The time tells CI where its 20 minutes go (tests/README.md).
finish() { echo; echo "$pass passed, $fail failed in $SECONDS s"; [ "$fail" -eq 0 ]; }

# policy/local.conf (or $LOCAL_CONF) with our own socket, projects and
# state_dir.
#   write_conf [enabled]  - yes (default) or no
# $STATE_DIR overrides the state_dir, $WARM every service's warm (0:
# suites count containers; warm.sh sets it), $TRANSPORT every service's
# transport (unix: the suites' socket checks; guard.sh and the framework
# suite keep policy/local.conf's both); $CONF_EXTRA (more sections) is
# appended verbatim. Change [sbx] keys afterwards with set_conf.
write_conf() {
	local enabled=${1:-yes}
	sed -e "s|^socket *=.*|socket = $SOCK|" \
	    -e "s|^projects *=.*|projects = $WORK/projects|" \
	    -e "s|^state_dir *=.*|state_dir = ${STATE_DIR:-$WORK/state}|" \
	    -e "s|^run_dir *=.*|run_dir = $WORK/run|" \
	    -e "s|^enabled *=.*|enabled = $enabled|" \
	    -e "s|^idle_ttl *=.*|idle_ttl = 3600|" \
	    -e "s|^warm *=.*|warm = ${WARM:-0}|" \
	    -e "s|^transport *=.*|transport = ${TRANSPORT:-unix}|" \
	    "${LOCAL_CONF:-policy/local.conf}" > "$CONF"
	# A service whose probe can never succeed: redis answering a
	# postgres startup message. For the readiness deadline test.
	cat >> "$CONF" <<-EOF

	[service never-ready]
	image = localhost/sbx-redis:7
	port = 6379
	probe = postgres
	user = default
	database = 0
	env = SBX_PASSWORD={password}
	tmpfs = /srv/redis:rw,size=16m,mode=1777
	env = SBX_RUN_DIR=/srv/redis
	ready_timeout = 2
	EOF
	[ -n "${CONF_EXTRA:-}" ] && printf '\n%s\n' "$CONF_EXTRA" >> "$CONF"
	mkdir -p "$WORK/projects"
	printf '[project]\nsandbox_services = postgres redis\n' > "$WORK/projects/demo.conf"
	printf '[project]\nsandbox_services = redis\n' > "$WORK/projects/cache-only.conf"
	printf '[project]\nsandbox_services = never-ready\n' > "$WORK/projects/slow.conf"
	printf '[project]\n' > "$WORK/projects/none.conf"
}

# set_conf KEY VALUE: set a key of the [sbx] section of $CONF.
set_conf() {
	if grep -q "^$1 *=" "$CONF"; then
		sed -i "0,/^$1 *=/s|^$1 *=.*|$1 = $2|" "$CONF"
	else
		sed -i "s|^\[sbx\]\$|[sbx]\n$1 = $2|" "$CONF"
	fi
}

# set_transport SERVICE unix|tcp|both: in that service's section of $CONF.
set_transport() {
	sed -i -e "/^\[service $1\]\$/,/^\[/{/^transport *=/d}" \
	    -e "s|^\[service $1\]\$|[service $1]\ntransport = $2|" "$CONF"
}

# start_monitor [PREFIX...]: start the monitor (PREFIX, e.g. `prlimit
# --nofile=64`, must exec it so MON_PID stays the monitor) and wait for
# ping.
start_monitor() {
	"$@" "$B/sbx-monitor" -d -f "$CONF" >>"$LOG" 2>&1 &
	MON_PID=$!
	for _ in $(seq 100); do
		[ -S "$SOCK" ] && "$SBX" -S "$SOCK" ping >/dev/null 2>&1 && return 0
		kill -0 "$MON_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "monitor did not come up:"; cat "$LOG"; return 1
}

stop_monitor() {
	[ -n "$MON_PID" ] && kill "$MON_PID" 2>/dev/null && wait "$MON_PID" 2>/dev/null
	MON_PID=
}

# The broker is the monitor's only sbx-broker child.
broker_pid() { pgrep -P "$MON_PID" -x sbx-broker | head -1; }
# conns_held PID...: how many accepted connections of the agent socket
# those processes hold. A broker's children are more than the
# connections it serves: its spares wait for one (broker/spare.c).
conns_held() {
	local p ino n=0
	for p in "$@"; do
		for ino in $(readlink /proc/"$p"/fd/* 2>/dev/null |
		    sed -n 's/^socket:\[\([0-9]*\)\]$/\1/p'); do
			awk -v i="$ino" -v s="$SOCK" '$7 == i && $8 == s && $6 == "03" { f = 1 }
			    END { exit !f }' /proc/net/unix && n=$((n + 1))
		done
	done
	echo "$n"
}
# broker_serves BPID N: its children hold N connections.
broker_serves() { [ "$(conns_held $(pgrep -P "$1"))" -eq "$2" ]; }
# Open descriptors of a process, and its resident set in KiB.
fd_count() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_kib()  { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
# Zombie children of a process.
zombies()  { ps -o stat= --ppid "$1" | grep -c '^Z'; }
# The monitor PID's workers on a job: its sbx-worker children but the
# data spare (waiting for a job) and residents (a sandbox's, between
# jobs or on one).
job_workers() {
	local p
	for p in $(pgrep -x sbx-worker -P "$1"); do
		case $(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) in
		"sbx-worker data spare "|"sbx-worker resident ") ;;
		*) echo "$p" ;;
		esac
	done
}

# wait_for SECONDS CMD...: poll CMD every 0.1 s until it succeeds, at
# most SECONDS; the status of the last try. For a condition that an event
# makes true (a process gone, a file written), never as a delay.
wait_for() {
	local n=$(( $1 * 10 )); shift
	while [ "$n" -gt 0 ]; do "$@" && return 0; sleep 0.1; n=$((n - 1)); done
	"$@"
}
# wait_until SECS 'CONDITION': CONDITION is evaluated anew at each try.
# (wait_for's own arguments are expanded once, before its first try: a
# "$(count)" in them is a constant.)
wait_until() {
	local n=$(( $1 * 10 ))
	while [ "$n" -gt 0 ]; do eval "$2" && return 0; sleep 0.1; n=$((n - 1)); done
	eval "$2"
}

# The monitor blocked in poll() (syscall 7, or ppoll 271): every answer
# it has sent is closed, so its fd count is the count at rest.
mon_in_poll() {
	local nr
	read -r nr _ < "/proc/$MON_PID/syscall" 2>/dev/null &&
	    { [ "$nr" = 7 ] || [ "$nr" = 271 ]; }
}
# The monitor's fd count at rest: read twice, each time between two looks
# that find it in poll, and the same both times. One look before one read
# is not enough: the monitor may wake (a tick, a reap) between the two.
mon_fds_now() {
	local a b
	mon_in_poll && a=$(fd_count "$MON_PID") && mon_in_poll &&
	    b=$(fd_count "$MON_PID") && mon_in_poll && [ "$a" = "$b" ] &&
	    echo "$a"
}
# rest_fds: the count at rest, waiting up to 5 s for a moment at rest.
rest_fds() { wait_for 5 mon_fds_now; }
# mon_fds_are N: at rest, the monitor holds N descriptors.
mon_fds_are() { [ -n "$1" ] && [ "$(mon_fds_now)" = "$1" ]; }

# The gate: a runtime that is podman, except that a `run` for an agent
# the test holds stops at a known point until the test lets it go.
#   gate_runtime            writes $GATE/podman; use it as `runtime`
#   gate_hold AGENT POINT   the next runs for AGENT stop: POINT is
#                           before (podman run not started) or after
#                           (podman run done: the container exists, the
#                           worker has not heard of it)
#   gate_held AGENT N       true when exactly N runs stopped there
#   gate_release AGENT      lets each stopped run go, holds no more
#   touch $GATE/refuse-rm   every rm fails, in podman's manner, until
#                           the file is removed
# A stopped run opens the FIFO $GATE/fifo-AGENT (the test holds it open
# on fd 7, so neither side blocks in open), appends its pid to
# $GATE/at-AGENT, and reads one line. It is named podman, so the monitor
# gives it podman's own argv (--replace). Workers run the runtime with a
# clean environment: the paths are written into it.
GATE=$WORK/gate
gate_runtime() {
	mkdir -p "$GATE"
	{
		printf '#!/bin/sh\n# podman with a gate: tests/integration/lib.sh\n'
		printf "G='%s'\n" "$GATE"
		cat <<-'EOF'
		agent= run= rm=
		for a; do
			case $a in
			run) run=1 ;;
			rm) rm=1 ;;
			--label=sbx.agent=*) agent=${a#--label=sbx.agent=} ;;
			esac
		done
		if [ -n "$rm" ] && [ -f "$G/refuse-rm" ]; then
			echo "Error: rm refused by the test's gate" >&2
			exit 125
		fi
		point=
		[ -n "$run" ] && [ -n "$agent" ] && [ -f "$G/hold-$agent" ] &&
		    read -r point < "$G/hold-$agent"
		case $point in
		before)
			exec 3< "$G/fifo-$agent"
			echo $$ >> "$G/at-$agent"
			read -r _ <&3
			exec 3<&-
			;;
		after)
			out=$(podman "$@"); rc=$?
			exec 3< "$G/fifo-$agent"
			echo $$ >> "$G/at-$agent"
			read -r _ <&3
			[ -z "$out" ] || printf '%s\n' "$out"
			exit $rc
			;;
		esac
		exec podman "$@"
		EOF
	} > "$GATE/podman"
	chmod 0755 "$GATE/podman"
}
gate_hold() {
	rm -f "$GATE/at-$1" "$GATE/fifo-$1"
	mkfifo "$GATE/fifo-$1"
	exec 7<>"$GATE/fifo-$1"
	echo "$2" > "$GATE/hold-$1"
}
gate_held() { [ "$(cat "$GATE/at-$1" 2>/dev/null | wc -l)" -eq "$2" ]; }
gate_release() {
	local n
	rm -f "$GATE/hold-$1"
	n=$(cat "$GATE/at-$1" 2>/dev/null | wc -l)
	while [ "$n" -gt 0 ]; do echo go >&7; n=$((n - 1)); done
	exec 7>&-
	rm -f "$GATE/fifo-$1"
}
# On the way out: nothing stays stopped (a failed check may leave a run
# held, and a stopping monitor waits for its workers).
gate_open_all() {
	rm -f "$GATE"/hold-* 2>/dev/null
	{ for _ in $(seq 64); do echo go; done >&7; } 2>/dev/null
	exec 7>&-
}

# throwaway_users NAME...: system users without a home for the suite's
# tenants, made if missing; the ones made here are removed at the end.
MADE_USERS=
throwaway_users() {
	local u
	for u; do
		id "$u" >/dev/null 2>&1 && continue
		useradd -M -r -s /usr/sbin/nologin "$u" &&
		    MADE_USERS="$MADE_USERS $u"
	done
}

# A suite may define cleanup_hook to undo its own setup (mounts, links).
cleanup() {
	local u
	gate_open_all
	declare -F cleanup_hook >/dev/null && cleanup_hook
	# A failed run keeps its monitor's log, for the one who reads CI.
	[ "${fail:-0}" -gt 0 ] && [ -f "$LOG" ] &&
	    cp "$LOG" "/tmp/sbx-failed-$(basename "$0" .sh).log" &&
	    echo "# the monitor's log: /tmp/sbx-failed-$(basename "$0" .sh).log"
	for u in $MADE_USERS; do userdel "$u" 2>/dev/null; done
	stop_monitor
	# Workers of a monitor killed by a test (kill -9) finish their job
	# on their own, a warm start's container included: the removal
	# waits for them, or what they make outlives the suite.
	local i
	for i in $(seq 1 600); do
		pgrep -x sbx-worker >/dev/null || break
		sleep 0.1
	done
	$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
	$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
	# The socket directories' tmpfs the workers mounted, deepest first.
	findmnt -rn -o TARGET | grep "^$WORK/" | sort -r |
	    xargs -r -d '\n' umount -l 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT

sbx()        { "$SBX" -S "$SOCK" "$@"; }
# As a check's command: `check NAME sbx ping >/dev/null` would hide the
# check's own line too.
pings()      { "$SBX" -S "$SOCK" ping >/dev/null 2>&1; }
# The checkout may not be readable by other users: they get a copy.
cp "$SBX" "$WORK/sbx" && chmod 0755 "$WORK/sbx"
sbx_as()     { local u=$1; shift; runuser -u "$u" -- "$WORK/sbx" -S "$SOCK" "$@"; }
redis_as() {  # user socket password command...
	local u=$1 s=$2 p=$3; shift 3
	runuser -u "$u" -- env REDISCLI_AUTH="$p" redis-cli -s "$s" --user default --no-auth-warning "$@" 2>&1
}
containers() { $RT ps -q --filter "label=sbx.agent=$1" ${2:+--filter "label=sbx.uid=$2"} | sort | tr '\n' ' '; }

# The readiness prober of a provision in flight: the one sbx-worker that
# is not root's (the worker and a service's child are). It drops to its
# uid, makes itself not dumpable, then loads its filter, in that order
# (probe.c): prober_seen takes it only once it is filtered, so that what
# it reads is the prober's state after its set-up, and sets PROBER to
# "UID NNP OWNER SAME MAPPED", all read while it lives: OWNER is the
# owner of its /proc files (root's when it is not dumpable), SAME how
# many processes have its uid (real, effective or saved; ps would print
# a uid past 2^31 as a negative number), MAPPED how many processes' user
# namespaces map uid 0 onto the 65536 uids that end at its uid (a podman
# container's range, whose last uid the prober takes). A prober that
# exits between two reads is not taken: the next try looks again.
PROBER=
prober_seen() {
	local p st u f
	for p in $(pgrep -x sbx-worker); do
		st=$(cat "/proc/$p/status" 2>/dev/null) || continue
		u=$(awk '/^Uid:/ { print $2 }' <<<"$st")
		[ -n "$u" ] && [ "$u" != 0 ] || continue
		awk '/^Seccomp:/ { exit $2 != 2 }' <<<"$st" || continue
		f="$u $(awk '/^NoNewPrivs:/ { print $2 }' <<<"$st")"
		f="$f $(stat -c %u "/proc/$p/status" 2>/dev/null)"
		f="$f $(cat /proc/[0-9]*/status 2>/dev/null | awk -v u="$u" \
		    '/^Uid:/ && ($2 == u || $3 == u || $4 == u) { n++ } END { print n + 0 }')"
		f="$f $(cat /proc/[0-9]*/uid_map 2>/dev/null |
		    awk -v b=$((u - 65535)) '$1 == 0 && $2 == b && $3 == 65536' | wc -l)"
		# shellcheck disable=SC2086
		kill -0 "$p" 2>/dev/null && [ "$(set -- $f; echo $#)" -eq 5 ] ||
		    continue
		PROBER=$f
		return 0
	done
	return 1
}
# prober_check RUNTIME: the checks of the prober prober_seen caught. Its
# uid is the last of a slot above userns_base (2^31 in the suites'
# configs), which with podman is its container's range, and nobody else's.
prober_check() {
	local uid nnp owner same mapped base=2147483648
	read -r uid nnp owner same mapped <<<"${PROBER:-0 x x x x}"
	check "the readiness prober was seen while it probed, filtered (its set-up's last step)" \
	    test -n "$PROBER"
	check "it runs as the last uid of a slot above userns_base: not root, not the broker's ($uid)" \
	    test "$uid" -gt $base -a $(( (uid - base) % 65536 )) -eq 65535
	check "no other process on the host has its uid ($same with it)" test "$same" = 1
	check "it is not dumpable: its /proc files are root's" test "$owner" = 0
	check "it has no_new_privs" test "$nnp" = 1
	if [ "$1" = podman ]; then
		check "its uid ends its container's own range" test "$mapped" -ge 1
	else
		check "docker: no container maps a range onto it" test "$mapped" = 0
	fi
}
labelled()   { $RT ps -aq --filter label=sbx.uid | wc -l; }
lacks()      { ! grep -qiF -- "$1" <<<"$2"; }

pg_ok() {  # host port user password db
	PGPASSWORD=$4 PGCONNECT_TIMEOUT=5 psql -h "$1" -p "$2" -U "$3" -d "$5" -tAc 'select 40+2' 2>&1 | grep -qx 42
}
redis_ok() {  # socket-or-host port user password (no port: a socket)
	local at
	if [ -z "$2" ]; then at=(-s "$1"); else at=(-h "$1" -p "$2"); fi
	[ "$(REDISCLI_AUTH=$4 redis-cli "${at[@]}" --user "$3" --no-auth-warning set sbx hello)" = OK ] &&
	[ "$(REDISCLI_AUTH=$4 redis-cli "${at[@]}" --user "$3" --no-auth-warning get sbx)" = hello ]
}
# The redis of an eval'd `sbx request`: its socket, else host and port.
redis_env_ok() {
	if [ -n "${REDIS_SOCKET:-}" ]; then
		redis_ok "$REDIS_SOCKET" "" "$REDIS_USER" "$REDIS_PASSWORD"
	else
		redis_ok "${REDIS_HOST:-}" "${REDIS_PORT:-}" "${REDIS_USER:-}" "${REDIS_PASSWORD:-}"
	fi
}
uses_sandbox() {  # eval'd env from sbx request
	pg_ok "$POSTGRES_HOST" "$POSTGRES_PORT" "$POSTGRES_USER" "$POSTGRES_PASSWORD" "$POSTGRES_DATABASE" &&
	redis_env_ok
}

# rawreply HEX [shut|big]: send raw bytes to the agent socket, maybe close
# our side, print whatever comes back (latin1) until the broker closes.
rawreply() { python3 - "$SOCK" "$1" "${2:-}" <<'PY'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
data = bytes.fromhex(sys.argv[2])
if sys.argv[3] == 'big':  # a 70 000-byte string value in a map
    data = bytes.fromhex('81a26f70db') + (70000).to_bytes(4, 'big') + b'a' * 70000
try:
    s.sendall(data)
except BrokenPipeError:
    pass
if sys.argv[3] == 'shut':
    s.shutdown(socket.SHUT_WR)
s.settimeout(10)
data = b''
try:
    while True:
        c = s.recv(65536)
        if not c: break
        data += c
except (ConnectionResetError, socket.timeout):
    pass
sys.stdout.write(data.decode('latin1'))
PY
}
