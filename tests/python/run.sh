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
if (cd "$WORK/pytests" && SBX_TEST_SOCKET=$SOCK SBX_TEST_README=$WORK/pytests/README.md \
    "$V/bin/python" -m pytest \
    -p no:cacheprovider -q -rfE .); then
	ok "pytest tests/python"
else
	nok "pytest tests/python" "monitor log: $LOG"
	tail -20 "$LOG"
fi
stop_monitor
finish
