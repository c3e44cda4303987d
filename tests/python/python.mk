# python.mk - the Python client package (client/python), installed
# offline into a throwaway venv and tested with pytest against a real
# monitor, broker and podman (tests/python/run.sh). Root; it starts a
# monitor and containers: hence the lock. Included by tests/tests.mk.
pyclient: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/python/run.sh

EXTRA_TESTS += pyclient

.PHONY: pyclient
