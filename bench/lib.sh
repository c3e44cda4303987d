# shellcheck shell=bash
# lib.sh - what the bench scripts that run a real monitor share
# (burst.sh, density.sh, scale.sh); sourced. They set RT (the runtime),
# TABLE and RATIOS (where rows go, /dev/null when unset), TOP, O, SBX (the
# client) and err.
#
#   start_monitor DIR         DIR/sbx.conf's monitor in the background, $MON,
#                             answering ping on DIR/sbx.sock; 1 if it did not
#   workers_gone              a stopped monitor's workers are done (60 s at
#                             most): the next monitor starts alone
#
#   bench_conf DIR [SED_ARG...]  policy/local.conf on stdout, with DIR's
#                             socket, projects, state and run_dir
#   cold_conf DIR [SED_ARG...]   the same, every provision cold (warm = 0,
#                             unix) and no limit on sandboxes
#   bench_clean LABEL...      at exit, once workers_gone: those labels'
#                             containers, the mounts under W, and W
#   field KEY, now_ms         a "KEY VALUE" field of stdin; the clock, ms
#
#   row FIGURE SBX BASELINE UNIT CONDITION GOAL   run.sh's row
#   cmem CONTAINER            "PSS TMPFS CONMON", KiB: what the host holds
#                             for one container (bench/README.md, "Density")
#   cmem_pids PID CONMON_PID  the same, of a container's main process and
#                             its conmon
#   template_kib [CONF]       a data template's page cache, KiB
#   containers_mem ID...      "SERVICE PSS TMPFS CONMON" a line per
#                             container, one runtime call for them all

# DIR's monitor, started and answering: 0, or 1 (said) with MON empty.
start_monitor() {  # dir
	"$TOP/$O/sbx-monitor" -d -f "$1/sbx.conf" >>"$1/monitor.log" 2>&1 &
	MON=$!
	for _ in $(seq 200); do
		[ -S "$1/sbx.sock" ] && "$SBX" -S "$1/sbx.sock" ping >/dev/null 2>&1 && return 0
		kill -0 "$MON" 2>/dev/null || break
		sleep 0.05
	done
	err "monitor did not come up: $(tail -3 "$1/monitor.log")"; MON=; return 1
}

# A stopped monitor's workers finish their job first (run.sh's wait).
workers_gone() {
	for _ in $(seq 1 600); do
		pgrep -x sbx-worker >/dev/null || break
		sleep 0.1
	done
}

# policy/local.conf with DIR's socket, projects, state and run_dir,
# sandboxes never idle out; SED_ARGs (-e EXPR ...) after. On stdout: the
# caller makes DIR and DIR/projects first.
bench_conf() {  # dir [sed_arg...]
	local d=$1; shift
	sed -e "s|^socket *=.*|socket = $d/sbx.sock|" \
	    -e "s|^projects *=.*|projects = $d/projects|" \
	    -e "s|^state_dir *=.*|state_dir = $d/state|" \
	    -e "s|^run_dir *=.*|run_dir = $d/r|" \
	    -e "s|^idle_ttl *=.*|idle_ttl = 3600|" \
	    "$@" policy/local.conf
}

# The same with every provision cold (warm = 0, transport unix) and no
# limit on the number of sandboxes: density.sh's and scale.sh's.
cold_conf() {  # dir [sed_arg...]
	local d=$1; shift
	bench_conf "$d" -e "s|^warm *=.*|warm = 0|" \
	    -e "s|^transport *=.*|transport = unix|" \
	    -e "s|^max_sandboxes_per_uid *=.*|max_sandboxes_per_uid = 0|" \
	    -e "s|^max_sandboxes *=.*|max_sandboxes = 0|" "$@"
}

# A bench's exit, once workers_gone: the containers of each label, the
# tmpfs the workers mounted under W (deepest first), W's own, then W.
bench_clean() {  # label...
	local l
	for l; do $RT rm -f -t 0 --filter "label=$l" >/dev/null 2>&1; done
	findmnt -rn -o TARGET | grep "^$W/" | sort -r |
	    xargs -r -d '\n' umount -l 2>/dev/null
	[ -n "${W_TMPFS:-}" ] && umount "$W"
	rm -rf "$W"
}

field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

# run.sh's row: FIGURE SBX BASELINE UNIT CONDITION GOAL. CONDITION is awk
# over s (sbx), b (baseline) and r (s / b).
row() {
	awk -v n="$1" -v s="$2" -v b="$3" -v u="$4" -v g="$6" -v rf="${RATIOS:-/dev/null}" "BEGIN {
		r = b > 0 ? s / b : 0; ok = ($5);
		printf \"%-36s %12s %12s %7.2f  %-18s %s\n\", n, s u, b u, r, g,
		    ok ? \"PASS\" : \"MISS\";
		printf \"%s\t%.4f\n\", n, r >> rf }" | tee -a "${TABLE:-/dev/null}"
}

# The processes of a container: its cgroup's (v1 memory, or v2).
procs() {  # pid
	local p
	p=$(awk -F: '$2 ~ /(^|,)memory(,|$)/ { print $3 }' "/proc/$1/cgroup")
	if [ -n "$p" ]; then cat "/sys/fs/cgroup/memory$p/cgroup.procs"
	else cat "/sys/fs/cgroup$(awk -F: '$1 == "0" { print $3 }' "/proc/$1/cgroup")/cgroup.procs"; fi
}

# cmem_pids PID CONMON_PID: "PSS TMPFS CONMON", KiB, of the container
# whose main process is PID:
#   - the PSS of every process in its cgroup: a page shared by k
#     processes counts 1/k to each, so the servers' code, shared by many
#     sandboxes, counts once in all;
#   - the used space of every tmpfs it has that the host's mount
#     namespace has not, and of the tmpfs under each overlay it has
#     besides its root (sbx.conf(5)'s data: the upper directory's file
#     system, made on the host): its data;
#   - less the PSS of the files of those tmpfs and overlays the processes
#     map (counted in the tmpfs already);
# and, apart, the PSS of its conmon (outside the container).
cmem_pids() {
	local pid=$1 cm=$2 x dev mnt pss=0 tmp=0 seen=" " devs=()
	[ "${pid:-0}" -gt 0 ] || return 1
	while read -r dev mnt; do
		case $seen in *" $dev "*) continue ;; esac
		seen="$seen$dev "
		grep -q "^[0-9]* [0-9]* $dev " "/proc/$$/mountinfo" && continue
		x=$(stat -fc '%b %f %S' "/proc/$pid/root$mnt") || return 1
		tmp=$((tmp + $(awk '{ print int(($1 - $2) * $3 / 1024) }' <<<"$x")))
		# As smaps says it: hex, two digits at least.
		devs+=("$(printf '%02x:%02x' "${dev%%:*}" "${dev#*:}")")
	done < <(awk '{ for (i = 7; $i != "-"; i++); if ($(i + 1) == "tmpfs") print $3, $5 }' \
	    "/proc/$pid/mountinfo")
	while read -r dev up; do
		x=$(stat -fc '%b %f %S' "$up") || return 1
		tmp=$((tmp + $(awk '{ print int(($1 - $2) * $3 / 1024) }' <<<"$x")))
		devs+=("$(printf '%02x:%02x' "${dev%%:*}" "${dev#*:}")")
	done < <(awk '{ for (i = 7; $i != "-"; i++);
		if ($(i + 1) == "overlay" && $5 != "/" &&
		    match($(i + 3), /upperdir=[^,]*/))
			print $3, substr($(i + 3), RSTART + 9, RLENGTH - 9) }' \
	    "/proc/$pid/mountinfo")
	for x in $(procs "$pid"); do
		# Its PSS, less that of the mappings of files on those tmpfs
		# (by device: the shared memory of /dev/zero is not /dev's).
		pss=$((pss + $(awk -v m="${devs[*]}" '
		    BEGIN { n = split(m, dv, " ") }
		    /^[0-9a-f]+-[0-9a-f]+ / { on = 0
			for (i = 1; i <= n; i++) if ($4 == dv[i] && $5 != 0) on = 1
			next }
		    /^Pss:/ { t += $2; if (on) d += $2 }
		    END { print t - d + 0 }' "/proc/$x/smaps" 2>/dev/null || echo 0)))
	done
	x=$(awk '/^Pss:/ { print $2 }' "/proc/$cm/smaps_rollup" 2>/dev/null)
	echo "$pss $tmp ${x:-0}"
}

cmem() {  # container
	local pid cm
	read -r pid cm < <($RT inspect --format '{{.State.Pid}} {{.State.ConmonPid}}' "$1") &&
	    cmem_pids "$pid" "$cm"
}

# The page cache of a data template's files, KiB: shared by every
# sandbox that lies over it, counted once for them all.
template_kib() {  # [conf]
	local t
	t=$(sed -n 's/^data_template *= *//p' "${1:-policy/local.conf}" | head -1)
	[ -n "$t" ] || { echo 0; return; }
	find "$(readlink -f "$t")" -type f -print0 |
	    xargs -0 -r fincore -b -n -o RES | awk '{ s += $1 } END { print int(s / 1024) }'
}

# A line "SERVICE PSS TMPFS CONMON" per container (its label sbx.service);
# fails when one cannot be measured.
containers_mem() {  # id...
	local svc pid cm m rc=0
	[ "$#" -gt 0 ] || return 0
	while read -r svc pid cm; do
		if m=$(cmem_pids "$pid" "$cm"); then echo "$svc $m"; else rc=1; fi
	done < <($RT inspect --format \
	    '{{index .Config.Labels "sbx.service"}} {{.State.Pid}} {{.State.ConmonPid}}' "$@")
	return "$rc"
}
