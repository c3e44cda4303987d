#!/bin/sh
# contrib/setup-host.sh - prepare a Debian 12 host (or CI machine) to build,
# test and run sbx, then prove that the container runtime does what sbx
# asks of it. Run as root; safe to run again.
#
#  1. apt-get install what the project needs (from the host's apt sources);
#  2. make sure /etc/containers/containers.conf has
#        [containers] default_ulimits = ["nofile=4096:4096", "nproc=4096:4096"]
#        [engine]     runtime = "runc"
#     (crun does not work on every host; podman's default rlimits need
#     CAP_SYS_RESOURCE, which a container host may not have). An existing
#     file is edited in place (a copy is kept as containers.conf.sbx-orig),
#     only those two keys are touched, and what changed is printed;
#  3. reserve a "containers" range in /etc/subuid and /etc/subgid, from
#     which the monitor gives each sandbox a host uid range of its own
#     (userns_base, userns_slots in sbx.conf(5));
#  4. start a throwaway container exactly as sbx confines a sandbox (own
#     user namespace, read-only root, no capabilities, slirp4netns network
#     publishing on 127.0.0.1, a socket directory bound in), connect to it
#     over both transports, also as an unprivileged uid through a
#     per-uid ACL directory, and remove it. Any step that fails ends the
#     script with one line naming what is missing;
#  5. hide every uid's processes from the others (/proc hidepid=invisible,
#     now and in /etc/fstab): the runtime's and conmon's arguments name
#     the uid and agent each sandbox serves (sbx-monitor(8), SECURITY);
#  0. before all of these, even with --once: the system user sbx-job, the
#     uid the monitor's parsing jobs drop to (privsep/worker/jobuser.c),
#     made if it is missing.
#
#  setup-host.sh --once   skip everything when this version of the script
#                         has already run here and every package is still
#                         installed (the stamp is $STAMP); `make demo` and
#                         `make test` call it so. Under CI (CI set) it
#                         always runs in full.
set -eu

STAMP=/var/lib/sbx-setup/stamp
die() { printf 'setup-host.sh: %s\n' "$*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "run me as root"

# The parsing jobs' uid: a system user that owns no file and has no shell.
if ! getent passwd sbx-job >/dev/null; then
	useradd --system --no-create-home --shell /usr/sbin/nologin sbx-job ||
	    die "cannot create the system user sbx-job (useradd)"
	echo "setup-host.sh: created the system user sbx-job"
fi

PACKAGES='
make gcc pkg-config clang libclang-rt-14-dev
libseccomp-dev libcap-dev libmsgpack-dev libbsd-dev libinih-dev libpq-dev libhiredis-dev libssl-dev
libcriterion-dev libacl1-dev libsystemd-dev mandoc cppcheck clang-tidy
python3-msgpack systemd valgrind strace acl util-linux
python3-setuptools python3-wheel python3-venv python3-pip python3-pytest
python3-psycopg2 python3-redis
python3-celery python3-sqlalchemy python3-alembic ruby-redis
podman runc conmon netavark aardvark-dns iptables slirp4netns uidmap
mmdebstrap redis-tools postgresql-client
postgresql-server-dev-15 dpkg-dev
'

here=$(cd "$(dirname "$0")" && pwd)
sum=$(sha256sum < "$0" | cut -d' ' -f1)

# Node.js and npm, for the npm clients of tests/frameworks: the machine's
# own when it has both (a newer nodejs than Debian's, with npm inside;
# Debian's npm package cannot be installed beside it), else Debian's.
has_node() { command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; }

# Every package of the list installed ("ii"), none missing from the output.
all_installed() {
	# shellcheck disable=SC2086
	n=$(dpkg-query -W -f '${db:Status-Abbrev}\n' $PACKAGES 2>/dev/null |
	    grep -c '^ii') || true
	# shellcheck disable=SC2086
	[ "$n" -eq "$(set -- $PACKAGES; echo $#)" ]
}

if [ "${1:-}" = --once ] && [ -z "${CI:-}" ] &&
    [ "$(cat "$STAMP" 2>/dev/null)" = "$sum" ] &&
    all_installed && has_node; then
	echo "setup-host.sh: this host is set up (stamp $STAMP); skipped."
	exit 0
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# runc is named explicitly, so apt satisfies podman's "crun | runc" with it.
# shellcheck disable=SC2086
apt-get install -y $PACKAGES
has_node || apt-get install -y nodejs npm

# node_exporter for the metrics test (tests/host/run.sh): Debian's own
# package, unpacked where the tests find it and not installed, so that no
# exporter daemon starts on this host or opens a port.
NE=/var/lib/sbx-setup/node-exporter
if [ ! -x "$NE/usr/bin/prometheus-node-exporter" ]; then
	rm -rf "$NE.dl" && mkdir -p "$NE.dl" &&
	    (cd "$NE.dl" && apt-get download prometheus-node-exporter) &&
	    rm -rf "$NE" && dpkg-deb -x "$NE.dl"/prometheus-node-exporter_*.deb "$NE" &&
	    rm -rf "$NE.dl" ||
	    die "cannot fetch Debian's prometheus-node-exporter package (apt-get download)"
fi
"$NE/usr/bin/prometheus-node-exporter" --version >/dev/null 2>&1 ||
    die "Debian's prometheus-node-exporter does not run from $NE"

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

# The monitor maps each sandbox's containers onto 65536 host uids of its
# own, from userns_base = 2^31 up; reserved here as podman's documented
# "containers" range (2^31 - 1 up), out of the way of useradd's
# subordinate ranges (login.defs: 100000-600100000) and of any real uid.
for f in /etc/subuid /etc/subgid; do
	grep -q '^containers:' "$f" 2>/dev/null && continue
	echo 'containers:2147483647:2147483648' >> "$f"
	echo "setup-host.sh: added a 'containers' range to $f"
done

# The runtime, end to end, with the options sbx uses (privsep/worker/runtime_argv.c).
W=$(mktemp -d /tmp/sbx-setup.XXXXXX)
IMG=localhost/sbx-rt-check:$$
CTR=sbx-rt-check-$$
chmod 0711 "$W"
finish() {
	podman rm -f -t 0 "$CTR" >/dev/null 2>&1 || :
	podman rmi -f "$IMG" >/dev/null 2>&1 || :
	rm -rf "$W"
}
trap finish EXIT
# first_line FILE: the runtime's own first error line.
first_line() { grep -m1 -v '^$' "$1" | cut -c1-200; }
step() { echo "setup-host.sh: checking $*"; }

step "a static build (gcc, libc6-dev)"
cc -static -O2 -o "$W/rt-check" "$here/rt-check.c" 2> "$W/err" ||
    die "cannot build a static program: $(first_line "$W/err")"
mkdir -p "$W/root/sbx"
cp "$W/rt-check" "$W/root/rt-check"
tar -C "$W/root" -cf "$W/root.tar" .
podman import --quiet --change 'ENTRYPOINT ["/rt-check"]' \
    --change 'USER 999:999' "$W/root.tar" "$IMG" >/dev/null 2> "$W/err" ||
    die "podman cannot import an image: $(first_line "$W/err")"

# The socket directory as the monitor makes it: a per-uid directory that
# root owns and only the owning uid may enter (an ACL), and inside it the
# sandbox's directory, which podman's U gives to the container's uid.
step "a per-uid socket directory with an ACL (acl)"
mkdir -m 0750 "$W/uid" "$W/uid/svc"
setfacl -m u:nobody:r-x,g::---,m::r-x,o::--- "$W/uid" 2> "$W/err" ||
    die "cannot set an ACL under $W (the file system needs POSIX ACLs): $(first_line "$W/err")"
chmod 0755 "$W/uid/svc"

step "a confined container: own uid range, read-only root, slirp4netns, a bound socket directory"
PORT=7781
# Near the end of the reserved range: no sandbox of a monitor with
# the default userns_slots is there.
MAPTO=4294836224
if ! podman run -d --name "$CTR" --uidmap=0:$MAPTO:65536 \
    --gidmap=0:$MAPTO:65536 --read-only \
    --read-only-tmpfs=false --ipc=none --cap-drop=all \
    --security-opt=no-new-privileges --pids-limit=16 --memory=32m \
    --log-driver=k8s-file --log-opt=max-size=1mb \
    --network=slirp4netns:port_handler=slirp4netns \
    --publish=127.0.0.1::$PORT -v "$W/uid/svc:/sbx:U" \
    "$IMG" serve /sbx/check.sock $PORT >/dev/null 2> "$W/err"; then
	line=$(first_line "$W/err")
	case $line in
	*slirp4netns*)	die "the slirp4netns network does not work (package slirp4netns): $line" ;;
	*netavark*|*iptables*)	die "the network back-end does not work (packages netavark, iptables): $line" ;;
	*userns*|*subuid*|*subgid*|*uid_map*|*"user namespace"*)
		die "user namespaces do not work (/etc/subuid, /etc/subgid 'containers' range, package uidmap): $line" ;;
	*)	die "podman cannot start a confined container: $line" ;;
	esac
fi
n=0
until [ -S "$W/uid/svc/check.sock" ]; do
	n=$((n + 1))
	[ $n -lt 100 ] || die "the container did not create its socket in 10 s: $(podman logs "$CTR" 2>&1 | head -n1)"
	sleep 0.1
done
hport=$(podman port "$CTR" $PORT/tcp | sed -n 's/^127\.0\.0\.1://p')
[ -n "$hport" ] || die "podman did not publish the port on 127.0.0.1: $(podman port "$CTR" 2>&1 | head -n1)"

step "connections over both transports"
"$W/rt-check" unix "$W/uid/svc/check.sock" 2> "$W/err" ||
    die "cannot reach the container's Unix socket: $(first_line "$W/err")"
setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$W/rt-check" unix "$W/uid/svc/check.sock" 2> "$W/err" ||
    die "the owning uid cannot reach its socket through the ACL: $(first_line "$W/err")"
if setpriv --reuid=daemon --regid=daemon --clear-groups \
    "$W/rt-check" unix "$W/uid/svc/check.sock" 2>/dev/null; then
	die "another uid reached the socket: the per-uid directory does not keep it out"
fi
"$W/rt-check" tcp "$hport" 2> "$W/err" ||
    die "cannot reach the published port 127.0.0.1:$hport: $(first_line "$W/err")"
owner=$(stat -c %u "$W/uid/svc/check.sock")
[ "$owner" -eq $((MAPTO + 999)) ] ||
    die "the container's uid 999 is host uid $owner, not $((MAPTO + 999)) (--uidmap)"

podman rm -f -t 0 "$CTR" >/dev/null 2> "$W/err" ||
    die "podman cannot remove a container: $(first_line "$W/err")"
echo "setup-host.sh: the runtime works (own uid range from $owner, unix socket, 127.0.0.1:$hport)."

# 5. Other uids see none of root's processes, nor each other's.
if ! grep -Eq '^proc /proc proc .*hidepid=(2|invisible)' /proc/mounts; then
	mount -o remount,hidepid=invisible /proc ||
	    die "cannot remount /proc with hidepid=invisible"
	echo "setup-host.sh: /proc remounted with hidepid=invisible."
fi
if [ -f /etc/fstab ] && ! grep -Eq '^[^#]*[[:space:]]/proc[[:space:]]' /etc/fstab; then
	echo 'proc /proc proc defaults,hidepid=invisible 0 0' >> /etc/fstab
	echo "setup-host.sh: /etc/fstab mounts /proc with hidepid=invisible."
fi
mkdir -p "$(dirname "$STAMP")"
echo "$sum" > "$STAMP"
