#!/bin/sh
# version.sh VERSION - the copies of sbx's version that cannot read
# GNUmakefile's VERSION (the C code gets it as -DSBX_VERSION) say the same:
# lib/sbx.h (installed alone), the Python package, docs/protocol.md's
# examples of the ping answer. Run by `make check`.
v=${1:?usage: version.sh VERSION}
fail=0
same() {	# what where found
	if [ "$3" = "$v" ]; then return; fi
	echo "version.sh: $2 says ${3:-nothing} for $1, GNUmakefile's VERSION is $v" >&2
	fail=1
}
same SBXC_VERSION lib/sbx.h \
    "$(sed -n 's/^#define SBXC_VERSION[[:space:]]*"\(.*\)"$/\1/p' lib/sbx.h)"
same __version__ client/python/src/sbx_client/__init__.py \
    "$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' client/python/src/sbx_client/__init__.py)"
n=0
for w in $(grep -o "[\"']version[\"']: [\"'][^\"']*[\"']" docs/protocol.md |
    sed "s/.*: [\"']\([^\"']*\)[\"']/\1/"); do
	same "the ping answer" docs/protocol.md "$w"
	n=$((n + 1))
done
[ "$n" -gt 0 ] || { echo "version.sh: no ping answer in docs/protocol.md" >&2; fail=1; }
[ "$fail" = 0 ] && echo "version.sh: $v everywhere"
exit "$fail"
