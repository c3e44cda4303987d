"""burst.py - many new agents of one uid at once, and cache hits timed
one by one; for bench/burst.sh and tests/stress/burst.sh.

  burst.py burst SOCK N PREFIX PROJECT SERVICE...
      N requests for the fresh agents PREFIX0..PREFIX{N-1}, each on its
      own thread, let go together (a barrier); busy is not retried. One
      line per request as it ends, then the summary:
        req I ms MS ok|busy|CODE [retry_after_ms]
        burst n N ok K busy B other E wall_ms W p50 P p95 P p99 P
      (percentiles by nearest rank over every request's latency, each
      from its own send to its reply).
  burst.py hits SOCK AGENT PROJECT MIN STOPFILE SERVICE...
      cache hits for AGENT (which must hold its sandbox), one after the
      other, until STOPFILE exists and at least MIN were made:
        hits n N errors E p50 P p99 P max M
"""
import os
import sys
import threading
import time

from sbx_client import BusyError, Client, SbxError


def pct(v, p):
    """Nearest rank: the smallest value with p% of them at or below."""
    if not v:
        return 0.0
    s = sorted(v)
    k = max(1, -(-len(s) * p // 100))
    return s[int(k) - 1]


def burst(sock, n, prefix, project, services):
    cl = Client(sock, timeout=600, connect_timeout=30, retry_busy=False)
    gate = threading.Barrier(n + 1)
    res = [None] * n
    out = threading.Lock()

    def one(i):
        gate.wait()
        t = time.monotonic()
        try:
            cl.ensure_sandbox(f"{prefix}{i}", project, services)
            r = ("ok", "")
        except BusyError as e:
            r = ("busy", str(e.retry_after_ms))
        except SbxError as e:
            r = (e.code, repr(e.message)[:120])
        ms = (time.monotonic() - t) * 1000
        res[i] = (ms, r[0])
        with out:
            print(f"req {i} ms {ms:.1f} {r[0]} {r[1]}".rstrip(), flush=True)

    th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in th:
        t.start()
    t0 = time.monotonic()
    gate.wait()
    for t in th:
        t.join()
    wall = (time.monotonic() - t0) * 1000
    lat = [r[0] for r in res]
    ok = sum(r[1] == "ok" for r in res)
    busy = sum(r[1] == "busy" for r in res)
    print(f"burst n {n} ok {ok} busy {busy} other {n - ok - busy} "
          f"wall_ms {wall:.1f} p50 {pct(lat, 50):.1f} p95 {pct(lat, 95):.1f} "
          f"p99 {pct(lat, 99):.1f}", flush=True)
    return 0


def hits(sock, agent, project, least, stop, services):
    cl = Client(sock, timeout=30, retry_busy=False)
    lat, errors = [], 0
    while len(lat) < least or not os.path.exists(stop):
        t = time.monotonic()
        try:
            cl.ensure_sandbox(agent, project, services)
        except SbxError as e:
            errors += 1
            print(f"hit error: {e}", file=sys.stderr, flush=True)
        lat.append((time.monotonic() - t) * 1000)
        if len(lat) > 200000:
            break
    print(f"hits n {len(lat)} errors {errors} p50 {pct(lat, 50):.1f} "
          f"p99 {pct(lat, 99):.1f} max {max(lat):.1f}", flush=True)
    return 0


def main(a):
    if len(a) >= 6 and a[1] == "burst":
        return burst(a[2], int(a[3]), a[4], a[5], a[6:])
    if len(a) >= 7 and a[1] == "hits":
        return hits(a[2], a[3], a[4], int(a[5]), a[6], a[7:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
