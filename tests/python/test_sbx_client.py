"""sbx_client against a real sbx-monitor, broker and podman (run.sh).

The monitor's projects (tests/integration/lib.sh, write_conf): demo
(postgres redis), cache-only (redis), none (no services). Every service
is on transport unix, so every credential here goes through a socket in
a directory only its uid can enter. run.sh runs these tests as an
ordinary user, and those marked ``root`` (status's view of every uid)
as root.
"""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from typing import Iterator

import psycopg2
import pytest
import redis

import sbx_client
from sbx_client import aio
from sbx_client.types import parse_service


def pg_answer(dsn: str) -> int:
    conn = psycopg2.connect(dsn, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute("select 40 + 2")
            return cur.fetchone()[0]
    finally:
        conn.close()


def redis_roundtrip(r: "redis.Redis[bytes]", value: str) -> bytes:
    try:
        r.set("sbx-py", value)
        return r.get("sbx-py")
    finally:
        r.close()


@pytest.fixture
def demo(client: sbx_client.Client) -> Iterator[sbx_client.Sandbox]:
    sb = client.ensure_sandbox("py-demo", "demo", ["postgres"])
    yield sb
    client.release("py-demo")


# ---- the spawn-time probe and ping ----

def test_ping_answers_the_version(client: sbx_client.Client) -> None:
    v = client.ping()
    assert v.count(".") == 2 and all(p.isdigit() for p in v.split("."))


def test_available_names_the_opted_in_set(client: sbx_client.Client) -> None:
    assert sorted(client.available("demo")) == ["postgres", "redis"]
    assert client.available("cache-only") == ["redis"]


def test_available_is_empty_never_an_error(client: sbx_client.Client) -> None:
    assert client.available("none") == []
    assert client.available("no-such-project") == []


# ---- the on-demand provision ----

def test_ensure_sandbox_gives_the_whole_set_over_sockets(
        demo: sbx_client.Sandbox) -> None:
    assert set(demo.services) == {"postgres", "redis"}
    pg, rd = demo["postgres"], demo["redis"]
    assert isinstance(pg, sbx_client.PostgresService)
    assert isinstance(rd, sbx_client.RedisService)
    assert pg.socket and os.path.basename(pg.socket) == ".s.PGSQL.5432"
    assert rd.socket and pg.tcp is None and rd.tcp is None
    assert demo.postgres is pg and demo.redis is rd
    assert pg.password not in repr(demo)


def test_postgres_dsn_and_url_connect(demo: sbx_client.Sandbox) -> None:
    pg = demo["postgres"]
    assert pg_answer(pg.dsn()) == 42
    assert pg_answer(pg.url()) == 42
    assert pg.url() == (f"postgresql://sbx:{pg.password}@localhost/sbx"
                        f"?host={os.path.dirname(pg.socket)}&port=5432")


def test_redis_url_and_kwargs_connect(demo: sbx_client.Sandbox) -> None:
    rd = demo["redis"]
    assert rd.url().startswith("unix://default:")
    assert redis_roundtrip(redis.Redis.from_url(rd.url()), "by-url") == \
        b"by-url"
    assert redis_roundtrip(redis.Redis(**rd.connect_kwargs()),
                           "by-kwargs") == b"by-kwargs"


def test_wrong_password_is_refused(demo: sbx_client.Sandbox) -> None:
    """The credentials are what admits us: a changed password fails."""
    pg = demo["postgres"]
    d, port = pg.socket_dir or ("", 0)
    with pytest.raises(psycopg2.OperationalError):
        psycopg2.connect(host=d, port=port, user=pg.user, dbname=pg.database,
                         password=pg.password + "x", connect_timeout=5)


def test_a_hit_returns_the_same_credentials(
        client: sbx_client.Client, demo: sbx_client.Sandbox) -> None:
    again = client.ensure_sandbox("py-demo", "demo", ["postgres", "redis"])
    assert again == demo
    assert again["postgres"].password == demo["postgres"].password
    assert pg_answer(again["postgres"].dsn()) == 42


def test_env_has_the_aliases(demo: sbx_client.Sandbox) -> None:
    env = demo.env()
    assert env["DATABASE_URL"] == env["POSTGRES_URL"] == demo["postgres"].url()
    assert env["REDIS_URL"] == demo["redis"].url()


@pytest.mark.root
def test_status_as_root_lists_it_without_passwords(
        client: sbx_client.Client, demo: sbx_client.Sandbox) -> None:
    rows = [r for r in client.status() if r.agent == "py-demo"]
    assert len(rows) == 1
    r = rows[0]
    assert (r.uid, r.project, sorted(r.services)) == \
        (0, "demo", ["postgres", "redis"])
    assert r.age_s >= 0 and r.idle_s >= 0
    assert demo["postgres"].password not in repr(client.status())


def test_release_tears_it_down(client: sbx_client.Client) -> None:
    sb = client.ensure_sandbox("py-rel", "cache-only")
    assert client.release("py-rel") is True
    assert client.release("py-rel") is False
    with pytest.raises(redis.ConnectionError):
        redis.Redis(**sb["redis"].connect_kwargs()).ping()


@pytest.mark.root
def test_status_by_another_uid_lists_its_own_only(sock: str) -> None:
    """root holds a sandbox; nobody's status lists none of root's."""
    sbx_client.ensure_sandbox("py-root-own", "cache-only", socket=sock)
    code = ("import json, sbx_client\n"
            f"st = sbx_client.status(socket={sock!r})\n"
            "print(json.dumps(sorted({r.uid for r in st})))\n")
    try:
        out = subprocess.run(["runuser", "-u", "nobody", "--",
                              sys.executable, "-c", code],
                             capture_output=True, text=True, timeout=60,
                             check=False)
        assert out.returncode == 0, out.stderr
        # root's own sandbox is there for root: were status not
        # filtered by the caller's uid, nobody would see uid 0.
        assert set(json.loads(out.stdout)) <= {65534}, out.stdout
    finally:
        sbx_client.release("py-root-own", socket=sock)


# ---- refusals as exceptions ----

def test_unknown_project_raises_its_code(client: sbx_client.Client) -> None:
    with pytest.raises(sbx_client.UnknownProjectError) as e:
        client.ensure_sandbox("py-err", "no-such-project", ["postgres"])
    assert e.value.code == "unknown_project"
    assert isinstance(e.value, sbx_client.ServerError)
    assert e.value.message


def test_not_opted_in_raises_its_code(client: sbx_client.Client) -> None:
    with pytest.raises(sbx_client.NotOptedInError) as e:
        client.ensure_sandbox("py-err", "cache-only", ["postgres"])
    assert e.value.code == "not_opted_in"
    assert client.release("py-err") is False   # nothing was made


def test_bad_slug_is_bad_request(client: sbx_client.Client) -> None:
    with pytest.raises(sbx_client.BadRequestError) as e:
        client.ensure_sandbox("Not A Slug", "demo")
    assert e.value.code == "bad_request"


def test_no_socket_is_a_connect_error(tmp_path: "os.PathLike[str]") -> None:
    c = sbx_client.Client(os.path.join(str(tmp_path), "none.sock"))
    with pytest.raises(sbx_client.ConnectError) as e:
        c.ping()
    assert e.value.code == "connect"


# ---- timeouts, against a socket of the test's own ----

def test_silent_server_times_out(silent_listener: str) -> None:
    c = sbx_client.Client(silent_listener, timeout=0.5)
    t0 = time.monotonic()
    with pytest.raises(sbx_client.ClientTimeoutError) as e:
        c.ensure_sandbox("py-t", "demo")
    took = time.monotonic() - t0
    assert e.value.phase == "answer" and e.value.code == "timeout"
    assert isinstance(e.value, TimeoutError)
    assert 0.5 <= took < 5


def test_full_backlog_is_a_connect_timeout(tmp_path: "os.PathLike[str]") -> None:
    path = os.path.join(str(tmp_path), "full.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(0)
    queued = socket.socket(socket.AF_UNIX)
    queued.connect(path)           # fills the backlog of 0 (+1)
    try:
        c = sbx_client.Client(path, connect_timeout=0.3)
        t0 = time.monotonic()
        with pytest.raises(sbx_client.ClientTimeoutError) as e:
            c.ping()
        assert e.value.phase == "connect"
        assert 0.3 <= time.monotonic() - t0 < 5
    finally:
        queued.close()
        srv.close()


# ---- the asyncio flavour ----

def test_asyncio_flavour(sock: str) -> None:
    async def main() -> None:
        c = aio.AsyncClient(sock)
        assert await c.ping() == sbx_client.ping(socket=sock)
        assert await aio.available("cache-only", socket=sock) == ["redis"]
        # two at once for one agent: one provision, one answer
        a, b = await asyncio.gather(
            c.ensure_sandbox("py-aio", "cache-only", ["redis"]),
            aio.ensure_sandbox("py-aio", "cache-only", socket=sock))
        assert a == b
        assert redis_roundtrip(redis.Redis.from_url(a["redis"].url()),
                               "aio") == b"aio"
        with pytest.raises(sbx_client.NotOptedInError):
            await c.ensure_sandbox("py-aio", "cache-only", ["postgres"])
        with pytest.raises(sbx_client.UnknownProjectError):
            await c.ensure_sandbox("py-aio2", "no-such-project")
        assert await c.release("py-aio") is True
        assert await aio.release("py-aio", socket=sock) is False

    asyncio.run(main())


def test_asyncio_silent_server_times_out(silent_listener: str) -> None:
    async def main() -> None:
        c = aio.AsyncClient(silent_listener, timeout=0.5)
        with pytest.raises(sbx_client.ClientTimeoutError) as e:
            await c.ping()
        assert e.value.phase == "answer"

    t0 = time.monotonic()
    asyncio.run(main())
    assert 0.5 <= time.monotonic() - t0 < 5


# ---- the reply shapes of every transport (docs/protocol.md) ----

def test_tcp_shapes() -> None:
    pg = parse_service("postgres", {"host": "127.0.0.1", "port": 40123,
                                    "user": "sbx", "password": "p w",
                                    "database": "sbx"})
    assert pg.url() == "postgresql://sbx:p%20w@127.0.0.1:40123/sbx"
    assert pg.dsn() == ("host=127.0.0.1 port=40123 user=sbx "
                        "password='p w' dbname=sbx")
    rd = parse_service("redis", {"host": "127.0.0.1", "port": 40124,
                                 "user": "default", "password": "pw",
                                 "database": "0"})
    assert rd.url() == "redis://default:pw@127.0.0.1:40124/0"
    assert rd.connect_kwargs() == {"host": "127.0.0.1", "port": 40124,
                                   "username": "default", "password": "pw",
                                   "db": 0}


def test_unix_and_both_shapes() -> None:
    d = "/run/sbx/1000/a1/postgres"
    unix = {"socket": d + "/.s.PGSQL.5432", "host": d, "port": 5432,
            "user": "sbx", "password": "pw", "database": "sbx"}
    pg = parse_service("postgres", unix)
    assert pg.url() == ("postgresql://sbx:pw@localhost/sbx"
                        "?host=/run/sbx/1000/a1/postgres&port=5432")
    assert "%" not in pg.url()
    assert pg.dsn() == f"host={d} port=5432 user=sbx password=pw dbname=sbx"
    with pytest.raises(ValueError):
        pg.url(tcp=True)
    # both: the URL takes the port, dsn() and connect_kwargs() the socket
    pg = parse_service("postgres", dict(unix, host="127.0.0.1",
                                        port=40123))
    assert pg.url() == pg.url(tcp=True) == \
        "postgresql://sbx:pw@127.0.0.1:40123/sbx"
    assert pg.dsn() == f"host={d} port=5432 user=sbx password=pw dbname=sbx"
    assert pg.dsn(tcp=True) == ("host=127.0.0.1 port=40123 user=sbx "
                                "password=pw dbname=sbx")
    rs = "/run/sbx/1000/a1/redis/redis.sock"
    rd = parse_service("redis", {"socket": rs, "user": "default",
                                 "password": "pw", "database": "0"})
    assert rd.url() == rd.dsn() == \
        "unix://default:pw@/run/sbx/1000/a1/redis/redis.sock?db=0"
    with pytest.raises(ValueError):
        rd.url(tcp=True)
    rd = parse_service("redis", {"socket": rs, "host": "127.0.0.1",
                                 "port": 40124, "user": "default",
                                 "password": "pw", "database": "0"})
    assert rd.url() == rd.url(tcp=True) == \
        "redis://default:pw@127.0.0.1:40124/0"
    assert rd.connect_kwargs()["unix_socket_path"] == rs
    sb = sbx_client.Sandbox("a1", "p", {"postgres": pg, "redis": rd})
    assert sb.env() == {
        "POSTGRES_URL": "postgresql://sbx:pw@127.0.0.1:40123/sbx",
        "DATABASE_URL": "postgresql://sbx:pw@127.0.0.1:40123/sbx",
        "REDIS_URL": "redis://default:pw@127.0.0.1:40124/0"}


def test_ipv6_and_encoded_shapes() -> None:
    pg = parse_service("pg", {"host": "::1", "port": 40123, "user": "s b",
                              "password": "p@ss/w:rd", "database": "d%b"})
    assert pg.url() == "postgresql://s%20b:p%40ss%2Fw%3Ard@[::1]:40123/d%25b"
    rd = parse_service("valkey", {"host": "::1", "port": 40124,
                                  "user": "default", "password": "pw",
                                  "database": "3"})
    assert rd.url() == "redis://default:pw@[::1]:40124/3"
    # a socket directory with a byte a query cannot hold as it is
    pg = parse_service("postgres", {"socket": "/run/s bx/1/a/pg/.s.PGSQL.5433",
                                    "user": "sbx", "password": "pw",
                                    "database": "sbx"})
    assert pg.url() == ("postgresql://sbx:pw@localhost/sbx"
                        "?host=/run/s%20bx/1/a/pg&port=5433")


SOCKET_PG_URL = ("postgresql://sbx:pw@localhost/sbx"
                 "?host=/run/sbx/1000/a1/postgres&port=5432")


def test_socket_url_is_read_by_libpq_and_configparser() -> None:
    """What the socket-only postgres URL is for: libpq (psycopg2) takes
    the query's host, the socket's directory, over localhost; with no
    '%' configparser's interpolation (alembic.ini's sqlalchemy.url)
    leaves it as it is."""
    import configparser
    import psycopg2.extensions
    assert psycopg2.extensions.parse_dsn(SOCKET_PG_URL) == {
        "user": "sbx", "password": "pw", "dbname": "sbx",
        "host": "/run/sbx/1000/a1/postgres", "port": "5432"}
    cp = configparser.ConfigParser()
    cp.read_string(f"[alembic]\nsqlalchemy.url = {SOCKET_PG_URL}\n")
    assert cp["alembic"]["sqlalchemy.url"] == SOCKET_PG_URL


def test_socket_url_is_read_by_sqlalchemy() -> None:
    sa = pytest.importorskip("sqlalchemy")
    u = sa.engine.make_url(SOCKET_PG_URL)
    assert (u.host, u.username, u.password, u.database) == \
        ("localhost", "sbx", "pw", "sbx")
    assert dict(u.query) == {"host": "/run/sbx/1000/a1/postgres",
                             "port": "5432"}


def test_socket_url_is_read_by_whatwg_url() -> None:
    """Node's ``new URL()``, which node-postgres's parser starts from,
    refuses credentials without a host: hence localhost."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        pytest.skip("no node")
    js = ("const u = new URL(process.argv[1]); console.log(JSON.stringify("
          "[u.protocol, u.username, u.password, u.hostname, u.pathname, "
          "u.searchParams.get('host'), u.searchParams.get('port')]))")
    p = subprocess.run([node, "-e", js, SOCKET_PG_URL], capture_output=True,
                       text=True, timeout=60, check=False)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout) == ["postgresql:", "sbx", "pw", "localhost",
                                    "/sbx", "/run/sbx/1000/a1/postgres",
                                    "5432"]
    p = subprocess.run([node, "-e", js, "postgresql://sbx:pw@/sbx?host=/x"],
                       capture_output=True, text=True, timeout=60,
                       check=False)
    assert p.returncode != 0


def test_malformed_entries_are_protocol_errors() -> None:
    with pytest.raises(sbx_client.ProtocolError):
        parse_service("redis", {"user": "u", "password": "p",
                                "database": "0"})
    with pytest.raises(sbx_client.ProtocolError):
        parse_service("redis", {"socket": "/s", "user": "u",
                                "database": "0"})


# ---- the README's orchestrator example, as written ----

def test_readme_orchestrator_example(sock: str,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    readme = os.environ.get("SBX_TEST_README", "")
    with open(readme, encoding="utf-8") as f:
        blocks = f.read().split("```python\n")[1:]
    code = blocks[-1].split("```")[0]
    assert "class AgentOrchestrator" in code
    ns: dict = {}
    exec(compile(code, readme, "exec"), ns)
    orch = ns["AgentOrchestrator"]()

    async def main(gone: str) -> None:
        monkeypatch.setenv("SBX_SOCKET", sock)
        assert sorted(await orch._sandbox_available_services("demo")) == \
            ["postgres", "redis"]
        env = await orch.ensure_sandbox("py-readme", "demo", ["postgres"])
        assert pg_answer(env["DATABASE_URL"]) == 42
        assert redis_roundtrip(redis.Redis.from_url(env["REDIS_URL"]),
                               "readme") == b"readme"
        await orch.on_agent_exit("py-readme")
        # sbx unreachable: the probe degrades to no sandbox
        monkeypatch.setenv("SBX_SOCKET", gone)
        assert await orch._sandbox_available_services("demo") == []

    with tempfile.TemporaryDirectory() as d:
        asyncio.run(main(os.path.join(d, "gone.sock")))
    assert sbx_client.release("py-readme", socket=sock) is False


def test_every_protocol_code_has_its_exception() -> None:
    from sbx_client import _proto
    codes = ["bad_request", "disabled", "unknown_project", "not_opted_in",
             "forbidden", "conflict", "runtime_failed", "timeout", "busy",
             "internal", "no_sandbox", "unknown_snapshot", "seed_failed"]
    # every code of the contract's "Wire protocol"
    for code in codes:
        with pytest.raises(sbx_client.ServerError) as e:
            _proto.checked({"ok": False, "error": code, "message": "m."})
        assert e.value.code == code and type(e.value) is not \
            sbx_client.ServerError and str(e.value) == f"{code}: m."
    assert len({type(sbx_client.errors.server_error(c, "")) for c in codes}) \
        == len(codes)
    with pytest.raises(sbx_client.ServerError) as e:
        _proto.checked({"ok": False, "error": "new_code"})
    assert e.value.code == "new_code"
    with pytest.raises(sbx_client.ProtocolError):
        _proto.checked({"error": "busy"})


def test_an_answer_before_the_request_is_read(tmp_path: "os.PathLike[str]") -> None:
    """A server that answers busy at once and closes (as the broker does
    at max_children): the client reads that answer, whatever its send
    met."""
    import threading

    import msgpack

    path = os.path.join(str(tmp_path), "busy.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)

    def serve(n: int) -> None:
        for _ in range(n):
            c, _a = srv.accept()
            c.sendall(msgpack.packb({"ok": False, "error": "busy",
                                     "message": "try later."}))
            c.close()

    t = threading.Thread(target=serve, args=(2,), daemon=True)
    t.start()
    try:
        with pytest.raises(sbx_client.BusyError) as e:
            sbx_client.Client(path, timeout=5,
                              retry_busy=False).ensure_sandbox("a", "b")
        assert e.value.message == "try later."
        assert e.value.retry_after_ms is None

        async def main() -> None:
            with pytest.raises(sbx_client.BusyError):
                await aio.AsyncClient(path, timeout=5,
                                      retry_busy=False).release("a")

        asyncio.run(main())
        t.join(5)
        assert not t.is_alive()
    finally:
        srv.close()


def test_a_refusal_timeout_is_the_servers_not_the_clients(
        tmp_path: "os.PathLike[str]") -> None:
    """{ok: false, error: timeout} is ServerTimeoutError (a TimeoutError
    as well), never taken for the client's own ClientTimeoutError."""
    import threading

    import msgpack

    path = os.path.join(str(tmp_path), "late.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    srv.listen(4)

    def serve(n: int) -> None:
        for _ in range(n):
            c, _a = srv.accept()
            c.recv(65536)
            c.sendall(msgpack.packb({"ok": False, "error": "timeout",
                                     "message": "too slow."}))
            c.close()

    t = threading.Thread(target=serve, args=(2,), daemon=True)
    t.start()
    try:
        with pytest.raises(sbx_client.ServerTimeoutError) as e:
            sbx_client.Client(path, timeout=5).ping()
        assert not isinstance(e.value, sbx_client.ClientTimeoutError)
        assert isinstance(e.value, TimeoutError)

        async def main() -> None:
            with pytest.raises(sbx_client.ServerTimeoutError):
                await aio.AsyncClient(path, timeout=5).ping()

        asyncio.run(main())
        t.join(5)
        assert not t.is_alive()
    finally:
        srv.close()
