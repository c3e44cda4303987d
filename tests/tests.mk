# tests.mk - unit tests (Criterion) and the integration suite.
#
#   make check        unit tests
#   make check-asan   the same, built with ASan+UBSan into build-asan/
#   make test         unit tests, ASan unit tests, images, integration

TEST_PKGS = criterion libseccomp libcap msgpack libbsd-overlay inih libacl \
	    libpq hiredis libcrypto
UNIT_BASE = shared/log.c shared/slug.c shared/code.c shared/iox.c \
	    shared/fdpass.c
UNIT_TESTS = seed cache limits subuid wire dispatch drop seccomp client argv fair \
	     brokerlog spare child probe results pool spawner lease data sockdir \
	     jobuser audit liveness demand claims datadir

# The config's parsers, with the loaders that open by path (load.c).
TEST_CONFIG_SRC = $(CONFIG_SRC) tests/unit/load.c

# The runtime double: the unit tests' and the bench monitor's (bench.mk).
RTDOUBLE_SRC = tests/unit/rtdouble.c

test_seed_SRC     = tests/unit/test_seed.c $(MON_CORE) $(TEST_CONFIG_SRC) $(RTDOUBLE_SRC)
test_cache_SRC    = tests/unit/test_cache.c $(MON_CORE) $(TEST_CONFIG_SRC) $(RTDOUBLE_SRC)
test_limits_SRC   = tests/unit/test_limits.c $(MON_CORE) $(TEST_CONFIG_SRC) $(RTDOUBLE_SRC)
test_subuid_SRC   = tests/unit/test_subuid.c $(TEST_CONFIG_SRC)
test_wire_SRC     = tests/unit/test_wire.c $(WIRE_SRC) privsep/monitor/answer.c shared/pack.c
test_dispatch_SRC = tests/unit/test_dispatch.c privsep/monitor/dispatch.c privsep/monitor/answer.c \
		    shared/pack.c tests/unit/handle_stub.c
test_drop_SRC     = tests/unit/test_drop.c shared/drop.c privsep/monitor/drop_user.c \
		    shared/scfilter.c
test_seccomp_SRC  = tests/seccomp/test_seccomp.c shared/scfilter.c
test_argv_SRC     = tests/unit/test_argv.c privsep/worker/runtime_argv.c privsep/monitor/idmap.c \
		    shared/sockdir.c shared/rtname.c privsep/worker/rt_seen.c
test_fair_SRC     = tests/unit/test_fair.c broker/conntab.c shared/ratelim.c \
		    $(TEST_CONFIG_SRC)
test_brokerlog_SRC = tests/unit/test_brokerlog.c privsep/worker/brokerlog.c privsep/worker/jobuser.c \
		    shared/drop.c shared/scfilter.c
test_spare_SRC    = tests/unit/test_spare.c broker/spare.c
test_child_SRC    = tests/unit/test_child.c broker/child.c broker/spare.c \
		    $(WIRE_SRC) shared/pack.c shared/scfilter.c
test_probe_SRC    = tests/unit/test_probe.c privsep/worker/probe.c privsep/worker/probe_wire.c \
		    privsep/worker/relay.c privsep/worker/relay_loop.c shared/drop.c shared/scfilter.c
test_results_SRC  = tests/unit/test_results.c privsep/monitor/config_take.c privsep/monitor/bind.c \
		    privsep/monitor/reload.c privsep/monitor/results.c privsep/monitor/adopt_check.c \
		    privsep/monitor/jobpool.c privsep/monitor/spawner.c \
		    privsep/monitor/drop_user.c shared/record_fmt.c shared/proc.c \
		    shared/job.c shared/scfilter.c $(TEST_CONFIG_SRC)
test_jobuser_SRC  = tests/unit/test_jobuser.c shared/job.c $(TEST_CONFIG_SRC)
test_lease_SRC    = tests/unit/test_lease.c privsep/monitor/lease.c shared/proc.c
test_audit_SRC    = tests/unit/test_audit.c privsep/monitor/audit.c \
		    privsep/monitor/metrics.c shared/ratelim.c \
		    $(test_pool_SRC:tests/unit/test_pool.c=)
test_liveness_SRC = tests/unit/test_liveness.c privsep/monitor/liveness.c \
		    shared/listen.c
test_sockdir_SRC  = tests/unit/test_sockdir.c shared/sockdir.c
test_datadir_SRC  = tests/unit/test_datadir.c privsep/worker/datadir.c shared/sockdir.c
test_demand_SRC   = tests/unit/test_demand.c privsep/monitor/demand.c
test_claims_SRC   = tests/unit/test_claims.c privsep/monitor/claims.c \
		    privsep/monitor/results.c shared/service.c
test_data_SRC     = tests/unit/test_data.c privsep/worker/keeper.c privsep/worker/spare.c privsep/worker/resident.c privsep/worker/data.c privsep/worker/snaps.c privsep/worker/pg_data.c \
		    privsep/worker/redis_data.c privsep/worker/svc_session.c privsep/worker/session_client.c \
		    privsep/worker/session_keeper.c privsep/worker/relay.c privsep/worker/relay_loop.c \
		    privsep/worker/seed.c privsep/worker/seed_session.c privsep/worker/pq.c \
		    shared/drop.c shared/sockdir.c shared/scfilter.c $(TEST_CONFIG_SRC)
test_pool_SRC     = tests/unit/test_pool.c privsep/monitor/jobpool.c shared/proc.c \
		    privsep/monitor/spawner.c privsep/monitor/drop_user.c \
		    shared/job.c shared/scfilter.c shared/service.c
test_spawner_SRC  = tests/unit/test_spawner.c $(test_pool_SRC:tests/unit/test_pool.c=)
test_client_SRC   = tests/unit/test_client.c $(filter-out client/sbx.c,$(CLI_SRC)) \
		    $(LIB_SRC)

TEST_BINS = $(foreach t,$(UNIT_TESTS),$(O)/test_$(t))

# test_pool's stand-in for sbx-worker, by its path.
$(O)/fake-worker: $(call objs,tests/unit/fake_worker.c shared/fdpass.c,test)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^
$(O)/obj/test/tests/unit/test_pool.o $(O)/obj/test/tests/unit/test_spawner.o: \
	XCFLAGS += -DFAKE_WORKER='"$(O)/fake-worker"'
$(O)/test_pool $(O)/test_spawner: | $(O)/fake-worker
# test_jobuser runs the sbx-worker built beside it.
$(O)/obj/test/tests/unit/test_jobuser.o: XCFLAGS += -DSBX_WORKER='"$(O)/sbx-worker"'
$(O)/test_jobuser: | $(O)/sbx-worker

# A unit test may reach across the boundary (test_fair: the broker's
# table and the monitor's config): the tests' own include list.
TEST_INC = -Itests/unit -Iprivsep/monitor -Iprivsep/worker -Ibroker -Ishared -Iclient -Ilib -I$(O)/gen
# Some headers of the worker's share their names with the monitor's or
# the broker's (resident.h, spare.h): a test of one executable's files
# alone sees that executable's include path.
$(O)/obj/test/tests/unit/test_data.o: \
	TEST_INC = -Itests/unit -Iprivsep/worker -Ishared -I$(O)/gen
$(O)/obj/test/tests/unit/test_spare.o $(O)/obj/test/tests/unit/test_child.o: \
	TEST_INC = -Itests/unit -Ibroker -Ishared -I$(O)/gen
$(O)/obj/test/%.o: %.c $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC  $<"; $(CC) $(CFLAGS) $(XCFLAGS) $(TEST_INC) \
	    $(call pc,$(TEST_PKGS)) -MMD -MP -c -o $@ $<

define test_rule
$(O)/test_$(1): $$(sort $$(call objs,$$(test_$(1)_SRC) $(UNIT_BASE),test))
	$$(CC) $$(CFLAGS) $$(XLDFLAGS) $$(LDFLAGS) -o $$@ $$^ $$(call pl,$(TEST_PKGS))
endef
$(foreach t,$(UNIT_TESTS),$(eval $(call test_rule,$(t))))
# test_client runs the sbx built beside it (its cli tests).
$(O)/test_client: | $(O)/sbx

check: $(TEST_BINS)
	@tests/version.sh $(VERSION)
	@fail=0; for t in $(TEST_BINS); do \
	    echo "== $$t"; $$t --jobs 2 || fail=1; done; exit $$fail

ASAN_FLAGS = -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer \
	     -fno-sanitize-recover=undefined
check-asan:
	$(MAKE) O=build-asan CFLAGS="$(ASAN_FLAGS)" LDFLAGS="$(ASAN_FLAGS)" check

integration: all
	$(LOCKED) tests/integration/run.sh
	$(LOCKED) tests/integration/errors.sh
	$(LOCKED) tests/integration/purge.sh
	$(LOCKED) tests/integration/lease.sh
	$(LOCKED) tests/integration/reset.sh
	$(LOCKED) tests/integration/ranges.sh

# cppcheck over the production code; the BSD queue/tree macros are real
# (libbsd's headers), so the checker sees what the compiler sees.
CPPCHECK_FLAGS = --enable=warning,performance,portability --std=c11 -q \
	--error-exitcode=1 -D__GNUC__ -DLIBBSD_OVERLAY -I/usr/include/bsd \
	-Ishared -Iprivsep/monitor -Iprivsep/worker -Ibroker -I$(O)/gen --suppress=missingIncludeSystem \
	-DSBX_VERSION='"$(VERSION)"'
# And the monitor packs msgpack but can never decode it: msgpack-c's
# packer is inline code, so no msgpack-c library is linked (NEEDED) and
# no unpacker or object symbol is in the binary.
lint: $(GEN_H) $(O)/sbx-monitor $(O)/sbx-worker $(O)/sbx-broker
	cppcheck $(CPPCHECK_FLAGS) privsep broker shared client lib
	/usr/bin/python3 contrib/cycles.py $(O)/obj/mon $(O)/obj/wrk $(O)/obj/brk \
	    -- privsep/monitor privsep/worker broker shared
	@echo "  no call cycle between the files of an executable, no include cycle"
	/usr/bin/python3 contrib/filerefs.py
	@echo "  every source file a comment or a doc names exists"
	@! readelf -d $(O)/sbx-monitor | grep -i msgpack || \
	    { echo "sbx-monitor links msgpack-c" >&2; exit 1; }
	@! readelf -d $(O)/sbx-monitor | grep -i libcap || \
	    { echo "sbx-monitor links libcap, which it never calls" >&2; exit 1; }
	@! nm $(O)/sbx-monitor | grep -Ei 'unpack|msgpack_(object|zone)' || \
	    { echo "sbx-monitor holds msgpack decoding code" >&2; exit 1; }
	@! readelf -d $(O)/sbx-monitor | grep -i inih || \
	    { echo "sbx-monitor links libinih: a parser in root" >&2; exit 1; }
	@echo "  sbx-monitor: msgpack packer inline, no unpacker, no libmsgpackc, no libinih"

# clang-tidy with the check set in .clang-tidy (which says what is off and
# why), over the same production code, two files at a time.
TIDY_SRC   = $(sort $(wildcard privsep/monitor/*.c privsep/worker/*.c broker/*.c shared/*.c client/*.c lib/*.c))
TIDY_FLAGS = -std=c11 -D_GNU_SOURCE -DSBX_VERSION=\"$(VERSION)\" \
	     -Ishared -Iprivsep/monitor -Iprivsep/worker -Ibroker -Iclient -Ilib -I$(O)/gen \
	     $(call pc,libseccomp libcap msgpack libbsd-overlay inih libpq hiredis)
tidy: $(GEN_H)
	@echo "  TIDY $(words $(TIDY_SRC)) files"
	@printf '%s\n' $(TIDY_SRC) | xargs -P 2 -n 4 sh -c \
	    'clang-tidy --quiet "$$@" -- $(TIDY_FLAGS) 2>/dev/null' tidy

# Further suites (fuzzing, faults and load, benchmarks, host checks) live in
# their own fragments and add their CI targets to EXTRA_TESTS.
EXTRA_TESTS =
-include tests/fuzz/fuzz.mk tests/seccomp/seccomp.mk tests/stress/stress.mk \
	bench/bench.mk tests/host/host.mk tests/docker/docker.mk \
	tests/python/python.mk tests/frameworks/frameworks.mk

# `make test` on a fresh host: the set-up first (once: a stamp), then every
# suite in a second make, which sees the libraries the set-up installed.
test: setup
	@$(MAKE) --no-print-directory test-all
test-all: all lint tidy check check-asan images integration $(EXTRA_TESTS)

.PHONY: check check-asan integration lint tidy test test-all
