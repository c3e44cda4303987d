# seccomp.mk - the seccomp tests' one home, tests/seccomp/. Included by
# tests/tests.mk.
#
#   make check           test_seccomp.c: the compiled-in lists as a table
#                        and the probe filter in action (Criterion; its
#                        sources are in tests.mk with the other unit tests)
#   make seccomp-probe   probe.c: every role's real filter, one forked
#                        process per syscall

SC_PROBE_SRC  = tests/seccomp/probe.c shared/scfilter.c shared/drop.c \
		privsep/monitor/drop_user.c \
		shared/log.c
SC_PROBE_PKGS = libseccomp libcap libbsd-overlay

$(O)/sbx-seccomp-probe: $(call objs,$(SC_PROBE_SRC),test)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,$(SC_PROBE_PKGS))

seccomp-probe: $(O)/sbx-seccomp-probe
	$(O)/sbx-seccomp-probe

.PHONY: seccomp-probe

EXTRA_TESTS += seccomp-probe
