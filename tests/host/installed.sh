#!/usr/bin/env bash
# installed.sh - the first hour on an installed host, as README.md's
# "Install" walks it: make install (PREFIX and ETCDIR in a temp dir, not
# the host's), the installed config as it is, the example project copied
# into place, the INSTALLED sbx-monitor started the plain way (it detaches
# once it serves), an ordinary user's first sandbox with the INSTALLED sbx
# and psql, release, stop, make uninstall with the same variables, and
# what is left. README.md's own command lines (the project's cp, the
# metrics sed, nobody's first sandbox and release, the kill, the recipes
# for a kept config) are taken from it and run as written, with paths
# moved into the install root. The only other edits to the installed
# config are its [sbx] keys socket, state_dir and run_dir (temp paths,
# as write_conf does): its [service] sections are used unchanged.
# Run it as root under `flock /tmp/sbx-podman.lock` (make host-checks
# does); it needs the images of `make images`. Prints "N passed, N failed".
set -u
. "$(dirname "$0")/../integration/lib.sh"

mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s ${SBX_BUILD:+O=$B} "$@"; }
# The section a key is set in (or commented out in, with "; ").
section_of() {  # file key
	awk -v k="$2" '/^\[/ { s = $0 } $0 ~ "^(; *)?" k " *=" { print s; exit }' "$1"
}
# One config's [service] sections, from the first to the end of the file.
services_of() { sed -n '/^\[service /,$p' "$1"; }

R=$WORK/r			# the install root
P=$R/usr/local E=$R/etc/sbx
IV=(PREFIX="$P" ETCDIR="$E")
ISBX=$P/bin/sbx
HOSTLOCK=/run/sbx-monitor.podman.lock

# readme PATTERN: the first match of PATTERN (grep, from a line's start
# or within it) in README.md, its trailing comment cut and its paths
# moved into the install root: README's own commands, run as written.
readme() {
	local l
	l=$(grep -m1 -o -- "$1" README.md | sed 's/  *# .*$//')
	[ -n "$l" ] || { nok "README.md has: $1"; echo false; return; }
	l=${l//\/usr\/local/$P}
	printf '%s\n' "${l//\/etc\/sbx/$E}"
}
# runreadme PATTERN: run it (bash), from /, the installed bin/ first in
# PATH and our socket as the default (SBX_SOCKET), as a shell of the
# host would have them.
runreadme() {
	local c
	c=$(readme "$1")
	(cd / && PATH=$P/bin:$P/sbin:$PATH SBX_SOCKET=$SOCK bash -c "$c")
}

echo "# policy/sbx.conf is policy/local.conf under its own header"
check "the two differ in nothing from [sbx] on" \
    diff <(sed -n '/^\[sbx\]$/,$p' policy/sbx.conf) <(sed -n '/^\[sbx\]$/,$p' policy/local.conf)

echo "# make install PREFIX=$P ETCDIR=$E"
mk install "${IV[@]}" > "$WORK/install.out" 2>&1 ||
    nok "make install" "$(cat "$WORK/install.out")"
C=$E/sbx.conf
check "it installs a config" test -f "$C"
check "and the same default as $P/share/doc/sbx/sbx.conf" cmp -s "$C" "$P/share/doc/sbx/sbx.conf"
check "it reads its projects from ETCDIR" grep -qx "projects = $E/projects.d" "$C"
svcs=$(grep -o '^\[service [a-z0-9._-]*\]' "$C" | cut -d' ' -f2 | tr -d ']' | sort | tr '\n' ' ')
check "it offers postgres and redis ($svcs)" test "$svcs" = "postgres redis "
imgs=$(sed -n 's/^image *= *//p' "$C" | sort -u)
noimg=
for i in $imgs; do $RT image exists "$i" || noimg="$noimg $i"; done
check "every image it names is one \`make images\` built: $(tr "\n" " " <<<"$imgs")" test -n "$imgs" -a -z "$noimg"
[ -z "$noimg" ] || note "missing:$noimg (make images)"
check "metrics_file is there commented out, in [sbx]" test "$(section_of "$C" metrics_file)" = "[sbx]"
check "the project example is installed" test -f "$E/projects.d/demo.conf.example"

echo "# the README's steps"
# The project: the installed example, copied into place.
runreadme '^cp /etc/sbx/projects.d/demo.conf.example .*'
check "README's cp puts the project demo in place" cmp -s "$E/projects.d/demo.conf" policy/projects.d/demo.conf
# Our own socket, state and run directories (the host's may be in use).
sed -i -e "s|^socket *=.*|socket = $SOCK|" \
    -e "s|^state_dir *=.*|state_dir = $WORK/state|" \
    -e "s|^run_dir *=.*|run_dir = $WORK/run|" "$C"
# The metrics recipe, as README.md has it, then a path of our own.
runreadme "^sed -i 's|^; \*metrics_file =.*"
check "the README's metrics sed sets metrics_file in [sbx]" bash -c \
    "grep -q '^metrics_file = /var/lib/prometheus/node-exporter/sbx.prom\$' '$C' && test \"\$(awk '/^\\[/ { s = \$0 } /^metrics_file =/ { print s }' '$C')\" = '[sbx]'"
sed -i "s|^metrics_file = .*|metrics_file = $WORK/sbx.prom|" "$C"
check "the [service] sections are the installed ones, unchanged" \
    diff <(services_of "$C") <(services_of "$P/share/doc/sbx/sbx.conf")

"$P/sbin/sbx-monitor" -t -f "$C" > "$WORK/t.out" 2>&1; rc=$?
check "sbx-monitor -t passes on the installed config (exit $rc, nothing said)" \
    test "$rc" -eq 0 -a ! -s "$WORK/t.out"

# The plain start (no systemd): it detaches once its start-up checks have
# passed, so a zero exit means the socket is bound and serves at once.
"$P/sbin/sbx-monitor" -f "$C" > "$WORK/start.out" 2>&1; rc=$?
check "the installed sbx-monitor starts and exits 0 ($rc)" test "$rc" -eq 0
[ "$rc" -eq 0 ] || note "$(cat "$WORK/start.out")"
# Only a monitor that started is ours to stop (a refused one may have
# met another's lock).
# daemon(3) exits the parent before the daemon writes its own pid over
# the parent's in the lock (monitor.c, daemonize): give it a moment.
MON_PID='' lockpid=''
detached() {
	lockpid=$(cat "$HOSTLOCK" 2>/dev/null)
	[ -n "$lockpid" ] &&
	    [ "$(ps -o comm= -p "$lockpid" 2>/dev/null)" = sbx-monitor ] &&
	    [ "$(ps -o ppid= -p "$lockpid" 2>/dev/null | tr -d ' ')" != "$$" ]
}
[ "$rc" -eq 0 ] && wait_for 5 detached && MON_PID=$lockpid
check "its pid is in $HOSTLOCK (${lockpid:-none}), a detached sbx-monitor" test -n "$MON_PID"
ipings() { "$ISBX" -S "$SOCK" ping >/dev/null 2>&1; }
check "the installed sbx pings it at once" ipings
if [ "$rc" -ne 0 ] || [ -z "$MON_PID" ]; then finish; exit 1; fi

# An ordinary user: a system user of the test's own, no home, no shell.
U=sbx-first
throwaway_users "$U"
uid=$(id -u "$U")
# As README.md has it: eval the request, psql and redis-cli to the URLs
# it exported (the installed config serves both transports: the URLs
# name the guarded loopback ports), and the sockets beside them.
# shellcheck disable=SC2016
first='e=$("$0" -S "$1" request -a first -p demo postgres redis) || exit 9
eval "$e"
echo "pg=$(psql "$DATABASE_URL" -tAc "select 1" 2>&1)"
echo "redis=$(redis-cli -u "$REDIS_URL" --no-auth-warning ping 2>&1)"
echo "sockpg=$(psql -h "$PGHOST" -tAc "select 2" 2>&1)"
echo "sock=$POSTGRES_SOCKET"
echo "url=$DATABASE_URL"'
out=$(cd / && runuser -u "$U" -- sh -c "$first" "$ISBX" "$SOCK" 2>&1)
check "$U's first sandbox: psql runs select 1 with DATABASE_URL" grep -qx 'pg=1' <<<"$out"
check "and redis-cli -u REDIS_URL gets PONG" grep -qx 'redis=PONG' <<<"$out"
check "and psql over the socket (PGHOST)" grep -qx 'sockpg=2' <<<"$out"
grep -qx 'pg=1' <<<"$out" || note "$out"
url=$(sed -n 's/^url=//p' <<<"$out") sock=$(sed -n 's/^sock=//p' <<<"$out")
url_local() { [[ $url == postgresql://sbx:*@127.0.0.1:*/sbx ]]; }
check "the URL names 127.0.0.1" url_local
in_run_dir() { [[ $sock == "$WORK/run/$uid/"* ]]; }
check "the socket is in $U's own directory of run_dir" in_run_dir
in_run_dir || note "POSTGRES_SOCKET: $sock"
held() { "$ISBX" -S "$SOCK" status | awk -v u="$uid" '$1 == u && $2 == "first" && $3 == "demo"' | grep -q .; }
check "sbx status shows it held by uid $uid, agent first, project demo" held
# Its containers by name: sbx-UID-AGENT-SERVICE, or -wSLOT after that
# for warm ones claimed (renamed after the reply).
ncont() { $RT ps --format '{{.Names}}' | grep -c "^sbx-$uid-first-"; }
# shellcheck disable=SC2016
wait_until 30 '[ "$(ncont)" -eq 2 ]'
check "with two containers for it" test "$(ncont)" -eq 2
out=$(cd / && runuser -u "$U" -- "$ISBX" -S "$SOCK" release -a first 2>&1); rc=$?
check "$U releases it ($rc: $out)" test "$rc" -eq 0
notheld() { ! held; }
check "status no longer shows it" notheld
# shellcheck disable=SC2016
wait_until 10 '[ "$(ncont)" -eq 0 ]'
check "its containers are gone" test "$(ncont)" -eq 0
wait_for 10 test -s "$WORK/sbx.prom"
check "the metrics file is written" grep -qs '^sbx_sandboxes ' "$WORK/sbx.prom"

# nobody, as README.md has it: the first sandbox and psql's select 1
# (psql's table: a row "1", "(1 row)"), then the release.
out=$(runreadme "^runuser -u nobody -- sh -c .*" 2>&1)
check "README's first sandbox as nobody: psql runs select 1" bash -c \
    "grep -Eqx ' +1' <<<'$out' && grep -qx '(1 row)' <<<'$out'"
grep -qx '(1 row)' <<<"$out" || note "$out"
nheld() { "$ISBX" -S "$SOCK" status | awk -v u="$(id -u nobody)" '$1 == u && $2 == "first"' | grep -q .; }
check "sbx status shows it held by nobody" nheld
out=$(runreadme "^runuser -u nobody -- sbx release -a first" 2>&1)
check "README's release as nobody ($out)" test "$out" = released
notnheld() { ! nheld; }
check "status no longer shows it" notnheld

# Stop it the plain way, as README.md has it: SIGTERM to the pid in the
# host lock (checked above to be our detached sbx-monitor).
# shellcheck disable=SC2016
runreadme '^kill $(cat /run/sbx-monitor.podman.lock)'
stopped() { ! kill -0 "$MON_PID" 2>/dev/null; }
wait_for 30 stopped
check "SIGTERM stops it" stopped
stopped && MON_PID=

# The stopped monitor left its warm containers (warm = 1 each in the
# installed config), their records and socket directories: the installed
# sbx-monitor --purge removes them and names them, as sbx-monitor(8) has it.
nwarm=$($RT ps -aq --filter label=sbx.pool | wc -l)
check "the stopped monitor left its warm containers ($nwarm)" test "$nwarm" -gt 0
"$P/sbin/sbx-monitor" --purge -f "$C" > "$WORK/purge.out" 2> "$WORK/purge.err"; rc=$?
check "the installed sbx-monitor --purge exits 0 ($rc), nothing on stderr" test "$rc" -eq 0 -a ! -s "$WORK/purge.err"
[ "$rc" -eq 0 ] || note "$(cat "$WORK/purge.err")"
check "no sbx container is left" test "$($RT ps -aq --filter label=sbx.service | wc -l)" -eq 0
check "it named each warm container it removed ($nwarm)" test "$(grep -c '^removed container sbx-pool-' "$WORK/purge.out")" -eq "$nwarm"
check "no record is left in state_dir/sandboxes" test -z "$(ls -A "$WORK/state/sandboxes" 2>/dev/null)"
check "it named the records" grep -q "^removed record $WORK/state/sandboxes/pool-" "$WORK/purge.out"
check "no socket directory is left under run_dir" test -z "$(ls -A "$WORK/run" 2>/dev/null)"
check "it named them" grep -q "^removed directory $WORK/run/.pool/" "$WORK/purge.out"

echo "# make uninstall with the same variables"
mk uninstall "${IV[@]}" > "$WORK/uninstall.out" 2>&1 ||
    nok "make uninstall" "$(cat "$WORK/uninstall.out")"
left=$(cd "$R" && find . ! -type d | sort | tr '\n' ' ')
check "it leaves only what the admin made or edited: the config and the project" \
    test "$left" = "./etc/sbx/projects.d/demo.conf ./etc/sbx/sbx.conf "
[ "$left" = "./etc/sbx/projects.d/demo.conf ./etc/sbx/sbx.conf " ] || note "left: $left"
rm -f "$E/projects.d/demo.conf" "$C"
mk install "${IV[@]}" > /dev/null 2>&1 && mk uninstall "${IV[@]}" > /dev/null 2>&1
left=$(cd "$R" && find . ! -type d)
check "an install left as installed: uninstall leaves no file" test -z "$left"
[ -z "$left" ] || note "left: $left"

echo "# an existing config is kept (an earlier install's, with no service)"
mkdir -p "$E"
printf '[sbx]\nsocket = /run/sbx.sock\n' > "$C"
mk install "${IV[@]}" > "$WORK/install2.out" 2>&1
check "install keeps it" test "$(cat "$C")" = "$(printf '[sbx]\nsocket = /run/sbx.sock')"
check "and warns that it offers no service, naming the default" \
    grep -q "warning: $C offers no \[service\] section.*$P/share/doc/sbx/sbx.conf" "$WORK/install2.out"
# The README's recipes for that case: append the default's sections;
# metrics_file, which it lacks even commented out, added after [sbx].
runreadme "^sed -n '/^.\[service /,\$p' /usr/local/share/doc/sbx/sbx.conf >> /etc/sbx/sbx.conf"
check "README's sed appends the default's [service] sections" \
    diff <(services_of "$C") <(services_of "$P/share/doc/sbx/sbx.conf")
runreadme "sed -i '/^.\[sbx.*sbx\.conf"
check "README's sed for a kept config puts metrics_file in [sbx]" \
    test "$(awk '/^\[/ { s = $0 } /^metrics_file = \/var\/lib\/prometheus\/node-exporter\/sbx.prom$/ { print s }' "$C")" = "[sbx]"
mk uninstall "${IV[@]}" > /dev/null 2>&1
rm -f "$C"

finish
