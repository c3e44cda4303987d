#!/bin/sh
# contrib/setup-host.sh - prepare a Debian 12 host (or CI machine) to build,
# test and run sbx. Run as root; safe to run again.
#
#  1. apt-get install what the project needs (from the host's apt sources);
#  2. make sure /etc/containers/containers.conf has
#        [containers] default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
#        [engine]     runtime = "runc"
#     (crun does not work on every host; podman's default rlimits need
#     CAP_SYS_RESOURCE, which a container host may not have). An existing
#     file is edited in place (a copy is kept as containers.conf.sbx-orig),
#     only those two keys are touched, and what changed is printed.
set -eu

die() { printf 'setup-host.sh: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run me as root"

PACKAGES='
make gcc pkg-config clang libclang-rt-14-dev
libseccomp-dev libcap-dev libmsgpack-dev libbsd-dev libinih-dev
libcriterion-dev mandoc cppcheck clang-tidy
python3-msgpack systemd valgrind strace
podman runc netavark aardvark-dns mmdebstrap
redis-tools postgresql-client
'

export DEBIAN_FRONTEND=noninteractive
apt-get update
# runc is named explicitly, so apt satisfies podman's "crun | runc" with it.
# shellcheck disable=SC2086
apt-get install -y $PACKAGES

CONF=/etc/containers/containers.conf
ULIMITS='default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]'
RUNTIME='runtime = "runc"'

# ensure FILE SECTION KEY LINE: in TOML file FILE, make KEY in [SECTION] be
# LINE: replace it (a multi-line array value included), add it at the end
# of the section, or append the section.
ensure() {
	awk -v sect="[$2]" -v key="$3" -v line="$4" '
	function flush() { if (insect && !done) { print line; done = 1 } }
	/^[ \t]*\[[^]]*\][ \t]*(#.*)?$/ {
		h = $0; sub(/^[ \t]*/, "", h); sub(/\].*/, "]", h)
		flush(); insect = (h == sect); print; next
	}
	skip { if ($0 ~ /\]/) skip = 0; next }
	insect && $0 ~ "^[ \t]*#?[ \t]*" key "[ \t]*=" {
		if ($0 ~ /^[ \t]*#/) { print; next }	# a commented example
		a = $0; b = line; gsub(/[ \t]/, "", a); gsub(/[ \t]/, "", b)
		if (!done) print (a == b ? $0 : line)	# keep an equal one as is
		done = 1
		v = $0; sub(/^[^=]*=[ \t]*/, "", v)
		if (v ~ /^\[/ && v !~ /\]/) skip = 1
		next
	}
	{ print }
	END {
		flush()
		if (!done) { print ""; print sect; print line }
	}' "$1"
}

mkdir -p /etc/containers
if [ -f "$CONF" ]; then
	tmp=$(mktemp "$CONF.XXXXXX")
	ensure "$CONF" containers default_ulimits "$ULIMITS" > "$tmp.1"
	ensure "$tmp.1" engine runtime "$RUNTIME" > "$tmp"
	rm -f "$tmp.1"
	if cmp -s "$CONF" "$tmp"; then
		rm -f "$tmp"
		echo "setup-host.sh: $CONF already has runtime = runc and the ulimits; left alone."
	else
		[ -e "$CONF.sbx-orig" ] || cp -p "$CONF" "$CONF.sbx-orig"
		echo "setup-host.sh: updating $CONF (original kept as $CONF.sbx-orig):"
		diff -u "$CONF" "$tmp" || true
		chmod 0644 "$tmp"
		mv "$tmp" "$CONF"
	fi
else
	printf '%s\n' '# Written by sbx contrib/setup-host.sh.' \
	    '[containers]' "$ULIMITS" '' '[engine]' "$RUNTIME" > "$CONF"
	chmod 0644 "$CONF"
	echo "setup-host.sh: wrote $CONF (runtime = runc, nofile/nproc ulimits 4096)."
fi

podman info --format 'setup-host.sh: podman {{.Version.Version}}, runtime {{.Host.OCIRuntime.Name}}, network {{.Host.NetworkBackend}}' ||
    die "podman does not work"
