# seccomp.mk - make seccomp-probe: every role's real filter, one forked
# process per syscall (tests/seccomp/probe.c). Included by tests/fuzz/fuzz.mk.

SC_PROBE_SRC  = tests/seccomp/probe.c shared/scfilter.c shared/drop.c \
		privsep/drop_user.c \
		shared/log.c
SC_PROBE_PKGS = libseccomp libcap libbsd-overlay

$(O)/sbx-seccomp-probe: $(call objs,$(SC_PROBE_SRC),test)
	$(CC) $(CFLAGS) $(XLDFLAGS) $(LDFLAGS) -o $@ $^ $(call pl,$(SC_PROBE_PKGS))

seccomp-probe: $(O)/sbx-seccomp-probe
	$(O)/sbx-seccomp-probe

.PHONY: seccomp-probe

EXTRA_TESTS += seccomp-probe
