#!/usr/bin/env bash
# reset.sh - seeds, reset and snapshots (docs/contract.md, "Wire protocol"):
# a project's postgres_seed is in every sandbox of it; the agent's role
# may create pgvector's extension, not an untrusted one; reset ends every
# session and puts postgres back as handed out (or as a snapshot) and
# empties redis (or puts it back); snapshots outlive a restart of the
# monitor; a failing seed says its file and line and leaves nothing
# running; the error codes; another uid with the same agent slug touches
# nothing. Two real uids, a real podman, real psql and redis-cli.
set -u
. "$(dirname "$0")/lib.sh"

UA=sbx-it-ra UB=sbx-it-rb
throwaway_users $UA $UB
uid_a=$(id -u $UA)

$RT rm -f -t 0 --filter label=sbx.uid >/dev/null 2>&1
# section FROM TO: local.conf's [service FROM] as TO, on transport tcp.
section_tcp() {
	awk -v from="[service $1]" -v to="[service $2]" '
	    /^\[/ { on = ($0 == from); if (on) { print to; next } }
	    on && /^transport *=/ { print "transport = tcp"; next }
	    on && /^warm *=/ { print "warm = 0"; next }
	    on' policy/local.conf
}
CONF_EXTRA="$(section_tcp postgres pgtcp)
$(section_tcp redis rdtcp)"
write_conf yes
set_conf max_snapshots 2
# 50 tables of 200 rows: a seed worth copying, applied as the agent's role.
{
	echo "-- seeded.sql: the suite's seed"
	for t in $(seq 50); do
		echo "CREATE TABLE t$t (id int PRIMARY KEY, v text);"
		echo "INSERT INTO t$t SELECT g, md5(g::text) FROM generate_series(1, 200) g;"
	done
	echo "CREATE TABLE marker (v text); INSERT INTO marker VALUES ('seed-1');"
} > "$WORK/projects/seeded.sql"
printf '[project]\nsandbox_services = postgres redis\npostgres_seed = seeded.sql\n' \
    > "$WORK/projects/seeded.conf"
printf '[project]\nsandbox_services = postgres redis\npostgres_seed = seeded.sql\nwarm = 1\n' \
    > "$WORK/projects/pooled.conf"
printf 'CREATE TABLE ok1 (v int);\nINSERT INTO ok1 VALUES (1);\nSELEC oops;\n' \
    > "$WORK/projects/bad.sql"
printf '[project]\nsandbox_services = postgres\npostgres_seed = bad.sql\n' \
    > "$WORK/projects/bad.conf"
printf '[project]\nsandbox_services = pgtcp rdtcp\n' > "$WORK/projects/tcp.conf"
start_monitor || exit 1

# sql USER ENV SQL: one psql command as USER with the eval'd lines ENV,
# from / (the checkout may be a directory USER cannot enter, and psql
# says so on stderr, which these helpers keep).
sql() {
	local u=$1 env=$2; shift 2
	runuser -u "$u" -- env -i PATH="$PATH" bash -c \
	    "cd /"$'\n'"$env"$'\n''psql -X -v ON_ERROR_STOP=1 -tAc "$1" 2>&1' sql "$1"
}
# rcli USER ENV ARGS...: redis-cli as USER on the sandbox's redis.
rcli() {
	local u=$1 env=$2; shift 2
	runuser -u "$u" -- env -i PATH="$PATH" bash -c "cd /"$'\n'"$env"$'\n''
	    REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" \
	    --user "$REDIS_USER" --no-auth-warning "$@" 2>&1' rcli "$@"
}
err_of() { sbx_as "$@" 2>&1 >/dev/null; }

echo "# the seed"
envA=$(sbx_as $UA request -a r1 -p seeded postgres redis 2>&1) || nok "A's seeded sandbox" "$envA"
check "the seed is in the agent's database" test "$(sql $UA "$envA" 'select v from marker')" = seed-1
check "all of it (50 tables of 200 rows)" test "$(sql $UA "$envA" "select count(*) from pg_tables where tablename ~ '^t[0-9]+\$'")" = 50 -a "$(sql $UA "$envA" 'select count(*) from t50')" = 200
check "applied as the agent's role: it owns the tables" test "$(sql $UA "$envA" "select tableowner from pg_tables where tablename = 'marker'")" = sbx
check "no seed text reached the monitor's log" lacks "generate_series" "$(cat "$LOG")"

echo "# extensions, as the agent's role (the owner of its database, no superuser)"
out=$(sql $UA "$envA" 'create extension vector')
check "CREATE EXTENSION vector works (pgvector, trusted in the image)" test "$out" = "CREATE EXTENSION"
check "the agent owns it" test "$(sql $UA "$envA" "select extowner::regrole from pg_extension where extname = 'vector'")" = sbx
out=$(sql $UA "$envA" "select round(('[1,2,3]'::vector <-> '[3,2,1]')::numeric, 6)")
check "a vector distance: [1,2,3] <-> [3,2,1] is sqrt(8) ($out)" test "$out" = 2.828427
out=$(sql $UA "$envA" 'create extension file_fdw')
check "an untrusted extension (file_fdw) is still refused" grep -q 'permission denied to create extension "file_fdw"' <<<"$out"
check "and is not there" test "$(sql $UA "$envA" "select count(*) from pg_extension where extname = 'file_fdw'")" = 0
sql $UA "$envA" 'drop extension vector' >/dev/null

echo "# reset ends the sessions and restores the hand-out state"
sql $UA "$envA" "insert into marker values ('dirty'); drop table t1;" >/dev/null
rcli $UA "$envA" set k1 v1 >/dev/null
runuser -u $UA -- env -i PATH="$PATH" bash -c "cd /"$'\n'"$envA"$'\n''psql -X -tAc "select pg_sleep(60)"' \
    >"$WORK/held.out" 2>&1 &
held=$!
sleeping() { [ "$(sql $UA "$envA" "select count(*) from pg_stat_activity where query like 'select pg_sleep%'")" = 1 ]; }
wait_for 10 sleeping
t0=$(date +%s%N)
envR=$(sbx_as $UA reset -a r1 2>&1); rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "reset answers ok ($ms ms)" test "$rc" -eq 0
check "with the same credentials as the request" test "$envR" = "$envA"
wait_for 10 sh -c "! kill -0 $held 2>/dev/null"
check "the open session was ended" grep -q "terminat" "$WORK/held.out"
check "postgres is back as seeded" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1 -a "$(sql $UA "$envA" 'select count(*) from t1')" = 200
check "redis is empty" test "$(rcli $UA "$envA" dbsize)" = 0
check "audited" grep -q "audit event=reset uid=$uid_a agent=r1 project=seeded .*result=ok to=-" "$LOG"
sql $UA "$envA" "insert into marker values ('again')" >/dev/null
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "a second reset (the copy made ahead) restores it too" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1

echo "# snapshots"
sql $UA "$envA" "insert into marker values ('snap-1')" >/dev/null
rcli $UA "$envA" set k1 snap >/dev/null
out=$(sbx_as $UA snapshot -a r1 s1 2>&1)
check "snapshot s1 answers its name" test "$out" = "saved snapshot s1"
sql $UA "$envA" "delete from marker; drop table t2" >/dev/null
rcli $UA "$envA" set k1 later >/dev/null
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "reset --to s1: postgres as it was at s1" test "$(sql $UA "$envA" "select string_agg(v, ',' order by v) from marker")" = seed-1,snap-1 -a "$(sql $UA "$envA" 'select count(*) from t2')" = 200
check "and redis as it was at s1" test "$(rcli $UA "$envA" get k1)" = snap

echo "# snapshots and the hand-out state are out of the agent's reach"
# redis: what a test suite's teardown runs, and worse. Each reset --to s1
# must bring back exactly s1 (k1 = snap, one key), whatever came before.
rcli $UA "$envA" -n 15 set k15 v >/dev/null
check "the agent's databases 0-15 serve" test "$(rcli $UA "$envA" -n 15 get k15)" = v
check "SWAPDB within 0-15 works" test "$(rcli $UA "$envA" swapdb 0 15)" = OK
rcli $UA "$envA" flushall >/dev/null
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "after FLUSHALL, reset --to s1 restores s1" test "$(rcli $UA "$envA" get k1)" = snap -a "$(rcli $UA "$envA" dbsize)" = 1 -a "$(rcli $UA "$envA" -n 15 dbsize)" = 0
out=$(rcli $UA "$envA" swapdb 0 16)
check "SWAPDB 0 16 is refused" grep -qi "out of range\|invalid" <<<"$out"
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "and reset --to s1 restores s1" test "$(rcli $UA "$envA" get k1)" = snap -a "$(rcli $UA "$envA" dbsize)" = 1
out=$(rcli $UA "$envA" eval "redis.call('select', 16) return redis.call('flushdb')" 0)
check "SELECT 16 then FLUSHDB is refused" grep -qi "out of range\|invalid" <<<"$out"
rcli $UA "$envA" set mv x >/dev/null
out=$(rcli $UA "$envA" move mv 16)
check "MOVE to database 16 is refused" grep -qi "out of range\|invalid" <<<"$out"
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "reset --to s1 still has s1" test "$(rcli $UA "$envA" get k1)" = snap -a "$(rcli $UA "$envA" dbsize)" = 1
# Keys planted where snapshots were kept (databases 16 and 17, as copies
# of a key of database 0), with a slot's marker beside them.
rcli $UA "$envA" eval "for i = 16, 17 do redis.call('select', i) redis.call('set', string.char(0) .. 'planted', 'p') end redis.call('set', 'sbx:snapshot', 'fake') return 1" 0 >/dev/null
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "planted keys are not brought back by reset --to s1" test "$(rcli $UA "$envA" get planted)" = "" -a "$(rcli $UA "$envA" dbsize)" = 1
keepdir=$(dirname "$(runuser -u $UA -- env -i bash -c "cd /"$'\n'"$envA"$'\n''echo "$REDIS_SOCKET"')")/keep
check "the agent cannot enter the keeper's directory" runuser -u $UA -- sh -c "! ls '$keepdir' >/dev/null 2>&1 && ! redis-cli -s '$keepdir/redis.sock' ping >/dev/null 2>&1"
# postgres: sbx's databases are not the agent's role's.
for d in sbx_origin sbx_next_origin sbx_snap_0; do
	out=$(sql $UA "$envA" "ALTER DATABASE $d ALLOW_CONNECTIONS true")
	check "ALTER DATABASE $d is refused" grep -q "must be owner" <<<"$out"
	out=$(sql $UA "$envA" "ALTER DATABASE $d RENAME TO mine_$d")
	check "renaming $d is refused" grep -q "must be owner" <<<"$out"
	out=$(runuser -u $UA -- env -i PATH="$PATH" bash -c "cd /"$'\n'"$envA"$'\n''psql -X -v ON_ERROR_STOP=1 "$POSTGRES_URL" -c "\\c '$d'" -c "drop table marker" 2>&1')
	check "connecting to $d is refused" grep -q "not currently accepting connections\|permission denied" <<<"$out"
	out=$(sql $UA "$envA" "DROP DATABASE $d")
	check "DROP DATABASE $d is refused" grep -q "must be owner" <<<"$out"
done
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "reset --to s1 after those: postgres as at s1" test "$(sql $UA "$envA" "select string_agg(v, ',' order by v) from marker")" = seed-1,snap-1 -a "$(sql $UA "$envA" 'select count(*) from t2')" = 200
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "a plain reset after those: the seed, and an empty redis" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1 -a "$(rcli $UA "$envA" dbsize)" = 0 -a "$(rcli $UA "$envA" -n 15 dbsize)" = 0
check "the agent's role owns its database after the resets" test "$(sql $UA "$envA" "select pg_get_userbyid(datdba) from pg_database where datname = current_database()")" = sbx
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "and the next (from the copy made ahead) too" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "a plain reset still goes back to the seed" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1 -a "$(rcli $UA "$envA" dbsize)" = 0
sbx_as $UA snapshot -a r1 s2 >/dev/null 2>&1
err=$(err_of $UA snapshot -a r1 s3)
check "past max_snapshots (2): bad_request, saying so" grep -q "bad_request.*max_snapshots" <<<"$err"
sql $UA "$envA" "insert into marker values ('snap-1b')" >/dev/null
check "replacing one by its name is allowed" test "$(sbx_as $UA snapshot -a r1 s1 2>&1)" = "saved snapshot s1"

echo "# the error codes"
check "reset of no sandbox: no_sandbox" grep -q no_sandbox <<<"$(err_of $UA reset -a nobody-here)"
check "snapshot of no sandbox: no_sandbox" grep -q no_sandbox <<<"$(err_of $UA snapshot -a nobody-here x)"
sql $UA "$envA" "insert into marker values ('kept')" >/dev/null
check "reset --to an unknown snapshot: unknown_snapshot" grep -q unknown_snapshot <<<"$(err_of $UA reset -a r1 --to nosuch)"
check "and nothing changed" grep -q kept <<<"$(sql $UA "$envA" 'select v from marker')"
sbx_as $UA snapshot -a r1 'Bad/Name' >/dev/null 2>&1
check "a bad snapshot name: the CLI refuses it (exit 2)" test $? -eq 2
hex=$(/usr/bin/python3 -c 'import msgpack; print(msgpack.packb({"op": "snapshot", "agent": "r1", "name": "Bad/Name"}).hex())')
check "and over the wire: bad_request" grep -q bad_request <<<"$(rawreply "$hex")"
hex=$(/usr/bin/python3 -c 'import msgpack; print(msgpack.packb({"op": "reset", "agent": "r1", "to": 7}).hex())')
check "a reset whose to is no string: bad_request" grep -q bad_request <<<"$(rawreply "$hex")"

echo "# another uid, the same agent slug"
check "B's reset of r1: no_sandbox" grep -q no_sandbox <<<"$(err_of $UB reset -a r1)"
check "B's snapshot of r1: no_sandbox" grep -q no_sandbox <<<"$(err_of $UB snapshot -a r1 s1)"
check "A's data untouched" grep -q kept <<<"$(sql $UA "$envA" 'select v from marker')"
envB=$(sbx_as $UB request -a r1 -p demo redis 2>&1)
rcli $UB "$envB" set bkey b >/dev/null
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "A's reset leaves B's sandbox of the same slug alone" test "$(rcli $UB "$envB" get bkey)" = b

echo "# a resident data worker: one per sandbox, its postgres session kept"
# Residents: root's; their session children, forks with the same
# command line, run as a uid of the sandbox's range.
residents() { pgrep -u 0 -fc "^sbx-worker resident" || true; }
check "A's resets of r1 went to one resident" test "$(grep -c "resident uid=$uid_a agent=r1: started" "$LOG")" = 1
res=$(pgrep -u 0 -f "^sbx-worker resident")
# Between jobs its one child is the kept postgres session (a job's own
# redis session ends with the job's tidy-up, after the reply).
kept_alone() { [ "$(pgrep -P "$res" | wc -l)" = 1 ]; }
wait_for 10 kept_alone
kept=$(pgrep -P "$res")
check "the resident runs as root, its kept session as a uid of the range" test "$(ps -o uid= -p "$res" | tr -d ' ')" = 0 -a "$(ps -o uid= -p "$kept" | tr -d ' ')" -ne 0 -a "$(ps -o uid= -p "$kept" | tr -d ' ')" != "$uid_a"
check "A cannot signal them" runuser -u $UA -- sh -c "! kill -0 $res 2>/dev/null && ! kill -0 $kept 2>/dev/null"
check "nor B" runuser -u $UB -- sh -c "! kill -0 $res 2>/dev/null && ! kill -0 $kept 2>/dev/null"
# The server ends the kept connection (a restart, an admin's kill): the
# next reset logs in again.
pkill -TERM -f "postgres: sbx_keeper postgres" 2>/dev/null
sql $UA "$envA" "insert into marker values ('after-kill')" >/dev/null
check "a reset after the server ended the kept session works" sbx_as $UA reset -a r1
check "and restores the seed" test "$(sql $UA "$envA" "select string_agg(v, ',') from marker")" = seed-1
check "with no second resident" test "$(grep -c "resident uid=$uid_a agent=r1: started" "$LOG")" = 1
envR9=$(sbx_as $UA request -a r9 -p seeded postgres 2>&1)
sbx_as $UA reset -a r9 >/dev/null 2>&1
n=$(residents)
sbx_as $UA release -a r9 >/dev/null 2>&1
gone() { [ "$(residents)" -lt "$n" ]; }
check "a released sandbox's resident ends" wait_for 20 gone

echo "# snapshots outlive a restart"
stop_monitor
none_left() { [ "$(residents)" = 0 ]; }
check "no resident outlives its monitor" wait_for 10 none_left
start_monitor || exit 1
check "the sandbox was adopted (a hit, same credentials)" test "$(sbx_as $UA request -a r1 -p seeded postgres 2>&1)" = "$envA"
sbx_as $UA reset -a r1 --to s1 >/dev/null 2>&1
check "reset --to s1 after the restart" test "$(sql $UA "$envA" "select string_agg(v, ',' order by v) from marker")" = seed-1,snap-1b

echo "# a changed seed applies after SIGHUP, to new sandboxes"
sed -i "s/'seed-1'/'seed-2'/" "$WORK/projects/seeded.sql"
kill -HUP "$MON_PID"
wait_until 10 'grep -q "reload" "$LOG"'
envA2=$(sbx_as $UA request -a r2 -p seeded postgres 2>&1)
check "a new sandbox has the new seed" test "$(sql $UA "$envA2" 'select v from marker')" = seed-2
sbx_as $UA reset -a r1 >/dev/null 2>&1
check "an older sandbox's reset goes back to its own hand-out" test "$(sql $UA "$envA" 'select v from marker')" = seed-1

echo "# a project's warm pool: started, seeded, ready"
# Its members made since the last reload: one made before a reload that
# changed the seed is discarded (and one still starting says nothing).
since_reload() {  # service: its members of project pooled ready since
	awk -v s="warm $1-[0-9]* of project pooled: ready" \
	    '/reloaded [0-9]* project policies/ { n = 0 } $0 ~ s { n++ } END { print n + 0 }' "$LOG"
}
pool_ready() { [ "$(since_reload postgres)" -ge 1 ] && [ "$(since_reload redis)" -ge 1 ]; }
reloads() { grep -c "reloaded [0-9]* project policies" "$LOG"; }
wait_for 120 pool_ready
check "its postgres and redis were started ahead" pool_ready
check "labelled with the project" test -n "$($RT ps -q --filter label=sbx.pool=postgres --filter label=sbx.project=pooled)"
envP=$(sbx_as $UA request -a w1 -p pooled postgres redis 2>&1)
check "a first request is a claim" grep -q "provision uid=$uid_a agent=w1 project=pooled services=2 (warm): ok" "$LOG"
check "with the seed in it (the one of its start: seed-2)" test "$(sql $UA "$envP" 'select v from marker')" = seed-2
sql $UA "$envP" "insert into marker values ('dirty')" >/dev/null
sbx_as $UA reset -a w1 >/dev/null 2>&1
check "its reset goes back to the seed" test "$(sql $UA "$envP" "select string_agg(v, ',') from marker")" = seed-2
sed -i "s/'seed-2'/'seed-3'/" "$WORK/projects/seeded.sql"
r=$(reloads)
kill -HUP "$MON_PID"
wait_until 20 '[ "$(reloads)" -gt "$r" ]'
wait_for 120 pool_ready
envQ=$(sbx_as $UA request -a w2 -p pooled postgres redis 2>&1)
check "after a SIGHUP that changed the seed, the pool has the new one" test "$(sql $UA "$envQ" 'select v from marker')" = seed-3
check "and the claim came from it" grep -q "provision uid=$uid_a agent=w2 project=pooled services=2 (warm): ok" "$LOG"
check "the unseeded project demo never takes it" test "$($RT ps -q --filter label=sbx.project=pooled --filter label=sbx.agent=r1 | wc -l)" = 0

echo "# over tcp: the session reaches 127.0.0.1:port, through the guard, under its filter"
envT=$(sbx_as $UA request -a t1 -p tcp pgtcp rdtcp 2>&1) || nok "A's tcp sandbox" "$envT"
tsql() {
	runuser -u $UA -- env -i PATH="$PATH" bash -c "cd /"$'\n'"$envT"$'\n''PGPASSWORD=$PGTCP_PASSWORD \
	    psql -X -h "$PGTCP_HOST" -p "$PGTCP_PORT" -U "$PGTCP_USER" \
	    -d "$PGTCP_DATABASE" -tAc "$1" 2>&1' tsql "$1"
}
trcli() {
	runuser -u $UA -- env -i PATH="$PATH" bash -c "cd /"$'\n'"$envT"$'\n''REDISCLI_AUTH=$RDTCP_PASSWORD \
	    redis-cli -h "$RDTCP_HOST" -p "$RDTCP_PORT" --user "$RDTCP_USER" \
	    --no-auth-warning "$@" 2>&1' trcli "$@"
}
tsql "create table t (v int); insert into t values (1)" >/dev/null
trcli set k v >/dev/null
check "a table and a key, over tcp" test "$(tsql 'select count(*) from t')" = 1 -a "$(trcli dbsize)" = 1
check "reset answers ok" sbx_as $UA reset -a t1
check "postgres is back as handed out" grep -q 'does not exist' <<<"$(tsql 'select count(*) from t')"
check "redis is empty" test "$(trcli dbsize)" = 0
# With no socket directory for keep/, the keeper's password is the
# worker's (derived from a key of root's): the hand-out state is sbx's.
next_copy() { [ "$(tsql "select count(*) from pg_database where datname = 'sbx_next_origin'")" = 1 ]; }
check "tcp alone: the reset made its next copy" wait_for 20 next_copy
check "tcp alone: the agent's role is no member of sbx_keeper" test "$(tsql "select pg_has_role(current_user, 'sbx_keeper', 'member')")" = f
check "tcp alone: ALTER DATABASE sbx_next_origin is refused" grep -q "must be owner" <<<"$(tsql 'ALTER DATABASE sbx_next_origin ALLOW_CONNECTIONS true')"
check "tcp alone: DROP DATABASE sbx_next_origin is refused" grep -q "must be owner" <<<"$(tsql 'DROP DATABASE sbx_next_origin')"
tsql "create table t2 (v int)" >/dev/null
sbx_as $UA reset -a t1 >/dev/null 2>&1
check "tcp alone: the next reset is as handed out" grep -q 'does not exist' <<<"$(tsql 'select count(*) from t2')"
check "tcp alone: the agent's role owns its database" test "$(tsql "select pg_get_userbyid(datdba) from pg_database where datname = current_database()")" = sbx

echo "# a seed that fails"
err=$(err_of $UA request -a r3 -p bad postgres)
check "seed_failed, naming the file and the line" grep -q "seed_failed.*bad.sql:3:" <<<"$err"
check "nothing of that provision is left running" test -z "$(containers r3 "$uid_a")"
check "no seed text in the monitor's log" lacks "SELEC oops" "$(cat "$LOG")"

finish
