# bench.mk - `make bench`: the benchmark suite (bench/README.md).
# Included from tests/tests.mk, so GNUmakefile's variables are in scope.
#
#   make bench         every figure, as a ratio against a baseline
#                      measured in the same run; prints the table
#   make bench-smoke   a short run that fails only on errors, not ratios
#   make bench-density figure 10 alone: memory per idle sandbox
#   make bench-scale   figure 11, not in `make bench` (about 5 minutes):
#                      cost with 10, 100 and 200 live sandboxes
#
# Built into $(O)/bench/: the client (sbx-bench), a monitor with the unit
# tests' runtime double (tests/unit/rtdouble.c, behind bench/rt_double.c)
# in place of the runtime, $(RT_SRC) (sbx-monitor-double, beside copies
# of the broker and the worker, which the monitor finds next to itself;
# its only jobs are SIGHUP's reloads), and the
# liveness-cost timer linking the real runtime (sbx-livecost), a timer
# of a worker's start, binary against binary (sbx-spawncost), and one of
# a broker child's seccomp install (sbx-filtercost).

BENCH_DIR   = $(O)/bench
# rt_double.c defines what the runtime's files and warm.c export to the
# rest of the monitor (rt_cli_ops, runtime_list, runtime_remove,
# rt_listening, warm_*), so all of RT_SRC goes: liveness.c as well, or
# rt_listening would be defined twice; and the runtime's own jobs
# (rt_data.c, login.c), which no double asks for.
RT_SRC	    = privsep/monitor/runtime.c privsep/monitor/liveness.c privsep/monitor/rt_start.c \
	      privsep/monitor/rt_data.c privsep/monitor/login.c privsep/monitor/resident.c
BENCH_MON_SRC = $(filter-out $(RT_SRC) privsep/monitor/warm.c,$(MON_SRC)) bench/rt_double.c \
		$(RTDOUBLE_SRC)
BENCH_LIVE_SRC = $(filter-out privsep/monitor/monitor.c privsep/monitor/start.c,$(MON_SRC)) \
		 bench/livecost.c
BENCH_BINS  = $(BENCH_DIR)/sbx-bench $(BENCH_DIR)/sbx-monitor-double \
	      $(BENCH_DIR)/sbx-broker $(BENCH_DIR)/sbx-worker \
	      $(BENCH_DIR)/sbx-livecost $(BENCH_DIR)/sbx-spawncost \
	      $(BENCH_DIR)/sbx-filtercost

$(O)/obj/mon/bench/rt_double.o: MON_INC += -Itests/unit

$(BENCH_DIR)/sbx-bench: $(call objs,bench/bench.c,brk)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,msgpack libbsd-overlay) -lpthread
$(BENCH_DIR)/sbx-monitor-double: $(call objs,$(BENCH_MON_SRC),mon)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,$(MON_PKGS))
$(BENCH_DIR)/sbx-livecost: $(call objs,$(BENCH_LIVE_SRC),mon)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,$(MON_PKGS))
$(BENCH_DIR)/sbx-spawncost: $(call objs,bench/spawncost.c,brk)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^
$(BENCH_DIR)/sbx-filtercost: $(call objs,bench/filtercost.c shared/scfilter.c shared/log.c,brk)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,libseccomp libbsd-overlay)
$(BENCH_DIR)/sbx-broker: $(O)/sbx-broker
	@mkdir -p $(@D)
	cp $< $@.tmp && mv -f $@.tmp $@
$(BENCH_DIR)/sbx-worker: $(O)/sbx-worker
	@mkdir -p $(@D)
	cp $< $@.tmp && mv -f $@.tmp $@

bench-bins: all $(BENCH_BINS)

bench: bench-bins
	$(LOCKED) bench/run.sh $(O)

bench-smoke: bench-bins
	BENCH_SMOKE=1 $(LOCKED) bench/run.sh $(O)

# Figure 10 alone: the host's memory per idle sandbox (bench/density.sh).
bench-density: all
	$(LOCKED) bench/density.sh $(O)

# Figure 11 alone, about 5 minutes: what a request costs with 10, 100 and
# 200 live sandboxes (bench/scale.sh).
bench-scale: bench-bins
	$(LOCKED) bench/scale.sh $(O)

EXTRA_TESTS += bench-smoke

.PHONY: bench bench-bins bench-smoke bench-density bench-scale
