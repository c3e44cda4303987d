#!/bin/sh
# run.sh MODE OUT SECONDS HARNESS... - run each libFuzzer harness in turn,
# one process each, for SECONDS, and print one summary line per harness.
#
# MODE ci:   the corpus is a throwaway copy of tests/fuzz/corpus/<h>, so a
#            run never changes the repository.
# MODE keep: the corpus is OUT/corpus/<h>, seeded from the repository's
#            and kept between runs.
# Crash, leak, timeout and OOM inputs go to OUT/artifacts/, never into the
# repository. Exit status: non-zero if any harness found anything.
set -u

mode=$1 out=$2 secs=$3
shift 3
fail=0
tmp=$(mktemp -d /tmp/sbx-fuzz.XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir -p "$out/artifacts"

stat() {	# stat NAME LOG: a -print_final_stats=1 figure
	sed -n "s/^stat::$1: *//p" "$2" | tail -1
}

for h in "$@"; do
	seeds=tests/fuzz/corpus/$h
	if [ "$mode" = keep ]; then
		corpus=$out/corpus/$h
	else
		corpus=$tmp/corpus-$h
	fi
	mkdir -p "$corpus"
	cp -n "$seeds"/* "$corpus"/
	dict=
	[ -f tests/fuzz/$h.dict ] && dict=-dict=tests/fuzz/$h.dict
	log=$out/fuzz_$h.log
	before=$(ls "$corpus" | wc -l)
	"$out/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
	    -print_final_stats=1 -artifact_prefix="$out/artifacts/$h-" \
	    $dict "$corpus" >"$log" 2>&1
	rc=$?
	execs=$(stat number_of_executed_units "$log")
	rate=$(stat average_exec_per_sec "$log")
	after=$(ls "$corpus" | wc -l)
	if [ $rc -eq 0 ]; then
		verdict="0 crashes"
	else
		verdict="FAILED (exit $rc), see $log and $out/artifacts/"
		fail=1
		grep -m1 -E '^==[0-9]+==ERROR|^SUMMARY|deadly signal|Assertion' \
		    "$log" >&2
	fi
	printf 'fuzz %-8s %4ss  %10s execs  %7s execs/s  corpus %s -> %s  %s\n' \
	    "$h" "$secs" "${execs:-?}" "${rate:-?}" "$before" "$after" \
	    "$verdict"
done
exit $fail
