#!/usr/bin/env bash
# demo.sh - the main job end to end, from a checkout, as root: start
# sbx-monitor with policy/local.conf, be an agent that gets a postgres and
# a redis and uses them, be it again (a cache hit), reset, release, stop.
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d /tmp/sbx-demo.XXXXXX); chmod 0755 "$W"
mkdir -p "$W/projects"
sed -e "s|^socket *=.*|socket = $W/sbx.sock|" \
    -e "s|^projects *=.*|projects = $W/projects|" \
    -e "s|^state_dir *=.*|state_dir = $W/state|" \
    -e "s|^run_dir *=.*|run_dir = $W/run|" policy/local.conf > "$W/sbx.conf"
cp policy/projects.d/demo.conf "$W/projects/demo.conf"
build/sbx-monitor -d -f "$W/sbx.conf" 2> "$W/monitor.log" &
MON=$!
# On the way out: the demo agent's containers, and this monitor's warm
# ones (named after their records: sbx-pool-SERVICE-SLOT).
bye() {
	kill $MON 2>/dev/null; wait $MON 2>/dev/null
	podman rm -f -t 0 --filter label=sbx.agent=demo-agent >/dev/null 2>&1
	for f in "$W"/state/sandboxes/pool-*; do
		[ -e "$f" ] && podman rm -f -t 0 "sbx-${f##*/}" >/dev/null 2>&1
	done
	# The tmpfs the workers mounted under run_dir (warm containers'
	# socket directories and data stay mounted when a monitor stops,
	# for the next to adopt), deepest first.
	findmnt -rn -o TARGET | awk -v w="$W/" 'index($0, w) == 1' | sort -r |
	    xargs -r -d '\n' umount -l
	rm -rf "$W"
}
trap bye EXIT
export SBX_SOCKET=$W/sbx.sock
for _ in $(seq 50); do build/sbx ping >/dev/null 2>&1 && break; sleep 0.1; done
# policy/local.conf keeps one warm container of each service: wait for
# them, so that the first request below is served from the pool.
warm=$(grep -c '^warm *= *[1-9]' "$W/sbx.conf" || true)
for _ in $(seq 600); do
	[ "$(ls "$W/state/sandboxes" 2>/dev/null | grep -c '^pool-')" -ge "$warm" ] && break
	sleep 0.1
done
echo "\$ sbx status   # as root: the warm pool"; build/sbx status

# Seconds since $1 (date +%s.%N), to the millisecond.
since() { awk "BEGIN{printf \"%.3f\", $(date +%s.%N) - $1}"; }
echo "\$ sbx available demo"; build/sbx available demo
echo "\$ eval \"\$(sbx request -a demo-agent -p demo postgres)\""
t0=$(date +%s.%N)
eval "$(build/sbx request -a demo-agent -p demo postgres)"
echo "  (a new agent, served from the warm pool: $(since "$t0") s)"
echo "\$ psql \"\$POSTGRES_URL\" -c 'create table t(x int); insert into t values (42); select x from t'"
psql "$POSTGRES_URL" -tAc 'create table t(x int); insert into t values (42); select x from t'
# redis-cli -u takes no unix:// URL: over a socket, -s and the password
# in the environment (never in argv)
rcli() {
	if [ -n "${REDIS_SOCKET:-}" ]; then
		REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" \
		    --user "$REDIS_USER" "$@"
	else
		redis-cli -u "$REDIS_URL" --no-auth-warning "$@"
	fi
}
if [ -n "${REDIS_SOCKET:-}" ]; then
	echo "\$ REDISCLI_AUTH=\"\$REDIS_PASSWORD\" redis-cli -s \"\$REDIS_SOCKET\" --user \"\$REDIS_USER\" set/get"
else
	echo "\$ redis-cli -u \"\$REDIS_URL\" set/get"
fi
rcli set greeting hello
rcli get greeting
first=$POSTGRES_PASSWORD
t0=$(date +%s.%N)
eval "$(build/sbx request -a demo-agent -p demo postgres redis)"
echo "again: a cache hit in $(since "$t0") s, same credentials: $([ "$first" = "$POSTGRES_PASSWORD" ] && echo yes || echo NO)"
echo "\$ sbx reset -a demo-agent   # every session ended, the databases as handed out"
t0=$(date +%s.%N)
eval "$(build/sbx reset -a demo-agent)"
echo "  (reset in $(since "$t0") s)"
echo "\$ psql \"\$POSTGRES_URL\" -tAc \"select to_regclass('t') is null\"; redis-cli ... get greeting"
psql "$POSTGRES_URL" -tAc "select to_regclass('t') is null"
rcli get greeting
echo "\$ sbx status"; build/sbx status
echo "\$ sbx release -a demo-agent"; build/sbx release -a demo-agent
