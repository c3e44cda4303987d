#!/usr/bin/env bash
# burst.sh O - bursts of new agents and leases (bench/README.md, "Bursts
# and leases"); run.sh calls it near its end, under the same lock. Rows
# in run.sh's format, appended to $BENCH_TABLE (and $BENCH_RATIOS) when
# set. Exits non-zero when something errors (a busy reply in a burst
# that must be served whole is an error), never on a ratio alone.
#
#   A. 32 new agents of one uid at once (postgres + redis each), warm = 2,
#      max_sandboxes_per_uid = max_connections_per_uid = 64, every other
#      limit at its default: served, busy, wall time against the same
#      number of sandboxes started by hand with podman at the monitor's
#      parallelism (max_provisions_per_uid at once, each sandbox's two
#      containers started together, as one provision's worker does);
#      p50 / p95 / p99 of the requests.
#   B. Every limit at its default: a burst of max_connections_per_uid.
#   C. 20 leases: a sandbox bound to a process, the process killed, the
#      time until its containers are gone; p99.
#   D. A pool that follows demand: warm = 2, warm_max = 32, two bursts
#      of 32 new agents of one uid, the second once the pool has grown
#      and BENCH_AUTOPOOL_GAP seconds (default 60) after the first; the
#      second's p50 against the first's (goal <= 0.05), then the time
#      until the pool is back at its floor (warm_idle =
#      BENCH_AUTOPOOL_IDLE, default 120; goal: within warm_idle + 90 s).
#      On local.conf's transports (both), then on Unix sockets alone
#      (BENCH_AUTOPOOL_TRANSPORTS: either, or both in turn).
#      BENCH_AUTOPOOL_ONLY=1: D alone (tests/stress/autopool.sh).
# BENCH_SMOKE=1: 4 agents, 3 leases; D with 4 agents, warm = 1,
# warm_max = 4, no gap beyond the refill, warm_idle = 30 (the pool must
# have grown before its peak is forgotten), both transports alone.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
O=${1:-build}
SBX=$TOP/$O/sbx
RT=podman
SMOKE=${BENCH_SMOKE:-0}
PY=/usr/bin/python3	# Debian's, which has python3-msgpack
PYPATH=$TOP/client/python/src
if [ "$SMOKE" = 1 ]; then N=4 LEASES=3; else N=${BENCH_BURST_N:-32} LEASES=20; fi
if [ "$SMOKE" = 1 ]; then AP_FLOOR=1 AP_GAP=0 AP_IDLE=30 AP_TRS=both
else AP_FLOOR=2 AP_GAP=${BENCH_AUTOPOOL_GAP:-60} AP_IDLE=${BENCH_AUTOPOOL_IDLE:-120} AP_TRS="both unix"; fi
AP_TRS=${BENCH_AUTOPOOL_TRANSPORTS:-$AP_TRS}
AP_ONLY=${BENCH_AUTOPOOL_ONLY:-0}
W=$(mktemp -d /tmp/sbb.XXXXXX)	# run_dir under it: at most 24 characters
chmod 0755 "$W"
mount -t tmpfs -o mode=0755,size=64m sbx-burst "$W" 2>/dev/null && W_TMPFS=1
TABLE=${BENCH_TABLE:-/dev/null}
RATIOS=${BENCH_RATIOS:-/dev/null}
errors=0 MON=

err() { errors=$((errors + 1)); echo "bench: ERROR: burst: $*" >&2; }

cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null
	pkill -P $$ -x sleep 2>/dev/null
	workers_gone
	bench_clean sbx.uid sbx.pool sbx.bench
}
trap cleanup EXIT

# row, start_monitor, workers_gone, bench_conf, bench_clean, field,
# now_ms: shared with density.sh and scale.sh.
. "$TOP/bench/lib.sh"
# Nearest rank over numbers on stdin.
pct() { sort -n | awk -v p="$1" '{ v[NR] = $1 } END {
	if (!NR) { print 0; exit } k = int((NR * p + 99) / 100); print v[k < 1 ? 1 : k] }'; }

# policy/local.conf with our own socket, projects, state and run_dir,
# every limit as it is there (its defaults) but those in "KEY=VALUE...".
write_conf() {  # dir KEY=VALUE...
	local d=$1 kv; shift
	mkdir -p "$d/projects"
	bench_conf "$d" > "$d/sbx.conf"
	for kv; do
		# [sbx] keys at their first occurrence; warm and transport
		# in every service.
		case ${kv%%=*} in
		warm|transport) sed -i "s|^${kv%%=*} *=.*|${kv%%=*} = ${kv#*=}|" "$d/sbx.conf" ;;
		# The pool's other keys after warm, in every service.
		warm_*) sed -i "s|^warm *=.*|&\n${kv%%=*} = ${kv#*=}|" "$d/sbx.conf" ;;
		# [sbx] keys the file has not: at the section's start.
		metrics_file) sed -i "0,/^\[sbx\]/s||&\n${kv%%=*} = ${kv#*=}|" "$d/sbx.conf" ;;
		*) sed -i "0,/^${kv%%=*} *=/s|^${kv%%=*} *=.*|${kv%%=*} = ${kv#*=}|" "$d/sbx.conf" ;;
		esac
	done
	printf '[project]\nsandbox_services = postgres redis\n' > "$d/projects/both.conf"
	printf '[project]\nsandbox_services = redis\n' > "$d/projects/rd.conf"
}
stop_monitor() {
	local rc
	kill -TERM "$MON" 2>/dev/null; wait "$MON" 2>/dev/null; rc=$?
	[ "$rc" -eq 0 ] || err "monitor exited $rc on SIGTERM"
	MON=
}
# The pool full (every warm container recorded: 2 services x warm), and
# nothing else: no sandbox's container, none of a burst being removed.
quiet() {  # dir warm
	[ "$(ls "$1/state/sandboxes" 2>/dev/null | grep -c '^pool-')" -eq $((2 * $2)) ] &&
	[ "$($RT ps -aq --filter label=sbx.pool | wc -l)" -eq $((2 * $2)) ] &&
	[ "$($RT ps -aq --filter label=sbx.uid | wc -l)" -eq 0 ]
}
wait_quiet() {  # dir warm [tenths of a second, 1800]
	local i
	for i in $(seq "${3:-1800}"); do quiet "$1" "$2" && return 0; sleep 0.1; done
	err "not quiet: $(ls "$1/state/sandboxes" | grep -c '^pool-') pool records, $($RT ps -aq --filter label=sbx.pool | wc -l) pool and $($RT ps -aq --filter label=sbx.uid | wc -l) sandbox containers"
	return 1
}
release_all() {  # sock prefix n
	local i
	for i in $(seq 0 $(($3 - 1))); do
		"$SBX" -S "$1" release -a "$2$i" >/dev/null 2>&1 || err "release $2$i"
	done
}
# burst SOCK N PREFIX: N new agents (postgres + redis) at once; the
# client's summary line in $out, the requests' lines in $W/burst.out.
burst() {
	PYTHONPATH=$PYPATH "$PY" "$TOP/bench/burst.py" burst "$1" "$2" "$3" both \
	    postgres redis > "$W/burst.out" 2>&1 || err "burst.py: $(tail -2 "$W/burst.out")"
	grep -v '^req .* ok$' "$W/burst.out" | grep -v '^burst ' | head -5 >&2
	out=$(grep '^burst ' "$W/burst.out")
}

# byhand, svc_key: the monitor's podman run, by hand (byhand.sh).
BENCH=$TOP/$O/bench/sbx-bench HAND=$W/hand
. "$TOP/bench/byhand.sh"
# One sandbox by hand: its postgres and redis started together, each in
# a uid range of its own from the end of the reserved range (where no
# sandbox is); prints its ms from T0 (ms) to both ready.
hand_one() {  # i conf t0
	byhand_pair "sbx-bench-burst$1" "$2" $((4294770688 - 2 * $1 * 65536)) >/dev/null ||
	    return 1
	echo $(( $(now_ms) - $3 ))
}
# N sandboxes by hand, P at a time (each slot starts the next as soon
# as one ends); prints the wall ms; every sandbox's ms in $W/hand.out.
by_hand() {  # n p conf
	local i t0
	: > "$W/hand.out"
	t0=$(now_ms)
	for i in $(seq 0 $(($1 - 1))); do
		while [ "$(jobs -rp | wc -l)" -ge "$2" ]; do wait -n; done
		hand_one "$i" "$3" "$t0" >> "$W/hand.out" &
	done
	wait
	echo $(( $(now_ms) - t0 ))
	$RT rm -f -t 0 --filter label=sbx.bench >/dev/null 2>&1
}

# served DIR N PREFIX NAME: N new agents at once (PREFIX1 ... PREFIXN),
# released after; its line and the rows NAME: served, NAME: busy.
served() {
	burst "$1/sbx.sock" "$2" "$3"
	echo "# burst: sbx: $out" | tee -a "$TABLE"
	release_all "$1/sbx.sock" "$3" "$2"
	ok=$(field ok <<<"$out"); busy=$(field busy <<<"$out")
	[ "${ok:-0}" -eq "$2" ] || err "$4: $ok served, $busy busy"
	row "9 $4: served" "${ok:-0}" "$2" "" "s == b" "all"
	row "9 $4: busy" "${busy:-0}" 1 "" "s == 0" "0"
}

if [ "$AP_ONLY" != 1 ]; then
echo "# burst: $N new agents of one uid at once, warm = 2, 64 sandboxes and connections per uid"
D=$W/a
write_conf "$D" warm=2 max_sandboxes_per_uid=64 max_connections_per_uid=64
PAR=$(awk -F' *= *' '$1 == "max_provisions_per_uid" { print $2 }' "$D/sbx.conf")
if start_monitor "$D"; then
	if wait_quiet "$D" 2; then
		served "$D" "$N" b "burst $N"
		wait_quiet "$D" 2
		# The anchor: by hand, max_provisions_per_uid sandboxes at a time,
		# on the same quiet host (the pool full, idle).
		hw=$(by_hand "$N" "$PAR" "$D/sbx.conf")
		echo "# burst: by hand, $PAR at a time: wall $hw ms; each from the start: p50 $(pct 50 < "$W/hand.out") p95 $(pct 95 < "$W/hand.out") p99 $(pct 99 < "$W/hand.out") ms" | tee -a "$TABLE"
		[ "$(wc -l < "$W/hand.out")" -eq "$N" ] || err "by hand: $(wc -l < "$W/hand.out") of $N"
		row "9 burst $N: wall vs by hand ($PAR at once)" "$(field wall_ms <<<"$out")" "$hw" ms "r <= 1.2" "<= 1.2x"
		# Each request's latency against each sandbox's by hand, both
		# from the burst's start (nearest rank).
		for p in 50 95 99; do
			row "9 burst $N: request p$p vs by hand" "$(field p$p <<<"$out")" \
			    "$(pct $p < "$W/hand.out")" ms "1" "(report)"
		done
	fi
	stop_monitor
	$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
fi

D=$W/d
write_conf "$D"
C=$(awk -F' *= *' '$1 == "max_connections_per_uid" { print $2 }' "$D/sbx.conf")
WD=$(awk -F' *= *' '$1 == "warm" { print $2; exit }' "$D/sbx.conf")
[ "$SMOKE" = 1 ] && C=4
echo "# burst: every limit at its default: $C new agents at once (max_connections_per_uid), warm = $WD"
if start_monitor "$D"; then
	if wait_quiet "$D" "$WD"; then
		served "$D" "$C" c "defaults, burst $C"
		row "9 defaults, burst $C: request p99" "$(field p99 <<<"$out")" "$(field p50 <<<"$out")" ms "1" "(report, vs p50)"
	fi
	stop_monitor
	$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
fi

# Leases, as tests/integration/lease.sh: warm = 0 (a claimed container
# keeps the pool's labels), a sandbox (redis) bound to a sleep of ours;
# killed; the ms until its containers are gone (podman ps, every 10 ms).
D=$W/l
write_conf "$D" warm=0
if start_monitor "$D"; then
	: > "$W/lease.out"
	for i in $(seq "$LEASES"); do
		sleep 600 & p=$!
		if ! "$SBX" -S "$D/sbx.sock" request -a "l$i" -p rd --bind-pid "$p" redis >/dev/null 2>"$W/lease.err"; then
			err "lease $i: $(cat "$W/lease.err")"; kill "$p"; wait "$p" 2>/dev/null; continue
		fi
		[ -n "$($RT ps -q --filter "label=sbx.agent=l$i")" ] || err "lease $i: no container"
		t0=$(date +%s%N); kill "$p"; wait "$p" 2>/dev/null
		n=0
		while [ -n "$($RT ps -q --filter "label=sbx.agent=l$i")" ] && [ $n -lt 1000 ]; do
			sleep 0.01; n=$((n + 1))
		done
		echo $(( ($(date +%s%N) - t0) / 1000000 )) >> "$W/lease.out"
	done
	l99=$(pct 99 < "$W/lease.out")
	echo "# lease: gone after exit, ms: $(sort -n "$W/lease.out" | tr '\n' ' ')" | tee -a "$TABLE"
	row "9 lease: gone after exit, p99 of $LEASES" "$l99" 2000 ms "s <= 2000" "<= 2000 ms"
	row "9 lease: gone after exit, p50" "$(pct 50 < "$W/lease.out")" 2000 ms "1" "(report)"
	stop_monitor
fi
fi	# AP_ONLY

# The pools' series in the metrics file: "size target claims misses" of
# a service's own pool.
pool_metrics() {  # dir service
	awk -v s="service=\"$2\",pool=\"service\"" '
	    index($0, s) && /^sbx_warm_pool_size/ { z = $2 }
	    index($0, s) && /^sbx_warm_pool_target/ { t = $2 }
	    index($0, s) && /^sbx_warm_claims_total/ { c = $2 }
	    index($0, s) && /^sbx_warm_misses_total/ { m = $2 }
	    END { print z + 0, t + 0, c + 0, m + 0 }' "$1/sbx.prom" 2>/dev/null
}
# Every METRICS_EVERY_MS (5 s) the monitor writes it: wait for one more.
fresh_metrics() {  # dir
	local t
	t=$(stat -c %Y "$1/sbx.prom" 2>/dev/null || echo 0)
	for _ in $(seq 100); do
		[ "$(stat -c %Y "$1/sbx.prom" 2>/dev/null || echo 0)" -gt "$t" ] && return 0
		sleep 0.1
	done
}

# D. A pool that follows demand (sbx.conf(5), warm_max): two bursts of
# N new agents, the second from the grown pool; then back to the floor.
# On local.conf's transports (both: the claims that come together hand
# their ports over in one worker), and on Unix sockets alone (a claim is
# no runtime call).
autopool() {  # name transport|""
	local D=$W/p$1 tr=${2:+transport=$2} t1 t2 p1 p2 fill back
	write_conf "$D" warm=$AP_FLOOR warm_max=$N warm_idle=$AP_IDLE $tr \
	    max_sandboxes_per_uid=64 max_connections_per_uid=64 metrics_file="$D/sbx.prom"
	echo "# burst: a pool that follows demand ($1): warm = $AP_FLOOR, warm_max = $N, warm_idle = $AP_IDLE s; two bursts of $N new agents of one uid, the second >= $AP_GAP s after the first"
	start_monitor "$D" || return
	if wait_quiet "$D" "$AP_FLOOR"; then
		served "$D" "$N" f "autopool $1, first burst"
		p1=$(field p50 <<<"$out"); t1=$(now_ms)
		# The pool grows to the burst with workers no tenant needs.
		if wait_quiet "$D" "$N" 3000; then
			fill=$(( $(now_ms) - t1 ))
			echo "# burst: the pool grew to $N of each service $fill ms after the first burst's releases ended (it grows from its last provision's end)" | tee -a "$TABLE"
		fi
		while [ $(( $(now_ms) - t1 )) -lt $((AP_GAP * 1000)) ]; do sleep 1; done
		fresh_metrics "$D"
		echo "# burst: postgres pool before the second (size target claims misses): $(pool_metrics "$D" postgres)" | tee -a "$TABLE"
		t2=$(now_ms)	# the last demand the pool saw
		served "$D" "$N" s "autopool $1, second burst"
		p2=$(field p50 <<<"$out")
		row "9 autopool $1: 2nd burst p50 vs 1st" "$p2" "$p1" ms "r <= 0.05" "<= 0.05"
		fresh_metrics "$D"
		echo "# burst: postgres pool after the second (size target claims misses): $(pool_metrics "$D" postgres)" | tee -a "$TABLE"
		# Back at the floor: warm_idle after the last burst's start,
		# then the surplus removed a few at a time.
		if wait_quiet "$D" "$AP_FLOOR" $(( (AP_IDLE + 180) * 10 )); then
			back=$(( $(now_ms) - t2 ))
			row "9 autopool $1: back at floor after" "$back" $((AP_IDLE * 1000)) ms \
			    "s >= b && s <= b + 90000" "idle..idle+90 s"
			fresh_metrics "$D"
			echo "# burst: postgres pool at the floor (size target claims misses): $(pool_metrics "$D" postgres)" | tee -a "$TABLE"
		fi
	fi
	stop_monitor
	$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
}
for tr in $AP_TRS; do
	case $tr in
	both) autopool both "" ;;	# local.conf's
	*) autopool "$tr" "$tr" ;;
	esac
done
[ "$errors" -eq 0 ]
