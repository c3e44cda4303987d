#!/usr/bin/env bash
# run.sh - `runtime = docker` end to end (issue 14, item 3): a dockerd of
# the suite's own (Debian's docker.io; its own data root, exec root,
# socket and bridge, stopped at the end), the images of `make images
# RUNTIME=docker` loaded into it, a real monitor and broker with
# policy/local-docker.conf, real postgres and redis, real psql and
# redis-cli. Needs root, `make`, the image tars (`make images`) and
# contrib/setup-docker.sh done. Prints "N passed, N failed".
#
# The daemon: --iptables=false (and no masquerade, no ip_forward): it
# leaves the host's firewall alone, under the podman suites of other
# sessions. unix sandboxes have --network=none and need no bridge; tcp
# ones are published on 127.0.0.1 by docker-proxy (the userland proxy,
# which needs no iptables) from a bridge the suite makes and removes.
set -u

DOCKERD=/usr/sbin/dockerd DOCKER=/usr/bin/docker
[ -x $DOCKERD ] && [ -x $DOCKER ] ||
    { echo "docker.io is not installed (contrib/setup-docker.sh)"; exit 1; }
DK=$(mktemp -d /tmp/sbx-dockerd.XXXXXX)
BRIDGE=sbxdk$$			# at most 15 characters
export SBX_TEST_RUNTIME="$DOCKER -H unix://$DK/docker.sock"
LOCAL_CONF=policy/local-docker.conf
. "$(dirname "$0")/../integration/lib.sh"

DPID=
cleanup_hook() {
	stop_monitor
	if [ -n "$DPID" ]; then
		# Every container of this daemon is the suite's.
		ids=$($RT ps -aq 2>/dev/null)
		[ -z "$ids" ] || $RT rm -f $ids >/dev/null 2>&1
		kill "$DPID" 2>/dev/null
		wait_for 20 eval '! kill -0 "$DPID" 2>/dev/null'
		kill -9 "$DPID" 2>/dev/null
		wait "$DPID" 2>/dev/null
	fi
	findmnt -rn -o TARGET | grep "^$DK/" | sort -r | xargs -r umount -l
	ip link del "$BRIDGE" 2>/dev/null
	rm -rf "$DK"
}

echo "# a dockerd of our own"
t_start=$(date +%s)
ip link add name "$BRIDGE" type bridge &&
    ip addr add 10.213.77.1/24 dev "$BRIDGE" && ip link set "$BRIDGE" up ||
    { nok "the bridge $BRIDGE"; finish; exit 1; }
$DOCKERD --data-root "$DK/data" --exec-root "$DK/exec" \
    -H "unix://$DK/docker.sock" --pidfile "$DK/dockerd.pid" \
    --bridge="$BRIDGE" --iptables=false --ip-masq=false --ip-forward=false \
    --log-level=warn > "$DK/dockerd.log" 2>&1 &
DPID=$!
dk_up() { $RT info >/dev/null 2>&1; }
wait_for 30 dk_up
check "dockerd answers on its own socket" dk_up || { cat "$DK/dockerd.log"; finish; exit 1; }
check "on its own data root" test "$($RT info --format '{{.DockerRootDir}}')" = "$DK/data"
DOCKER_HOST=unix://$DK/docker.sock make --no-print-directory -C "$TOP" \
    O="$B" images RUNTIME=$DOCKER > "$WORK/images.log" 2>&1 ||
    { cat "$WORK/images.log"; nok "make images RUNTIME=docker"; }
images_in() { $RT image inspect localhost/sbx-postgres:15 localhost/sbx-redis:7 >/dev/null; }
check "make images RUNTIME=docker loaded both images" images_in
note "dockerd up and images loaded in $(( $(date +%s) - t_start )) s"

echo "# start"
# A container that no record knows (a provision the last monitor did not
# see through): a starting monitor removes it (docker: ps -q, then rm).
$RT run -d --pull=never --name sbx-0-stray-redis --label sbx.uid=0 \
    --label sbx.agent=stray --network=none --entrypoint /bin/sleep \
    localhost/sbx-redis:7 600 >/dev/null
CONF_EXTRA='[service redis-tcp]
image = localhost/sbx-redis:7
port = 6379
probe = redis
transport = tcp
user = default
database = 0
env = SBX_PASSWORD={password}
tmpfs = /srv/redis:rw,size=64m,mode=0700,uid=999,gid=999,nosuid,nodev,noexec
env = SBX_RUN_DIR=/srv/redis
pids = 64
ready_timeout = 15

[service missing]
image = localhost/sbx-nosuch:1
port = 6379
probe = redis
user = default
database = 0
env = SBX_PASSWORD={password}'
write_conf yes
set_conf runtime "$DOCKER"
set_conf runtime_args "-H unix://$DK/docker.sock"
printf '[project]\nsandbox_services = redis-tcp\n' > "$WORK/projects/tcp.conf"
printf '[project]\nsandbox_services = missing\n' > "$WORK/projects/gone.conf"
start_monitor || { finish; exit 1; }
check "the monitor says in one line what docker cannot do" \
    test "$(grep -c 'is docker: containers get no user namespace of their own' "$LOG")" -eq 1
check "the stray container without a record was removed" \
    test -z "$($RT ps -aq --filter label=sbx.agent=stray)"
check "with its reason in the audit trail" \
    grep -q 'audit event=discard uid=0 agent=stray .*reason=no_record' "$LOG"

echo "# a sandbox: postgres and redis over their sockets"
t0=$(date +%s%N)
env1=$(sbx request -a d1 -p demo postgres) || nok "request" "$env1"
note "cold provision postgres+redis: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
eval "$env1"
check "psql and redis-cli work with the returned credentials" uses_sandbox
check "two containers, labelled with uid, agent, project and service" test \
    "$($RT ps -q --filter label=sbx.uid=0 --filter label=sbx.agent=d1 --filter label=sbx.project=demo --filter label=sbx.service=postgres | wc -l) $(containers d1 0 | wc -w)" = "1 2"
confined() {  # NAME WANT: no network, read-only, no capabilities, limits
	local f='{{.HostConfig.NetworkMode}} {{len .NetworkSettings.Ports}} {{.HostConfig.ReadonlyRootfs}} {{.HostConfig.CapDrop}} {{.HostConfig.IpcMode}} {{.HostConfig.PidsLimit}} {{.HostConfig.LogConfig.Type}} {{index .HostConfig.LogConfig.Config "max-size"}}'
	test "$($RT inspect --format "$f" "$1")" = "$2"
}
check "postgres: network none, nothing published, read-only, no caps, limits" \
    confined sbx-0-d1-postgres "none 0 true [all] none 256 json-file 1m"
check "redis: the same" confined sbx-0-d1-redis "none 0 true [all] none 64 json-file 1m"
host_uid() { ps -o uid= -p "$($RT inspect --format '{{.State.Pid}}' "$1")" | tr -d ' '; }
check "no user namespace on docker: postgres runs as host uid 999 (as the start line says)" \
    test "$(host_uid sbx-0-d1-postgres)" = 999
check "its socket directory belongs to that uid, inside the owner's 0750 one" \
    test "$(stat -c '%u %a' "$POSTGRES_HOST") $(stat -c %a "$WORK/run/0")" = "999 755 750"
ids1=$(containers d1 0)
env2=$(sbx request -a d1 -p demo postgres redis)
check "the second request is a hit with the same credentials" test "$env2" = "$env1"
check "a hit starts no container" test "$(containers d1 0)" = "$ids1"

echo "# another uid"
envn=$(sbx_as nobody request -a d1 -p demo postgres) || nok "request as nobody" "$envn"
check "nobody with the same slug gets other credentials and containers" \
    test "$envn" != "$env1" -a "$(containers d1 65534 | wc -w)" -eq 2
check "nobody cannot enter root's socket directory" \
    test "$(runuser -u nobody -- ls "$WORK/run/0" 2>&1 | grep -c 'Permission denied')" -eq 1

echo "# transport tcp: docker's bridge, published on 127.0.0.1"
envt=$(sbx request -a t1 -p tcp redis-tcp) || nok "tcp request" "$envt"
eval "$envt"
check "redis over $REDIS_TCP_HOST:$REDIS_TCP_PORT works" \
    redis_ok "$REDIS_TCP_HOST" "$REDIS_TCP_PORT" "$REDIS_TCP_USER" "$REDIS_TCP_PASSWORD"
check "published on 127.0.0.1 only, the port the agent got" \
    test "$($RT port sbx-0-t1-redis-tcp)" = "6379/tcp -> 127.0.0.1:$REDIS_TCP_PORT"

echo "# a dead container is replaced"
eval "$env1"
pw1=$POSTGRES_PASSWORD
$RT rm -f sbx-0-d1-postgres >/dev/null
env3=$(sbx request -a d1 -p demo postgres)
eval "$env3"
check "after docker rm -f the next request gets a new password" test "$POSTGRES_PASSWORD" != "$pw1"
check "and the new postgres works" uses_sandbox

echo "# a missing image"
t0=$(date +%s)
out=$(sbx request -a m1 -p gone missing 2>&1 >/dev/null)
check "is runtime_failed, naming the image, at once (no pull)" \
    test "$out" = "sbx: runtime_failed: missing: image localhost/sbx-nosuch:1 is missing (run make images)." -a $(( $(date +%s) - t0 )) -lt 10
check "and leaves no container" test -z "$($RT ps -aq --filter label=sbx.agent=m1)"

echo "# the readiness prober: a uid of its own with docker too"
sbx request -a slow1 -p slow never-ready > "$WORK/slow1.out" 2>&1 &
slow=$!
wait_until 30 'prober_seen || ! kill -0 "$slow" 2>/dev/null'
wait "$slow"
check "never-ready is runtime_failed: not ready" grep -q "runtime_failed: never-ready was not ready" "$WORK/slow1.out"
prober_check docker

echo "# restarts adopt"
eval "$env3"
psql "$POSTGRES_URL" -qc 'create table t(x int); insert into t values (42)' || nok "a table"
all=$($RT ps -q | sort | tr '\n' ' ')
adopted() { [ "$(grep -c 'adopted 3 sandboxes and 0 warm containers, discarded 0' "$LOG")" -eq "$1" ]; }
same_after() {  # HOW: the same containers, hits with the same credentials, the data
	check "after $1: every sandbox adopted" adopted "$2"
	check "after $1: the same containers" test "$($RT ps -q | sort | tr '\n' ' ')" = "$all"
	check "after $1: postgres+redis is a hit with the same password" \
	    test "$(sbx request -a d1 -p demo postgres)" = "$env3"
	check "after $1: the table is there" test "$(psql "$POSTGRES_URL" -Atc 'select x from t')" = 42
	check "after $1: the tcp sandbox too (its port)" \
	    test "$(sbx request -a t1 -p tcp redis-tcp)" = "$envt"
}
stop_monitor
start_monitor || { finish; exit 1; }
same_after SIGTERM 1
b=$(broker_pid); kill -9 "$MON_PID" $b; wait "$MON_PID" 2>/dev/null; MON_PID=
start_monitor || { finish; exit 1; }
same_after "kill -9 of monitor and broker" 2
check "each start said it once" \
    test "$(grep -c 'is docker: containers get no user namespace' "$LOG")" -eq 3

echo "# release"
check "release says released" grep -qx released <<<"$(sbx release -a d1)"
check "its containers are gone" test -z "$($RT ps -aq --filter label=sbx.agent=d1 --filter label=sbx.uid=0)"
check "and its socket directory" test ! -e "$WORK/run/0/d1"
sbx release -a t1 >/dev/null
sbx_as nobody release -a d1 >/dev/null
check "every sandbox released: docker ps -a shows nothing" test -z "$($RT ps -aq)"

note "suite: $(( $(date +%s) - t_start )) s"
finish
