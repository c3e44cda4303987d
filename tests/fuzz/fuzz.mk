# fuzz.mk - libFuzzer harnesses (tests/fuzz/README.md), parsed inside
# GNUmakefile.
#
#   make fuzz-build   build-fuzz/fuzz_<harness>, clang + ASan + UBSan
#   make fuzz-ci      each harness FUZZ_CI_TIME seconds from a throwaway
#                     copy of its seed corpus; fails on any crash or leak
#   make fuzz         each harness FUZZ_TIME seconds; new inputs are kept in
#                     build-fuzz/corpus/<harness>, never in the repository

FUZZ_CC		?= clang
FUZZ_O		 = build-fuzz
FUZZ_CI_TIME	?= 40
FUZZ_TIME	?= 600
FUZZ_SAN	 = -fsanitize=address,undefined -fno-sanitize-recover=undefined
FUZZ_CFLAGS	 = -O1 -g -fno-omit-frame-pointer $(FUZZ_SAN)
FUZZ_HARNESSES	 = wire dispatch results pool

# What each harness links: the code under test and no more.
fuzz_wire_SRC	  = tests/fuzz/fuzz_wire.c $(WIRE_SRC) privsep/monitor/answer.c \
		    shared/pack.c shared/slug.c shared/code.c
fuzz_wire_PKGS	  = msgpack libbsd-overlay
fuzz_dispatch_SRC = tests/fuzz/fuzz_dispatch.c privsep/monitor/dispatch.c \
		    privsep/monitor/answer.c shared/pack.c tests/unit/handle_stub.c \
		    shared/code.c shared/fdpass.c shared/slug.c shared/log.c
fuzz_dispatch_PKGS = libbsd-overlay
fuzz_results_SRC  = tests/fuzz/fuzz_results.c tests/fuzz/jobpool_stub.c \
		    privsep/monitor/results.c \
		    privsep/monitor/config_take.c privsep/monitor/reload.c \
		    privsep/monitor/adopt_check.c privsep/monitor/bind.c \
		    privsep/monitor/audit.c privsep/monitor/metrics.c \
		    shared/record_fmt.c shared/service.c shared/project.c \
		    shared/subrange.c shared/slug.c shared/code.c shared/log.c \
		    shared/iox.c shared/fdpass.c shared/ratelim.c \
		    tests/fuzz/spawn_check.c privsep/monitor/spawner.c \
		    privsep/monitor/drop_user.c shared/proc.c shared/job.c
fuzz_results_PKGS = libbsd-overlay
fuzz_pool_SRC	  = tests/fuzz/fuzz_pool.c privsep/monitor/jobpool.c shared/fdpass.c \
		    privsep/monitor/liveness.c shared/listen.c shared/proc.c \
		    shared/job.c shared/service.c shared/slug.c shared/code.c \
		    shared/log.c shared/iox.c
fuzz_pool_PKGS	  = libbsd-overlay

# fuzz_wire is the broker's decoder and the replies (the monitor's
# answer_pack, the child's pack_error), fuzz_dispatch the monitor's check
# of the broker's messages, fuzz_results its checks of its workers' (and
# its reading of the answers of jobs waited for at start, its audit
# lines), fuzz_pool its loop's readers of descriptors: a worker's result
# pipe, a hit's liveness check.
FUZZ_INC = -Ibroker -Iprivsep/monitor -Ishared -Itests/fuzz -I$(O)/gen

FUZZ_BINS = $(foreach h,$(FUZZ_HARNESSES),$(FUZZ_O)/fuzz_$(h))

# -fsanitize=fuzzer-no-link instruments for coverage; only the final link
# brings in libFuzzer's main.
$(FUZZ_O)/obj/%.o: %.c $(GEN_H)
	@mkdir -p $(@D)
	@echo "  CC  $< (fuzz)"; $(FUZZ_CC) $(FUZZ_CFLAGS) \
	    -fsanitize=fuzzer-no-link $(XCFLAGS) $(FUZZ_INC) \
	    $(call pc,msgpack libbsd-overlay) -MMD -MP -c -o $@ $<

define fuzz_rule
$(FUZZ_O)/fuzz_$(1): $$(patsubst %.c,$(FUZZ_O)/obj/%.o,$$(fuzz_$(1)_SRC))
	$$(FUZZ_CC) $$(FUZZ_CFLAGS) -fsanitize=fuzzer -o $$@ $$^ \
	    $$(call pl,$$(fuzz_$(1)_PKGS))
endef
$(foreach h,$(FUZZ_HARNESSES),$(eval $(call fuzz_rule,$(h))))

-include $(shell find $(FUZZ_O)/obj -name '*.d' 2>/dev/null)

fuzz-build: $(FUZZ_BINS)

fuzz-ci: fuzz-build
	@tests/fuzz/run.sh ci $(FUZZ_O) $(FUZZ_CI_TIME) $(FUZZ_HARNESSES)

fuzz: fuzz-build
	@tests/fuzz/run.sh keep $(FUZZ_O) $(FUZZ_TIME) $(FUZZ_HARNESSES)

.PHONY: fuzz-build fuzz-ci fuzz

EXTRA_TESTS += fuzz-ci
