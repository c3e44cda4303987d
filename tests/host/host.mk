# host.mk - does sbx fit the host (tests/host/run.sh): make install and
# uninstall, systemd-analyze verify, mandoc lint, libsbx via pkg-config,
# and against a real monitor the audit trail, the Python and C examples,
# the progress line and the status table.  Included by tests/tests.mk.
# It starts monitors and podman containers: hence the lock.
host-checks: all
	$(LOCKED) tests/host/run.sh

EXTRA_TESTS += host-checks

.PHONY: host-checks
