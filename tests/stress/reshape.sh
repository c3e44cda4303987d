#!/usr/bin/env bash
# reshape.sh - a project's set changes under live sandboxes, and nothing
# the agent uses is lost (issue #15, "changes without loss"): the set
# grows (redis, then postgres too: only postgres starts, redis keeps its
# container, password and keys), shrinks (only the service that went is
# removed), and the same agent slug asks for another project (conflict,
# nothing torn down). SIGHUP revokes what a project no longer offers. A
# reshape that fails removes nothing the sandbox had.
# Real monitor, broker and podman; root. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

project() { printf '[project]\nsandbox_services = %s\n' "$2" > "$WORK/projects/$1.conf"; }
rcli() {  # env command...: redis-cli over the sandbox's socket
	local REDIS_SOCKET REDIS_PASSWORD e=$1; shift
	eval "$e"
	REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" --user default --no-auth-warning "$@" 2>&1
}
pq() {  # env sql
	local POSTGRES_URL
	eval "$1"
	psql "$POSTGRES_URL" -Atc "$2" 2>&1
}
pw() { sed -n "s/^\(export \)\{0,1\}$1_PASSWORD=//p" <<<"$2"; }
ids() { containers "$1" 0; }
made() { $RT ps -aq --filter "label=sbx.agent=$1" | wc -l; }
made_by() { $RT ps -aq --filter "label=sbx.agent=$1" --filter "label=sbx.service=$2" | wc -l; }
reloads() { grep -c "reloaded .* project policies" "$LOG"; }
# The projects are read at start and on SIGHUP: each change is followed
# by one, and waited for.
hup() { local n; n=$(reloads); kill -HUP "$MON_PID"; wait_until 10 '[ "$(reloads)" -gt "$n" ]'; }

write_conf yes
gate_runtime
set_conf runtime "$GATE/podman"
project grow redis
start_monitor || exit 1

echo "# the set grows"
e1=$(sbx request -a g1 -p grow)
rcli "$e1" set k kept >/dev/null
r1=$(ids g1)
project grow "postgres redis"; hup
e2=$(sbx request -a g1 -p grow); rc=$?
check "the next request succeeds with both services" test "$rc" -eq 0 -a -n "$(pw POSTGRES "$e2")" -a -n "$(pw REDIS "$e2")"
check "redis keeps its password" test "$(pw REDIS "$e2")" = "$(pw REDIS "$e1")"
check "and its data" test "$(rcli "$e2" get k)" = kept
check "and its container" bash -c "grep -q '${r1% }' <<<'$(ids g1)'"
check "postgres is new and works" test "$(pq "$e2" 'select 1')" = 1
check "audited as a provision of the grown set, not an evict" test "$(grep -c 'event=evict uid=0 agent=g1' "$LOG")" -eq 0
pq "$e2" 'create table t(x int); insert into t values (7)' >/dev/null

echo "# the set shrinks"
project grow postgres; hup
e3=$(sbx request -a g1 -p grow)
check "the next request has postgres only" test -n "$(pw POSTGRES "$e3")" -a -z "$(pw REDIS "$e3")"
check "with its password and its table" test "$(pw POSTGRES "$e3")" = "$(pw POSTGRES "$e2")" -a "$(pq "$e3" 'select x from t')" = 7
check "redis's container is gone, one container left" test "$(ids g1 | wc -w)" -eq 1 -a "$(made_by g1 redis)" -eq 0
check "and its socket directory" test ! -e "$WORK/run/0/g1/redis"

echo "# another project under the same slug"
project other redis; hup
out=$(sbx request -a g1 -p other 2>&1 >/dev/null); rc=$?
check "is refused: conflict, naming the project held" test "$rc" -ne 0 -a "$out" = "sbx: conflict: this agent holds a sandbox of project grow; release it first."
check "and nothing was torn down" test "$(pq "$e3" 'select x from t')" = 7
check "audited as a refusal" grep -q 'audit event=refuse uid=0 agent=g1 project=other services=redis result=conflict' "$LOG"

echo "# SIGHUP revokes"
project grow "postgres redis"; hup
e4=$(sbx request -a g1 -p grow)
rcli "$e4" set k2 v2 >/dev/null
project grow redis
hup
wait_until 30 '[ "$(made g1)" -eq 1 ]'
check "a service the project dropped is removed at SIGHUP" test "$(ids g1 | wc -w)" -eq 1 -a "$(made_by g1 postgres)" -eq 0
check "audited" grep -q 'audit event=revoke uid=0 agent=g1 project=grow .*kept=1 of=2' "$LOG"
e5=$(sbx request -a g1 -p grow)
check "redis runs on: same password, same keys" test "$(pw REDIS "$e5")" = "$(pw REDIS "$e4")" -a "$(rcli "$e5" get k2)" = v2
rm "$WORK/projects/grow.conf"
hup
wait_until 30 '[ "$(made g1)" -eq 0 ]'
check "a project removed: its sandboxes are torn down" test "$(made g1)" -eq 0

# A reshape that fails keeps what it had: a grow (never-ready added) is
# held at the gate while SIGHUP drops postgres, so the sandbox is busy at
# the reload; the grow then fails, not ready. A request that both drops
# and adds could only come in the moment before the revocation's tick,
# which a shell test cannot hold open: the worker's order (remove what
# is dropped only once what is added is ready, provision.c) is read, not
# run, here.
echo "# a reshape that fails keeps what it had"
project fx "postgres redis"; hup
e6=$(sbx request -a g2 -p fx)
pg6=$($RT ps -q --filter label=sbx.agent=g2 --filter label=sbx.service=postgres)
project fx "postgres redis never-ready"; hup
gate_hold g2 before
sbx request -a g2 -p fx > "$WORK/grow.out" 2>&1 &
grow=$!
wait_for 30 gate_held g2 1
project fx "redis never-ready"; hup
gate_release g2
wait "$grow"; grc=$?
check "the reshape that adds never-ready fails: not ready" test "$grc" -ne 0 -a -n "$(grep -i 'ready' "$WORK/grow.out")"
# The reload that dropped postgres met the sandbox busy: its revocation
# comes at the first tick that finds it idle, any time after the failure
# (a check of postgres's table here raced it, and lost in CI; so would a
# request sent now, queued behind the revocation's reshape and answered
# with its result). What that revocation finds is the proof: both
# services, so the failed reshape removed nothing; then it removes
# postgres alone.
revoked_g2() { grep -q 'audit event=revoke uid=0 agent=g2 project=fx services=postgres,redis result=ok kept=1 of=2' "$LOG"; }
pg6_gone() { [ -z "$($RT ps -aq --filter label=sbx.agent=g2 --filter label=sbx.service=postgres)" ]; }
shrunk_g2() { grep -q 'provision uid=0 agent=g2 project=fx services=1 (reshape): ok' "$LOG"; }
check "postgres was not removed by the failed reshape: the revocation, once the sandbox is idle, finds both services and keeps redis" wait_for 10 revoked_g2
check "then the revocation removes postgres ($pg6) alone" wait_until 30 'pg6_gone && shrunk_g2'
e7=$(sbx request -a g2 -p fx 2>&1); rc=$?
check "the next request (add never-ready to redis) fails too: not ready" test "$rc" -ne 0 -a -n "$(grep -i 'ready' <<<"$e7")"
check "redis runs on with its password" test "$(rcli "$e6" ping)" = PONG
check "never-ready's container is gone" test "$(made_by g2 never-ready)" -eq 0
finish
