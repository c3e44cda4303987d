# host.mk - does sbx fit the host (tests/host/run.sh): make install and
# uninstall, systemd-analyze verify, mandoc lint, libsbx via pkg-config,
# and against a real monitor the audit trail, the Python and C examples,
# the progress line and the status table; then the first hour on an
# installed host (tests/host/installed.sh): install into a temp PREFIX
# and ETCDIR, the installed monitor on the installed config, an ordinary
# user's first sandbox with the installed sbx and psql, uninstall.
# Included by tests/tests.mk. Both start monitors and podman containers:
# hence the lock, taken once for both; both run, and either failing fails.
host-checks: all
	$(LOCKED) sh -c 'r=0; tests/host/run.sh || r=1; tests/host/installed.sh || r=1; exit $$r'

EXTRA_TESTS += host-checks

.PHONY: host-checks
