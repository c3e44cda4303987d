#!/usr/bin/env bash
# scale.sh O - figure 11, what a request costs as live sandboxes pile up
# (bench/README.md, "Scale"): what sbx adds must not grow with the count.
# `make bench-scale` runs it alone, under flock /tmp/sbx-podman.lock; it
# takes about 5 minutes, so `make bench` leaves it out (its smoke run
# is in `make bench-smoke`). Rows in run.sh's
# format, appended to $BENCH_TABLE (and $BENCH_RATIOS) when set. Exits
# non-zero when something errors, never on a ratio.
#
# One real monitor, one uid (root), project both (postgres + redis,
# transport unix, warm = 0: every provision is cold), no limit on its
# sandboxes, 8 provisions at once. Its live sandboxes are grown (agents
# s0, s1, ...; 8 at a time) to each count of COUNTS in turn; at each:
#   - cold: COLD_N new agents, one at a time, each released again and
#     gone before the next (the count stays), alternated with the same
#     sandbox by hand at the same count: its postgres and redis started
#     together with podman run, exactly the worker's options, until both
#     answer (byhand.sh's byhand_pair); medians. Goal at the last count:
#     <= 1.2x.
#   - hit: HIT_N requests of existing agents, p50, against its value at
#     the first count; goal at the last: 1.2x. Of the same ten agents
#     (s0 .. s9) at every count, so that only the count changes: a hit
#     connects to its services when its agent's last connect is over a
#     second old (privsep/monitor/liveness.c), and a postmaster forks a
#     backend for it. Beside it, interleaved request by request: hits
#     spread over every live agent (each agent's first connects: at 200,
#     a fifth of them), and
#     the bare server of run.sh's figure 1 (sbx-bench serve), the host's
#     own share of any slowing (report).
#   - status: STATUS_N status requests (root's: every sandbox), p50,
#     against the first count's (report).
#   - memory per idle sandbox over all of them (density.sh's measure,
#     bench/lib.sh), against the first count's (report).
# Beside them, in comment lines: the time to grow, `podman ps -a` at the
# count (what any listing of the runtime costs there), the host's CPU
# busy while the sandboxes idle (2 s of /proc/stat), the monitor's RSS.
# At the last count:
#   - restart: SIGTERM, then a new monitor on the same state; the time
#     from its start until it logs every sandbox adopted, and until an
#     agent's request is answered (a hit), against `podman ps -a` at the
#     count (the one listing adoption needs); report, per sandbox too.
#   - release of all, 8 at a time, until the last container is gone;
#     per sandbox, against removing a sandbox by hand (`podman rm -f -t 0`
#     of its two containers) at the count; report.
#
# BENCH_SMOKE=1: counts 2 and 4, one cold provision. BENCH_SCALE_COUNTS
# ("10 100 200"), BENCH_SCALE_COLD_N (5), BENCH_SCALE_PAR (8);
# BENCH_SCALE_LOG=FILE: the monitors' logs appended to FILE.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
O=${1:-build}
SBX=$TOP/$O/sbx
BENCH=$TOP/$O/bench/sbx-bench
RT=podman
SMOKE=${BENCH_SMOKE:-0}
if [ "$SMOKE" = 1 ]; then COUNTS="2 4" COLD_N=1 HIT_N=50 STATUS_N=20
else
	COUNTS=${BENCH_SCALE_COUNTS:-10 100 200} COLD_N=${BENCH_SCALE_COLD_N:-5}
	HIT_N=1000 STATUS_N=200
fi
PAR=${BENCH_SCALE_PAR:-8}
LOGS=${BENCH_SCALE_LOG:-}
W=$(mktemp -d /tmp/sbs.XXXXXX)	# run_dir under it: at most 24 characters
chmod 0755 "$W"
mount -t tmpfs -o mode=0755,size=64m sbx-scale "$W" 2>/dev/null && W_TMPFS=1
TABLE=${BENCH_TABLE:-/dev/null}
RATIOS=${BENCH_RATIOS:-/dev/null}
MON="" BASE=""

# Counted in a file: many are said in subshells.
err() { echo "bench: ERROR: scale: $*" >&2; echo "$*" >> "$W/errors"; }

cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null
	[ -n "$BASE" ] && kill "$BASE" 2>/dev/null && wait "$BASE" 2>/dev/null
	[ -n "$LOGS" ] && cat "$W/d/monitor.log" >> "$LOGS" 2>/dev/null
	workers_gone
	bench_clean sbx.uid sbx.bench
}
trap cleanup EXIT

# row, start_monitor, workers_gone, cold_conf, bench_clean, field, now_ms,
# containers_mem: shared with burst.sh and density.sh.
. "$TOP/bench/lib.sh"
# byhand, byhand_pair: the monitor's podman run, by hand.
HAND=$W/hand
. "$TOP/bench/byhand.sh"

median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

write_conf() {  # dir
	local d=$1
	mkdir -p "$d/projects"
	cold_conf "$d" \
	    -e "s|^max_provisions_per_uid *=.*|max_provisions_per_uid = $PAR|" \
	    -e "s|^max_connections_per_uid *=.*|max_connections_per_uid = 64|" \
	    > "$d/sbx.conf"
	printf '[project]\nsandbox_services = postgres redis\n' > "$d/projects/both.conf"
}

stop_monitor() {
	local rc
	kill -TERM "$MON" 2>/dev/null; wait "$MON" 2>/dev/null; rc=$?
	[ "$rc" -eq 0 ] || err "monitor exited $rc on SIGTERM"
	MON=
	workers_gone
}

live() { $RT ps -q --filter label=sbx.uid | wc -l; }	# containers
# One agent's containers gone (a release's teardown ends after its reply).
gone() {  # agent
	local i
	for i in $(seq 600); do
		[ -z "$($RT ps -aq --filter "label=sbx.agent=$1")" ] && return 0
		sleep 0.05
	done
	err "$1: its containers are still there"; return 1
}
ps_ms() {  # median of 3 `podman ps -a` of every container, ms
	local t i
	for i in 1 2 3; do
		t=$(date +%s%N); $RT ps -a >/dev/null
		echo $(( ($(date +%s%N) - t) / 1000000 ))
	done | median
}

request() {  # sock agent: a sandbox of project both; its ms
	local out
	if out=$("$BENCH" once "$1,sandbox,$2,both,postgres+redis") &&
	    [ "$(awk '{ print $4 }' <<<"$out")" = ok ]; then
		field ms <<<"$out"
	else
		err "request $2: $out"; return 1
	fi
}
release() {  # sock agent
	"$BENCH" once "$1,release,$2" >/dev/null || err "release $2"
}

# Each of the commands on stdin (one a line), PAR at a time; never
# waiting for the monitor, which is a job of ours too.
par() {
	local c pids=()
	while read -r c; do
		while [ "${#pids[@]}" -ge "$PAR" ]; do
			wait "${pids[0]}"; pids=("${pids[@]:1}")
		done
		eval "$c" & pids+=($!)
	done
	for c in "${pids[@]}"; do wait "$c"; done
}

# The agents s<from> .. s<to - 1>, PAR at a time.
grow() {  # sock from to
	local i
	for i in $(seq "$2" $(($3 - 1))); do
		echo "request '$1' s$i >/dev/null"
	done | par
}

# Cold provisions at the count against the same sandbox by hand,
# alternated; "SBX HAND RM" medians, ms (RM: podman rm -f -t 0 of the
# sandbox by hand's two containers).
cold() {  # sock dir n
	local i a ms t
	: > "$W/cold.sbx"; : > "$W/cold.hand"; : > "$W/cold.rm"
	for i in $(seq "$COLD_N"); do
		a=c$3x$i
		ms=$(request "$1" "$a") && echo "$ms" >> "$W/cold.sbx"
		release "$1" "$a"
		gone "$a"
		if ms=$(byhand_pair sbx-bench-scale "$2/sbx.conf"); then
			echo "$ms" >> "$W/cold.hand"
		else
			err "by hand at $3: $ms"
		fi
		t=$(date +%s%N)
		$RT rm -f -t 0 sbx-bench-scale-pg sbx-bench-scale-rd >/dev/null 2>&1
		echo $(( ($(date +%s%N) - t) / 1000000 )) >> "$W/cold.rm"
	done
	echo "$(median < "$W/cold.sbx") $(median < "$W/cold.hand") $(median < "$W/cold.rm")"
}

lat_p50() {  # n spec...: the p50s, us, in the specs' order
	local out n=$1; shift
	if ! out=$("$BENCH" lat "$n" "$@"); then err "lat $*: failed"; return 1; fi
	grep -q 'errors [1-9]' <<<"$out" && err "lat $*: $out"
	field p50_us <<<"$out" | tr '\n' ' '; echo
}

# The host's CPU busy over 2 s, percent of all its cores.
cpu_busy() {
	local a b
	a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
	sleep 2
	b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9, $5 + $6 }' /proc/stat)
	awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ")
		u = y[1] - x[1]; i = y[2] - x[2]; printf "%.0f", (u + i > 0 ? 100 * u / (u + i) : 0) }'
}

# Per idle sandbox over every live one, KiB: "TOTAL TMPFS CONMON"; the
# data template's page cache counted once, shared among them.
mem() {  # n
	local tk
	# shellcheck disable=SC2046 # ids
	containers_mem $($RT ps -q --filter label=sbx.agent) > "$W/mem" ||
	    err "memory at $1: a container could not be measured"
	[ "$(wc -l < "$W/mem")" -eq $((2 * $1)) ] ||
	    err "memory at $1: $(wc -l < "$W/mem") containers, not $((2 * $1))"
	tk=$(template_kib "$D/sbx.conf")
	awk -v n="$1" -v tk="$tk" '{ tot += $2 + $3; tmp += $3; cm += $4 }
	    END { printf "%d %d %d\n", (tot + tk) / n, tmp / n, cm / n }' "$W/mem"
}

# Restart on the same state, in this shell (the new monitor is its
# child): RS_ADOPTED, and RS_ALL and RS_HIT, ms from the new monitor's
# start until its log says it adopted them and until an agent's request
# is answered.
restart() {  # dir
	local d=$1 t0 i
	RS_ALL=0 RS_HIT=0
	stop_monitor
	[ -n "$LOGS" ] && cat "$d/monitor.log" >> "$LOGS"
	: > "$d/monitor.log"
	t0=$(now_ms)
	"$TOP/$O/sbx-monitor" -d -f "$d/sbx.conf" >>"$d/monitor.log" 2>&1 &
	MON=$!
	for i in $(seq 12000); do	# 10 ms apart: 2 minutes
		if [ "$RS_ALL" = 0 ] && grep -q 'adopted [0-9]* sandboxes' "$d/monitor.log"; then
			RS_ALL=$(( $(now_ms) - t0 ))
		fi
		# Adoption ends before the monitor serves: a hit says it did.
		if [ "$RS_HIT" = 0 ] && [ -S "$d/sbx.sock" ] &&
		    "$BENCH" once "$d/sbx.sock,sandbox,s0,both,postgres+redis" 2>/dev/null | grep -q ' ok$'; then
			RS_HIT=$(( $(now_ms) - t0 ))
			[ "$RS_ALL" = 0 ] && RS_ALL=$RS_HIT
		fi
		[ "$RS_HIT" != 0 ] && break
		kill -0 "$MON" 2>/dev/null || { err "restart: the monitor exited"; MON=; break; }
		sleep 0.01
	done
	RS_ADOPTED=$(sed -n 's/.*adopted \([0-9]*\) sandboxes.*/\1/p' "$d/monitor.log" | tail -1)
	RS_ADOPTED=${RS_ADOPTED:-0}
}

D=$W/d
write_conf "$D"
# shellcheck disable=SC2086 # words
set -- $COUNTS
FIRST=$1 LAST=${!#}
echo "# scale: one uid's live sandboxes (postgres + redis, unix, warm = 0) grown to $COUNTS, $PAR at a time; $COLD_N cold provisions at each" |
    tee -a "$TABLE"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
$RT rm -f -t 0 --filter label=sbx.bench >/dev/null 2>&1
"$BENCH" serve "$W/base.sock" & BASE=$!
for _ in $(seq 100); do
	timeout 2 "$BENCH" once "$W/base.sock,ping" >/dev/null 2>&1 && break
	sleep 0.05
done
k=$(( FIRST < 10 ? FIRST : 10 ))	# the agents of the hit's goal row
if start_monitor "$D"; then
	have=0
	for n in $COUNTS; do
		t=$(now_ms)
		grow "$D/sbx.sock" "$have" "$n"
		g=$(( $(now_ms) - t )); have=$n
		c=$(live)
		[ "$c" -eq $((2 * n)) ] || err "at $n: $c containers, not $((2 * n))"
		p=$(ps_ms)
		read -r cs ch crm < <(cold "$D/sbx.sock" "$D" "$n")
		busy=$(cpu_busy)
		read -r h ha hb < <(lat_p50 "$HIT_N" "$D/sbx.sock,sandbox,s,both,postgres+redis,$k" \
		    "$D/sbx.sock,sandbox,s,both,postgres+redis,$n" "$W/base.sock,sandbox,b,both,redis")
		read -r s < <(lat_p50 "$STATUS_N" "$D/sbx.sock,status")
		read -r m mt mc < <(mem "$n")
		echo "# scale: $n live sandboxes ($c containers), grown in $g ms; podman ps -a $p ms; the host's CPU $busy % busy with them idle; the monitor's RSS $(rss_kib "$MON") KiB; by hand, rm of a sandbox $crm ms; per sandbox, KiB: tmpfs $mt, conmon $mc (outside)" |
		    tee -a "$TABLE"
		[ "$n" = "$FIRST" ] && H1=$h HA1=$ha HB1=$hb S1=$s M1=$m
		if [ "$n" = "$LAST" ]; then
			row "11 cold at $n vs by hand at $n" "$cs" "$ch" ms "r <= 1.2" "<= 1.2x"
			row "11 hit p50, $k agents, at $n vs $FIRST" "$h" "$H1" us "r <= 1.2" "<= 1.2x"
		else
			row "11 cold at $n vs by hand at $n" "$cs" "$ch" ms "1" "(report)"
			row "11 hit p50, $k agents, at $n vs $FIRST" "$h" "$H1" us "1" "(report)"
		fi
		row "11 hit p50, all $n agents, vs $FIRST" "$ha" "$HA1" us "1" "(report)"
		row "11 bare server p50 at $n vs at $FIRST" "$hb" "$HB1" us "1" "(report: the host)"
		row "11 status p50 at $n vs at $FIRST" "$s" "$S1" us "1" "(report)"
		row "11 idle sandbox memory at $n" "$m" "$M1" KiB "1" "(report, vs $FIRST)"
	done
	restart "$D"
	na=$RS_ADOPTED ta=$RS_ALL th=$RS_HIT
	[ "$na" -eq "$LAST" ] || err "restart: $na of $LAST sandboxes adopted"
	[ "$th" -gt 0 ] || err "restart: no hit"
	echo "# scale: restart with $LAST: $na adopted $ta ms after the start ($(awk -v t="$ta" -v n="$LAST" 'BEGIN { printf "%.1f", t / n }') ms a sandbox), the first hit answered $th ms after it" |
	    tee -a "$TABLE"
	p=$(ps_ms)
	row "11 restart: all $LAST adopted" "$ta" "$p" ms "1" "(report, vs ps -a)"
	row "11 restart: first hit after start" "$th" "$p" ms "1" "(report, vs ps -a)"
	if [ -n "$MON" ]; then
		t=$(now_ms)
		for i in $(seq 0 $((LAST - 1))); do
			echo "release '$D/sbx.sock' s$i"
		done | par
		for i in $(seq 1200); do [ "$(live)" -eq 0 ] && break; sleep 0.1; done
		r=$(( $(now_ms) - t ))
		[ "$(live)" -eq 0 ] || err "release: $(live) containers left"
		echo "# scale: released all $LAST, $PAR at a time: the last container gone after $r ms ($(awk -v t="$r" -v n="$LAST" 'BEGIN { printf "%.1f", t / n }') ms a sandbox)" |
		    tee -a "$TABLE"
		row "11 release all $LAST, per sandbox" "$(awk -v t="$r" -v n="$LAST" 'BEGIN { printf "%.1f", t / n }')" \
		    "$crm" ms "1" "(report, vs rm by hand)"
		stop_monitor
	fi
fi
[ ! -s "$W/errors" ]
