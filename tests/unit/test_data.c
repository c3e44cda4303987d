/*
 * test_data.c - the pure parts of reset, snapshot and seeds: a statement
 * position as a seed's line (seed_session.c), JOB_DATA's check of a
 * hostile job (data.c), snapshot slots from a tenant's names and comments
 * (data.c, pg_data.c), a tenant's text made one clean line and a session
 * child's stderr lines under the worker's prefix (svc_session.c), and the
 * rules a postgres_seed file is held to (seeds.c, projects.c).
 *
 * The file rules need root (files of another owner): as anyone else
 * those are skipped.
 */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "data.h"
#include "fdpass.h"
#include "job.h"
#include "keeper.h"
#include "log.h"
#include "pg_data.h"
#include "resident.h"
#include "seed_session.h"
#include "seeds.h"
#include "session_keeper.h"
#include "snaps.h"
#include "spare.h"
#include "svc_session.h"
#include "load.h"

/* ---- the statement position's line ---- */

Test(seed_line, counts_lines_from_one)
{
	const char t[] = "SELECT 1;\nSELEKT 2;\n";

	cr_assert_eq(seed_line(t, strlen(t), 1, false), 1);
	cr_assert_eq(seed_line(t, strlen(t), 10, false), 1);	/* the \n */
	cr_assert_eq(seed_line(t, strlen(t), 11, false), 2);
	cr_assert_eq(seed_line(t, strlen(t), 20, false), 2);
}

Test(seed_line, counts_characters_not_bytes)
{
	/* "é" is two bytes, one character: postgres counts characters. */
	const char t[] = "-- \xc3\xa9\xc3\xa9\nX";

	cr_assert_eq(seed_line(t, strlen(t), 6, false), 1);	/* the \n */
	cr_assert_eq(seed_line(t, strlen(t), 7, false), 2);	/* X */
	/* a SQL_ASCII server counts bytes */
	cr_assert_eq(seed_line(t, strlen(t), 8, true), 1);
	cr_assert_eq(seed_line(t, strlen(t), 9, true), 2);
}

Test(seed_line, out_of_range_is_no_line)
{
	const char t[] = "a\nb";

	cr_assert_eq(seed_line(t, strlen(t), 0, false), 0);
	cr_assert_eq(seed_line(t, strlen(t), 4, false), 0);
	cr_assert_eq(seed_line(t, strlen(t), (unsigned long)-1, false), 0);
	cr_assert_eq(seed_line("", 0, 1, false), 0);
}

/* ---- JOB_DATA's check ---- */

static struct job_data *
good_job(void)
{
	static struct job_data j;

	memset(&j, 0, sizeof(j));
	j.key.uid = 1000;
	strcpy(j.key.agent, "agent");
	strcpy(j.project, "demo");
	j.op = DATA_RESET;
	j.max_snapshots = 4;
	j.nservices = 1;
	strcpy(j.svc[0].conn.name, "postgres");
	strcpy(j.svc[0].conn.password, "secret");
	j.svc[0].host_uid = 2147483648u;
	return &j;
}

Test(job_data, a_sound_job_passes)
{
	struct job_data *j = good_job();

	cr_assert_eq(data_job_valid(j), 0);
	strcpy(j->snapshot, "before-migration_2.x");
	cr_assert_eq(data_job_valid(j), 0);
	j->op = DATA_SNAPSHOT;
	cr_assert_eq(data_job_valid(j), 0);
	j->max_snapshots = SBX_MAX_SNAPSHOTS;
	cr_assert_eq(data_job_valid(j), 0);
}

Test(job_data, counts_out_of_range_are_refused)
{
	struct job_data *j = good_job();

	j->nservices = SBX_MAX_SERVICES + 1;
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	j->nservices = UINT32_MAX;
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	j->max_snapshots = SBX_MAX_SNAPSHOTS + 1;
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	j->svc[0].conn.port = 65536;
	cr_assert_eq(data_job_valid(j), -1);
}

Test(job_data, unended_strings_are_refused)
{
	struct job_data *j = good_job();

	memset(j->key.agent, 'a', sizeof(j->key.agent));
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	memset(j->project, 'a', sizeof(j->project));
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	memset(j->snapshot, 'a', sizeof(j->snapshot));
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	memset(j->svc[0].conn.name, 'a', sizeof(j->svc[0].conn.name));
	cr_assert_eq(data_job_valid(j), -1);
	j = good_job();
	memset(j->svc[0].conn.password, 'a', sizeof(j->svc[0].conn.password));
	cr_assert_eq(data_job_valid(j), -1);
}

Test(job_data, unknown_ops_are_refused)
{
	struct job_data *j = good_job();

	j->op = 0;
	cr_assert_eq(data_job_valid(j), -1);
	j->op = DATA_SNAPSHOT + 1;
	cr_assert_eq(data_job_valid(j), -1);
	j->op = UINT32_MAX;
	cr_assert_eq(data_job_valid(j), -1);
}

Test(job_data, a_snapshot_name_is_a_slug)
{
	static const char *bad[] = { "Upper", "-dash", ".dot", "a b", "a/b",
	    "a'b", "a;drop", "\xc3\xa9", "a\"b" };
	struct job_data *j;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		j = good_job();
		strcpy(j->snapshot, bad[i]);
		cr_assert_eq(data_job_valid(j), -1, "%s", bad[i]);
	}
	/* a snapshot is saved under a name */
	j = good_job();
	j->op = DATA_SNAPSHOT;
	cr_assert_eq(data_job_valid(j), -1);
}

/* ---- snapshot slots ---- */

Test(snaps, names_are_taken_only_if_slugs)
{
	struct snaps s;

	memset(&s, 0, sizeof(s));
	snaps_set(&s, 0, "good");
	snaps_set(&s, 1, "Bad Name");
	snaps_set(&s, 2, "x'; DROP DATABASE sbx; --");
	snaps_set(&s, 3, NULL);
	snaps_set(&s, SBX_MAX_SNAPSHOTS, "beyond");	/* ignored */
	cr_assert_eq(snaps_find(&s, "good"), 0);
	cr_assert_eq(snaps_find(&s, "Bad Name"), -1);
	cr_assert_eq(snaps_find(&s, "beyond"), -1);
	cr_assert(s.present[1] && s.present[2] && s.present[3]);
	cr_assert_str_empty(s.name[2]);
}

Test(snaps, a_new_name_takes_a_free_slot_up_to_max)
{
	struct snaps s;

	memset(&s, 0, sizeof(s));
	cr_assert_eq(snaps_slot(&s, "a", 2), 0);
	snaps_set(&s, 0, "a");
	cr_assert_eq(snaps_slot(&s, "a", 2), 0);	/* replaced in place */
	cr_assert_eq(snaps_slot(&s, "b", 2), 1);
	snaps_set(&s, 1, "b");
	cr_assert_eq(snaps_slot(&s, "c", 2), -1);	/* max held */
	cr_assert_eq(snaps_slot(&s, "b", 2), 1);	/* a name held: yes */
	cr_assert_eq(snaps_slot(&s, "a", 0), 0);
	cr_assert_eq(snaps_slot(&s, "c", 0), -1);
}

Test(snaps, an_unnamed_copy_is_taken_over_last)
{
	struct snaps s;

	memset(&s, 0, sizeof(s));
	snaps_set(&s, 0, "not a slug");
	cr_assert_eq(snaps_slot(&s, "n", 4), 1);
	for (unsigned i = 1; i < SBX_MAX_SNAPSHOTS; i++)
		snaps_set(&s, i, NULL);
	cr_assert_eq(snaps_slot(&s, "n", SBX_MAX_SNAPSHOTS), 0);
}

Test(snaps, postgres_slot_names_are_exact)
{
	cr_assert_eq(pg_snap_slot("sbx_snap_0", "sbx_snap_"), 0);
	cr_assert_eq(pg_snap_slot("sbx_snap_15", "sbx_snap_"), 15);
	cr_assert_eq(pg_snap_slot("sbx_next_3", "sbx_next_"), 3);
	cr_assert_eq(pg_snap_slot("sbx_snap_16", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_snap_01", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_snap_", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_snap_1x", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_snap_-1", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_snap_99999999999", "sbx_snap_"), -1);
	cr_assert_eq(pg_snap_slot("sbx_next_origin", "sbx_next_"), -1);
	cr_assert_eq(pg_snap_slot("xsbx_snap_1", "sbx_snap_"), -1);
}

/* ---- a tenant's text ---- */

Test(session_text, one_printable_line)
{
	char out[16];

	session_text(out, sizeof(out), "bad\x1b[31m\nnext\r");
	cr_assert_str_eq(out, "bad?[31m next?");
	session_text(out, sizeof(out), "a very long line of text");
	cr_assert_eq(strlen(out), sizeof(out) - 1);
	session_text(out, sizeof(out), "ends in newline\n");
	cr_assert_str_eq(out, "ends in newline");
	session_text(out, sizeof(out), "\xc3\xa9");
	cr_assert_str_eq(out, "??");
}

/* ---- a session child's stderr in the worker's log ---- */

Test(session_log, a_prefix_of_the_workers)
{
	char out[128];

	session_log_line(out, sizeof(out), "redis", "cannot reach");
	cr_assert_str_eq(out, "redis session child said: cannot reach");
}

Test(session_log, the_childs_own_ident_dropped)
{
	char out[128];

	session_log_line(out, sizeof(out), "redis",
	    "sbx-session: redis: cannot reach its keeper");
	cr_assert_str_eq(out,
	    "redis session child said: redis: cannot reach its keeper");
	/* once, and only at the start */
	session_log_line(out, sizeof(out), "pg",
	    "sbx-session: sbx-session: x");
	cr_assert_str_eq(out, "pg session child said: sbx-session: x");
	session_log_line(out, sizeof(out), "pg", "x sbx-session: y");
	cr_assert_str_eq(out, "pg session child said: x sbx-session: y");
	session_log_line(out, sizeof(out), "pg", "sbx-session:x");
	cr_assert_str_eq(out, "pg session child said: sbx-session:x");
}

Test(session_log, control_bytes_make_one_printable_line)
{
	char out[160];
	size_t i;

	/* What a hostile server could have libpq or hiredis repeat: a
	 * line of the monitor's of its own, a terminal's escapes. */
	session_log_line(out, sizeof(out), "redis",
	    "x\r\nsbx-monitor: audit event=release uid=0\x1b[2K\x7f\xc3\xa9");
	cr_assert_str_eq(out, "redis session child said: "
	    "x? sbx-monitor: audit event=release uid=0?[2K???");
	for (i = 0; out[i] != '\0'; i++)
		cr_assert(out[i] >= 0x20 && out[i] < 0x7f, "byte %zu", i);
}

Test(session_log, bounded)
{
	char line[1024], out[64];
	size_t n;

	memset(line, 'a', sizeof(line) - 1);
	line[sizeof(line) - 1] = '\0';
	n = session_log_line(out, sizeof(out), "redis", line);
	cr_assert_gt(n, sizeof(out));
	cr_assert_eq(strlen(out), sizeof(out) - 1);
	cr_assert(strncmp(out, "redis session child said: aaa", 29) == 0);
}

/* The relay: each line of the pipe under the prefix, nothing of it on
 * a line of its own; the rest dropped, and said so. */
Test(session_log, relay_lines_each_under_the_prefix)
{
	char tmp[] = "/tmp/sbx-relay-XXXXXX", got[16384], *p, *nl;
	int lp[2], fd, lines = 0;
	ssize_t n;

	cr_assert_neq(fd = mkstemp(tmp), -1);
	unlink(tmp);
	cr_assert_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
	log_init("sbx-worker", LOG_TO_STDERR);
	cr_assert_eq(pipe2(lp, O_NONBLOCK), 0);
	dprintf(lp[1], "sbx-session: one\ntwo\rsbx-monitor: fake\n");
	for (int i = 0; i < 40; i++)
		dprintf(lp[1], "line %d\n", i);
	close(lp[1]);
	session_log_relay(lp[0], "redis");
	close(lp[0]);
	cr_assert_neq(n = pread(fd, got, sizeof(got) - 1, 0), -1);
	got[n] = '\0';
	cr_assert(strstr(got, "redis session child said: one\n") != NULL);
	cr_assert(strstr(got, "said: two?sbx-monitor: fake\n") != NULL);
	cr_assert(strstr(got, "said: line 29\n") != NULL);
	cr_assert(strstr(got, "said: line 30\n") == NULL);
	cr_assert(strstr(got, "more lines dropped") != NULL);
	for (p = got; (nl = strchr(p, '\n')) != NULL; p = nl + 1, lines++) {
		*nl = '\0';
		cr_assert(strncmp(p, "sbx-worker: redis session child", 31) ==
		    0, "%s", p);
		cr_assert(strstr(p, "sbx-session:") == NULL, "%s", p);
	}
	cr_assert_eq(lines, 32 + 1);
}

/* ---- the seed file's rules ---- */

Test(seed_file, names)
{
	cr_assert(seed_name_valid("demo.sql"));
	cr_assert(seed_name_valid("seed"));
	cr_assert_not(seed_name_valid("../demo.sql"));
	cr_assert_not(seed_name_valid("sub/demo.sql"));
	cr_assert_not(seed_name_valid(".hidden.sql"));
	cr_assert_not(seed_name_valid("Demo.sql"));
	cr_assert_not(seed_name_valid(""));
	cr_assert_not(seed_name_valid("other.conf"));	/* a project file */
}

static char dir[64];

static void
mkfile(const char *name, mode_t mode, const char *text)
{
	char p[128];
	int fd;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	cr_assert_neq(fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0600), -1);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	cr_assert_eq(fchmod(fd, mode), 0);
	close(fd);
}

static void
files_setup(void)
{
	if (geteuid() != 0)
		cr_skip_test("needs root: files of another owner");
	strlcpy(dir, "/tmp/sbx-seed-XXXXXX", sizeof(dir));
	cr_assert_not_null(mkdtemp(dir));
}

static void
files_teardown(void)
{
	char cmd[128];

	if (dir[0] != '\0') {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		cr_assert_eq(system(cmd), 0);
	}
}

static int
try_open(const char *name, char *err, size_t len)
{
	uint64_t size;
	int fd = seed_open(dir, name, &size, err, len);

	if (fd != -1)
		close(fd);
	return fd == -1 ? -1 : 0;
}

TestSuite(seed_rules, .init = files_setup, .fini = files_teardown);

Test(seed_rules, a_roots_file_passes)
{
	char err[160];

	mkfile("ok.sql", 0644, "SELECT 1;\n");
	cr_assert_eq(try_open("ok.sql", err, sizeof(err)), 0, "%s", err);
}

Test(seed_rules, what_a_project_file_may_not_be_a_seed_may_not)
{
	char err[160], p[128], q[128];

	mkfile("gw.sql", 0664, "x");
	cr_assert_eq(try_open("gw.sql", err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "root-owned"));
	mkfile("ow.sql", 0646, "x");
	cr_assert_eq(try_open("ow.sql", err, sizeof(err)), -1);
	mkfile("user.sql", 0644, "x");
	snprintf(p, sizeof(p), "%s/user.sql", dir);
	cr_assert_eq(chown(p, 1000, 0), 0);
	cr_assert_eq(try_open("user.sql", err, sizeof(err)), -1);
	snprintf(p, sizeof(p), "%s/link.sql", dir);
	snprintf(q, sizeof(q), "%s/ok.sql", dir);
	mkfile("ok.sql", 0644, "x");
	cr_assert_eq(symlink(q, p), 0);
	cr_assert_eq(try_open("link.sql", err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "symbolic link"));
	snprintf(p, sizeof(p), "%s/fifo.sql", dir);
	cr_assert_eq(mkfifo(p, 0600), 0);
	cr_assert_eq(try_open("fifo.sql", err, sizeof(err)), -1);
	snprintf(p, sizeof(p), "%s/sub.sql", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	cr_assert_eq(try_open("sub.sql", err, sizeof(err)), -1);
	cr_assert_eq(try_open("missing.sql", err, sizeof(err)), -1);
}

Test(seed_rules, past_the_cap_is_refused)
{
	char err[160], p[128];

	mkfile("big.sql", 0644, "");
	snprintf(p, sizeof(p), "%s/big.sql", dir);
	cr_assert_eq(truncate(p, (off_t)SEED_MAX + 1), 0);
	cr_assert_eq(try_open("big.sql", err, sizeof(err)), -1);
	cr_assert_not_null(strstr(err, "MiB"));
	cr_assert_eq(truncate(p, (off_t)SEED_MAX), 0);
	cr_assert_eq(try_open("big.sql", err, sizeof(err)), 0);
}

/* projects_load: a bad postgres_seed is its line's fault. */
static const struct project *
load(struct project_table *t, const char *slug)
{
	static struct sbx_config cfg;

	memset(&cfg, 0, sizeof(cfg));
	strlcpy(cfg.projects, dir, sizeof(cfg.projects));
	cfg.nservices = 2;
	strcpy(cfg.services[0].name, "postgres");
	cfg.services[0].probe = PROBE_POSTGRES;
	strcpy(cfg.services[1].name, "redis");
	cfg.services[1].probe = PROBE_REDIS;
	cr_assert_eq(projects_load(&cfg, t, false), 0);
	return project_find(t, slug);
}

Test(seed_rules, a_project_names_its_seed_at_a_line)
{
	struct project_table t;
	const struct project *p;

	mkfile("ok.sql", 0644, "SELECT 1;\n");
	mkfile("a.conf", 0644, "[project]\nsandbox_services = postgres\n"
	    "postgres_seed = ok.sql\n");
	mkfile("b.conf", 0644, "[project]\nsandbox_services = redis\n"
	    "postgres_seed = ok.sql\n");
	mkfile("c.conf", 0644, "[project]\npostgres_seed = ok.sql\n"
	    "sandbox_services = redis\n");
	mkfile("d.conf", 0644, "[project]\n\npostgres_seed = ../ok.sql\n");
	mkfile("e.conf", 0644, "[project]\npostgres_seed = ok.sql\n"
	    "postgres_seed = ok.sql\n");
	p = load(&t, "a");
	cr_assert(p->valid, "%s", p->why);
	cr_assert_str_eq(p->seed, "ok.sql");
	p = project_find(&t, "b");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "b.conf:3: postgres_seed"), "%s",
	    p->why);
	p = project_find(&t, "c");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "c.conf:3: sandbox_services"),
	    "%s", p->why);
	p = project_find(&t, "d");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "d.conf:3:"), "%s", p->why);
	p = project_find(&t, "e");
	cr_assert_not(p->valid);
	cr_assert_not_null(strstr(p->why, "e.conf:3:"), "%s", p->why);
	projects_free(&t);
}

/* The reload's copies: one per seeded project, 0600 in a 0700 dir of
 * root's, none for a project without. */
Test(seed_rules, the_reload_copies_and_prunes)
{
	struct project_table t;
	static struct sbx_config cfg;
	char p[160];
	struct stat st;

	memset(&cfg, 0, sizeof(cfg));
	strlcpy(cfg.projects, dir, sizeof(cfg.projects));
	strlcpy(cfg.state_dir, dir, sizeof(cfg.state_dir));
	cfg.nservices = 1;
	strcpy(cfg.services[0].name, "postgres");
	cfg.services[0].probe = PROBE_POSTGRES;
	mkfile("ok.sql", 0644, "SELECT 1;\n");
	mkfile("a.conf", 0644, "[project]\nsandbox_services = postgres\n"
	    "postgres_seed = ok.sql\n");
	snprintf(p, sizeof(p), "%s/seeds", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	mkfile("seeds/gone.sql", 0600, "old");
	cr_assert_eq(projects_load(&cfg, &t, false), 0);
	cr_assert_eq(seeds_sync(&cfg, &t), 0);
	cr_assert(project_find(&t, "a")->valid);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0700);
	snprintf(p, sizeof(p), "%s/seeds/a.sql", dir);
	cr_assert_eq(stat(p, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0600);
	cr_assert_eq(st.st_size, 10);
	snprintf(p, sizeof(p), "%s/seeds/gone.sql", dir);
	cr_assert_eq(stat(p, &st), -1);
	projects_free(&t);
	/* the seed goes bad after the load: the project is refused */
	cr_assert_eq(projects_load(&cfg, &t, false), 0);
	snprintf(p, sizeof(p), "%s/ok.sql", dir);
	cr_assert_eq(chmod(p, 0666), 0);
	cr_assert_eq(seeds_sync(&cfg, &t), 0);
	cr_assert_not(project_find(&t, "a")->valid);
	snprintf(p, sizeof(p), "%s/seeds/a.sql", dir);
	cr_assert_eq(stat(p, &st), -1);
	projects_free(&t);
}

/* ---- the keeper's password file (session_keeper.c) ---- */

Test(keeper_pw, takes_32_hex_digits_and_a_newline)
{
	const char pw[] = "0123456789abcdef0123456789abcdef";
	char out[KEEPER_PW_LEN + 1];

	cr_assert_eq(keeper_pw_parse(pw, 32, out, sizeof(out)), 0);
	cr_assert_str_eq(out, pw);
	cr_assert_eq(keeper_pw_parse("0123456789abcdef0123456789abcdef\n",
	    33, out, sizeof(out)), 0);
	cr_assert_str_eq(out, pw);
}

Test(keeper_pw, refuses_anything_else)
{
	char out[KEEPER_PW_LEN + 1];
	char small[KEEPER_PW_LEN];

	/* short, long, not hex, upper case, no newline at the end, a NUL */
	cr_assert_eq(keeper_pw_parse("0123456789abcdef", 16, out,
	    sizeof(out)), -1);
	cr_assert_str_eq(out, "");
	cr_assert_eq(keeper_pw_parse("0123456789abcdef0123456789abcdef0",
	    33, out, sizeof(out)), -1);
	cr_assert_eq(keeper_pw_parse("0123456789abcdef0123456789abcdeg",
	    32, out, sizeof(out)), -1);
	cr_assert_eq(keeper_pw_parse("0123456789ABCDEF0123456789abcdef",
	    32, out, sizeof(out)), -1);
	cr_assert_eq(keeper_pw_parse("0123456789abcdef0123456789abcdef\n\n",
	    34, out, sizeof(out)), -1);
	cr_assert_eq(keeper_pw_parse("0123456789abcdef\0" "123456789abcdef",
	    32, out, sizeof(out)), -1);
	cr_assert_str_eq(out, "");
	/* no room for it */
	cr_assert_eq(keeper_pw_parse("0123456789abcdef0123456789abcdef",
	    32, small, sizeof(small)), -1);
}

/* ---- keeper_derive: the keeper's password, from root's key ------------- */

/* A state_dir of the test's own. */
static void
keeper_dir(struct sbx_config *cfg)
{
	char tmpl[] = "/tmp/sbx-keeper.XXXXXX";

	memset(cfg, 0, sizeof(*cfg));
	cr_assert_not_null(mkdtemp(tmpl));
	strlcpy(cfg->state_dir, tmpl, sizeof(cfg->state_dir));
}

static void
keeper_dir_rm(const struct sbx_config *cfg)
{
	char cmd[sizeof(cfg->state_dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", cfg->state_dir);
	cr_assert_eq(system(cmd), 0);
}

static bool
lower_hex(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' &&
		    s[i] <= 'f')))
			return false;
	return s[n] == '\0';
}

Test(keeper, the_same_for_a_password_another_for_another)
{
	struct sbx_config cfg;
	char a[KEEPER_PW_LEN + 1], b[KEEPER_PW_LEN + 1], c[KEEPER_PW_LEN + 1];
	char key[sizeof(cfg.state_dir) + 16];
	struct stat st;

	keeper_dir(&cfg);
	cr_assert_eq(keeper_derive(&cfg, "pw-one", a), 0);
	cr_assert(lower_hex(a, KEEPER_PW_LEN), "%s", a);
	cr_assert_eq(keeper_derive(&cfg, "pw-one", b), 0);
	cr_assert_str_eq(a, b, "the key is made once, then read");
	cr_assert_eq(keeper_derive(&cfg, "pw-two", c), 0);
	cr_assert_str_neq(a, c);
	cr_assert_str_neq(a, "pw-one");
	snprintf(key, sizeof(key), "%s/keeper.key", cfg.state_dir);
	cr_assert_eq(stat(key, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	cr_assert_eq(st.st_size, 32);
	keeper_dir_rm(&cfg);
}

/* Another key, another password: the key is what the agent lacks. */
Test(keeper, a_new_key_gives_other_passwords)
{
	struct sbx_config c1, c2;
	char a[KEEPER_PW_LEN + 1], b[KEEPER_PW_LEN + 1];

	keeper_dir(&c1);
	keeper_dir(&c2);
	cr_assert_eq(keeper_derive(&c1, "pw", a), 0);
	cr_assert_eq(keeper_derive(&c2, "pw", b), 0);
	cr_assert_str_neq(a, b);
	keeper_dir_rm(&c1);
	keeper_dir_rm(&c2);
}

/* A key file that is a link, too short, or readable by others is no key:
 * nothing derived, nothing followed or replaced. */
Test(keeper, an_unsound_key_file_is_refused)
{
	struct sbx_config cfg;
	char out[KEEPER_PW_LEN + 1], key[sizeof(cfg.state_dir) + 16];
	char other[sizeof(cfg.state_dir) + 16];
	int fd;

	keeper_dir(&cfg);
	snprintf(key, sizeof(key), "%s/keeper.key", cfg.state_dir);
	snprintf(other, sizeof(other), "%s/elsewhere", cfg.state_dir);
	fd = open(other, O_WRONLY | O_CREAT | O_EXCL, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "0123456789abcdef0123456789abcdef", 32), 32);
	close(fd);
	cr_assert_eq(symlink(other, key), 0);
	cr_assert_eq(keeper_derive(&cfg, "pw", out), -1, "a link");
	cr_assert_str_eq(out, "");
	cr_assert_eq(unlink(key), 0);
	cr_assert_eq(link(other, key), 0);
	cr_assert_eq(chmod(key, 0644), 0);
	cr_assert_eq(keeper_derive(&cfg, "pw", out), -1, "readable by others");
	cr_assert_eq(chmod(key, 0600), 0);
	cr_assert_eq(truncate(key, 16), 0);
	cr_assert_eq(keeper_derive(&cfg, "pw", out), -1, "too short");
	cr_assert_str_eq(out, "");
	keeper_dir_rm(&cfg);
}

/* ---- keeper_verifier: what the container gets instead of the password -- */

/* Postgres's own form, checked against Python's hashlib and hmac for the
 * same password, salt and counts (RFC 5802's StoredKey and ServerKey). */
Test(keeper, the_verifier_is_postgres_scram_form)
{
	unsigned char salt[16];
	char out[KEEPER_VERIFIER_MAX];
	size_t i;

	for (i = 0; i < sizeof(salt); i++)
		salt[i] = (unsigned char)i;
	cr_assert_eq(keeper_verifier_salted("0123456789abcdef0123456789abcdef",
	    salt, sizeof(salt), 1, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "SCRAM-SHA-256$1:AAECAwQFBgcICQoLDA0ODw==$"
	    "u7IM7xH8q9rwPHGqXrjqUgqWN69neo+1jPUuE5YUUlQ=:"
	    "QTiSC4TdmjFR32/ogjSoUqlV08On3pAQdlgAhJ7Svbc=");
	cr_assert_eq(keeper_verifier_salted("0123456789abcdef0123456789abcdef",
	    salt, sizeof(salt), 4096, out, sizeof(out)), 0);
	cr_assert_str_eq(out, "SCRAM-SHA-256$4096:AAECAwQFBgcICQoLDA0ODw==$"
	    "9N8EpD8n0pedhw7ISFKl+xcetF+l25KUW3TuR5lIkmk=:"
	    "ADC3xj1ZJ7X8F5YhUfmNzswsQmoCaub34nMyN5nXcN8=");
}

/* A fresh salt each time, the password nowhere in it, no count of 0, and
 * no verifier cut short. */
Test(keeper, a_verifier_has_its_own_salt_and_is_never_cut)
{
	const char *pw = "00112233445566778899aabbccddeeff";
	char a[KEEPER_VERIFIER_MAX], b[KEEPER_VERIFIER_MAX], small[64];
	unsigned char salt[16] = { 0 };

	cr_assert_eq(keeper_verifier(pw, a, sizeof(a)), 0);
	cr_assert_eq(keeper_verifier(pw, b, sizeof(b)), 0);
	cr_assert_str_neq(a, b);
	cr_assert_eq(strncmp(a, "SCRAM-SHA-256$1:", 16), 0, "%s", a);
	cr_assert_null(strstr(a, pw));
	cr_assert_eq(keeper_verifier_salted(pw, salt, sizeof(salt), 0, a,
	    sizeof(a)), -1, "no iterations");
	cr_assert_str_eq(a, "");
	cr_assert_eq(keeper_verifier(pw, small, sizeof(small)), -1);
	cr_assert_str_eq(small, "");
}

/* ---- spare_wait: a data spare's one message from the spawner ---------- */

/*
 * Each case runs in a child of its own (Criterion's own descriptors are
 * not ours to move): it answers 0 when all held, else the number of the
 * first check that failed. *chan is the spawner's end; the child's stdin
 * is the spare's, fd 3 closed.
 */
typedef int (*spare_case)(int chan);
static size_t bad_k;	/* refused()'s message */

static int
memfd_with(const char *text)
{
	int fd = memfd_create("t", MFD_CLOEXEC);

	if (fd != -1 && write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		return -1;
	return fd;
}

static void
spare_run(spare_case fn)
{
	int sv[2], status;
	pid_t pid;

	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		if (dup2(sv[1], STDIN_FILENO) != 0)
			_exit(100);
		close(sv[1]);
		(void)close(3);
		_exit(fn(sv[0]));
	}
	close(sv[0]);
	close(sv[1]);
	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status), "the case died");
	cr_assert_eq(WEXITSTATUS(status), 0, "check %d failed (case %zu)",
	    WEXITSTATUS(status), bad_k);
}

/* The job and fd 3's come to stdin and fd 3, nothing else stays open. */
static int
job_and_result(int chan)
{
	int fds[2], rp[2];
	char go = JOB_SPARE_GO, buf[8] = { 0 };

	if ((fds[0] = memfd_with("the job")) == -1 || pipe(rp) == -1)
		return 1;
	fds[1] = rp[1];
	if (send_fds(chan, &go, 1, fds, 2) != 1)
		return 2;
	close(fds[0]);
	close(rp[1]);
	if (spare_wait() != 0)
		return 3;
	if (pread(STDIN_FILENO, buf, 7, 0) != 7 || strcmp(buf, "the job"))
		return 4;
	if (write(3, "R", 1) != 1)
		return 5;
	close(3);
	if (read(rp[0], buf, sizeof(buf)) != 1)
		return 6;	/* fd 3 is the result's */
	if (read(rp[0], buf, sizeof(buf)) != 0)
		return 7;	/* no other copy of it open */
	return 0;
}

Test(spare, the_job_and_its_result_socket_are_put_in_place)
{
	spare_run(job_and_result);
}

/* A job without fd 3's: whatever was at 3 is closed. */
static int
job_alone(int chan)
{
	char go = JOB_SPARE_GO;
	int fd = memfd_with("x");

	if (fd == -1 || dup2(fd, 3) != 3 || send_fds(chan, &go, 1, &fd, 1) != 1)
		return 1;
	if (spare_wait() != 0)
		return 2;
	return fcntl(3, F_GETFD) == -1 ? 0 : 3;
}

Test(spare, a_job_alone_leaves_no_fd_3)
{
	spare_run(job_alone);
}

/* The spawner gone: a quiet end. */
static int
closed(int chan)
{
	close(chan);
	return spare_wait() == 1 ? 0 : 1;
}

Test(spare, a_closed_channel_ends_it)
{
	spare_run(closed);
}

/* Hostile or broken messages: another byte, no descriptor, three, a
 * byte too many; each refused, and nothing of it left open. */
static const struct {
	const char	*msg;
	size_t		 len;
	int		 nfds;
} bad_msgs[] = {
	{ "x", 1, 1 },
	{ "j", 1, 0 },
	{ "j", 1, 3 },
	{ "jj", 2, 1 },
};

static int
refused(int chan)
{
	int fds[3], i, before, after;

	for (i = 0; i < 3; i++)
		if ((fds[i] = memfd_with("x")) == -1)
			return 1;
	if (send_fds(chan, bad_msgs[bad_k].msg, bad_msgs[bad_k].len, fds,
	    bad_msgs[bad_k].nfds) != (ssize_t)bad_msgs[bad_k].len)
		return 2;
	for (i = 0; i < 3; i++)
		close(fds[i]);
	before = fcntl(chan, F_DUPFD, 0);
	close(before);
	if (spare_wait() != -1)
		return 3;
	after = fcntl(chan, F_DUPFD, 0);
	close(after);
	return after == before ? 0 : 4;	/* 4: a descriptor left open */
}

Test(spare, anything_but_the_spawners_message_is_refused)
{
	for (bad_k = 0; bad_k < sizeof(bad_msgs) / sizeof(bad_msgs[0]);
	    bad_k++)
		spare_run(refused);
}

/* ---- resident_ask_valid, data_ask_valid: a resident's and a kept
 * session's asks, taken only whole and sound ------------------------- */

static struct resident_ask
good_ask(void)
{
	struct resident_ask a = { .magic = RESIDENT_MAGIC,
	    .ask = { .op = DATA_RESET, .max = 4 } };

	return a;
}

Test(resident, a_sound_ask_passes)
{
	struct resident_ask a = good_ask();

	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), 0, "back to the "
	    "hand-out state");
	strcpy(a.ask.snapshot, "before-migration_2.x");
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), 0, "to a snapshot");
	a.ask.op = DATA_SNAPSHOT;
	a.ask.max = SBX_MAX_SNAPSHOTS;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), 0, "a snapshot");
}

Test(resident, a_short_long_or_foreign_ask_is_refused)
{
	struct resident_ask a = good_ask();

	cr_assert_eq(resident_ask_valid(&a, sizeof(a) - 1), -1, "short");
	cr_assert_eq(resident_ask_valid(&a, sizeof(a) + 1), -1, "long");
	cr_assert_eq(resident_ask_valid(&a, 0), -1, "empty");
	a.magic = JOB_MAGIC;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "a job's magic");
}

Test(resident, what_no_data_job_asks_is_refused)
{
	struct resident_ask a = good_ask();

	a.ask.op = 0;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "op 0");
	a.ask.op = DATA_SNAPSHOT + 1;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "op past the last");
	a = good_ask();
	a.ask.max = SBX_MAX_SNAPSHOTS + 1;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "max too high");
	a = good_ask();
	a.ask.op = DATA_SNAPSHOT;
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "a nameless "
	    "snapshot");
	a = good_ask();
	memset(a.ask.snapshot, 'a', sizeof(a.ask.snapshot));
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "not ended");
	a = good_ask();
	strcpy(a.ask.snapshot, "../../etc");
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "not a slug");
	strcpy(a.ask.snapshot, "x'; DROP DATABASE sbx; --");
	cr_assert_eq(resident_ask_valid(&a, sizeof(a)), -1, "SQL");
}

/* A kept session's ask: the same rules, and its bytes past the name's
 * end are nobody's concern. */
Test(resident, a_kept_sessions_ask_is_checked_alike)
{
	struct data_ask d = { .op = DATA_RESET, .max = 2 };

	cr_assert_eq(data_ask_valid(&d), 0);
	memset(d.snapshot, 'a', sizeof(d.snapshot));
	cr_assert_eq(data_ask_valid(&d), -1, "not ended within its field");
	strcpy(d.snapshot, "s1");
	cr_assert_eq(data_ask_valid(&d), 0, "bytes past its end: ignored");
	d.op = 7;
	cr_assert_eq(data_ask_valid(&d), -1, "an unknown op");
	d.op = DATA_SNAPSHOT;
	d.snapshot[0] = '\0';
	cr_assert_eq(data_ask_valid(&d), -1, "a snapshot with no name");
}

/*
 * A real resident_body in a child of its own, with a sandbox of no
 * service sbx can reset: each sound ask is answered on its result pipe
 * ("no service ...") and its end's pipe is closed; a hostile message
 * ends it (exit 1) and the monitor's closing the channel ends it quietly
 * (exit 0).
 */
static pid_t
resident_child(int *chan)
{
	static struct sbx_config cfg;
	static struct job_data j;
	int sv[2];
	pid_t pid;

	cfg.runtime_timeout = 5;
	memset(&j, 0, sizeof(j));
	j.key.uid = 1000;
	strcpy(j.key.agent, "agent");
	strcpy(j.project, "demo");
	j.op = DATA_RESET;
	cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		close(sv[0]);
		_exit(resident_body(sv[1], &cfg, &j, sizeof(j)));
	}
	close(sv[1]);
	*chan = sv[0];
	return pid;
}

static int
exit_of(pid_t pid)
{
	int status;

	cr_assert_eq(waitpid(pid, &status, 0), pid);
	cr_assert(WIFEXITED(status));
	return WEXITSTATUS(status);
}

Test(resident, each_ask_is_answered_and_its_end_told)
{
	struct resident_ask a = good_ask();
	struct data_result r;
	int chan, rp[2], ep[2], fds[2], k;
	char b;
	pid_t pid = resident_child(&chan);

	for (k = 0; k < 2; k++) {
		cr_assert_eq(pipe(rp), 0);
		cr_assert_eq(pipe(ep), 0);
		fds[0] = rp[1];
		fds[1] = ep[1];
		cr_assert_eq(send_fds(chan, &a, sizeof(a), fds, 2),
		    (ssize_t)sizeof(a));
		close(rp[1]);
		close(ep[1]);
		cr_assert_eq(read(rp[0], &r, sizeof(r)), (ssize_t)sizeof(r));
		cr_assert_eq(r.code, SBX_E_BAD_REQUEST);
		cr_assert_not_null(strstr(r.message, "no service"));
		cr_assert_eq(read(ep[0], &b, 1), 0, "the job's end: EOF");
		close(rp[0]);
		close(ep[0]);
	}
	close(chan);
	cr_assert_eq(exit_of(pid), 0, "the channel closed: a quiet end");
}

Test(resident, a_hostile_message_ends_it)
{
	struct resident_ask a = good_ask();
	int chan, fds[2], sv[2];
	pid_t pid;

	/* Pipes are what an ask carries: a socket instead is refused. */
	pid = resident_child(&chan);
	cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	fds[0] = sv[0];
	fds[1] = sv[1];
	cr_assert_eq(send_fds(chan, &a, sizeof(a), fds, 2), (ssize_t)sizeof(a));
	cr_assert_eq(exit_of(pid), 1, "sockets for pipes");
	close(chan);
	/* One pipe, not two. */
	pid = resident_child(&chan);
	cr_assert_eq(pipe(sv), 0);
	cr_assert_eq(send_fds(chan, &a, sizeof(a), sv, 1), (ssize_t)sizeof(a));
	cr_assert_eq(exit_of(pid), 1, "one descriptor");
	close(chan);
	/* An ask with a bad name, whole and with its pipes. */
	pid = resident_child(&chan);
	strcpy(a.ask.snapshot, "no/slug");
	fds[0] = sv[0];
	fds[1] = sv[1];
	cr_assert_eq(send_fds(chan, &a, sizeof(a), fds, 2), (ssize_t)sizeof(a));
	cr_assert_eq(exit_of(pid), 1, "a bad name");
	close(chan);
	/* A short one. */
	pid = resident_child(&chan);
	cr_assert_eq(send_fds(chan, &a, 8, fds, 2), 8);
	cr_assert_eq(exit_of(pid), 1, "short");
	close(chan);
}
