# shellcheck shell=bash
# byhand.sh - the monitor's podman run, by hand: the same image and
# options as privsep/worker/runtime_argv.c builds from the [service] section, per
# transport; "bridge" is the set-up before tenant isolation (podman's
# default bridge network, host user namespace, writable root). Sourced by
# run.sh, burst.sh and scale.sh, which set BENCH (sbx-bench) and HAND (a
# directory for the containers' socket directories).

svc_key() { awk -v s="[service $1]" -v k="$2" '
	$0 == s { in_s = 1; next } /^\[/ { in_s = 0 }
	in_s && $1 == k { sub(/^[^=]*= */, ""); print }' "$3"; }

# A uid range of its own, as the monitor gives one (idmap.c), by default
# at the end of the reserved range where no sandbox is.
byhand() {  # service kind name conf [transport [uidmap_base]]
	local s=$1 conf=$4 t=${5:-unix} base=${6:-4294770688} a=() v port target dir MAP
	port=$(svc_key "$s" port "$conf")
	a=(podman run -d --name "$3" --label=sbx.bench=1)
	MAP=("--uidmap=0:$base:65536" "--gidmap=0:$base:65536")
	# shellcheck disable=SC2174 # HAND: the umask's mode
	case $t in
	unix)	dir=$HAND/$3; rm -rf "$dir"; mkdir -p -m 0755 "$dir"
		a+=("${MAP[@]}" --read-only --read-only-tmpfs=false --ipc=none
		    --log-driver=k8s-file --log-opt=max-size=1m --network=none
		    "--volume=$dir:/sbx:U" --env=SBX_SOCKET_DIR=/sbx)
		target=$dir ;;
	tcp)	a+=("${MAP[@]}" --read-only --read-only-tmpfs=false --ipc=none
		    --log-driver=k8s-file --log-opt=max-size=1m
		    --network=slirp4netns:port_handler=slirp4netns
		    "--publish=127.0.0.1::$port" --env=SBX_LISTEN_TCP=1)
		target=$port/tcp ;;
	bridge)	a+=("--publish=127.0.0.1::$port" --env=SBX_LISTEN_TCP=1)
		target=$port/tcp ;;
	esac
	a+=(--security-opt=no-new-privileges --cap-drop=all
	   "--pids-limit=$(svc_key "$s" pids "$conf")")
	v=$(svc_key "$s" memory "$conf"); [ -n "$v" ] && a+=("--memory=$v")
	v=$(svc_key "$s" cpus "$conf"); [ -n "$v" ] && a+=("--cpus=$v")
	while read -r v; do a+=("--tmpfs=$v"); done < <(svc_key "$s" tmpfs "$conf")
	# data over a template (sbx.conf(5)) is sbx's: by hand, the image's
	# own template is copied into a tmpfs of that size
	v=$(svc_key "$s" data_size "$conf")
	[ -n "$v" ] && a+=("--tmpfs=/srv/pgdata:rw,size=$v,mode=0700,U,nosuid,nodev,noexec")
	while read -r v; do a+=("--env=${v%%=*}"); done < <(svc_key "$s" env "$conf")
	a+=("$(svc_key "$s" image "$conf")")
	SBX_PASSWORD=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n') \
	SBX_USER=$(svc_key "$s" user "$conf") \
	SBX_DATABASE=$(svc_key "$s" database "$conf") \
	SBX_DATA_DIR=/srv/pgdata SBX_RUN_DIR=/srv/redis \
	    "$BENCH" byhand "$3" "$target" "$2" -- "${a[@]}"
}

# One sandbox by hand, as one provision's worker starts it: its postgres
# (NAME-pg) and redis (NAME-rd) started together on transport unix, each
# in a uid range of its own from BASE down (byhand's default: the end of
# the reserved range, where no sandbox is). Prints the later of the two's
# ms (each from its podman run to ready); the caller removes them.
byhand_pair() {  # name conf [base]
	local b=${3:-4294770688} p pg rd
	mkdir -p "$HAND"
	byhand postgres pg "$1-pg" "$2" unix "$b" > "$HAND/$1-pg.out" & p=$!
	rd=$(byhand redis redis "$1-rd" "$2" unix $((b - 65536))) || { wait "$p"; return 1; }
	wait "$p" || return 1
	pg=$(cat "$HAND/$1-pg.out")
	awk -v a="$pg" -v b="$rd" 'BEGIN {
		n = split(a " " b, f, " ")
		for (i = 1; i < n; i++) if (f[i] == "ms" && f[i + 1] + 0 > m) m = f[i + 1] + 0
		print m }'
}
