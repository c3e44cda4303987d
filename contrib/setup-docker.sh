#!/bin/sh
# setup-docker.sh - what `make docker` needs beyond contrib/setup-host.sh:
# Debian's docker.io (dockerd, containerd, runc, the docker CLI) from the
# host's apt sources; no image registry is used. Root. A no-op when
# docker.io is installed.
#
# It starts no daemon: the suite (tests/docker/run.sh) runs a dockerd of
# its own. The package's own service is not started by the install either
# (a policy-rc.d that refuses, for the install only, unless the host has
# one already): a system dockerd would rewrite the host's firewall
# (iptables FORWARD policy) under the other suites. On a host that is to
# run sbx with docker, start it afterwards (README.md, "Docker instead of
# podman"): `systemctl enable --now docker` under systemd (the package
# enables the unit, the policy only kept it from starting), or
# `dockerd >>/var/log/dockerd.log 2>&1 &` where PID 1 is not systemd.
set -eu

die() { printf 'setup-docker.sh: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" -eq 0 ] || die "must run as root"
installed() {
	dpkg-query -W -f '${Status}' docker.io 2>/dev/null | grep -q 'ok installed'
}
installed && [ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] && exit 0

policy=/usr/sbin/policy-rc.d
if [ ! -e $policy ]; then
	printf '#!/bin/sh\n# setup-docker.sh: no service starts during its install\nexit 101\n' > $policy
	chmod 0755 $policy
	trap 'rm -f $policy' EXIT
fi
export DEBIAN_FRONTEND=noninteractive
echo "setup-docker.sh: apt-get install docker.io"
apt-get install -y --no-install-recommends docker.io >/dev/null ||
    { apt-get update >/dev/null &&
      apt-get install -y --no-install-recommends docker.io >/dev/null; } ||
    die "cannot install Debian's docker.io (apt-get install docker.io)"
[ -x /usr/sbin/dockerd ] && [ -x /usr/bin/docker ] ||
    die "docker.io is installed but /usr/sbin/dockerd or /usr/bin/docker is missing"
