/*
 * test_argv.c - the runtime argv and environment templates
 * (privsep/worker/runtime_argv.c) and the socket directory names
 * (shared/sockdir.c): what every container is confined with, per
 * transport, and that no secret is ever in an argv; the uid ranges of
 * their user namespaces (privsep/monitor/idmap.c); the runtime's listing
 * as the adoption job parses it (privsep/worker/rt_seen.c).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "idmap.h"
#include "rt_seen.h"
#include "runtime.h"
#include "runtime_argv.h"
#include "sockdir.h"

#define PW	"0123456789abcdef0123456789abcdef"

static struct sbx_config cfg;
static struct service_cfg svc;
static struct sbx_conn conn;

static void
setup(void)
{
	memset(&cfg, 0, sizeof(cfg));
	strcpy(cfg.runtime, "/usr/bin/podman");
	strcpy(cfg.run_dir, "/run/sbx");
	memset(&svc, 0, sizeof(svc));
	strcpy(svc.name, "postgres");
	strcpy(svc.image, "localhost/sbx-postgres:15");
	svc.port = 5432;
	svc.pids = 256;
	strcpy(svc.memory, "512m");
	strcpy(svc.log_size, "1m");
	strcpy(svc.env[svc.nenv++], "SBX_PASSWORD={password}");
	strcpy(svc.env[svc.nenv++], "SBX_USER={user}");
	strcpy(svc.tmpfs[svc.ntmpfs++], "/srv/pgdata:rw,size=256m,mode=0700,U");
	strcpy(svc.args[svc.nargs++], "-c");
	strcpy(svc.args[svc.nargs++], "application_name={user}");
	memset(&conn, 0, sizeof(conn));
	strcpy(conn.user, "sbx");
	strcpy(conn.database, "db");
	strcpy(conn.password, PW);
}

TestSuite(argv, .init = setup);

static void
build_unchecked(struct argv_buf *a, enum transport t)
{
	struct run_spec sp = { .uid = 1000, .agent = "a1", .project = "demo",
	    .name = "sbx-1000-a1-postgres",
	    .sockdir = "/run/sbx/1000/a1/postgres", .conn = &conn,
	    .idmap_uid = 2147549184u, .port = 40123 };

	svc.transport = t;
	rt_argv_run(a, &cfg, &svc, &sp);
}

static void
build(struct argv_buf *a, enum transport t)
{
	build_unchecked(a, t);
	cr_assert_eq(a->overflow, 0);
}

static bool
has(const struct argv_buf *a, const char *word)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (strcmp(a->v[i], word) == 0)
			return true;
	return false;
}

static bool
has_prefix(const struct argv_buf *a, const char *pfx)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		if (strncmp(a->v[i], pfx, strlen(pfx)) == 0)
			return true;
	return false;
}

static void
no_secret(const struct argv_buf *a)
{
	size_t i;

	for (i = 0; i < a->n; i++)
		cr_assert_null(strstr(a->v[i], PW), "password in argv[%zu]: %s",
		    i, a->v[i]);
}

Test(argv, every_container_is_confined)
{
	static const char *const always[] = {
	    "--uidmap=0:2147549184:65536", "--gidmap=0:2147549184:65536",
	    "--read-only",
	    "--read-only-tmpfs=false", "--ipc=none", "--cap-drop=all",
	    "--security-opt=no-new-privileges", "--pids-limit=256",
	    "--memory=512m", "--log-driver=k8s-file", "--log-opt=max-size=1m",
	    "--label=sbx.uid=1000", "--label=sbx.agent=a1",
	    "--label=sbx.project=demo", "--label=sbx.service=postgres" };
	enum transport t[] = { TRANSPORT_UNIX, TRANSPORT_TCP, TRANSPORT_BOTH };
	struct argv_buf a;
	size_t i, j;

	for (i = 0; i < 3; i++) {
		build(&a, t[i]);
		cr_assert_str_eq(a.v[0], "/usr/bin/podman");
		cr_assert_str_eq(a.v[1], "run");
		for (j = 0; j < sizeof(always) / sizeof(always[0]); j++)
			cr_assert(has(&a, always[j]), "transport %d lacks %s",
			    t[i], always[j]);
		cr_assert_not(has_prefix(&a, "--network=bridge"));
		cr_assert_not(has_prefix(&a, "--privileged"));
		cr_assert_not(has_prefix(&a, "--userns"));
		no_secret(&a);
	}
}

/* The keeper's password is named, its value left to the environment. */
Test(argv, a_postgres_is_given_its_keeper_by_name_only)
{
	struct run_spec sp = { .uid = 1000, .agent = "a1", .project = "demo",
	    .name = "sbx-1000-a1-postgres",
	    .sockdir = "/run/sbx/1000/a1/postgres", .conn = &conn,
	    .idmap_uid = 2147549184u, .port = 40123, .keeper = true };
	struct argv_buf a;
	size_t i;

	svc.transport = TRANSPORT_TCP;
	rt_argv_run(&a, &cfg, &svc, &sp);
	cr_assert_eq(a.overflow, 0);
	cr_assert(has(&a, "--env=SBX_KEEPER_VERIFIER"));
	for (i = 0; i < a.n; i++)
		cr_assert_null(strstr(a.v[i], "SBX_KEEPER_VERIFIER="),
		    "a value in argv[%zu]: %s", i, a.v[i]);
	build(&a, TRANSPORT_TCP);
	cr_assert_not(has(&a, "--env=SBX_KEEPER_VERIFIER"), "only asked");
}

Test(argv, unix_has_no_network_and_its_socket_directory)
{
	struct argv_buf a;

	build(&a, TRANSPORT_UNIX);
	cr_assert(has(&a, "--network=none"));
	cr_assert(has(&a, "--volume=/run/sbx/1000/a1/postgres:/sbx:U"));
	cr_assert(has(&a, "--env=SBX_SOCKET_DIR=/sbx"));
	cr_assert_not(has_prefix(&a, "--publish"));
	cr_assert_not(has(&a, "--env=SBX_LISTEN_TCP=1"));
}

Test(argv, tcp_is_slirp4netns_on_loopback_only)
{
	struct argv_buf a;

	build(&a, TRANSPORT_TCP);
	cr_assert(has(&a, "--network=slirp4netns:port_handler=slirp4netns"));
	cr_assert(has(&a, "--publish=127.0.0.1:40123:5432"));
	cr_assert(has(&a, "--env=SBX_LISTEN_TCP=1"));
	cr_assert_not(has_prefix(&a, "--volume"));
	cr_assert_not(has(&a, "--network=none"));
}

Test(argv, both_has_both)
{
	struct argv_buf a;

	build(&a, TRANSPORT_BOTH);
	cr_assert(has(&a, "--publish=127.0.0.1:40123:5432"));
	cr_assert(has(&a, "--volume=/run/sbx/1000/a1/postgres:/sbx:U"));
	cr_assert(has(&a, "--network=slirp4netns:port_handler=slirp4netns"));
}

Test(argv, secrets_only_by_name_in_argv_and_by_value_in_env)
{
	char *envp[RT_NBASE_ENV + CFG_MAX_ENV + 1];
	char store[CFG_MAX_ENV][CFG_STR * 2];
	struct argv_buf a;

	build(&a, TRANSPORT_UNIX);
	cr_assert(has(&a, "--env=SBX_PASSWORD"));
	cr_assert(has(&a, "--env=SBX_USER"));
	/* {user} expands in args, and only {user}/{database} may. */
	cr_assert(has(&a, "application_name=sbx"));
	cr_assert_eq(rt_env_run(envp, store, &svc, &conn), 0);
	cr_assert_str_eq(envp[RT_NBASE_ENV], "SBX_PASSWORD=" PW);
	cr_assert_str_eq(envp[RT_NBASE_ENV + 1], "SBX_USER=sbx");
	cr_assert_null(envp[RT_NBASE_ENV + 2]);
}

Test(argv, image_comes_after_every_option)
{
	struct argv_buf a;
	size_t i;

	build(&a, TRANSPORT_BOTH);
	for (i = 0; i < a.n; i++)
		if (strcmp(a.v[i], svc.image) == 0)
			break;
	cr_assert_lt(i, a.n);
	cr_assert_eq(a.n - i - 1, svc.nargs, "only the service's args follow");
}

/* Every word of a, in order, is words[] (and nothing more). */
static void
is_argv(const struct argv_buf *a, const char *const words[], size_t n)
{
	size_t i;

	cr_assert_eq(a->overflow, 0);
	cr_assert_eq(a->n, n, "%zu words, not %zu", a->n, n);
	for (i = 0; i < n; i++)
		cr_assert_str_eq(a->v[i], words[i], "word %zu", i);
}

#define IS_ARGV(a, ...) do {						\
	static const char *const w_[] = { __VA_ARGS__ };		\
	is_argv((a), w_, sizeof(w_) / sizeof(w_[0]));			\
} while (0)

/* podman's argv is the reference: word for word what it always was. */
Test(argv, podman_is_word_for_word)
{
	struct run_spec sp = { .uid = 1000, .agent = "a1", .project = "demo",
	    .name = "sbx-1000-a1-postgres",
	    .sockdir = "/run/sbx/1000/a1/postgres", .conn = &conn,
	    .idmap_uid = 2147549184u, .pidfile = "/run/sbx/.pid.x" };
	struct argv_buf a;

	svc.transport = TRANSPORT_UNIX;
	rt_argv_run(&a, &cfg, &svc, &sp);
	IS_ARGV(&a, "/usr/bin/podman", "run", "-d", "--name",
	    "sbx-1000-a1-postgres", "--replace", "--pidfile=/run/sbx/.pid.x",
	    "--label=sbx.uid=1000", "--label=sbx.agent=a1",
	    "--label=sbx.project=demo", "--label=sbx.service=postgres",
	    "--uidmap=0:2147549184:65536", "--gidmap=0:2147549184:65536",
	    "--read-only", "--read-only-tmpfs=false", "--ipc=none",
	    "--log-driver=k8s-file", "--log-opt=max-size=1m",
	    "--security-opt=no-new-privileges", "--cap-drop=all",
	    "--pids-limit=256", "--memory=512m",
	    "--volume=/run/sbx/1000/a1/postgres:/sbx:U",
	    "--env=SBX_SOCKET_DIR=/sbx", "--network=none",
	    "--tmpfs=/srv/pgdata:rw,size=256m,mode=0700,U",
	    "--env=SBX_PASSWORD", "--env=SBX_USER",
	    "localhost/sbx-postgres:15", "-c", "application_name=sbx");
	rt_argv_rm_key(&a, &cfg, 1000, "a1");
	IS_ARGV(&a, "/usr/bin/podman", "rm", "-f", "-t", "0", "--filter",
	    "label=sbx.uid=1000", "--filter", "label=sbx.agent=a1");
	rt_argv_rm_storage(&a, &cfg, "n");
	IS_ARGV(&a, "/usr/bin/podman", "rm", "-f", "--storage", "n");
	rt_argv_list(&a, &cfg);
	IS_ARGV(&a, "/usr/bin/podman", "ps", "-a", "--filter",
	    "label=sbx.service", "--format", "{{.Names}} {{.Pid}} "
	    "u{{index .Labels \"sbx.uid\"}} a{{index .Labels \"sbx.agent\"}} "
	    "{{.Ports}}");
}

Test(argv, the_flavour_is_the_file_name)
{
	static const char *const docker[] = { "/usr/bin/docker", "docker",
	    "/opt/bin/docker-20.10" };
	static const char *const podman[] = { "/usr/bin/podman", "podman",
	    "/tmp/gate/podman", "/bin/true", "/usr/bin/mydocker" };
	size_t i;

	for (i = 0; i < sizeof(docker) / sizeof(docker[0]); i++) {
		strcpy(cfg.runtime, docker[i]);
		cr_assert(rt_is_docker(&cfg), "%s", docker[i]);
		cr_assert_not(rt_is_podman(&cfg), "%s", docker[i]);
	}
	for (i = 0; i < sizeof(podman) / sizeof(podman[0]); i++) {
		strcpy(cfg.runtime, podman[i]);
		cr_assert(rt_is_podman(&cfg), "%s", podman[i]);
		cr_assert_not(rt_is_docker(&cfg), "%s", podman[i]);
	}
}

Test(argv, docker_gets_no_podman_only_options)
{
	struct argv_buf a;

	strcpy(cfg.runtime, "/usr/bin/docker");
	cfg.nruntime_args = 2;
	strcpy(cfg.runtime_args[0], "-H");
	strcpy(cfg.runtime_args[1], "unix:///tmp/d.sock");
	build(&a, TRANSPORT_UNIX);
	cr_assert_str_eq(a.v[1], "-H");
	cr_assert_str_eq(a.v[3], "run");
	cr_assert_not(has_prefix(&a, "--uidmap"));
	cr_assert_not(has_prefix(&a, "--gidmap"));
	cr_assert_not(has_prefix(&a, "--userns"));
	cr_assert_not(has(&a, "--replace"));
	cr_assert_not(has_prefix(&a, "--pidfile"));
	cr_assert_not(has(&a, "--read-only-tmpfs=false"));
	cr_assert(has(&a, "--pull=never"));
	cr_assert(has(&a, "--read-only"));
	cr_assert(has(&a, "--network=none"));
	cr_assert(has(&a, "--volume=/run/sbx/1000/a1/postgres:/sbx"));
	cr_assert(has(&a, "--log-driver=json-file"));
	cr_assert(has(&a, "--log-opt=max-size=1m"));
	no_secret(&a);
}

Test(argv, docker_tcp_is_the_default_bridge_on_loopback_only)
{
	struct argv_buf a;

	strcpy(cfg.runtime, "/usr/bin/docker");
	build(&a, TRANSPORT_TCP);
	cr_assert(has(&a, "--publish=127.0.0.1:40123:5432"));
	cr_assert_not(has_prefix(&a, "--network"));
	cr_assert_not(has_prefix(&a, "--volume"));
}

/* docker's rm has no --filter and no -t; its ps has no pid. */
Test(argv, docker_rm_list_and_user)
{
	char *ids[] = { "0123456789ab", "ba9876543210" };
	struct argv_buf a;

	strcpy(cfg.runtime, "/usr/bin/docker");
	rt_argv_rm_key(&a, &cfg, 1000, "a1");
	IS_ARGV(&a, "/usr/bin/docker", "ps", "-aq", "--filter",
	    "label=sbx.uid=1000", "--filter", "label=sbx.agent=a1");
	rt_argv_rm_ids(&a, &cfg, ids, 2);
	IS_ARGV(&a, "/usr/bin/docker", "rm", "-f", "0123456789ab",
	    "ba9876543210");
	rt_argv_rm_name(&a, &cfg, "sbx-1000-a1-redis");
	IS_ARGV(&a, "/usr/bin/docker", "rm", "-f", "sbx-1000-a1-redis");
	rt_argv_rm_storage(&a, &cfg, "sbx-1000-a1-redis");
	IS_ARGV(&a, "/usr/bin/docker", "rm", "-f", "sbx-1000-a1-redis");
	rt_argv_list(&a, &cfg);
	IS_ARGV(&a, "/usr/bin/docker", "ps", "-aq", "--filter",
	    "label=sbx.uid");
	rt_argv_list_ids(&a, &cfg, ids, 2);
	IS_ARGV(&a, "/usr/bin/docker", "inspect", "--format",
	    "{{slice .Name 1}} {{.State.Pid}} "
	    "u{{index .Config.Labels \"sbx.uid\"}} "
	    "a{{index .Config.Labels \"sbx.agent\"}} "
	    "{{range $p, $b := .NetworkSettings.Ports}}{{range $b}}"
	    "{{.HostIp}}:{{.HostPort}}->{{end}}{{end}}",
	    "0123456789ab", "ba9876543210");
	rt_argv_image_user(&a, &cfg, "localhost/sbx-redis:7");
	IS_ARGV(&a, "/usr/bin/docker", "image", "inspect", "--format",
	    "{{.Config.User}}", "localhost/sbx-redis:7");
}

Test(argv, rm_is_scoped_to_the_key)
{
	struct argv_buf a;

	rt_argv_rm_key(&a, &cfg, 1000, "a1");
	cr_assert(has(&a, "label=sbx.uid=1000"));
	cr_assert(has(&a, "label=sbx.agent=a1"));
	cr_assert_str_eq(a.v[1], "rm");
}

Test(argv, an_overlong_expansion_is_flagged_not_run)
{
	struct argv_buf a;
	size_t i;

	/* Each {database} expands to 63 bytes: past CFG_STR in all. */
	memset(conn.database, 'd', SBX_SLUG_MAX - 1);
	svc.args[0][0] = '\0';
	for (i = 0; i < 6; i++)
		strcat(svc.args[0], "{database}");
	svc.nargs = 1;
	build_unchecked(&a, TRANSPORT_UNIX);
	cr_assert_eq(a.overflow, 1);
}

Test(sockdir, paths_fit_a_socket_address, .init = setup)
{
	char agent[SBX_SLUG_MAX], dir[SBX_SOCKET_MAX];
	size_t n;

	strcpy(cfg.run_dir, "/aaaaaaaaaaaaaaaaaaaaaaa");	/* 24 */
	memset(agent, 'a', SBX_SLUG_MAX - 1);
	agent[SBX_SLUG_MAX - 1] = '\0';
	cr_assert_eq(sockdir_path(&cfg, 4294967294u, agent,
	    "ssssssssssssssssssss", dir, sizeof(dir)), 0);
	n = strlen(dir) + strlen("/.s.PGSQL.65535");
	cr_assert_lt(n, 108, "%zu: %s", n, dir);
}

Test(sockdir, short_agents_verbatim_long_ones_hashed_apart, .init = setup)
{
	char d1[SBX_SOCKET_MAX], d2[SBX_SOCKET_MAX];
	const char *a1 = "agent-with-a-very-long-name-0000000000001";
	const char *a2 = "agent-with-a-very-long-name-0000000000002";

	cr_assert_eq(sockdir_path(&cfg, 1000, "a1", "redis", d1,
	    sizeof(d1)), 0);
	cr_assert_str_eq(d1, "/run/sbx/1000/a1/redis/" SOCKDIR_MOUNT);
	cr_assert_eq(sockdir_path(&cfg, 1000, a1, "redis", d1, sizeof(d1)), 0);
	cr_assert_eq(sockdir_path(&cfg, 1000, a2, "redis", d2, sizeof(d2)), 0);
	cr_assert_str_neq(d1, d2);
	cr_assert_not_null(strchr(d1, '~'));
	cr_assert_eq(sockdir_key_path(&cfg, 7, "a1", d1, sizeof(d1)), 0);
	cr_assert_str_eq(d1, "/run/sbx/7/a1");
}

Test(idmap, every_slot_once_then_none)
{
	struct idmap m;
	unsigned seen[9] = { 0 }, i, s;

	cr_assert_eq(idmap_init(&m, 2147483648u, 8, 2), 0);
	for (i = 0; i < 8; i++) {
		s = idmap_take(&m);
		cr_assert(s >= 1 && s <= 8, "slot %u", s);
		cr_assert_eq(seen[s]++, 0, "slot %u given twice", s);
	}
	cr_assert_eq(idmap_take(&m), 0, "a ninth slot out of eight");
	cr_assert_eq(m.inuse, 8);
	idmap_put(&m, 5);
	idmap_put(&m, 5);	/* twice: still one free slot */
	idmap_put(&m, 0);
	idmap_put(&m, 9);
	cr_assert_eq(m.inuse, 7);
	cr_assert_eq(idmap_take(&m), 5);
	cr_assert_eq(idmap_take(&m), 0);
	free(m.used);
	free(m.parked);
}

/* A range a process of the monitor's still runs in (a reset's worker)
 * is given back only once that process is gone, however often it was
 * given back meanwhile: a slot's, and one outside the layout. */
Test(idmap, a_range_given_back_while_pinned_stays_taken_until_unpinned)
{
	struct idmap m;
	uint32_t far = 2147483648u + 100u * 65536;
	unsigned s1, s2;

	cr_assert_eq(idmap_init(&m, 2147483648u, 2, 2), 0);
	s1 = idmap_take(&m);
	s2 = idmap_take(&m);
	cr_assert_eq(idmap_pin(&m, idmap_host_uid(&m, s1, 1)), 0);
	idmap_put(&m, s1);
	idmap_put(&m, s1);
	cr_assert_eq(m.inuse, 2, "pinned: still taken");
	cr_assert_eq(idmap_take(&m), 0, "and given to no one");
	idmap_put(&m, s2);
	cr_assert_eq(idmap_take(&m), s2, "an unpinned slot comes back");
	idmap_unpin(&m, idmap_host_uid(&m, s1, 1));
	cr_assert_eq(m.inuse, 1, "the last pin gone, so is the range");
	cr_assert_eq(idmap_take(&m), s1);

	cr_assert_eq(idmap_claim_range(&m, far), 0);
	cr_assert_eq(idmap_pin(&m, far), 0);
	cr_assert_eq(idmap_pin(&m, far), 0);
	idmap_put_range(&m, far);
	cr_assert_eq(m.inuse, 3);
	cr_assert_eq(idmap_claim_range(&m, far), -1, "still held");
	idmap_unpin(&m, far);
	cr_assert_eq(idmap_claim_range(&m, far), -1, "one pin is left");
	idmap_unpin(&m, far);
	cr_assert_eq(m.inuse, 2);
	cr_assert_eq(idmap_claim_range(&m, far), 0, "free again");
	free(m.used);
	free(m.parked);
	free(m.foreign);
	free(m.fparked);
	free(m.pins);
}

Test(idmap, ranges_do_not_overlap)
{
	struct idmap m;

	/* Two services configured: slot 1 is services 0 and 1, then slot 2. */
	cr_assert_eq(idmap_init(&m, 2147483648u, 1024, 2), 0);
	cr_assert_eq(idmap_host_uid(&m, 1, 0), 2147483648u);
	cr_assert_eq(idmap_host_uid(&m, 1, 1), 2147483648u + 65536);
	cr_assert_eq(idmap_host_uid(&m, 2, 0), 2147483648u + 2 * 65536);
	cr_assert_eq(idmap_host_uid(&m, 0, 0), 0, "no slot, no range");
	free(m.used);
	free(m.parked);
	cr_assert_eq(idmap_init(&m, 2147483648u, 1024, 16), 0);
	cr_assert_eq(idmap_host_uid(&m, 1024, 15),
	    2147483648u + (1023u * 16 + 15) * 65536);
	free(m.used);
	free(m.parked);
}

/*
 * sbx.conf changed between starts (a section removed, userns_base moved):
 * adopted containers keep the ranges they run in, which the layout no
 * longer puts where their slot is. No slot that touches one is handed
 * out, and no two live ranges overlap.
 */
Test(idmap, a_changed_layout_never_overlaps_a_live_range)
{
	const uint32_t base = 2147483648u;
	struct idmap m;
	unsigned s;
	uint32_t lo, hi;

	/* Three services were configured; now two. The old slot 2 of
	 * three ran postgres at base + 4 * 65536: in the new layout that is
	 * slot 3's first range. */
	cr_assert_eq(idmap_init(&m, base, 8, 2), 0);
	cr_assert_eq(idmap_claim_range(&m, base + 4 * 65536), 0);
	cr_assert_eq(idmap_claim_range(&m, base + 4 * 65536), -1,
	    "the same range twice");
	cr_assert_eq(idmap_claim_range(&m, base + 4 * 65536 + 100), -1,
	    "a range that overlaps one held");
	cr_assert_eq(idmap_claim(&m, 3), -1, "a slot that touches it");
	while ((s = idmap_take(&m)) != 0) {
		lo = idmap_host_uid(&m, s, 0);
		hi = lo + 2 * 65536;
		cr_assert(hi <= base + 4 * 65536 || lo >= base + 5 * 65536,
		    "slot %u touches the live range", s);
	}
	cr_assert_eq(m.inuse, 8, "seven slots and the range");
	/* A range inside a slot taken cannot be claimed, whatever it is. */
	cr_assert_eq(idmap_claim_range(&m, base + 65536), -1);
	idmap_put_range(&m, base + 4 * 65536);
	cr_assert_eq(idmap_claim(&m, 3), 0, "gone: its slot is free again");
	/* userns_base moved down by half a range: an old range straddles
	 * two new ones. */
	free(m.used);
	free(m.parked);
	free(m.foreign);
	free(m.fparked);
	cr_assert_eq(idmap_init(&m, base, 4, 1), 0);
	cr_assert_eq(idmap_claim_range(&m, base + 65536 + 32768), 0);
	cr_assert_eq(idmap_claim(&m, 2), -1);
	cr_assert_eq(idmap_claim(&m, 3), -1);
	cr_assert_eq(idmap_take(&m), 1);
	cr_assert_eq(idmap_take(&m), 4);
	cr_assert_eq(idmap_take(&m), 0);
	free(m.used);
	free(m.parked);
	free(m.foreign);
	free(m.fparked);
}

/* What podman ps --format prints for rt_argv_list, one line each kind. */
Test(seen, listing_lines_become_entries)
{
	char text[] = "sbx-1000-a1-postgres 1234 u1000 aa1 "
	    "127.0.0.1:40000->5432/tcp\n"
	    "sbx-pool-redis-2 77 u a \n"
	    "sbx-1001-b-redis 0 u1001 ab\n";
	struct rt_seen *v = NULL;
	size_t n = 0;

	cr_assert_eq(rt_seen_parse(text, &v, &n), 0);
	cr_assert_eq(n, 3);
	cr_assert_str_eq(v[0].name, "sbx-1000-a1-postgres");
	cr_assert_eq(v[0].pid, 1234);
	cr_assert_eq(v[0].uid, 1000);
	cr_assert_str_eq(v[0].agent, "a1");
	cr_assert_eq(v[0].port, 40000);
	cr_assert_not(v[0].pool);
	cr_assert(v[1].pool, "no uid and no agent label: a warm container");
	cr_assert_eq(v[1].uid, (uid_t)-1);
	cr_assert_str_eq(v[1].agent, "");
	cr_assert_eq(v[1].port, 0);
	cr_assert_eq(v[2].pid, 0, "a stopped container has pid 0");
	free(v);
}

Test(seen, a_line_no_listing_prints_is_refused_whole)
{
	static const char *bad[] = {
		"sbx-1-a-redis x12 u1 aa",		/* pid not a number */
		"sbx-1-a-redis 12 1 aa",		/* no u field */
		"sbx-1-a-redis 12 u1",			/* no a field */
		"sbx-1-a-redis 12 u-5 aa",		/* uid out of range */
		"sbx-1-a-redis 12 u1 aa 127.0.0.1:70000->6379/tcp",
		"sbx-1-a-redis 12 u1 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
		    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
	};
	char text[256];
	struct rt_seen *v = NULL;
	size_t n, i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A sound line first: one bad line refuses the listing. */
		snprintf(text, sizeof(text), "sbx-2-b-redis 1 u2 ab\n%s\n",
		    bad[i]);
		n = 99;
		cr_assert_eq(rt_seen_parse(text, &v, &n), -1, "%s", bad[i]);
	}
}
