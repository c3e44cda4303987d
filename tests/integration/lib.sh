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
finish() { echo; echo "$pass passed, $fail failed"; [ "$fail" -eq 0 ]; }

# policy/local.conf with our own socket, projects and state_dir.
#   write_conf [enabled]  - yes (default) or no
# $STATE_DIR overrides the state_dir; $CONF_EXTRA (more sections) is
# appended verbatim. Change [sbx] keys afterwards with set_conf.
write_conf() {
	local enabled=${1:-yes}
	sed -e "s|^socket *=.*|socket = $SOCK|" \
	    -e "s|^projects *=.*|projects = $WORK/projects|" \
	    -e "s|^state_dir *=.*|state_dir = ${STATE_DIR:-$WORK/state}|" \
	    -e "s|^run_dir *=.*|run_dir = $WORK/run|" \
	    -e "s|^enabled *=.*|enabled = $enabled|" \
	    -e "s|^idle_ttl *=.*|idle_ttl = 3600|" \
	    policy/local.conf > "$CONF"
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
# Open descriptors of a process, and its resident set in KiB.
fd_count() { ls "/proc/$1/fd" 2>/dev/null | wc -l; }
rss_kib()  { awk '/^VmRSS:/{print $2}' "/proc/$1/status"; }
# Zombie children of a process.
zombies()  { ps -o stat= --ppid "$1" | grep -c '^Z'; }

# A suite may define cleanup_hook to undo its own setup (users, mounts).
cleanup() {
	declare -F cleanup_hook >/dev/null && cleanup_hook
	stop_monitor
	$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
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
containers() { $RT ps -q --filter "label=sbx.agent=$1" ${2:+--filter "label=sbx.uid=$2"} | sort | tr '\n' ' '; }
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
