#!/bin/sh
# loc.sh - lines of C without blanks and comments: gcc's preprocessor,
# told the file is already preprocessed, drops the comments and expands
# nothing; grep counts the lines left that are not blank.
#
#   contrib/loc.sh                 privsep/monitor/, a line per file, then the total
#   contrib/loc.sh FILE|DIR ...    the same for those files, or *.c and *.h
#                                  of each directory
set -eu
if [ $# -eq 0 ]; then
	cd "$(dirname "$0")/.."
	set -- privsep/monitor
fi

files=
for arg in "$@"; do
	if [ -d "$arg" ]; then
		files="$files $(ls "$arg"/*.c "$arg"/*.h 2>/dev/null)"
	elif [ -f "$arg" ]; then
		files="$files $arg"
	else
		echo "loc.sh: $arg: no such file or directory" >&2
		exit 1
	fi
done

for f in $files; do
	n=$(gcc -fpreprocessed -dD -E -P -x c "$f" | grep -c . || true)
	printf '%6d  %s\n' "$n" "$f"
done | sort -k1,1nr -k2 | awk '{ print; s += $1 } END { printf "%6d  total\n", s }'
