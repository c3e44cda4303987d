#!/usr/bin/env bash
# autopool.sh - a pool that follows demand (sbx.conf(5), warm_max): with
# warm = 2 and warm_max = 32, two bursts of 32 new agents of one uid
# (postgres + redis each), the second once the pool has grown and
# AUTOPOOL_GAP seconds (default 0: as soon as it has) after the first:
# every request served, none busy; the pool back at its floor (2 of
# each) within warm_idle (AUTOPOOL_IDLE, default 90) + 90 s of the
# second burst, and not before warm_idle; the second burst's request p50
# at most 0.05x the first's on Unix sockets (a claim is no runtime
# call). On local.conf's transports (both: the claims that come together
# hand their ports over in one worker, one iptables-restore for all of
# them) the ratio is printed, not checked (bench/README.md). AUTOPOOL_TRANSPORTS: "both unix" (default),
# or one of them. Runs bench/burst.sh's part D alone, each with its
# monitor, on a tmpfs; a real monitor, broker and podman; root. Prints
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 1
O=${SBX_BUILD:-$PWD/build}
O=${O#"$PWD"/}	# burst.sh takes it under the top
T=$(mktemp /tmp/sbx-autopool.XXXXXX)
trap 'rm -f "$T"' EXIT
TRS=${AUTOPOOL_TRANSPORTS:-both unix}
BENCH_AUTOPOOL_ONLY=1 BENCH_AUTOPOOL_GAP=${AUTOPOOL_GAP:-0} \
    BENCH_AUTOPOOL_TRANSPORTS=$TRS \
    BENCH_AUTOPOOL_IDLE=${AUTOPOOL_IDLE:-90} BENCH_TABLE=$T \
    bash bench/burst.sh "$O"
rc=$?
pass=0 fail=0
check() {  # name: a row of $T that must be there and PASS
	if grep -q "^9 $1.*PASS\$" "$T"; then
		pass=$((pass + 1)); echo "ok: $1"
	else
		fail=$((fail + 1)); echo "FAIL: $1: $(grep "^9 $1" "$T" || echo no row)"
	fi
}
for tr in $TRS; do
	check "autopool $tr, first burst: served"
	check "autopool $tr, first burst: busy"
	check "autopool $tr, second burst: served"
	check "autopool $tr, second burst: busy"
	if [ "$tr" = unix ]; then
		check "autopool $tr: 2nd burst p50 vs 1st"
	else
		echo "note: $(grep "^9 autopool $tr: 2nd burst" "$T")"
	fi
	check "autopool $tr: back at floor after"
done
[ "$rc" -eq 0 ] || { fail=$((fail + 1)); echo "FAIL: bench/burst.sh exited $rc"; }
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
