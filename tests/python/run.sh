#!/usr/bin/env bash
# run.sh - the Python client (client/python) against a real monitor,
# broker and podman: install the package the way its README says (offline,
# Debian's setuptools and msgpack) into a throwaway venv that sees the
# system's packages, start a monitor with lib.sh's config, run pytest.
# Root, under `flock /tmp/sbx-podman.lock` (make pyclient takes it).
set -u
. "$(dirname "$0")/../integration/lib.sh"

PY=/usr/bin/python3	# Debian's, with python3-msgpack and friends
V=$WORK/venv
echo "# pip install ./client/python (offline) into a venv"
cp -r client/python "$WORK/pysrc"
$PY -m venv --system-site-packages "$V" ||
    { nok "python3 -m venv (python3-venv)"; finish; exit 1; }
if ! PIP_NO_CACHE_DIR=1 "$V/bin/pip" install --no-build-isolation \
    --no-index "$WORK/pysrc" > "$WORK/pip.out" 2>&1; then
	nok "pip install --no-build-isolation --no-index ./client/python" \
	    "$(cat "$WORK/pip.out")"
	finish; exit 1
fi
ok "pip install --no-build-isolation --no-index ./client/python"
check "the venv imports sbx_client from the installed copy" bash -c \
    "cd / && '$V/bin/python' -c 'import sbx_client, sys; sys.exit(not sbx_client.__file__.startswith(\"$V/\"))'"

echo "# pytest against a real monitor"
write_conf yes
start_monitor || { finish; exit 1; }
# The tests' directory is copied too: pytest must import the installed
# package, never the source tree.
cp -r tests/python "$WORK/pytests"
cp client/python/README.md "$WORK/pytests/README.md"
chmod -R a+rX "$WORK/venv" "$WORK/pytests"
# As an ordinary user, as the issue asks: a throwaway system user of this
# suite's (lib.sh removes it at the end), who reads the venv and the
# tests (a+rX above, $WORK is 0755) and reaches the socket (socket_mode
# 0666). Only the tests marked root (status's view of every uid) run as
# root.
PYUSER=sbx-pytest
throwaway_users "$PYUSER"
PYUID=$(id -u "$PYUSER") || { nok "useradd $PYUSER"; finish; exit 1; }
pyt() {  # pyt [runuser -u USER --] -m MARKEXPR
	(cd "$WORK/pytests" && "${@:1:$#-2}" env SBX_TEST_SOCKET="$SOCK" \
	    SBX_TEST_README="$WORK/pytests/README.md" SBX_TEST_UID="$PYUID" \
	    "$V/bin/python" -m pytest -p no:cacheprovider -q -rfE \
	    "${@: -2}" .)
}
if pyt runuser -u "$PYUSER" -- -m "not root"; then
	ok "pytest tests/python as $PYUSER (uid $PYUID)"
else
	nok "pytest tests/python as $PYUSER (uid $PYUID)" "monitor log: $LOG"
	tail -20 "$LOG"
fi
if pyt -m root; then
	ok "pytest tests/python -m root, as root"
else
	nok "pytest tests/python -m root, as root" "monitor log: $LOG"
	tail -20 "$LOG"
fi

echo "# sbx request --format against the same monitor"
j=$(sbx request -a cli1 -p demo -f json postgres 2>&1)
PYJ='import json, sys, psycopg2, redis
d = json.loads(sys.stdin.read())
c = psycopg2.connect(d["postgres"]["url"], connect_timeout=5)
cur = c.cursor(); cur.execute("select 40 + 2"); assert cur.fetchone()[0] == 42
assert redis.Redis.from_url(d["redis"]["url"]).ping()
print(sorted(d), d["postgres"]["password"])'
jo=$(printf '%s' "$j" | "$V/bin/python" -c "$PYJ" 2>&1)
check "request -f json: psycopg2 and redis-py connect with its urls" \
    test "${jo%% *}" = "['postgres',"
pw=${jo##* }
PYS='import sys, sbx_client
sb = sbx_client.ensure_sandbox("cli1", "demo", socket=sys.argv[1])
print(sb["postgres"].password, sb.env()["DATABASE_URL"])'
read -r ppw purl <<<"$("$V/bin/python" -c "$PYS" "$SOCK" 2>&1)"
check "sbx_client sees the same sandbox (a hit, same password)" \
    test -n "$pw" -a "$ppw" = "$pw"
e=$(sbx request -a cli1 -p demo 2>&1)
check "request (env): DATABASE_URL is POSTGRES_URL, and psql takes it" \
    bash -c "eval \"\$1\"; [ \"\$DATABASE_URL\" = \"\$POSTGRES_URL\" ] &&
    [ \"\$DATABASE_URL\" = '$purl' ] &&
    [ \"\$(psql \"\$DATABASE_URL\" -tAc 'select 40+2')\" = 42 ]" _ "$e"
d=$(sbx request -a cli1 -p demo -f dotenv 2>&1)
check "request -f dotenv: the same variables, no export" bash -c \
    "! grep -q '^export ' <<<\"\$1\" && [ \"\$(sed 's/^/export /' <<<\"\$1\")\" = \"\$2\" ]" _ "$d" "$e"
check "request -f dotenv: what a .env reader takes connects" bash -c \
    "set -a; eval \"\$1\"; [ \"\$(psql \"\$DATABASE_URL\" -tAc 'select 40+2')\" = 42 ] &&
    [ \"\$(redis-cli -s \"\$REDIS_SOCKET\" --user \"\$REDIS_USER\" -a \"\$REDIS_PASSWORD\" --no-auth-warning ping)\" = PONG ]" _ "$d"
sbx request -a cli1 -p demo -f yaml >/dev/null 2>&1
check "request -f yaml is a usage error (exit 2)" test $? -eq 2
sbx release -a cli1 >/dev/null 2>&1

stop_monitor
finish
