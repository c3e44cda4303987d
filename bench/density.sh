#!/usr/bin/env bash
# density.sh O - figure 10, the host's memory per idle sandbox
# (bench/README.md, "Density"); run.sh calls it last, under the same lock
# (`make bench-density` runs it alone, locked). Rows in run.sh's format,
# appended to $BENCH_TABLE (and $BENCH_RATIOS) when set. Exits non-zero
# when something errors, never on a ratio.
#
# N agents of project both (postgres + redis, transport unix, warm = 0)
# through a real monitor; IDLE seconds after the last reply, for each
# sandbox, as the host sees it:
#   - the PSS (/proc/PID/smaps_rollup) of every process in its containers'
#     cgroups: a page shared by k processes counts 1/k to each, so the
#     servers' code, shared by the N sandboxes, counts once in all;
#   - the used space (statfs through /proc/PID/root) of every tmpfs its
#     containers have that the host's mount namespace has not: its data;
#   - the used space of the tmpfs under each overlay its containers have
#     besides their root: postgres's data (sbx.conf(5), data), whose
#     unchanged files are the template's;
#   - less the PSS of the files of those tmpfs the processes map (counted
#     in the tmpfs already);
#   - the page cache of the template's files, divided among the N
#     sandboxes that share it.
# Their sum over the N sandboxes, divided by N, against the issue's bound
# (30 MiB). Reported beside it: the parts, and the runtime's own process
# per container (conmon), which is outside the containers.
#
# The same-run baseline: N more sandboxes in the same monitor (services
# pgbefore and rdbefore, copies of postgres and redis but for postgres's
# data, copied into a tmpfs of the container's as before sbx.conf's
# data), requested alternately with the others and measured at the same
# moment: one more row, data over the template against data copied.
# BENCH_DENSITY_BEFORE="PG_IMAGE REDIS_IMAGE": that baseline of those
# images instead (e.g. the build before a change, imported under another
# tag); BENCH_DENSITY_BEFORE=none: no baseline.
# BENCH_DENSITY_IMAGES="PG_IMAGE REDIS_IMAGE": measure those instead of
# policy/local.conf's (a build under other tags, before it replaces them).
# IDLE is 75 s: past autovacuum's first round (autovacuum_naptime, a
# minute after a start), so that what it writes is counted.
# BENCH_SMOKE=1: N = 1, IDLE = 2. BENCH_DENSITY_N, BENCH_DENSITY_IDLE.
set -u
cd "$(dirname "$0")/.." || exit 1
TOP=$PWD
O=${1:-build}
SBX=$TOP/$O/sbx
RT=podman
SMOKE=${BENCH_SMOKE:-0}
if [ "$SMOKE" = 1 ]; then N=1 IDLE=2
else N=${BENCH_DENSITY_N:-8} IDLE=${BENCH_DENSITY_IDLE:-75}; fi
BEFORE=${BENCH_DENSITY_BEFORE:-}
[ "$BEFORE" = none ] && BEFORE=
[ -n "${BENCH_DENSITY_BEFORE+set}" ] || BEFORE=copy
IMAGES=${BENCH_DENSITY_IMAGES:-}
GOAL=30720	# KiB: the bound bench/README.md's "Density" holds it to
W=$(mktemp -d /tmp/sbd.XXXXXX)	# run_dir under it: at most 24 characters
chmod 0755 "$W"
mount -t tmpfs -o mode=0755,size=16m sbx-density "$W" 2>/dev/null && W_TMPFS=1
TABLE=${BENCH_TABLE:-/dev/null}
RATIOS=${BENCH_RATIOS:-/dev/null}
errors=0 MON=

err() { errors=$((errors + 1)); echo "bench: ERROR: density: $*" >&2; }

cleanup() {
	[ -n "$MON" ] && kill "$MON" 2>/dev/null && wait "$MON" 2>/dev/null
	workers_gone
	bench_clean sbx.uid
}
trap cleanup EXIT

# row, start_monitor, workers_gone, cold_conf, bench_clean, template_kib,
# containers_mem: shared with burst.sh and scale.sh.
. "$TOP/bench/lib.sh"

# [service FROM] of policy/local.conf as [service TO] with image IMAGE
# (copy: its own), its data (sbx.conf(5)) copied into a tmpfs of the
# container's instead.
section_as() {  # from to image
	awk -v from="[service $1]" -v to="[service $2]" -v img="$3" '
	    /^\[/ { on = ($0 == from); if (on) { print to; next } }
	    on && /^image *=/ && img != "copy" { print "image = " img; next }
	    on && /^data *=/ { print "tmpfs = /srv/pgdata:rw,size=256m,mode=0700,U,nosuid,nodev,noexec"; next }
	    on && /^data_(template|size) *=/ { next }
	    on' policy/local.conf
}

# stdin's [service postgres] and [service redis] with images PG and REDIS
# (none: as they are).
images_as() {  # [pg redis]
	awk -v pg="${1:-}" -v rd="${2:-}" '
	    /^\[/ { s = $0 }
	    /^image *=/ && s == "[service postgres]" && pg != "" { print "image = " pg; next }
	    /^image *=/ && s == "[service redis]" && rd != "" { print "image = " rd; next }
	    { print }'
}

write_conf() {  # dir
	local d=$1
	mkdir -p "$d/projects"
	# shellcheck disable=SC2086 # two words, or none
	cold_conf "$d" | images_as $IMAGES > "$d/sbx.conf"
	printf '[project]\nsandbox_services = postgres redis\n' > "$d/projects/both.conf"
	[ -n "$BEFORE" ] || return 0
	# shellcheck disable=SC2086 # two words, or copy
	set -- $BEFORE $BEFORE
	{ echo; section_as postgres pgbefore "$1"; echo; section_as redis rdbefore "$2"; } |
	    sed -e "s|^warm *=.*|warm = 0|" -e "s|^transport *=.*|transport = unix|" \
	    >> "$d/sbx.conf"
	printf '[project]\nsandbox_services = pgbefore rdbefore\n' > "$d/projects/before.conf"
}

# measure PREFIX SHARED: "TOTAL PG_PSS RD_PSS TMPFS CONMON" per sandbox,
# KiB, over the agents PREFIX0 .. PREFIX(N-1); SHARED KiB (the data
# template's page cache) divided among them in TOTAL.
measure() {
	local i
	: > "$W/m.$1"
	for i in $(seq 0 $((N - 1))); do
		# shellcheck disable=SC2046 # ids
		containers_mem $($RT ps -q --filter "label=sbx.agent=$1$i") >> "$W/m.$1" ||
		    err "$1$i: cannot measure a container"
	done
	[ "$(wc -l < "$W/m.$1")" -eq $((2 * N)) ] ||
	    err "$1: $(wc -l < "$W/m.$1") containers, not $((2 * N))"
	awk -v n="$N" -v tk="$2" '{ tot += $2 + $3; cm += $4; tmp += $3
		if ($1 ~ /^(postgres|pgbefore)$/) pg += $2; else rd += $2 }
	    END { printf "%d %d %d %d %d\n", (tot + tk) / n, pg / n, rd / n, tmp / n, cm / n }' "$W/m.$1"
}

D=$W/d
write_conf "$D"
$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
if start_monitor "$D"; then
	for i in $(seq 0 $((N - 1))); do
		"$SBX" -S "$D/sbx.sock" request -a "a$i" -p both postgres redis >/dev/null 2>"$W/req.err" ||
		    err "request a$i: $(cat "$W/req.err")"
		[ -z "$BEFORE" ] && continue
		"$SBX" -S "$D/sbx.sock" request -a "b$i" -p before pgbefore rdbefore >/dev/null 2>"$W/req.err" ||
		    err "request b$i: $(cat "$W/req.err")"
	done
	sleep "$IDLE"
	# Other containers of the same images would share their code's pages
	# and lower the PSS: said, not hidden.
	others=$(( $($RT ps -q | wc -l) - $($RT ps -q --filter label=sbx.agent | wc -l) ))
	tk=$(template_kib "$D/sbx.conf")
	read -r a apg ard atmp acm < <(measure a "$tk")
	[ -n "$BEFORE" ] && read -r b bpg brd btmp bcm < <(measure b 0)
	echo "# density: $N idle sandboxes (postgres + redis, unix), ${IDLE} s after the last reply; per sandbox, KiB: postgres processes $apg, redis $ard, tmpfs $atmp, data template's page cache $((tk / N)) ($tk once for all); conmon $acm (outside); $others other containers running" |
	    tee -a "$TABLE"
	row "10 idle sandbox, host memory" "$a" "$GOAL" KiB "s <= $GOAL" "<= 30 MiB"
	row "10 idle sandbox + conmon" "$((a + acm))" "$GOAL" KiB "1" "(report)"
	if [ -n "$BEFORE" ]; then
		echo "# density: before ($BEFORE), per sandbox, KiB: postgres processes $bpg, redis $brd, tmpfs $btmp; conmon $bcm" |
		    tee -a "$TABLE"
		row "10 idle sandbox vs data copied" "$a" "$b" KiB "r < 1" "< 1x"
	fi
	kill -TERM "$MON" 2>/dev/null; wait "$MON" 2>/dev/null || err "monitor exited $? on SIGTERM"
	MON=
fi
[ "$errors" -eq 0 ]
