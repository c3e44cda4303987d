#!/bin/sh
# images/build.sh - build sbx's service images from Debian packages only:
# no registry, no Dockerfile, no base image.
#
#   build.sh tar SVC OUT           OUT/SVC.tar, a root file system
#   build.sh import SVC OUT IMAGE  podman import OUT/SVC.tar as IMAGE and
#                                  record its id (and the tar's size and mtime)
#                                  in OUT/SVC.id; skipped when IMAGE already is
#                                  that import of that tar; FORCE=1 redoes it
#
# RUNTIME (default podman) is the CLI that imports: RUNTIME=docker (or a
# path whose file name begins with docker; DOCKER_HOST names the daemon)
# imports into docker, with its own stamp OUT/SVC.docker.id. docker's
# import takes no STOPSIGNAL; sbx removes its containers with rm -f (a
# SIGKILL), so nothing depends on it.
#
# SVC is postgres or redis.  Root only (mmdebstrap root mode, chroot).
#
# PG_EXTRA_PACKAGES (postgres only): more Debian packages in the image,
# e.g. "postgresql-15-postgis-3", with their hard dependencies. A package
# named there is never dropped (below); a dependency of it that is
# dropped fails check_libs, which names what is missing.
# PG_TRUSTED_EXTENSIONS (postgres only): extensions whose control file
# gets trusted = true, e.g. "postgis", so that the sandbox's role may
# create them too (see build_pgvector on what that means).
#
# pgvector is in the postgres image, though bookworm has no package of it
# for PostgreSQL 15: its Debian source package (from the next release,
# PGVECTOR_SUITE, default trixie, on the host's own Debian mirror, checked
# by apt against the archive's keys) is built against the host's
# postgresql-server-dev-15 and installed into the root file system. Its
# control file is marked trusted = true there, which upstream leaves to
# the administrator: it lets the sandbox's role, the owner of its
# database but no superuser, CREATE EXTENSION vector (see
# build_pgvector for why that is sound here).
#
# How: `mmdebstrap --variant=extract` unpacks the packages and their hard
# dependencies from the host's apt sources (no mirror argument: it uses
# /etc/apt/sources.list[.d]); no maintainer script runs, which makes it
# several times faster than an installed chroot. Then we drop the files of
# the packages a server does not need at run time (perl, debconf, dpkg, the
# postgresql-common wrappers, LLVM for JIT, ...), check that every ELF file
# left still resolves its libraries, write passwd/group with a fixed service
# uid (999: the image USER, which podman's tmpfs option U gives the tmpfs),
# add the entrypoint, and for
# postgres prebuild an empty cluster template (no role has a password; the
# credentials are set when the container starts).
set -eu

SVC_UID=999
here=$(cd "$(dirname "$0")" && pwd)

die() { printf 'images/build.sh: %s\n' "$*" >&2; exit 1; }
log() { printf '  IMG %s\n' "$*"; }

# Files never wanted in an image, and big files of packages that are hard
# dependencies but unused here (JIT: libLLVM, libz3, bitcode; i18n: locales).
# Deleted after extraction: mmdebstrap's path-exclude doubles its run time.
PRUNE='
usr/share/man usr/share/info usr/share/locale usr/share/i18n
usr/share/lintian usr/share/bash-completion usr/share/bug usr/share/menu
usr/share/gdb usr/share/pixmaps usr/share/polkit-1 usr/share/perl
usr/lib/x86_64-linux-gnu/perl usr/lib/x86_64-linux-gnu/gconv
usr/lib/x86_64-linux-gnu/libLLVM-* usr/lib/x86_64-linux-gnu/libz3.so*
usr/lib/postgresql/*/lib/bitcode usr/lib/postgresql/*/lib/llvmjit*
'

# Packages pulled in as hard dependencies whose files we delete: maintainer
# script machinery (never run: extract variant) and the perl wrappers.
DROP_COMMON='adduser debconf debianutils dpkg init-system-helpers lsb-base
passwd libsemanage2 libsemanage-common libpam-modules libpam-modules-bin
perl perl-base perl-modules-5.36 libperl5.36 libgdbm6 libgdbm-compat4
libfile-find-rule-perl libnumber-compare-perl libtext-glob-perl
sensible-utils sysvinit-utils tar usrmerge'

# trusted = true in the control file of each extension of $2 (names).
trust_extensions() {
	root=$1
	for e in $2; do
		case $e in
		*[!a-z0-9_-]*) die "PG_TRUSTED_EXTENSIONS: not an extension name: $e" ;;
		esac
		ctl=$root/usr/share/postgresql/15/extension/$e.control
		# An alternative's link is absolute: resolved in the image.
		[ ! -L "$ctl" ] || ctl=$root$(readlink "$ctl")
		[ -f "$ctl" ] || die "PG_TRUSTED_EXTENSIONS: no extension $e in the image"
		grep -q '^ *trusted' "$ctl" || printf 'trusted = true\n' >> "$ctl"
		log "$SVC: extension $e trusted"
	done
}

# Debian package names only: they go into mmdebstrap's --include.
extra_ok() {
	for p in $1; do
		case $p in
		[a-z0-9]*) ;;
		*) die "PG_EXTRA_PACKAGES: not a package name: $p" ;;
		esac
		case $p in
		*[!a-z0-9.+-]*) die "PG_EXTRA_PACKAGES: not a package name: $p" ;;
		esac
	done
}

# The words of list $1 that are not in list $2.
without() {
	for w in $1; do
		keep=1
		for x in $2; do [ "$w" != "$x" ] || keep=; done
		[ -z "$keep" ] || printf '%s ' "$w"
	done
}

svc_config() {
	case $1 in
	postgres)
		extra_ok "${PG_EXTRA_PACKAGES:-}"
		PKGS="base-files dash coreutils postgresql-15 ${PG_EXTRA_PACKAGES:-}"
		DROP=$(without "$DROP_COMMON libjson-perl libc-l10n locales
		    libllvm14 libz3-4 openssl postgresql-common
		    postgresql-client-common ssl-cert ucf" "${PG_EXTRA_PACKAGES:-}")
		PGBIN=/usr/lib/postgresql/15/bin
		ELF_DIRS="$PGBIN /usr/lib/postgresql/15/lib /bin /usr/bin"
		;;
	redis)
		PKGS='base-files dash coreutils sed redis-server'
		DROP="$DROP_COMMON"
		ELF_DIRS="/bin /usr/bin"
		;;
	*)	die "unknown service: $1" ;;
	esac
}

# /etc/passwd and /etc/group: root, the service user, nobody.
write_users() {
	root=$1 name=$2 gecos=$3 home=$4
	printf '%s\n' \
	    'root:x:0:0:root:/root:/bin/sh' \
	    "$name:x:$SVC_UID:$SVC_UID:$gecos:$home:/bin/sh" \
	    'nobody:x:65534:65534:nobody:/nonexistent:/bin/false' \
	    > "$root/etc/passwd"
	printf '%s\n' 'root:x:0:' "$name:x:$SVC_UID:" 'nogroup:x:65534:' \
	    > "$root/etc/group"
	chmod 0644 "$root/etc/passwd" "$root/etc/group"
	mkdir -p "$root/root"
	chmod 0700 "$root/root"
}

# The extract variant runs no maintainer script, so no alternative is
# set, and what only an alternative names is missing: libblas.so.3 for
# postgis_raster, postgis.control for PostGIS. alt_links reads the
# packages' postinst scripts (continued lines joined): their plain
# assignments (VAR=value, no command substitution), and in each
# update-alternatives command every --install LINK NAME PATH PRIO and
# --slave LINK NAME PATH (with the master's PRIO), variables substituted.
# It prints "PRIO LINK PATH"; link_alternatives makes each LINK a symlink,
# the highest priority first, when PATH is in the root file system.
alt_links() {
	sed -e ':a' -e '/\\$/{N;s/\\\n//;ba' -e '}' | awk '
	function subst(s,    v) {
		for (v in vars) {
			gsub("\\$\\{" v "\\}", vars[v], s)
			gsub("\\$" v "([^A-Za-z0-9_]|$)", vars[v] "&", s)
			gsub(vars[v] "\\$" v, vars[v], s)
		}
		return s
	}
	/^[ \t]*[A-Za-z_][A-Za-z0-9_]*=[^ \t]*$/ && !/[`(]/ {
		sub(/^[ \t]*/, "")
		name = substr($0, 1, index($0, "=") - 1)
		val = substr($0, index($0, "=") + 1)
		gsub(/["\047]/, "", val)
		vars[name] = subst(val)
		next
	}
	/update-alternatives/ {
		n = split(subst($0), f)
		for (i = 1; i <= n; i++)
			if (f[i] == "--install" && i + 4 <= n) {
				prio = f[i + 4]
				print prio, f[i + 1], f[i + 3]
			} else if (f[i] == "--slave" && i + 3 <= n)
				print prio, f[i + 1], f[i + 3]
	}'
}

link_alternatives() {
	root=$1
	for deb in "$root"/var/cache/apt/archives/*.deb; do
		[ -e "$deb" ] || continue
		dpkg-deb -I "$deb" postinst 2>/dev/null | alt_links || true
	done | sort -rn | while read -r _ link path; do
		case $link$path in *[!A-Za-z0-9/._+-]*) continue ;; esac
		case $link in /*) ;; *) continue ;; esac
		{ [ -e "$root$link" ] || [ -L "$root$link" ]; } && continue
		[ -e "$root$path" ] || continue
		mkdir -p "$root${link%/*}"
		ln -s "$path" "$root$link"
		log "$SVC: alternative $link -> $path"
	done
}

# Delete the non-directory files of the packages in $DROP, using the .debs
# mmdebstrap left in var/cache/apt/archives.
drop_packages() {
	root=$1
	for p in $DROP; do
		for deb in "$root"/var/cache/apt/archives/"$p"_*.deb; do
			[ -e "$deb" ] || continue
			dpkg-deb --fsys-tarfile "$deb" | tar -t
		done
	done | grep -v '/$' | sed -n 's|^\./||p' |
	    (cd "$root" && xargs -r -d '\n' rm -f --)
	link_alternatives "$root"
	rm -rf "${root:?}/var/cache/apt" "$root/var/lib/apt" "$root/var/log/apt" \
	    "$root/var/lib/dpkg" "$root/var/log/dpkg.log" "$root/etc/apt" \
	    "$root/etc/dpkg" "$root/etc/perl" "$root/etc/hostname" \
	    "$root/etc/resolv.conf"
	# Leftover empty directories of dropped packages.
	find "$root/usr/share" "$root/usr/lib" "$root/etc" -depth -type d \
	    -empty -delete 2>/dev/null || true
	mkdir -p "$root/tmp" "$root/dev/shm"
	chmod 1777 "$root/tmp" "$root/dev/shm"	# for initdb; /dev is podman's
}

# Every ELF file left must find all its libraries (catches an overeager DROP).
check_libs() {
	root=$1
	bad=0
	for d in $ELF_DIRS; do
		for f in "$root$d"/*; do
			{ [ -f "$f" ] && [ ! -L "$f" ]; } || continue
			head -c 4 "$f" | grep -q 'ELF' || continue
			out=$(chroot "$root" /lib64/ld-linux-x86-64.so.2 --list \
			    "${f#"$root"}" 2>&1) || true
			case $out in
			*"not found"*|*"No such file"*)
				printf '%s:\n%s\n' "${f#"$root"}" "$out" >&2
				bad=1 ;;
			esac
		done
	done
	[ $bad -eq 0 ] || die "missing libraries in the $SVC image (see above)"
}

# An empty cluster, prebuilt so that a container start is a copy plus one
# single-user session. No role has a password; pg_hba allows nothing but
# scram-sha-256; where it listens (socket, TCP) the entrypoint says.
postgres_template() {
	root=$1
	tmpl=/var/lib/postgresql/template
	# The tmpfs goes on /srv/pgdata, which the image lacks: on an existing
	# directory runc would impose that directory's mode on the tmpfs.
	# var/lib/postgresql/data is the fallback when there is no tmpfs.
	mkdir -p "$root/var/lib/postgresql/data"
	chown -R $SVC_UID:$SVC_UID "$root/var/lib/postgresql"
	chmod 0700 "$root/var/lib/postgresql/data"
	as_pg() {
		chroot --userspec=$SVC_UID:$SVC_UID "$root" /usr/bin/env -i \
		    PATH="$PGBIN:/usr/bin:/bin" LC_ALL=C HOME=/var/lib/postgresql "$@"
	}
	pglog=$OUT/postgres.initdb.log
	as_pg "$PGBIN/initdb" -D $tmpl -U postgres -E UTF8 --locale=C \
	    --auth=trust --no-sync --no-instructions --wal-segsize=1 \
	    >"$pglog" 2>&1 || { cat "$pglog" >&2; die "initdb failed"; }
	cat >> "$root$tmpl/postgresql.conf" <<-'EOF'

	# --- sbx: a throwaway database on tmpfs ---
	listen_addresses = '*'
	port = 5432
	unix_socket_directories = ''
	ssl = off
	password_encryption = scram-sha-256
	max_connections = 50
	shared_buffers = 64MB
	# The default (1/32 of shared_buffers, 2MB) is zeroed at start: idle
	# memory. Fuller buffers mean more write()s of WAL to the tmpfs.
	wal_buffers = 256kB
	huge_pages = off
	# sysv: segments of the container's own IPC namespace (--ipc=none: no
	# /dev/shm for posix), gone with it, their pages taken as touched;
	# mmap would zero-fill files on the tmpfs (1MB for the stats at start).
	dynamic_shared_memory_type = sysv
	jit = off
	fsync = off
	synchronous_commit = off
	full_page_writes = off
	wal_level = minimal
	max_wal_senders = 0
	# No logical replication launcher (a process): with wal_level minimal
	# nothing publishes, and only a superuser subscribes.
	max_logical_replication_workers = 0
	max_wal_size = 256MB
	min_wal_size = 16MB
	logging_collector = off
	log_destination = 'stderr'
	log_timezone = 'UTC'
	log_checkpoints = off
	timezone = 'UTC'
	EOF
	printf '%s\n' '# sbx: password logins only, over the socket or TCP.' \
	    'local all all scram-sha-256' \
	    'host all all 0.0.0.0/0 scram-sha-256' \
	    'host all all ::/0      scram-sha-256' > "$root$tmpl/pg_hba.conf"
	# Each database is a copy on every sandbox's tmpfs: initdb's catalogs
	# rewritten without their dead space, free space maps and visibility
	# maps (postgres makes these again as it needs them; the rows are the
	# same, frozen, as initdb's VACUUM FREEZE left them); sbx is then
	# copied from template1. A single-user session may connect to
	# template0.
	for db in template1 template0 postgres; do
		printf 'VACUUM (FULL, FREEZE);\n' |
		    as_pg "$PGBIN/postgres" --single -D $tmpl -c exit_on_error=on \
		    $db >>"$pglog" 2>&1 || { cat "$pglog" >&2; die "VACUUM FULL $db failed"; }
	done
	# The default database; the entrypoint renames it to SBX_DATABASE.
	printf 'CREATE DATABASE sbx STRATEGY FILE_COPY;\n' |
	    as_pg "$PGBIN/postgres" --single -D $tmpl -c exit_on_error=on \
	    postgres >>"$pglog" 2>&1 || { cat "$pglog" >&2; die "CREATE DATABASE failed"; }
	# Clean shutdown above: drop the WAL it left (less to copy at start).
	as_pg "$PGBIN/pg_resetwal" -D $tmpl >>"$pglog" 2>&1 ||
	    { cat "$pglog" >&2; die "pg_resetwal failed"; }
	rm -f "$pglog"
	rm -f "$root$tmpl/postmaster.opts" "$root$tmpl/postmaster.pid"
	rm -rf "$root$tmpl/log"
	# The statistics the sessions above left: with them, autovacuum's
	# first round, a minute after each start, would analyze and vacuum
	# the catalogs of every database, template0 included, rewriting their
	# pages in every sandbox (7 MiB of each sandbox's tmpfs). A server
	# starts with none, as after a crash.
	rm -f "$root$tmpl/pg_stat/pgstat.stat"
	# The entrypoint sets up a cluster with this mark in place, where sbx
	# laid the template itself (install_template); it drops it in a copy.
	: > "$root$tmpl/sbx.template"
	chown $SVC_UID:$SVC_UID "$root$tmpl/sbx.template"
	chmod 0600 "$root$tmpl/sbx.template"
}

# pgvector from Debian's source package, into the root file system $1.
# The source comes with apt from PGVECTOR_SUITE's deb-src on the mirror
# the host's bookworm packages come from (apt checks it against the
# archive's signed index); it is built against the host's PostgreSQL 15
# headers (postgresql-server-dev-15, the same minor version as the
# image's server, from the same sources), without -march=native and
# without JIT bitcode (the image has no JIT).
#
# trusted = true: CREATE EXTENSION vector by the database's owner runs
# the script as the bootstrap superuser. Upstream leaves that to the
# administrator because an extension script hijacked by a role's own
# objects would hand it superuser. Here that superuser is the one of a
# throwaway cluster in a container with no capabilities, its own user
# namespace and a read-only root: the most it would give the agent is
# its own database's server, which is what its sandbox is. The untrusted
# extensions (file_fdw, dblink, adminpack...) stay refused.
build_pgvector() {
	root=$1
	suite=${PGVECTOR_SUITE:-trixie}
	pgc=/usr/lib/postgresql/15/bin/pg_config
	[ -x "$pgc" ] && [ -d /usr/include/postgresql/15/server ] ||
	    die "pgvector: postgresql-server-dev-15 is not installed (contrib/setup-host.sh)"
	# shellcheck disable=SC2016 # apt's format string
	uri=$(apt-get indextargets --format '$(REPO_URI)' \
	    'Identifier: Packages' 'Codename: bookworm' 'Label: Debian' | head -1)
	[ -n "$uri" ] || die "pgvector: no Debian bookworm mirror in the host's apt sources"
	work=$OUT/pgvector
	rm -rf "$work"
	mkdir -p "$work/etc" "$work/lists/partial" "$work/cache/archives/partial" "$work/src"
	printf '%s\n' 'Types: deb-src' "URIs: $uri" "Suites: $suite" \
	    'Components: main' \
	    'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' \
	    > "$work/etc/src.sources"
	set -- -q -o Dir::Etc::sourcelist=/dev/null \
	    -o Dir::Etc::sourceparts="$work/etc" \
	    -o Dir::State::Lists="$work/lists" -o Dir::Cache="$work/cache" \
	    -o APT::Sandbox::User=root
	apt-get "$@" update >"$work/apt.log" 2>&1 &&
	    (cd "$work/src" && apt-get "$@" source pgvector) >>"$work/apt.log" 2>&1 ||
	    { cat "$work/apt.log" >&2; die "pgvector: no source package from $suite"; }
	src=$(find "$work/src" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*')
	[ -n "$src" ] && [ -f "$src/vector.control" ] || die "pgvector: no source tree"
	log "postgres: pgvector $(sed -n "s/^default_version = '\(.*\)'/\1/p" \
	    "$src/vector.control") from $suite's source package"
	make -s -C "$src" -j2 PG_CONFIG="$pgc" OPTFLAGS= with_llvm=no \
	    >"$work/make.log" 2>&1 &&
	    make -s -C "$src" PG_CONFIG="$pgc" OPTFLAGS= with_llvm=no \
	    DESTDIR="$root" install >>"$work/make.log" 2>&1 ||
	    { cat "$work/make.log" >&2; die "pgvector: build failed"; }
	# Its headers are for other extensions' builds.
	rm -rf "$root/usr/include/postgresql/15/server/extension/vector"
	ctl=$root/usr/share/postgresql/15/extension/vector.control
	grep -q '^trusted' "$ctl" || printf 'trusted = true\n' >> "$ctl"
	rm -rf "$work"
}

build_tar() {
	SVC=$1 OUT=$2
	svc_config "$SVC"
	command -v mmdebstrap >/dev/null || die "mmdebstrap is not installed (contrib/setup-host.sh)"
	[ "$(id -u)" -eq 0 ] || die "must run as root"
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
	root=$OUT/$SVC.rootfs
	rm -rf "$root" "$OUT/$SVC.tar.tmp"
	# shellcheck disable=SC2086,SC2116 # squeeze the whitespace
	log "$SVC: mmdebstrap --variant=extract $(echo $PKGS)"
	# No mirror argument: the host's apt sources are used.
	# shellcheck disable=SC2086
	mmdebstrap --quiet --variant=extract --skip=cleanup/apt/cache \
	    --aptopt='APT::Install-Recommends "false"' \
	    --include="$(printf '%s,' $PKGS)" bookworm "$root"
	# shellcheck disable=SC2086 # the globs are meant
	(cd "${root:?}" && rm -rf $PRUNE)
	# /usr/share/doc: only the licences stay.
	find "$root/usr/share/doc" ! -type d ! -name copyright -delete
	drop_packages "$root"
	if [ "$SVC" = postgres ]; then
		build_pgvector "$root"
		trust_extensions "$root" "${PG_TRUSTED_EXTENSIONS:-}"
	fi
	check_libs "$root"
	mkdir -p "$root/usr/local/bin"
	install -m 0755 "$here/$SVC/entrypoint.sh" "$root/usr/local/bin/sbx-entrypoint"
	case $SVC in
	postgres)
		write_users "$root" postgres 'PostgreSQL administrator' /var/lib/postgresql
		postgres_template "$root"
		;;
	redis)
		write_users "$root" redis 'Redis' /var/lib/redis
		# The tmpfs goes on /srv/redis, absent (see postgres_template);
		# /var/lib/redis is the fallback when there is no tmpfs.
		mkdir -p "$root/var/lib/redis"
		chown $SVC_UID:$SVC_UID "$root/var/lib/redis"
		chmod 0700 "$root/var/lib/redis"
		;;
	esac
	mkdir -p "$root/run"
	[ -e "$root/var/run" ] || ln -s ../run "$root/var/run"
	# podman provides /dev; the device nodes mmdebstrap made are not wanted.
	rm -rf "${root:?}/dev"
	mkdir -m 0755 "$root/dev"
	log "$SVC: $(du -sh "$root" | cut -f1) root file system, writing $SVC.tar"
	tar --numeric-owner --sort=name -C "$root" -cf "$OUT/$SVC.tar.tmp" .
	mv "$OUT/$SVC.tar.tmp" "$OUT/$SVC.tar"
	rm -rf "$root"
}

# podman (or docker) import with the image's run-time config. The monitor runs it with
# --cap-drop all and no-new-privileges: USER is the service uid from the start.
import_tar() {
	SVC=$1 OUT=$2 IMAGE=$3
	RT=${RUNTIME:-podman}
	tarf=$OUT/$SVC.tar idf=$OUT/$SVC.id stop=STOPSIGNAL quiet=--quiet
	case ${RT##*/} in
	docker*) idf=$OUT/$SVC.docker.id stop= quiet= ;;
	esac
	command -v "$RT" >/dev/null || die "runtime $RT not found"
	[ -f "$tarf" ] || die "$tarf is missing"
	old=$($RT image inspect --format '{{.Id}}' "$IMAGE" 2>/dev/null || true)
	# The stamp: the image id the runtime gave the import, and which tar it was.
	tarstat=$(stat -c '%s %y' "$tarf")
	if [ -z "${FORCE:-}" ] && [ -n "$old" ] && [ -f "$idf" ] &&
	    [ "$(cat "$idf")" = "$old $tarstat" ]; then
		log "$IMAGE is up to date"
		[ "$SVC" != postgres ] || install_template "$IMAGE" "$tarf" "$old"
		return 0
	fi
	path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	case $SVC in
	postgres)
		set -- --change 'EXPOSE 5432' \
		    --change 'WORKDIR /var/lib/postgresql' \
		    --change "ENV PATH=/usr/lib/postgresql/15/bin:$path"
		[ -z "$stop" ] || set -- --change "$stop SIGINT" "$@" ;;
	redis)
		set -- --change 'EXPOSE 6379' \
		    --change 'WORKDIR /var/lib/redis' --change "ENV PATH=$path"
		[ -z "$stop" ] || set -- --change "$stop SIGTERM" "$@" ;;
	*)	die "unknown service: $SVC" ;;
	esac
	log "$SVC: ${RT##*/} import $IMAGE"
	$RT import $quiet "$@" \
	    --change "USER $SVC_UID:$SVC_UID" \
	    --change 'ENTRYPOINT ["/usr/local/bin/sbx-entrypoint"]' \
	    --change "LABEL org.opencontainers.image.title=sbx-$SVC" \
	    --message "sbx-$SVC from Debian bookworm packages" \
	    "$tarf" "$IMAGE" >/dev/null
	new=$($RT image inspect --format '{{.Id}}' "$IMAGE")
	printf '%s %s\n' "$new" "$tarstat" > "$idf"
	[ "$SVC" != postgres ] || install_template "$IMAGE" "$tarf" "$new"
	# The previous build, now untagged; kept if a container still uses it.
	if [ -n "$old" ] && [ "$old" != "$new" ]; then
		$RT rmi "$old" >/dev/null 2>&1 || true
	fi
	log "$IMAGE: $($RT image inspect --format '{{.Size}}' "$IMAGE" |
	    awk '{ printf "%.0f MB", $1 / 1e6 }')"
}

# The postgres image's cluster template on the host, for sbx.conf(5)'s
# data_template: TEMPLATES/<image's name and tag>, a link to the copy of
# this import (named by its image id), its owners and modes as in the
# image. TEMPLATES is root's and 0700: the files' owner, the image's
# service uid, is nobody's on the host, and no host user reaches them.
# A copy an earlier import left stays: live sandboxes may lie over it.
install_template() {
	IMAGE=$1 tarf=$2 id=$3
	dir=${SBX_TEMPLATES:-/var/lib/sbx/templates}
	name=$(printf '%s' "${IMAGE##*/}" | tr ':' '-')
	copy=$name.$(printf '%s' "${id#sha256:}" | cut -c1-12)
	mkdir -p "$dir"
	chown 0:0 "$dir"
	chmod 0700 "$dir"
	[ "$(readlink "$dir/$name" 2>/dev/null)" = "$copy" ] &&
	    [ -f "$dir/$copy/PG_VERSION" ] && return 0
	rm -rf "${dir:?}/.new"
	mkdir "$dir/.new"
	tar --numeric-owner -x -f "$tarf" -C "$dir/.new" \
	    ./var/lib/postgresql/template || die "no template in $tarf"
	rm -rf "${dir:?}/$copy"
	mv "$dir/.new/var/lib/postgresql/template" "$dir/$copy"
	rm -rf "${dir:?}/.new"
	ln -sfn "$copy" "$dir/.$name.link"
	mv -T "$dir/.$name.link" "$dir/$name"
	log "$IMAGE: data template $dir/$name"
}

# One build or import per service at a time (a shared checkout).
lock() {
	mkdir -p "$1"
	exec 9>"$1/$2.lock"
	flock 9
}

case ${1:-} in
tar)	[ $# -eq 3 ] || die "usage: build.sh tar SVC OUT"
	lock "$3" "$2"
	build_tar "$2" "$3" ;;
import)	[ $# -eq 4 ] || die "usage: build.sh import SVC OUT IMAGE"
	lock "$3" "$2"
	import_tar "$2" "$3" "$4" ;;
*)	die "usage: build.sh tar SVC OUT | import SVC OUT IMAGE" ;;
esac
