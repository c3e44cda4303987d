#!/usr/bin/env bash
# ab.sh BEFORE_TOP AFTER_TOP - the hit path of two builds side by side:
# both monitors run at once (agents hita, hitb) and the baseline server
# too, and the requests are interleaved, so a before/after ratio is
# measured under the same load. AB_REAL=1: the real monitors, with real
# redis sandboxes (only for builds before the host lock: two real
# monitors may not share a host, sbx-monitor(8)); otherwise each build's
# bench monitor (make bench-bins: the real loop, dispatch, cache, handler
# and broker, the runtime double behind them). Run under flock
# /tmp/sbx-podman.lock. Prints hit latency (lat), hits/s at 1, 8 and 64
# clients (tput) and one hit against 8 at once (par), per target.
set -u
BEFORE=$1 AFTER=$2
BENCH=$AFTER/build/bench/sbx-bench
W=$(mktemp -d /tmp/sbx-ab.XXXXXX); chmod 0755 "$W"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; podman rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1; rm -rf "$W"' EXIT
# make bench's limits: 64 clients of one uid are served, not told busy.
conf() {
	mkdir -p "$W/$1/projects"
	sed -e "s|^socket *=.*|socket = $W/$1/sbx.sock|" \
	    -e "s|^projects *=.*|projects = $W/$1/projects|" \
	    -e "s|^state_dir *=.*|state_dir = $W/$1/state|" \
	    -e "s|^warm *=.*|warm = 0|" \
	    -e "s|^max_connections_per_uid *=.*|max_connections_per_uid = 128|" \
	    -e "s|^max_children *=.*|max_children = 256|" \
	    "$AFTER/policy/local.conf" > "$W/$1/sbx.conf"
	printf '[project]\nsandbox_services = redis\n' > "$W/$1/projects/rd.conf"
}
"$BENCH" serve "$W/base.sock" & pids+=($!)
for v in before after; do
	conf $v
	top=$BEFORE; [ $v = after ] && top=$AFTER
	mon=$top/build/bench/sbx-monitor-double
	[ "${AB_REAL:-0}" = 1 ] && mon=$top/build/sbx-monitor
	"$mon" -d -f "$W/$v/sbx.conf" >"$W/$v/log" 2>&1 & pids+=($!)
	for _ in $(seq 100); do timeout 2 "$BENCH" once "$W/$v/sbx.sock,ping" >/dev/null 2>&1 && break; sleep 0.1; done
done
A="$W/before/sbx.sock,sandbox,hita,rd,redis" B="$W/after/sbx.sock,sandbox,hitb,rd,redis"
"$BENCH" once "$A" && "$BENCH" once "$B" || { cat "$W"/*/log; exit 1; }
echo "# targets: 0 before, 1 after, 2 baseline server"
"$BENCH" lat "${AB_N:-3000}" "$A" "$B" "$W/base.sock,ping"
for c in 1 8 64; do echo "# $c clients"; "$BENCH" tput 2 $c 3 "$A" "$B" "$W/base.sock,ping"; done
# One hit, then 8 agents at once (8 threads, one barrier; hits after the
# first round), each target in turn, 100 ms apart so that spares are
# back: medians of AB_PAR rounds.
echo "# one request, then 8 at once, medians of ${AB_PAR:-30} rounds"
for r in $(seq "${AB_PAR:-30}"); do
	for j in 0 1 2; do
		case $j in 0) s=$A ;; 1) s=$B ;; 2) s="$W/base.sock,sandbox,b,both,redis" ;; esac
		sleep 0.1; "$BENCH" once "$s" | awk '{print $3}' >> "$W/one$j"
		sleep 0.1; "$BENCH" par 8 "$s" | awk '{print $3}' >> "$W/par$j"
	done
done
med() { sort -n "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
for j in 0 1 2; do
	echo "par $j one_ms $(med "$W/one$j") eight_ms $(med "$W/par$j")"
done
echo "# broker parent RSS KiB: before $(awk '/VmRSS/{print $2}' /proc/$(pgrep -P ${pids[1]} -x sbx-broker)/status) after $(awk '/VmRSS/{print $2}' /proc/$(pgrep -P ${pids[2]} -x sbx-broker)/status)"
