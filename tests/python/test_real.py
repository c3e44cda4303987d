"""The context managers and the pytest plugin against the real monitor
(run.sh), as the ordinary user run.sh runs this file as: the sandboxes
are that uid's, in directories only it can enter."""
from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import psycopg2
import pytest
import redis

import sbx_client
from sbx_client import aio
from sbx_client.pytest_plugin import agent_slug


def pg_answer(url: str) -> int:
    conn = psycopg2.connect(url, connect_timeout=5)
    try:
        with conn.cursor() as cur:
            cur.execute("select 40 + 2")
            return cur.fetchone()[0]
    finally:
        conn.close()


def redis_roundtrip(url: str, value: str) -> bytes:
    r = redis.Redis.from_url(url)
    try:
        r.set("sbx-py", value)
        return r.get("sbx-py")
    finally:
        r.close()


def test_runs_as_an_ordinary_user() -> None:
    """run.sh names the uid it runs us as: not root, so every sandbox
    below is an ordinary user's."""
    assert os.getuid() != 0
    assert str(os.getuid()) == os.environ.get("SBX_TEST_UID")


def test_context_manager_releases(sock: str) -> None:
    with sbx_client.sandbox("py-cm", "demo", socket=sock) as sb:
        pw = sb["postgres"].password
        assert pg_answer(sb["postgres"].url()) == 42
        assert redis_roundtrip(sb["redis"].url(), "cm") == b"cm"
        # inside the block it is a live hit: the same credentials
        assert sbx_client.ensure_sandbox("py-cm", "demo",
                                         socket=sock)["postgres"].password \
            == pw
    # released: nothing left to release; the next request is a fresh one
    assert sbx_client.release("py-cm", socket=sock) is False
    with pytest.raises(psycopg2.OperationalError):
        pg_answer(sb["postgres"].url())
    again = sbx_client.ensure_sandbox("py-cm", "demo", socket=sock)
    try:
        assert again["postgres"].password != pw
    finally:
        assert sbx_client.release("py-cm", socket=sock) is True


def test_context_manager_releases_on_an_exception(sock: str) -> None:
    with pytest.raises(ZeroDivisionError):
        with sbx_client.sandbox("py-cm-exc", "cache-only", socket=sock) as sb:
            assert redis_roundtrip(sb["redis"].url(), "x") == b"x"
            1 / 0
    assert sbx_client.release("py-cm-exc", socket=sock) is False


def test_context_manager_refusal_leaves_nothing(sock: str) -> None:
    with pytest.raises(sbx_client.NotOptedInError):
        with sbx_client.sandbox("py-cm-no", "cache-only", ["postgres"],
                                socket=sock):
            pytest.fail("the block ran without a sandbox")
    assert sbx_client.release("py-cm-no", socket=sock) is False


def test_async_context_manager_releases(sock: str) -> None:
    async def main() -> str:
        async with aio.sandbox("py-acm", "cache-only", socket=sock) as sb:
            assert redis_roundtrip(sb["redis"].url(), "acm") == b"acm"
            assert (await aio.ensure_sandbox("py-acm", "cache-only",
                                             socket=sock)) == sb
            return sb["redis"].password

    pw = asyncio.run(main())
    assert sbx_client.release("py-acm", socket=sock) is False
    again = sbx_client.ensure_sandbox("py-acm", "cache-only", socket=sock)
    try:
        assert again["redis"].password != pw
    finally:
        sbx_client.release("py-acm", socket=sock)


INNER = '''
import json, os
import psycopg2, redis

def record(**kw):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps(kw) + "\\n")

def pg(url):
    c = psycopg2.connect(url, connect_timeout=5)
    try:
        cur = c.cursor(); cur.execute("select 40 + 2"); return cur.fetchone()[0]
    finally:
        c.close()

def test_pg_and_redis(sbx_sandbox, sbx_postgres_url, sbx_redis_url):
    assert pg(sbx_postgres_url) == 42
    r = redis.Redis.from_url(sbx_redis_url)
    assert r.set("k", "one") and r.get("k") == b"one"
    record(agent=sbx_sandbox.agent, pw=sbx_sandbox["postgres"].password)

def test_fresh_redis(sbx_sandbox, sbx_redis_url):
    # its own sandbox: the other test's key is not here
    r = redis.Redis.from_url(sbx_redis_url)
    assert r.get("k") is None
    record(agent=sbx_sandbox.agent, pw=sbx_sandbox["postgres"].password)

def test_session_1(sbx_session_sandbox, sbx_session_postgres_url,
                   sbx_session_redis_url):
    assert pg(sbx_session_postgres_url) == 42
    redis.Redis.from_url(sbx_session_redis_url).set("s", "kept")
    record(agent=sbx_session_sandbox.agent,
           pw=sbx_session_sandbox["postgres"].password)

def test_session_2(sbx_session_sandbox, sbx_session_redis_url):
    assert redis.Redis.from_url(sbx_session_redis_url).get("s") == b"kept"
    record(agent=sbx_session_sandbox.agent,
           pw=sbx_session_sandbox["postgres"].password)

def has_table(url):
    c = psycopg2.connect(url, connect_timeout=5)
    try:
        cur = c.cursor(); cur.execute("select to_regclass('public.t')")
        return cur.fetchone()[0] is not None
    finally:
        c.close()

def test_clean_1(sbx_clean, sbx_clean_postgres_url, sbx_clean_redis_url):
    assert not has_table(sbx_clean_postgres_url)
    c = psycopg2.connect(sbx_clean_postgres_url, connect_timeout=5)
    with c, c.cursor() as cur:
        cur.execute("create table t (id int)")
        cur.execute("insert into t values (1)")
    c.close()
    assert has_table(sbx_clean_postgres_url)
    r = redis.Redis.from_url(sbx_clean_redis_url)
    assert r.get("c") is None and r.set("c", "dirty")
    record(agent=sbx_clean.agent, pw=sbx_clean["postgres"].password,
           rpw=sbx_clean["redis"].password, pg=sbx_clean_postgres_url,
           redis=sbx_clean_redis_url)

def test_clean_2(sbx_clean, sbx_clean_postgres_url, sbx_clean_redis_url):
    # the same sandbox, reset: neither the table nor the key is here
    assert not has_table(sbx_clean_postgres_url)
    assert redis.Redis.from_url(sbx_clean_redis_url).get("c") is None
    record(agent=sbx_clean.agent, pw=sbx_clean["postgres"].password,
           rpw=sbx_clean["redis"].password, pg=sbx_clean_postgres_url,
           redis=sbx_clean_redis_url)
'''


@pytest.mark.parametrize("load", [[], ["-p", "sbx_client.pytest_plugin"]],
                         ids=["entry-point", "entry-point-and-p"])
def test_plugin_against_the_real_monitor(sock: str, load: list) -> None:
    """The plugin as installed, and named again by -p: loaded once
    either way (pytest would refuse a second registration)."""
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write(INNER)
        out = os.path.join(d, "out.jsonl")
        junit = os.path.join(d, "junit.xml")
        env = dict(os.environ, OUT=out, SBX_SOCKET=sock,
                   PYTEST_XDIST_WORKER="gw5")
        env.pop("SBX_PROJECT", None)
        p = subprocess.run([sys.executable, "-m", "pytest", "-p",
                            "no:cacheprovider", "-q", "--rootdir", d,
                            "--junitxml", junit, "--sbx-project", "demo",
                            *load, d], cwd=d, env=env, capture_output=True,
                           text=True, timeout=600, check=False)
        log = p.stdout + p.stderr
        root = ET.parse(junit).getroot()
        s = root if root.tag == "testsuite" else root.find("testsuite")
        assert s is not None, log
        assert (p.returncode, s.get("tests"), s.get("failures"),
                s.get("errors"), s.get("skipped")) == \
            (0, "6", "0", "0", "0"), log
        with open(out) as o:
            rows = [json.loads(x) for x in o]
    a, b, s1, s2, c1, c2 = rows
    assert a["agent"] == agent_slug("test_inner.py::test_pg_and_redis", "gw5")
    assert b["agent"] == agent_slug("test_inner.py::test_fresh_redis", "gw5")
    assert a["agent"] != b["agent"] and a["pw"] != b["pw"]
    assert s1 == s2 and s1["agent"] == "gw5-session"
    # sbx_clean: one sandbox, reset between the two tests, so the same
    # credentials, sockets and URLs
    assert c1 == c2 and c1["agent"] == "gw5-clean"
    assert c1["pw"] not in (a["pw"], b["pw"], s1["pw"])
    # every one released by the session's end
    for agent in (a["agent"], b["agent"], s1["agent"], c1["agent"]):
        assert sbx_client.release(agent, socket=sock) is False, agent


README_PROJECT = "myproj"


def readme_blocks() -> list:
    with open(os.environ.get("SBX_TEST_README", ""), encoding="utf-8") as f:
        return [b.split("```")[0] for b in f.read().split("```python\n")[1:]]


def test_readme_context_manager_snippets(sock: str,
                                         monkeypatch: pytest.MonkeyPatch
                                         ) -> None:
    """The README's context-manager snippets, as written, with its
    project name made one of the monitor's (cache-only would lack
    postgres: demo)."""
    blocks = [b for b in readme_blocks() if "sbx_client.sandbox(" in b or
              "aio.sandbox(" in b]
    assert len(blocks) >= 2
    monkeypatch.setenv("SBX_SOCKET", sock)
    for code in blocks:
        ns: dict = {}
        exec(compile(code.replace(f'"{README_PROJECT}"', '"demo"'),
                     "README.md", "exec"), ns)
    assert sbx_client.release("dev-1", socket=sock) is False


def test_readme_plugin_example(sock: str) -> None:
    """The README's conftest-free test file, run by pytest as the
    README says (project demo for its myproj): both tests pass, the
    second after the first's table was reset away."""
    code = [b for b in readme_blocks() if b.startswith("# test_orders.py")]
    assert len(code) == 1
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_orders.py"), "w") as t:
            t.write(code[0])
        env = dict(os.environ, SBX_SOCKET=sock)
        env.pop("PYTEST_XDIST_WORKER", None)
        p = subprocess.run([sys.executable, "-m", "pytest", "-p",
                            "no:cacheprovider", "-q", "--rootdir", d,
                            "--sbx-project", "demo", "test_orders.py"],
                           cwd=d, env=env, capture_output=True, text=True,
                           timeout=600, check=False)
    assert p.returncode == 0 and "2 passed" in p.stdout, \
        p.stdout + p.stderr
    # sbx_clean's one sandbox, released at the session's end
    assert sbx_client.release("main-clean", socket=sock) is False
