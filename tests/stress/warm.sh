#!/usr/bin/env bash
# warm.sh - warm containers (sbx.conf(5), "Warm containers"): with warm =
# 2 for postgres and redis, a new agent's request is a claim: answered
# while every runtime call is held at a gate (no runtime call before the
# reply), with services that work, in the owner's own directory, under
# the pool's labels and then the owner's name; the pool refills; a
# claimed container is torn down at release and never comes back; a warm
# container that dies while idle is replaced at the next tick; an unusable
# warm container found at a claim is replaced and the request is a
# normal provision; a burst larger than the pool is served, the rest by
# normal provisions; restarts (SIGTERM, kill -9) adopt warm containers as
# warm and claimed ones as sandboxes. Two real uids. Real monitor, broker
# and podman; root. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

UA=sbxt-wa UB=sbxt-wb
throwaway_users $UA $UB
uid_a=$(id -u $UA) uid_b=$(id -u $UB)

# A runtime that is podman, except that while $GATE/hold-all exists
# every call waits at the FIFO (fd 7 holds it open) and says so in
# $GATE/held; while $GATE/hold-warm exists, only the starts of warm
# containers (--label=sbx.pool=...) do; while $GATE/hold-rename exists,
# renames do; while $GATE/hold-rm exists, removals of agent cyNNN's do.
mkdir -p "$GATE"
cat > "$GATE/podman" <<EOF
#!/bin/sh
hold=
[ -f '$GATE/hold-all' ] && hold=1
case " \$* " in *' --label=sbx.pool='*) [ -f '$GATE/hold-warm' ] && hold=1 ;; esac
case " \$* " in *' rename '*) [ -f '$GATE/hold-rename' ] && hold=1 ;; esac
case " \$* " in *' rm '*-cy[0-9]*) [ -f '$GATE/hold-rm' ] && hold=1 ;; esac
if [ -n "\$hold" ]; then
	echo "\$*" >> '$GATE/held'
	exec 3< '$GATE/fifo'
	read -r _ <&3
	exec 3<&-
fi
exec podman "\$@"
EOF
chmod 0755 "$GATE/podman"
mkfifo "$GATE/fifo"
exec 7<>"$GATE/fifo"
hold_all()    { : > "$GATE/held"; touch "$GATE/hold-all"; }
hold_warm()   { : > "$GATE/held"; touch "$GATE/hold-warm"; }
hold_rename() { : > "$GATE/held"; touch "$GATE/hold-rename"; }
release_all() {
	local n
	rm -f "$GATE/hold-all" "$GATE/hold-warm" "$GATE/hold-rename" "$GATE/hold-rm"
	n=$(wc -l < "$GATE/held")
	while [ "$n" -gt 0 ]; do echo go >&7; n=$((n - 1)); done
}
held() { [ "$(wc -l < "$GATE/held")" -ge "$1" ]; }
cleanup_hook() { rm -f "$GATE/hold-all" "$GATE/hold-warm" "$GATE/hold-rename" "$GATE/hold-rm"; { for _ in $(seq 64); do echo go; done >&7; } 2>/dev/null; }

WARM=2 write_conf yes
# Both on Unix sockets: a tcp port is guarded for its owner, and warm
# needs transport = unix (sbx.conf(5)); tenancy.sh and isolation.sh
# cover tcp.
# A second project like demo, removed before a restart (below).
printf '[project]\nsandbox_services = postgres redis\n' > "$WORK/projects/demo2.conf"
sed -i "s|^runtime *=.*|runtime = $GATE/podman|" "$CONF"
set_conf metrics_file "$WORK/sbx.prom"
$RT rm -f -t 0 --filter label=sbx.pool >/dev/null 2>&1

pool_names() { $RT ps -a --filter label=sbx.pool --filter "name=^sbx-pool-$1-" --format '{{.Names}}' | sort; }
# ready_warm SVC N: N warm containers of SVC ready, by the monitor's count.
ready_warm() { [ "$(grep -c "warm $1-[0-9]*: ready" "$LOG")" -ge "$2" ] &&
	[ "$(pool_names "$1" | wc -l)" -eq "$3" ]; }
full_pool() { [ "$($RT ps --filter label=sbx.pool --filter name='^sbx-pool-' -q | wc -l)" -eq 4 ] &&
	[ "$(ls "$WORK/state/sandboxes" | grep -c '^pool-')" -eq 4 ]; }
warm_claims() { grep -c 'audit event=provision .*warm=yes' "$LOG"; }
provisions() { grep 'audit event=provision ' "$LOG" | grep -vc 'warm=yes'; }
env_of() { sed -n "s/^export $2=//p" <<<"$1" | tr -d "'"; }
# No pool container exited and not yet removed. full_pool counts running
# ones: it holds as soon as a replaced container has stopped, while its
# removal (a job of its own, apart from the refill) may still run.
no_dead_warm() { [ -z "$($RT ps -a --filter label=sbx.pool --filter status=exited -q)" ]; }

start_monitor || exit 1
echo "# the pool fills"
check "two warm containers of each service start and are recorded" wait_for 90 full_pool
check "each under the pool's labels and name (sbx.pool, sbx-pool-SVC-SLOT)" test "$($RT ps --filter label=sbx.pool --format '{{.Labels}}' | grep -c 'sbx.pool:')" -eq 4
check "none has an owner's labels" test "$($RT ps -q --filter label=sbx.uid | wc -l)" -eq 0
check "their directories are root's alone (run_dir/.pool 0700)" test "$(stat -c '%U %a' "$WORK/run/.pool")" = "root 700"

echo "# a release while its rename runs: the removal waits, the slot is not reused"
# A claimed container released while its rename runs: the removal takes
# its turn after the rename (the runtime does not make the two atomic:
# see the next part), and its uid range (and so its pool name) must not
# go to a new warm container while the rename job that names it is in
# flight, or the job would rename the new one to the old owner's name,
# out of the pool. From a fresh pool, so that the refill after B's claim
# would take A's slots (the lowest free).
hold_rename
envR=$(sbx_as $UA request -a r -p demo 2>&1)
check "A's claim is served" test "$(redis_as $UA "$(env_of "$envR" REDIS_SOCKET)" "$(env_of "$envR" REDIS_PASSWORD)" ping)" = PONG
check "its rename waits at the gate" wait_for 10 held 1
records4() { [ "$(ls "$WORK/state/sandboxes" | grep -c '^pool-')" -eq 4 ]; }
check "the pool refills (its records)" wait_for 90 records4
# Its reply may not come within request_timeout: the log says when.
sbx_as $UA release -a r >/dev/null 2>&1 &
relR=$!
r_gone() { grep -q "teardown uid=$uid_a agent=r project=demo: ok" "$LOG"; }
sleep 2
check "A's release waits for the rename" test -z "$(grep "teardown uid=$uid_a agent=r " "$LOG")"
envS=$(sbx_as $UB request -a s -p demo 2>&1)
check "B's claim is served (its rename queues behind)" test "$(redis_as $UB "$(env_of "$envS" REDIS_SOCKET)" "$(env_of "$envS" REDIS_PASSWORD)" ping)" = PONG
check "the pool refills again, the rename still held" wait_for 90 records4
check "the rename is still held" test -f "$GATE/hold-rename"
release_all
wait $relR
check "then A's containers are torn down" wait_for 30 r_gone
check "the pool is full: every warm container under its pool name" wait_for 90 full_pool
check "no container has A's name for agent r" test -z "$($RT ps -aq --filter name="^sbx-$uid_a-r-")"
out=$(sbx_as $UB release -a s 2>&1)
s_gone() { grep -q "teardown uid=$uid_b agent=s project=demo: ok" "$LOG"; }
check "B releases its sandbox" wait_for 30 s_gone

echo "# request, release, request... with the same agent: each claim renamed"
# An agent that requests and releases every 2 s: its release comes while
# the claim's rename waits (for a spare worker, behind the refill) or
# runs. The runtime does not make a rename and a removal of one container
# atomic: a rename that lands while the removal stops the container
# leaves the new name taken, with no container, and a later claim of that
# slot could not be renamed. Here the race is made sure of: the rename
# and the release's removal wait at the gate and go at once. Then two
# claims of the same agent that are kept until renamed: each must
# get sbx-UID-AGENT-SVC-wSLOT (slots come back to the pool, so the names
# repeat) and keep the labels it was started with.
# The agent's slug is this run's: a name lost to the runtime by an
# earlier run (the bug this tests) stays lost.
CY=cy$$
# claimed_as SVC SOCKDIR: the name of the container whose /sbx is SOCKDIR
# (the same directory: device and inode through the container's root).
claimed_as() {
	local n p want
	want=$(stat -c %d:%i "$2") || return 1
	for n in $($RT ps --filter "label=sbx.pool=$1" --format '{{.Names}}'); do
		p=$($RT inspect --format '{{.State.Pid}}' "$n" 2>/dev/null)
		[ "${p:-0}" -gt 0 ] || continue
		[ "$(stat -c %d:%i "/proc/$p/root/sbx" 2>/dev/null)" = "$want" ] &&
		    echo "$n"
	done
}
# renamed_ok SVC SOCKDIR: served by sbx-UID-$CY-SVC-wN, labelled as the
# pool's (sbx.pool, sbx.service), with no owner's labels (sbx-monitor(8)).
renamed_ok() {
	local n
	n=$(claimed_as "$1" "$2")
	[[ $n =~ ^sbx-$uid_a-$CY-$1-w[0-9]+$ ]] || return 1
	[ "$($RT inspect --format '{{index .Config.Labels "sbx.pool"}} {{index .Config.Labels "sbx.service"}} {{index .Config.Labels "sbx.uid"}}{{index .Config.Labels "sbx.agent"}}' "$n")" = "$1 $1 " ]
}
cy_gone() { [ -z "$($RT ps -aq --filter name="^sbx-$uid_a-$CY-")" ]; }
check "the pool is full" wait_for 90 full_pool
inuse0=$(grep -c 'already in use' "$LOG")
bad=0 unserved=0 names=
for round in 1 2 3 4 5 6; do
	# A claim released while its rename runs.
	wait_for 90 full_pool
	hold_rename
	envY=$(sbx_as $UA request -a $CY -p demo 2>&1)
	[ "$(redis_as $UA "$(env_of "$envY" REDIS_SOCKET)" "$(env_of "$envY" REDIS_PASSWORD)" ping)" = PONG ] ||
	    unserved=$((unserved + 1))
	wait_for 10 held 1
	touch "$GATE/hold-rm"
	sbx_as $UA release -a $CY >/dev/null 2>&1 &
	rel=$!
	wait_for 3 held 2	# the removal, unless it waits for the rename
	release_all
	wait $rel
	wait_for 30 cy_gone
	# Claims kept until they are renamed: two, so that one of them
	# gets the slot the raced one had.
	for kept in 1 2; do
		wait_for 90 full_pool
		envY=$(sbx_as $UA request -a $CY -p demo 2>&1)
		pgdir=$(env_of "$envY" POSTGRES_HOST) rdsock=$(env_of "$envY" REDIS_SOCKET)
		[ "$(redis_as $UA "$rdsock" "$(env_of "$envY" REDIS_PASSWORD)" ping)" = PONG ] ||
		    unserved=$((unserved + 1))
		if ! wait_for 20 renamed_ok postgres "$pgdir" ||
		    ! wait_for 20 renamed_ok redis "$(dirname "$rdsock")"; then
			bad=$((bad + 1))
			echo "# round $round.$kept: served by $(claimed_as postgres "$pgdir") $(claimed_as redis "$(dirname "$rdsock")")"
		fi
		names="$names $(claimed_as postgres "$pgdir" | sed 's/.*-//')"
		sbx_as $UA release -a $CY >/dev/null 2>&1
		wait_for 30 cy_gone
	done
done
check "eighteen claims of agent $CY, all served" test "$unserved" -eq 0
check "each kept one renamed sbx-$uid_a-$CY-SVC-wN, with the pool's labels (postgres:$names)" test "$bad" -eq 0
check "no rename found its name in use (monitor log)" test "$(grep -c 'already in use' "$LOG")" -eq "$inuse0"
check "no container of agent $CY is left" cy_gone
check "the pool refills" wait_for 90 full_pool

echo "# a claim: answered with every runtime call held"
before=$(pool_names redis; pool_names postgres)
c0=$(warm_claims) p0=$(provisions)
hold_all
t0=$(date +%s%N)
envA=$(timeout 20 runuser -u $UA -- "$WORK/sbx" -S "$SOCK" request -a a -p demo 2>&1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "A's request is answered while every runtime call waits ($ms ms)" grep -q '^export REDIS_SOCKET=' <<<"$envA"
check "it was a claim (audit warm=yes) and no provision" test "$(warm_claims)" -eq $((c0 + 1)) -a "$(provisions)" -eq "$p0"
check "the refill and the rename came after the reply (held at the gate)" wait_for 10 held 1
release_all
sockA=$(env_of "$envA" REDIS_SOCKET) pwA=$(env_of "$envA" REDIS_PASSWORD)
check "A's redis answers with A's password" test "$(redis_as $UA "$sockA" "$pwA" ping)" = PONG
check "A's postgres answers at the reply's URL" bash -c "cd / && runuser -u $UA -- psql '$(env_of "$envA" POSTGRES_URL)' -tAc 'select 40+2' | grep -qx 42"
check "the reply names the service's user and database (sbx, sbx; redis default)" test "$(env_of "$envA" POSTGRES_USER) $(env_of "$envA" POSTGRES_DATABASE) $(env_of "$envA" REDIS_USER)" = "sbx sbx default"
check "its socket is in A's directory ($sockA)" test "${sockA#"$WORK/run/$uid_a/a/"}" != "$sockA"
out=$(runuser -u $UB -- ls "$(dirname "$sockA")" 2>&1)
check "B cannot enter it (EACCES)" grep -q "Permission denied" <<<"$out"
renamed() { [ "$($RT ps --filter label=sbx.pool --format '{{.Names}}' | grep -c "^sbx-$uid_a-a-")" -eq 2 ]; }
check "the claimed containers are renamed for the admin (sbx-UID-AGENT-SVC-wSLOT)" wait_for 30 renamed
check "and keep the pool's label (started before their owner was known)" test "$($RT ps --filter label=sbx.pool --filter name="^sbx-$uid_a-a-" -q | wc -l)" -eq 2
check "the pool refills to two of each" wait_for 90 full_pool
out=$(sbx status 2>&1)
check "sbx status shows the pool per service" grep -qx "warm containers ready: postgres 2, redis 2" <<<"$out"
check "and A's claimed sandbox" grep -q "^$uid_a *a *demo " <<<"$out"
out=$(sbx_as $UA status 2>&1)
check "A's own status lists its sandbox" grep -q "^$uid_a *a *demo " <<<"$out"
check "and nothing of the pool, which is the host's load" lacks "warm" "$out"
check "A's next request is a hit with the same password" test "$(runuser -u $UA -- "$WORK/sbx" -S "$SOCK" request -a a -p demo)" = "$envA"
envB=$(sbx_as $UB request -a b -p demo 2>&1)
check "B's claim gets other passwords than A's" test -n "$(env_of "$envB" REDIS_PASSWORD)" -a "$(env_of "$envB" REDIS_PASSWORD)" != "$pwA"

echo "# restarts adopt warm containers as warm, claimed ones as sandboxes"
check "the pool is full again" wait_for 90 full_pool
ids=$($RT ps -q --filter label=sbx.pool | sort | tr '\n' ' ')
stop_monitor
start_monitor || exit 1
check "SIGTERM: adopted 2 sandboxes and 4 warm containers" grep -q "adopted 2 sandboxes and 4 warm containers, discarded 0" "$LOG"
check "the same containers, none removed or added" test "$($RT ps -q --filter label=sbx.pool | sort | tr '\n' ' ')" = "$ids"
check "A's request is a hit with the same credentials" test "$(runuser -u $UA -- "$WORK/sbx" -S "$SOCK" request -a a -p demo)" = "$envA"
kill -9 "$MON_PID"; wait "$MON_PID" 2>/dev/null; MON_PID=
sleep 0.2
start_monitor || exit 1
check "kill -9: adopted 2 sandboxes and 4 warm containers again" test "$(grep -c "adopted 2 sandboxes and 4 warm containers, discarded 0" "$LOG")" -eq 2
c0=$(warm_claims)
envC=$(sbx_as $UA request -a c -p demo 2>&1)
check "an adopted warm container is claimed (audit warm=yes)" test "$(warm_claims)" -eq $((c0 + 1))
check "and serves" test "$(redis_as $UA "$(env_of "$envC" REDIS_SOCKET)" "$(env_of "$envC" REDIS_PASSWORD)" ping)" = PONG

echo "# a claim's pool records left behind by a stop (removed after the reply)"
# The claim writes the sandbox's record before its reply; the pool's
# records go and the containers are renamed after it: a stop between
# leaves both records and the pool's names. Put them back by hand, with
# room in the pool (one warm container of each service gone): the
# restart must leave those containers to their sandboxes, adopted (e) or
# discarded with them (g, its project gone), never to the pool, where
# another tenant's claim would meet them.
check "the pool is full again" wait_for 90 full_pool
mkdir -p "$WORK/pool-records"
cp -p "$WORK/state/sandboxes"/pool-* "$WORK/pool-records/"
envE=$(sbx_as $UA request -a e -p demo 2>&1)
envG=$(sbx_as $UB request -a g -p demo2 2>&1)
stale() { for f in "$WORK/pool-records"/pool-*; do [ -e "$WORK/state/sandboxes/${f##*/}" ] || echo "${f##*/}"; done; }
four_gone() { [ "$(stale | wc -l)" -eq 4 ]; }
check "E's and G's claims removed four pool records" wait_for 10 four_gone
check "the pool is full again, E's and G's renamed" wait_for 90 full_pool
claimedE=$($RT ps -q --filter label=sbx.pool --filter name="^sbx-$uid_a-e-" | sort | tr '\n' ' ')
claimedG=$($RT ps -q --filter label=sbx.pool --filter name="^sbx-$uid_b-g-" | sort | tr '\n' ' ')
stop_monitor
for svc in postgres redis; do
	n=$(pool_names $svc | head -1)
	$RT rm -f -t 0 "$n" >/dev/null
	rm "$WORK/state/sandboxes/pool-$svc-${n##*-}"
done
kept=$($RT ps -q --filter name='^sbx-pool-' | sort | tr '\n' ' ')
for f in $(stale); do cp -p "$WORK/pool-records/$f" "$WORK/state/sandboxes/"; done
for n in $($RT ps -a --filter label=sbx.pool --format '{{.Names}}' | grep -E "^sbx-($uid_a-e|$uid_b-g)-"); do
	s=${n%-w*}
	$RT rename "$n" "sbx-pool-${s##*-}-${n##*-w}"
done
check "E's and G's containers have their pool names again" test "$($RT ps --filter name='^sbx-pool-' -q | wc -l)" -eq 6
rm "$WORK/projects/demo2.conf"
start_monitor || exit 1
check "adopted the sandboxes but G's, and the 2 warm containers left alone" grep -q "adopted 4 sandboxes and 2 warm containers," "$LOG"
check "G's sandbox is discarded: its project is gone" grep -q "audit event=discard uid=$uid_b agent=g project=demo2 .*reason=project_gone" "$LOG"
check "E's request is a hit with the same credentials" test "$(sbx_as $UA request -a e -p demo)" = "$envE"
e_named() { [ "$($RT ps --filter label=sbx.pool --format '{{.Names}}' | grep -c "^sbx-$uid_a-e-")" -eq 2 ]; }
check "E's containers get their owner's names (renamed after the start)" wait_for 30 e_named
g_gone() { [ -z "$(for id in $claimedG; do $RT ps -aq --filter id="$id"; done)" ]; }
check "G's claimed containers are removed with G's sandbox" wait_for 30 g_gone
check "the pool refills, its records four again" wait_for 90 full_pool
pool_now=$($RT ps -q --filter name='^sbx-pool-' | sort | tr '\n' ' ')
check "the two kept warm containers are still in the pool ($kept)" test -z "$(for id in $kept; do grep -q "$id" <<<"$pool_now" || echo "$id"; done)"
check "none of E's or G's is ($claimedE$claimedG)" test -z "$(for id in $claimedE $claimedG; do grep -q "$id" <<<"$pool_now" && echo "$id"; done)"
c0=$(warm_claims)
envH=$(sbx_as $UB request -a h -p demo 2>&1)
check "B's next claim gets none of E's or G's passwords" test "$(warm_claims)" -eq $((c0 + 1)) -a -n "$(env_of "$envH" REDIS_PASSWORD)" -a "$(env_of "$envH" REDIS_PASSWORD)" != "$(env_of "$envE" REDIS_PASSWORD)" -a "$(env_of "$envH" REDIS_PASSWORD)" != "$(env_of "$envG" REDIS_PASSWORD)"

echo "# release: a claimed container goes, never back to the pool"
check "the pool is full again" wait_for 90 full_pool
claimedA=$($RT ps -q --filter label=sbx.pool --filter name="^sbx-$uid_a-a-" | sort | tr '\n' ' ')
out=$(runuser -u $UA -- "$WORK/sbx" -S "$SOCK" release -a a 2>&1)
check "A's release answers released" grep -q "released" <<<"$out"
gone_a() { [ -z "$($RT ps -aq --filter label=sbx.pool --filter name="^sbx-$uid_a-a-")" ]; }
check "A's claimed containers are removed" gone_a
check "none of them is in the pool ($claimedA)" test -z "$(for id in $claimedA; do $RT ps -aq --filter id="$id"; done)"
check "A's directory is gone" test ! -e "$WORK/run/$uid_a/a"

echo "# a reshape that drops a claimed service gives its uid range back"
# A warm container holds a host uid range of its own, claimed or not
# (idmap.c); the metrics say how many are taken. A claimed redis that the
# project no longer offers is removed at SIGHUP, and its range comes
# back then, not at the monitor's next start.
hup() { local n; n=$(grep -c 'reloaded .* project policies' "$LOG"); kill -HUP "$MON_PID"
	wait_until 10 '[ "$(grep -c "reloaded .* project policies" "$LOG")" -gt "$n" ]'; }
# The metrics file rewritten after now (every 5 s), then a figure of it.
written_after() { [ "$(stat -c %.9Y "$WORK/sbx.prom" | tr -d .)" -gt "$1" ]; }
fresh() { local t; t=$(date +%s%N); wait_for 12 written_after "$t"; }
ranges() { sed -n 's/^sbx_uid_ranges //p' "$WORK/sbx.prom"; }
ranges_are() { [ "$(ranges)" -eq "$1" ]; }
# Every job's result taken (A's teardown gives its ranges back at its end).
no_workers() { [ -z "$(job_workers "$MON_PID")" ]; }
printf '[project]\nsandbox_services = postgres redis\n' > "$WORK/projects/shrink.conf"
hup
c0=$(warm_claims)
envS=$(sbx_as $UB request -a s -p shrink 2>&1)
check "B's agent s claims postgres and redis" test "$(warm_claims)" -eq $((c0 + 1)) -a -n "$(env_of "$envS" REDIS_PASSWORD)"
check "the pool refills" wait_for 90 full_pool
wait_for 30 no_workers; fresh; r1=$(ranges)
printf '[project]\nsandbox_services = postgres\n' > "$WORK/projects/shrink.conf"
hup
check "SIGHUP reshapes s to postgres alone" wait_for 30 grep -q "provision uid=$uid_b agent=s project=shrink services=1 (reshape): ok" "$LOG"
s_left() { [ "$($RT ps -aq --filter label=sbx.pool --filter "name=^sbx-$uid_b-s-" | wc -l)" -eq "$1" ]; }
check "its redis container is gone" wait_for 10 s_left 1
fresh
check "and its uid range is back, no other taken ($r1 before, $(ranges) now)" ranges_are $((r1 - 1))
check "its kept postgres still works, as s has it" test "$(env_of "$(sbx_as $UB request -a s -p shrink 2>&1)" POSTGRES_PASSWORD)" = "$(env_of "$envS" POSTGRES_PASSWORD)"
sbx_as $UB release -a s >/dev/null
check "release removes the kept postgres, a claimed container" wait_for 30 s_left 0
check "and gives its range back" wait_for 30 ranges_are $((r1 - 2))

echo "# a warm container found unusable at a claim"
# Its process lives, so the idle sweep (below) does not see it; its
# socket is gone, which the claim's check does see.
n_sock=$(ls "$WORK"/run/.pool/redis-*/s/redis.sock 2>/dev/null | wc -l)
rm -f "$WORK"/run/.pool/redis-*/s/redis.sock
p0=$(provisions) c0=$(warm_claims)
envD=$(sbx_as $UB request -a d -p demo 2>&1)
check "the request is served" test "$(redis_as $UB "$(env_of "$envD" REDIS_SOCKET)" "$(env_of "$envD" REDIS_PASSWORD)" ping)" = PONG
check "by a normal provision, not a claim" test "$(provisions)" -eq $((p0 + 1)) -a "$(warm_claims)" -eq "$c0"
check "the two unusable ones ($n_sock sockets removed) were seen and replaced" test "$n_sock" -eq 2 -a "$(grep -c 'redis-[0-9]*: found dead at a claim: replaced' "$LOG")" -eq 2
check "the pool is full again, the unusable ones removed" wait_for 90 full_pool
check "no dead warm container is left" wait_for 30 no_dead_warm

echo "# a warm container that dies while idle"
# Killed with no request anywhere: the monitor's tick polls each ready
# member's pidfd and replaces the dead ones, so no agent meets them.
p0=$(provisions) c0=$(warm_claims)
for n in $(pool_names postgres); do
	p=$($RT inspect --format '{{.State.Pid}}' "$n")
	[ "${p:-0}" -gt 0 ] && kill -9 "$p"	# never "kill -9 0": our group
done
idle_dead() { [ "$(grep -c 'postgres-[0-9]*: died while idle: replaced' "$LOG")" -eq 2 ]; }
check "both are seen dead within 5 s, with no request" wait_for 5 idle_dead
check "and replaced: the pool is full again" wait_for 90 full_pool
check "no provision and no claim was made for it" test "$(provisions)" -eq "$p0" -a "$(warm_claims)" -eq "$c0"
check "no dead warm container is left" wait_for 30 no_dead_warm

echo "# a burst past the pool"
# No refill may finish within the burst (however slowly its requests
# arrive): warm starts wait at the gate until it is served.
hold_warm
c0=$(warm_claims) p0=$(provisions)
bp=
for i in 1 2 3 4; do sbx_as $UB request -a burst$i -p demo > "$WORK/burst$i" 2>&1 & bp="$bp $!"; done
wait $bp	# not the monitor: start_monitor's background job
okn=0
for i in 1 2 3 4; do
	e=$(cat "$WORK/burst$i")
	[ "$(redis_as $UB "$(env_of "$e" REDIS_SOCKET)" "$(env_of "$e" REDIS_PASSWORD)" ping)" = PONG ] && okn=$((okn + 1))
done
check "four agents at once, two warm containers of each: all four served" test "$okn" -eq 4
check "two by claims, two by normal provisions" test "$(warm_claims)" -eq $((c0 + 2)) -a "$(provisions)" -eq $((p0 + 2))
check "the refills waited at the gate meanwhile" wait_for 10 held 1
release_all
check "the pool refills" wait_for 90 full_pool
stop_monitor
check "the monitor stopped cleanly (SIGTERM)" test -z "$MON_PID"
finish
