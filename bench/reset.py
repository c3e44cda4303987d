#!/usr/bin/env python3
"""reset.py SOCKET PROJECT SEED N - figure 8 of bench/run.sh: a reset's and
a snapshot's round trip against the pgtestdb method by hand, in the same
sandbox and with the same seed (bench/README.md).

The anchor is what pgtestdb does for a clean database, over one open
connection as the agent's own role: DROP DATABASE ... WITH (FORCE), then
CREATE DATABASE ... TEMPLATE the seeded database (postgres's default
strategy). The sbx side is the Python client's reset() and snapshot()
as an agent calls them: socket, request, reply. The three are measured
interleaved, N times each, so that the host's drift is shared. A fourth
line times `psql -f SEED` into an empty database of the same server: the
anchor for the seed's own application (the worker's log line).

Prints "name p50_us p99_us" lines.
"""
import os
import subprocess
import sys
import time

import psycopg2

from sbx_client import Client


def pct(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(len(v) * p / 100))]


def connect(pg):
    conn = psycopg2.connect(host=pg.host, port=pg.port, user=pg.user,
                            password=pg.password, dbname="postgres")
    conn.autocommit = True
    return conn.cursor()


def still_open(cur, pg):
    """The anchor's one connection, open again if a reset ended it
    (outside the timing: pgtestdb's connection is never ended)."""
    try:
        cur.execute("SELECT 1")
        return cur
    except psycopg2.Error:
        return connect(pg)


def quiet(cur):
    """Until no data job holds the sandbox's lock: the tidy-up after a
    reply (dropping the old database, copying the next one ahead) is
    done, as it is when an agent's test run comes between two resets."""
    for _ in range(5000):
        cur.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        if cur.fetchone()[0] == 0:
            return
        time.sleep(0.002)
    sys.exit("reset.py: a data job held the sandbox's lock for 10 s")


def template(cur, database):
    """bench_tmpl, the anchor's template: the agent's database as handed
    out, copied once (again if a reset took it), outside the timing."""
    cur.execute("SELECT 1 FROM pg_database WHERE datname = 'bench_tmpl'")
    if cur.fetchone() is None:
        cur.execute("CREATE DATABASE bench_tmpl TEMPLATE %s" % database)


def main():
    sock, project, seed, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    c = Client(sock, timeout=120)
    sb = c.ensure_sandbox("bench-reset", project, ["postgres"])
    pg = sb.services["postgres"]
    cur = connect(pg)
    # The seeded hand-out state, as the sandbox keeps it for its resets
    # (sbx_origin, which is sbx's, not the agent's): the anchor's own copy
    # of it, made from the agent's database as handed out.
    cur.execute("SELECT 1 FROM pg_database WHERE datname = 'sbx_origin'")
    if cur.fetchone() is None:
        sys.exit("reset.py: the sandbox has no sbx_origin: is the project seeded?")
    anchor, reset, snap = [], [], []
    for i in range(n):
        cur = still_open(cur, pg)
        template(cur, pg.database)
        quiet(cur)
        t = time.perf_counter_ns()
        cur.execute("DROP DATABASE IF EXISTS bench_copy WITH (FORCE)")
        cur.execute("CREATE DATABASE bench_copy TEMPLATE bench_tmpl")
        anchor.append((time.perf_counter_ns() - t) // 1000)
        quiet(cur)
        t = time.perf_counter_ns()
        c.reset("bench-reset")
        reset.append((time.perf_counter_ns() - t) // 1000)
        cur = still_open(cur, pg)
        quiet(cur)
        t = time.perf_counter_ns()
        c.snapshot("bench-reset", "bench")
        snap.append((time.perf_counter_ns() - t) // 1000)
        cur = still_open(cur, pg)
    cur = still_open(cur, pg)
    cur.execute("DROP DATABASE IF EXISTS bench_copy WITH (FORCE)")
    cur.execute("DROP DATABASE IF EXISTS bench_tmpl WITH (FORCE)")
    for name, v in (("anchor", anchor), ("reset", reset), ("snapshot", snap)):
        print(name, pct(v, 50), pct(v, 99))
    # psql -f of the seed into an empty database of the same server.
    cur.execute("DROP DATABASE IF EXISTS bench_psql WITH (FORCE)")
    cur.execute("CREATE DATABASE bench_psql")
    env = dict(os.environ, PGPASSWORD=pg.password)
    t = time.perf_counter_ns()
    subprocess.run(["psql", "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", pg.host,
                    "-p", str(pg.port), "-U", pg.user, "-d", "bench_psql",
                    "-f", seed], env=env, check=True, stdout=subprocess.DEVNULL)
    us = (time.perf_counter_ns() - t) // 1000
    print("psql_f", us, us)
    cur.execute("DROP DATABASE bench_psql WITH (FORCE)")
    c.release("bench-reset")


if __name__ == "__main__":
    main()
