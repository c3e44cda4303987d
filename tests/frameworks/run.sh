#!/usr/bin/env bash
# run.sh - the clients agents use, given the URLs `sbx request` prints as
# they are: redis-cli, psql, redis-py, psycopg2, redis-rb, Celery (a real
# worker process, kombu's redis transport), SQLAlchemy and alembic (a
# real migration) from Debian's packages; ioredis with BullMQ (a Queue
# and a Worker), node-redis, pg and Node's URL from the npm registry
# (package-lock.json, `npm ci`'d by frameworks.mk into $SBX_BUILD/frameworks).
# A real monitor on policy/local.conf with postgres and redis over both
# transports, project demo, one sandbox of an ordinary uid, which runs
# every client; then postgres on its socket alone, its clients again.
# Root, under `flock /tmp/sbx-podman.lock` (make frameworks takes it).
# Prints "N passed, N failed".
set -u
# shellcheck source=../integration/lib.sh
. "$(dirname "$0")/../integration/lib.sh"

NODE_MODULES=$B/frameworks/node_modules
[ -d "$NODE_MODULES/bullmq" ] ||
    { nok "npm ci of tests/frameworks/package-lock.json ($NODE_MODULES)" \
	"run make frameworks"; finish; exit 1; }

# The clients and the npm packages in a directory of the suite's: the
# checkout may not be readable by other users.
FW=$WORK/fw
cp -r tests/frameworks "$FW"
cp -r "$NODE_MODULES" "$FW/node_modules"
mkdir -p "$FW/home"
chmod -R a+rX "$FW"

write_conf yes
set_transport postgres both
set_transport redis both
start_monitor || { finish; exit 1; }

FWUSER=sbx-fw
throwaway_users "$FWUSER"
FWUID=$(id -u "$FWUSER") || { nok "useradd $FWUSER"; finish; exit 1; }
FWGID=$(id -g "$FWUSER")
chown "$FWUSER" "$FW/home"

echo "# what sbx request prints, as uid $FWUID"
envs=$(sbx_as "$FWUSER" request -a fw1 -p demo) ||
    { nok "request -p demo as $FWUSER" "$envs"; finish; exit 1; }
ok "request -p demo as $FWUSER"
# take_env OUTPUT: the variables of an eval'd `sbx request`, none of an
# earlier one's left.
take_env() {
	unset "${!POSTGRES_@}" "${!REDIS_@}" "${!PG@}" DATABASE_URL
	eval "$1"
}
take_env "$envs"
check "REDIS_URL, DATABASE_URL and POSTGRES_URL are printed" \
    test -n "${REDIS_URL:-}" -a -n "${DATABASE_URL:-}" -a -n "${POSTGRES_URL:-}"
check "DATABASE_URL is POSTGRES_URL" test "$DATABASE_URL" = "$POSTGRES_URL"
urls="$REDIS_URL $DATABASE_URL $POSTGRES_URL"
dotenv_urls() {
	local out
	out=$(sbx_as "$FWUSER" request -a fw1 -p demo -f dotenv) &&
	    (set -a; eval "$out"; echo "$REDIS_URL $DATABASE_URL $POSTGRES_URL")
}
check "-f dotenv gives the same URLs" test "$(dotenv_urls)" = "$urls"
json_urls() {
	sbx_as "$FWUSER" request -a fw1 -p demo -f json | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
print(d["redis"]["url"], d["postgres"]["url"], d["postgres"]["url"])'
}
check "-f json gives the same URLs" test "$(json_urls)" = "$urls"

# fw_exec CMD...: exec CMD as $FWUSER in $FW, with the three URLs as
# printed and no other variable of sbx's: PGPASSWORD and the like would
# fill in what a URL lacks. The values stay out of every argv. It execs:
# call it in a subshell, as as_fw does, or with `&` ($! is CMD's pid).
fw_exec() {
	local v
	for v in $(compgen -e); do
		case $v in REDIS_URL|DATABASE_URL|POSTGRES_URL) ;; *) unset "$v" ;; esac
	done
	export PATH=/usr/bin:/bin HOME=$FW/home LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1
	cd "$FW" && exec setpriv --reuid="$FWUID" --regid="$FWGID" --clear-groups "$@"
}
as_fw() { (fw_exec "$@"); }
# said TEXT: TEXT's last lines, indented, the sandbox's passwords hidden.
said() {
	local t=${1:-(nothing)}
	[ -z "${REDIS_PASSWORD:-}" ] || t=${t//"$REDIS_PASSWORD"/REDIS_PASSWORD}
	[ -z "${POSTGRES_PASSWORD:-}" ] || t=${t//"$POSTGRES_PASSWORD"/POSTGRES_PASSWORD}
	printf '    %s\n' "$t" | tail -5
}
# gives EXPECTED CMD...: CMD, as $FWUSER, succeeds and prints EXPECTED;
# else what it said.
gives() {
	local want=$1 out
	shift
	out=$(as_fw "$@" 2>&1) && [ "$out" = "$want" ] && return 0
	said "$out"
	return 1
}

echo "# Node's URL parses both"
# Each URL's fields as Node reads them (clients.js url), against the
# variables printed beside it (kept out of the check's own line: they
# hold the passwords). Over tcp: host and port, no libpq parameter.
url_fields_ok() {
	local db="postgresql: $POSTGRES_HOST $POSTGRES_PORT $POSTGRES_USER $POSTGRES_PASSWORD /$POSTGRES_DATABASE - -"
	gives "REDIS_URL redis: $REDIS_HOST $REDIS_PORT $REDIS_USER $REDIS_PASSWORD /$REDIS_DATABASE - -
DATABASE_URL $db
POSTGRES_URL $db" /usr/bin/node clients.js url
}
check "new URL(): protocol, host, port, user, password and database of each" url_fields_ok

# What each client did is read back here over the sandbox's own socket,
# with the printed socket, user and password (root enters every socket
# directory): a client that reached some other server, or none, fails.
sandbox_redis() {
	REDISCLI_AUTH=$REDIS_PASSWORD redis-cli -s "$REDIS_SOCKET" --user "$REDIS_USER" \
	    --no-auth-warning -n "$REDIS_DATABASE" "$@"
}
sandbox_psql() {
	PGHOST=${POSTGRES_SOCKET%/*} PGPORT=${POSTGRES_SOCKET##*.} PGUSER=$POSTGRES_USER \
	    PGPASSWORD=$POSTGRES_PASSWORD PGDATABASE=$POSTGRES_DATABASE psql -tAc "$1"
}

alembic_up() {
	local out
	out=$(as_fw /usr/bin/python3 -m alembic -c alembic/alembic.ini upgrade head 2>&1) &&
	    return 0
	said "$out"
	return 1
}
# psql's command for `sh -c "$PSQL_URL" sh SQL`: SQL's last line.
# shellcheck disable=SC2016
PSQL_URL='psql "$DATABASE_URL" -tAc "$1" | tail -1'
# pg_clients: alembic's migration, then a row and a query by each client,
# all read back over the socket.
pg_clients() {
	check "alembic upgrade head, env.py putting DATABASE_URL in with set_main_option" alembic_up
	check "psql \"\$DATABASE_URL\" sees alembic's table and its revision" gives "fw_widgets 0001" \
	    sh -c "$PSQL_URL" sh "select to_regclass('fw_widgets') || ' ' || version_num from alembic_version"
	check "psql \"\$DATABASE_URL\"" gives 42 \
	    sh -c "$PSQL_URL" sh "insert into fw_widgets (name) values ('psql'); select 40 + 2"
	check "psycopg2.connect(DATABASE_URL)" gives 42 /usr/bin/python3 clients.py psycopg2
	check "SQLAlchemy: create_engine(DATABASE_URL)" gives 1 /usr/bin/python3 clients.py sqlalchemy
	check "pg: new Client({ connectionString: DATABASE_URL })" gives 42 /usr/bin/node clients.js pg
	check "the sandbox's postgres holds the migration and each client's row" \
	    test "$(sandbox_psql "select version_num from alembic_version;
		select string_agg(name, ' ' order by name) from fw_widgets" 2>&1 | tr '\n' ' ')" \
		= "0001 pg psql psycopg2 sqlalchemy "
}
echo "# postgres: a migration, then a row and a query by each client"
pg_clients

echo "# redis: a key set and read back by each client"
V=fw-$$-$RANDOM
# sets CLIENT CMD...: CMD printed $V, and the sandbox holds fw:CLIENT = $V.
sets() {
	local key=fw:$1
	shift
	gives "$V" "$@" && [ "$(sandbox_redis get "$key")" = "$V" ]
}
# shellcheck disable=SC2016
check "redis-cli -u \"\$REDIS_URL\"" sets redis-cli sh -c \
    'redis-cli -u "$REDIS_URL" --no-auth-warning set fw:redis-cli "$1" >/dev/null &&
    redis-cli -u "$REDIS_URL" --no-auth-warning get fw:redis-cli' sh "$V"
check "redis-py: Redis.from_url(REDIS_URL)" sets redis-py /usr/bin/python3 clients.py redis-py "$V"
check "redis-rb: Redis.new(url: REDIS_URL)" sets redis-rb /usr/bin/ruby clients.rb "$V"
check "ioredis: new Redis(REDIS_URL)" sets ioredis /usr/bin/node clients.js ioredis "$V"
check "node-redis: createClient({ url: REDIS_URL })" sets node-redis /usr/bin/node clients.js node-redis "$V"
bullmq_ok() {
	local out id state rv
	out=$(as_fw /usr/bin/node clients.js bullmq 2>&1)
	read -r id state rv <<<"$out"
	[ "$state $rv" = "completed 42" ] &&
	    [ "$(sandbox_redis hget "bull:fw:$id" returnvalue)" = 42 ] && return 0
	said "$out"
	return 1
}
check "BullMQ: a Queue's job completed by a Worker, ioredis on REDIS_URL" bullmq_ok

echo "# Celery: a task through a worker process"
fw_exec /usr/bin/python3 -m celery -A celery_app worker --pool=solo \
    --without-gossip --without-mingle --without-heartbeat --loglevel=INFO \
    > "$WORK/celery.log" 2>&1 &
CELERY=$!
cleanup_hook() { kill "$CELERY" 2>/dev/null && wait "$CELERY" 2>/dev/null; }
out=$(as_fw /usr/bin/python3 clients.py celery 2>&1)
read -r total pid <<<"$out"
check "add.delay(40, 2).get() is 42" test "$total" = 42 ||
    { said "$out"; said "$(tail -3 "$WORK/celery.log")"; }
check "computed in the worker process (pid $CELERY), its result in the sandbox's redis" \
    test "$pid" = "$CELERY" -a "$(sandbox_redis --scan --pattern 'celery-task-meta-*' | wc -l)" = 1
# The passwords go in a file: a grep pattern in argv would be found.
no_argv_has() {
	printf '%s\n' "$@" > "$WORK/needle"
	for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' 2>/dev/null < "$f"; echo; done |
	    grep -qF -f "$WORK/needle" && return 1
	return 0
}
check "no password in any process's argv (sbx's, podman's, the worker's)" \
    no_argv_has "$REDIS_PASSWORD" "$POSTGRES_PASSWORD"
stops() { kill "$CELERY" && wait "$CELERY"; }
check "the worker was still up and stops on SIGTERM" stops

echo "# a socket-only postgres (transport unix): the URL names its directory"
sbx_as "$FWUSER" release -a fw1 >/dev/null
stop_monitor
set_transport postgres unix
start_monitor || { finish; exit 1; }
envs=$(sbx_as "$FWUSER" request -a fw2 -p demo) ||
    { nok "request -p demo as $FWUSER" "$envs"; finish; exit 1; }
take_env "$envs"
check "DATABASE_URL is POSTGRES_URL" test "${DATABASE_URL:-}" = "${POSTGRES_URL:-}"
check "DATABASE_URL has no '%' (ConfigParser's interpolation, alembic's set_main_option)" \
    test -n "${DATABASE_URL:-}" -a "${DATABASE_URL//%/}" = "${DATABASE_URL:-}"
# Node's fields of DATABASE_URL but the host name, which libpq does not
# use when a host parameter names a directory.
socket_url_ok() {
	local out want
	out=$(as_fw /usr/bin/node clients.js url 2>&1)
	want="DATABASE_URL postgresql:  - $POSTGRES_USER $POSTGRES_PASSWORD /$POSTGRES_DATABASE ${POSTGRES_SOCKET%/*} ${POSTGRES_SOCKET##*.}"
	[ "$(awk '$1 == "DATABASE_URL" { $3 = ""; print }' <<<"$out")" = "$want" ] &&
	    return 0
	said "$out"
	return 1
}
check "new URL(DATABASE_URL): no port, user, password, database, host and port parameters" \
    socket_url_ok
pg_clients

sbx_as "$FWUSER" release -a fw2 >/dev/null
stop_monitor
finish
