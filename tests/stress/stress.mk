# stress.mk - fault injection, load and isolation suites (issue #4), each a
# script against a real monitor, broker and podman. Root; each takes the
# host-wide podman lock unless the make already holds it ($(LOCKED)).
#
#   make faults      tests/stress/faults.sh
#   make load        tests/stress/load.sh (builds $(O)/stress-load)
#   make isolation   tests/stress/isolation.sh (by request shape) and
#                    tests/stress/tenancy.sh (by the kernel)
#   make warm        tests/stress/warm.sh (warm containers)
#   make guard       tests/stress/guard.sh (tcp ports: warm, claims, restarts)
#   make burst       tests/stress/burst.sh (a burst of one uid queued, another's hits)
#   make autopool    tests/stress/autopool.sh (a pool that follows demand: two
#                    bursts of 32; ~4 min, so not in test-all: bench-smoke runs
#                    the same part of bench/burst.sh with 4 agents)

$(O)/stress-load: tests/stress/load.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XCFLAGS) $(call pc,msgpack) $(XLDFLAGS) $(LDFLAGS) \
	    -o $@ $< $(call pl,msgpack) -lpthread

faults: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/faults.sh
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/restarts.sh
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/reshape.sh
load: all $(O)/stress-load
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/load.sh
isolation: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/isolation.sh
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/tenancy.sh
warm: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/warm.sh
guard: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/guard.sh
burst: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/burst.sh
autopool: all
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/stress/autopool.sh

EXTRA_TESTS += faults load isolation warm guard burst

.PHONY: faults load isolation warm guard burst autopool
