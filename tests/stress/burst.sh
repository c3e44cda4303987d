#!/usr/bin/env bash
# burst.sh - bursts wait their turn (docs/contract.md, "Limits"): a uid's
# requests past max_provisions_per_uid wait in its queue instead of
# busy. Two real uids, a real monitor, broker and podman; root.
#
#   1. warm = 2, max_sandboxes_per_uid = max_connections_per_uid = 64,
#      every other limit at its default: uid A asks for 32 new agents
#      (postgres + redis) at once while uid B makes cache hits on its own
#      sandbox, one after the other, for as long as the burst lasts: A's
#      32 are served, none busy; B's hits stay fast (p99 < 100 ms).
#   2. A full queue: max_provisions_per_uid = 1, max_requests_per_uid =
#      4, warm = 0, A's one provision held at the gate (lib.sh): of 7
#      more new agents at once, 3 wait and 4 are answered busy at once
#      with retry_after_ms; the CLI prints the hint; let go, the 3 are
#      served.
# Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxt-ua UB=sbxt-ub
throwaway_users $UA $UB
uid_a=$(id -u $UA) uid_b=$(id -u $UB)
N=${BURST_N:-32}
PY=/usr/bin/python3	# Debian's, with python3-msgpack
# The checkout may not be readable by the throwaway users: a copy.
mkdir -p "$WORK/py"
cp -r client/python/src/sbx_client bench/burst.py "$WORK/py/"
chmod -R a+rX "$WORK/py"
py_as() { local u=$1; shift; runuser -u "$u" -- env PYTHONPATH="$WORK/py" "$PY" "$WORK/py/burst.py" "$@"; }
field() { awk -v k="$1" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }'; }
cleanup_hook() { [ -n "${HITS:-}" ] && kill "$HITS" 2>/dev/null; true; }

$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1
WARM=2 write_conf yes
set_conf max_sandboxes_per_uid 64
set_conf max_connections_per_uid 64
start_monitor || exit 1

echo "# $N new agents of A at once while B hits its sandbox"
envB=$(sbx_as $UB request -a hb -p cache-only redis 2>&1)
check "B holds a sandbox" grep -q REDIS_SOCKET <<<"$envB"
# The pool full again (B may have claimed a redis): two of each
# service recorded and running, so that A's burst meets a full pool.
full_pool() { [ "$($RT ps --filter label=sbx.pool --filter name='^sbx-pool-' -q | wc -l)" -eq 4 ] &&
	[ "$(ls "$WORK/state/sandboxes" | grep -c '^pool-')" -eq 4 ]; }
check "the pool is full (2 postgres, 2 redis)" wait_for 120 full_pool
STOP=$WORK/stop-hits
py_as $UB hits "$SOCK" hb cache-only 200 "$STOP" redis > "$WORK/hits.out" 2>&1 & HITS=$!
py_as $UA burst "$SOCK" "$N" a demo postgres redis > "$WORK/burst.out" 2>&1
touch "$STOP"
wait "$HITS"; HITS=
out=$(grep '^burst ' "$WORK/burst.out")
hits=$(grep '^hits ' "$WORK/hits.out")
note "A: $out"
note "B: $hits"
check "A's $N are served" test "$(field ok <<<"$out")" = "$N"
check "none of A's is busy" test "$(field busy <<<"$out")" = 0
grep -v '^req .* ok$' "$WORK/burst.out" | grep -v '^burst ' | head -5 | while read -r l; do note "$l"; done
a_held() { [ "$(sbx status --json 2>/dev/null | grep -o "\"uid\":$uid_a[,}]" | wc -l)" -eq "$N" ]; }
check "A holds $N sandboxes (status)" a_held
check "B's hits: no error" test "$(field errors <<<"$hits")" = 0
check "B's hits: at least 200 during the burst ($(field n <<<"$hits"))" test "$(field n <<<"$hits")" -ge 200
check "B's hits stay fast: p99 $(field p99 <<<"$hits") ms < 100 ms" \
    awk -v p="$(field p99 <<<"$hits")" 'BEGIN { exit !(p != "" && p < 100) }'
check "B's sandbox is still a hit (the same password)" \
    test "$(sbx_as $UB request -a hb -p cache-only redis 2>&1)" = "$envB"

for i in $(seq 0 $((N - 1))); do sbx_as $UA release -a "a$i" >/dev/null 2>&1; done
sbx_as $UB release -a hb >/dev/null 2>&1
none_left() { [ "$(labelled)" -eq 0 ] && [ "$(ls "$WORK/state/sandboxes" | grep -vc '^pool-')" -eq 0 ]; }
check "released, every sandbox's container is gone" wait_for 180 none_left
stop_monitor
$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1

echo "# a full queue answers busy with the hint"
WARM=0 write_conf yes
gate_runtime
sed -i "s|^runtime *=.*|runtime = $GATE/podman|" "$CONF"
set_conf max_provisions_per_uid 1
set_conf max_requests_per_uid 4
start_monitor || exit 1
gate_hold q0 before
sbx_as $UA request -a q0 -p cache-only redis > "$WORK/q0.out" 2>&1 & Q0=$!
check "A's one provision runs, held at the gate" wait_for 30 gate_held q0 1
py_as $UA burst "$SOCK" 7 r cache-only redis > "$WORK/full.out" 2>&1 & FULL=$!
nbusy() { grep -c '^req .* busy ' "$WORK/full.out"; }
check "of 7 more, 4 are answered busy while the queue is full" wait_until 30 '[ "$(nbusy)" -ge 4 ]'
check "each busy carries retry_after_ms (1000)" \
    test "$(grep '^req .* busy ' "$WORK/full.out" | awk '$6 == 1000' | wc -l)" -eq 4
# (stdout has the line "false", for an eval: sbx(1))
cli=$(sbx_as $UA request -a x -p cache-only redis 2>&1 >/dev/null); rc=$?
note "the CLI: $cli"
check "the CLI: busy, exit non-zero" test "$rc" -ne 0 -a -n "$(grep 'busy' <<<"$cli")"
check "it names the queue's limit and prints the hint" \
    grep -Eq 'max_requests_per_uid.*retry after [0-9]+ ms' <<<"$cli"
check "the 3 others wait (no reply yet)" test "$(grep -c '^req ' "$WORK/full.out")" -eq 4
gate_release q0
wait "$FULL"
out=$(grep '^burst ' "$WORK/full.out")
note "$out"
check "let go: the 3 that waited are served" test "$(field ok <<<"$out")" = 3
check "and only the 4 were busy" test "$(field busy <<<"$out")" = 4
wait "$Q0"
check "the held one is served too" grep -q REDIS_SOCKET "$WORK/q0.out"

finish
