"""sbx_client against a fake server of the test's own (conftest's
FakeServer): what the real monitor does not do yet (busy with
retry_after_ms, reset, snapshot, bind_pid) and what a real one cannot be
made to do on demand. Every request the client sends is recorded and
checked; so are the waits between them."""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from typing import Any, Callable, Dict, List, Optional

import pytest

import sbx_client
from sbx_client import _proto, aio
from sbx_client.pytest_plugin import agent_slug

PG = {"socket": "/run/sbx/1/a.postgres/.s.PGSQL.5432", "user": "sbx",
      "password": "pw", "database": "sbx"}
RD = {"socket": "/run/sbx/1/a.redis/redis.sock", "user": "default",
      "password": "pw2", "database": "0"}
SANDBOX = {"ok": True, "services": {"postgres": PG, "redis": RD}}


def busy(ms: Optional[int]) -> Dict[str, Any]:
    r: Dict[str, Any] = {"ok": False, "error": "busy",
                         "message": "provisions per uid: 4 running."}
    if ms is not None:
        r["retry_after_ms"] = ms
    return r


def scripted(*replies: Dict[str, Any]) -> Callable[[Dict[str, Any]],
                                                    Dict[str, Any]]:
    """Answers the replies in turn, then the last one for ever."""
    left = list(replies)

    def answer(_req: Dict[str, Any]) -> Dict[str, Any]:
        return left.pop(0) if len(left) > 1 else left[0]
    return answer


def by_op(req: Dict[str, Any]) -> Dict[str, Any]:
    """A well-behaved server for request_sandbox, reset and release."""
    if req["op"] in ("request_sandbox", "reset"):
        return SANDBOX
    if req["op"] == "release":
        return {"ok": True, "released": True}
    return {"ok": False, "error": "bad_request", "message": "no such op."}


def gaps(times: List[float]) -> List[float]:
    return [b - a for a, b in zip(times, times[1:])]


def run_async(coro: Any) -> Any:
    return asyncio.run(coro)


# ---- busy: retried, after the server's hint ----

@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_busy_is_retried_after_retry_after_ms(fake_server: Any,
                                              flavour: str) -> None:
    f = fake_server(scripted(busy(300), busy(300), SANDBOX))
    t0 = time.monotonic()
    if flavour == "sync":
        sb = sbx_client.Client(f.path, timeout=10).ensure_sandbox("a", "p")
    else:
        sb = run_async(aio.AsyncClient(f.path, timeout=10)
                       .ensure_sandbox("a", "p"))
    took = time.monotonic() - t0
    assert sb["postgres"].password == "pw"
    assert f.ops() == ["request_sandbox"] * 3
    g = gaps(f.times)
    # never before the hint, at most a quarter after it (plus slack for
    # a loaded 2-core host)
    assert all(0.3 <= x < 0.3 * 1.25 + 0.2 for x in g), g
    assert 0.6 <= took < 2.0


@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_busy_without_a_hint_backs_off_exponentially(fake_server: Any,
                                                     flavour: str) -> None:
    f = fake_server(scripted(busy(None), busy(None), busy(None),
                             busy(None), SANDBOX))
    if flavour == "sync":
        sbx_client.Client(f.path, timeout=10).ensure_sandbox("a", "p")
    else:
        run_async(aio.AsyncClient(f.path, timeout=10)
                  .ensure_sandbox("a", "p"))
    assert len(f.requests) == 5
    g = gaps(f.times)
    # wait n is drawn from [cap/2, cap], cap = 0.05 * 2**n
    for n, x in enumerate(g):
        cap = _proto.BUSY_FIRST_S * 2 ** n
        assert cap / 2 <= x < cap + 0.2, (n, g)
    assert g[3] > g[0]


def test_busy_delay_is_jittered_and_bounded() -> None:
    hinted = {_proto.busy_delay(0, 400) for _ in range(50)}
    assert min(hinted) >= 0.4 and max(hinted) <= 0.5 and len(hinted) > 1
    plain = [_proto.busy_delay(30, None) for _ in range(50)]
    assert all(_proto.BUSY_MAX_S / 2 <= x <= _proto.BUSY_MAX_S
               for x in plain)
    assert len(set(plain)) > 1


@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_retry_busy_false_raises_at_once(fake_server: Any,
                                         flavour: str) -> None:
    f = fake_server(scripted(busy(300), SANDBOX))
    t0 = time.monotonic()
    with pytest.raises(sbx_client.BusyError) as e:
        if flavour == "sync":
            sbx_client.ensure_sandbox("a", "p", socket=f.path,
                                      retry_busy=False)
        else:
            run_async(aio.ensure_sandbox("a", "p", socket=f.path,
                                         retry_busy=False))
    assert time.monotonic() - t0 < 0.3
    assert e.value.retry_after_ms == 300 and e.value.code == "busy"
    assert len(f.requests) == 1


@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_busy_retries_stay_within_the_timeout(fake_server: Any,
                                              flavour: str) -> None:
    """A hint that would end past the call's deadline: raise now, no
    waiting to fail. No hint and busy for ever: raise by the deadline."""
    f = fake_server(scripted(busy(5000)))
    t0 = time.monotonic()
    with pytest.raises(sbx_client.BusyError) as e:
        if flavour == "sync":
            sbx_client.Client(f.path, timeout=1).ping()
        else:
            run_async(aio.AsyncClient(f.path, timeout=1).ping())
    assert time.monotonic() - t0 < 0.5
    assert len(f.requests) == 1 and e.value.retry_after_ms == 5000

    g = fake_server(scripted(busy(None)))
    t0 = time.monotonic()
    with pytest.raises(sbx_client.BusyError) as e:
        if flavour == "sync":
            sbx_client.Client(g.path, timeout=1).ping()
        else:
            run_async(aio.AsyncClient(g.path, timeout=1).ping())
    took = time.monotonic() - t0
    assert 0.3 <= took < 1.5, took
    assert len(g.requests) >= 4
    assert e.value.retry_after_ms is None


def test_a_bad_retry_after_ms_is_no_hint() -> None:
    for bad in ("300", -5, True, 1.5):
        with pytest.raises(sbx_client.BusyError) as e:
            _proto.checked({"ok": False, "error": "busy", "message": "m.",
                            "retry_after_ms": bad})
        assert e.value.retry_after_ms is None


# ---- bind_pid ----

def test_bind_pid_is_sent_only_when_given(fake_server: Any) -> None:
    f = fake_server(by_op)
    c = sbx_client.Client(f.path)
    c.ensure_sandbox("a", "p", ["postgres"], bind_pid=4321)
    c.ensure_sandbox("a", "p")
    sbx_client.request_sandbox("a", "p", socket=f.path, bind_pid=77)
    assert f.requests[0] == {"op": "request_sandbox", "agent": "a",
                             "project": "p", "services": ["postgres"],
                             "bind_pid": 4321}
    assert "bind_pid" not in f.requests[1]
    assert f.requests[2]["bind_pid"] == 77
    with pytest.raises(ValueError):
        c.ensure_sandbox("a", "p", bind_pid=0)
    with pytest.raises(ValueError):
        c.ensure_sandbox("a", "p", bind_pid=True)  # type: ignore[arg-type]
    assert len(f.requests) == 3


def test_context_manager_binds_this_process_and_releases(
        fake_server: Any) -> None:
    f = fake_server(by_op)
    with sbx_client.sandbox("cm", "p", socket=f.path) as sb:
        assert sb["redis"].password == "pw2"
        assert f.ops() == ["request_sandbox"]
    assert f.ops() == ["request_sandbox", "release"]
    assert f.requests[0]["bind_pid"] == os.getpid()
    assert f.requests[1] == {"op": "release", "agent": "cm"}

    with sbx_client.sandbox("cm2", "p", socket=f.path, bind_pid=None):
        pass
    assert "bind_pid" not in f.requests[2]
    assert f.requests[3] == {"op": "release", "agent": "cm2"}


def test_context_manager_releases_on_an_exception(fake_server: Any) -> None:
    f = fake_server(by_op)
    with pytest.raises(KeyError, match="boom"):
        with sbx_client.sandbox("cm", "p", socket=f.path, bind_pid=99):
            raise KeyError("boom")
    assert f.ops() == ["request_sandbox", "release"]
    assert f.requests[0]["bind_pid"] == 99


def test_a_failed_release_does_not_hide_the_blocks_error(
        fake_server: Any) -> None:
    def answer(req: Dict[str, Any]) -> Dict[str, Any]:
        if req["op"] == "release":
            return {"ok": False, "error": "internal", "message": "oops."}
        return SANDBOX
    f = fake_server(answer)
    with pytest.raises(KeyError):
        with sbx_client.sandbox("cm", "p", socket=f.path):
            raise KeyError("boom")
    # without an error of the block's, the release's own is raised
    with pytest.raises(sbx_client.InternalError):
        with sbx_client.sandbox("cm", "p", socket=f.path):
            pass
    assert f.ops() == ["request_sandbox", "release"] * 2


def test_async_context_manager_binds_and_releases(fake_server: Any) -> None:
    f = fake_server(by_op)

    async def main() -> None:
        async with aio.sandbox("acm", "p", socket=f.path) as sb:
            assert sb["postgres"].password == "pw"
            assert f.ops() == ["request_sandbox"]
        with pytest.raises(RuntimeError):
            async with aio.sandbox("acm2", "p", socket=f.path,
                                   bind_pid=None):
                raise RuntimeError("boom")

    run_async(main())
    assert f.ops() == ["request_sandbox", "release"] * 2
    assert f.requests[0]["bind_pid"] == os.getpid()
    assert "bind_pid" not in f.requests[2]
    assert f.requests[3] == {"op": "release", "agent": "acm2"}


# ---- reset and snapshot ----

def reset_snapshot_server(req: Dict[str, Any]) -> Dict[str, Any]:
    agent = req.get("agent")
    if agent == "none":
        return {"ok": False, "error": "no_sandbox",
                "message": "no sandbox for agent none."}
    if req["op"] == "reset":
        if req.get("to") == "gone":
            return {"ok": False, "error": "unknown_snapshot",
                    "message": "no snapshot gone."}
        if agent == "seedy":
            return {"ok": False, "error": "seed_failed",
                    "message": "myproj.sql:3: syntax error."}
        return SANDBOX
    if req["op"] == "snapshot":
        return {"ok": True, "name": req["name"]}
    return {"ok": False, "error": "bad_request", "message": "op?"}


@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_reset_and_snapshot_requests(fake_server: Any, flavour: str) -> None:
    f = fake_server(reset_snapshot_server)
    if flavour == "sync":
        c = sbx_client.Client(f.path)
        a = c.reset("a1")
        b = c.reset("a1", to="s1")
        n = c.snapshot("a1", "s1")
        m = sbx_client.snapshot("a1", "s2", socket=f.path)
    else:
        ac = aio.AsyncClient(f.path)

        async def main() -> Any:
            return (await ac.reset("a1"), await ac.reset("a1", to="s1"),
                    await ac.snapshot("a1", "s1"),
                    await aio.snapshot("a1", "s2", socket=f.path))
        a, b, n, m = run_async(main())
    assert f.requests == [
        {"op": "reset", "agent": "a1"},
        {"op": "reset", "agent": "a1", "to": "s1"},
        {"op": "snapshot", "agent": "a1", "name": "s1"},
        {"op": "snapshot", "agent": "a1", "name": "s2"},
    ]
    assert isinstance(a, sbx_client.Sandbox) and a == b
    assert a.agent == "a1" and a["postgres"].password == "pw"
    assert (n, m) == ("s1", "s2")


@pytest.mark.parametrize("flavour", ["sync", "aio"])
def test_reset_and_snapshot_refusals(fake_server: Any, flavour: str) -> None:
    f = fake_server(reset_snapshot_server)
    cases = [
        (lambda c: c.reset("none"), sbx_client.NoSandboxError, "no_sandbox"),
        (lambda c: c.snapshot("none", "s"), sbx_client.NoSandboxError,
         "no_sandbox"),
        (lambda c: c.reset("a", to="gone"), sbx_client.UnknownSnapshotError,
         "unknown_snapshot"),
        (lambda c: c.reset("seedy"), sbx_client.SeedFailedError,
         "seed_failed"),
    ]
    for call, cls, code in cases:
        with pytest.raises(cls) as e:
            if flavour == "sync":
                call(sbx_client.Client(f.path))
            else:
                run_async(call(aio.AsyncClient(f.path)))
        assert e.value.code == code and type(e.value) is cls
    assert e.value.message == "myproj.sql:3: syntax error."


def test_snapshot_reply_without_a_name_is_a_protocol_error(
        fake_server: Any) -> None:
    f = fake_server(scripted({"ok": True}))
    with pytest.raises(sbx_client.ProtocolError):
        sbx_client.Client(f.path).snapshot("a", "s")


# ---- status rows ----

def test_status_rows_may_carry_bind_pid(fake_server: Any) -> None:
    row = {"uid": 1000, "agent": "a", "project": "p",
           "services": ["redis"], "age_s": 3, "idle_s": 1}
    f = fake_server(scripted({"ok": True, "sandboxes": [
        dict(row, bind_pid=4242), row]}))
    rows = sbx_client.Client(f.path).status()
    assert [r.bind_pid for r in rows] == [4242, None]
    with pytest.raises(sbx_client.ProtocolError):
        _proto.status_result({"ok": True, "sandboxes": [
            dict(row, bind_pid="4242")]})


# ---- agent slugs of the pytest plugin ----

SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}\Z")


def test_agent_slugs_are_valid_and_distinct() -> None:
    ids = [
        "tests/test_db.py::test_insert",
        "tests/test_db.py::test_insert[a b]",
        "tests/test_db.py::test_insert[a_b]",
        "tests/test_db.py::test_insert[A-b]",
        "tests/test_db.py::test_insert[a-b]",
        "tests/test_db.py::Test::test_" + "x" * 100 + "1",
        "tests/test_db.py::Test::test_" + "x" * 100 + "2",
        "tests/test_db.py::test_ünïcode",
        "::",
    ]
    slugs = [agent_slug(i, w) for i in ids for w in ("gw0", "gw1", "main")]
    assert all(SLUG.match(s) for s in slugs), slugs
    assert len(set(slugs)) == len(slugs)
    assert agent_slug(ids[0], "gw0") == agent_slug(ids[0], "gw0")
    assert agent_slug(ids[0], "gw3").startswith("gw3-tests-test_db.py-test")
    assert agent_slug("ab", "gw0") == "gw0-ab"


# ---- the pytest plugin, against the fake server ----

PLUGIN_FAKE_TEST = '''
import json, os

def test_one(sbx_sandbox, sbx_postgres_url, sbx_redis_url):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps({"pid": os.getpid(), "agent": sbx_sandbox.agent,
                            "project": sbx_sandbox.project,
                            "pg": sbx_postgres_url,
                            "redis": sbx_redis_url}) + "\\n")

def test_two(sbx_sandbox):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps({"pid": os.getpid(),
                            "agent": sbx_sandbox.agent}) + "\\n")

def test_no_sandbox():
    pass
'''


def run_inner_pytest(d: str, env: Dict[str, str],
                     *args: str) -> ET.Element:
    """``python -m pytest`` on d's tests in a process of its own, with
    only the plugins that installing sbx-client gives (no -p): the
    junit report's testsuite element."""
    junit = os.path.join(d, "junit.xml")
    e = dict(os.environ)
    e.pop("PYTEST_ADDOPTS", None)
    e.update(env)
    p = subprocess.run([sys.executable, "-m", "pytest", "-p",
                        "no:cacheprovider", "-q", "-rs", "--rootdir", d,
                        "--junitxml", junit, *args, d],
                       cwd=d, env=e, capture_output=True, text=True,
                       timeout=600, check=False)
    assert os.path.exists(junit), p.stdout + p.stderr
    root = ET.parse(junit).getroot()
    suite = root if root.tag == "testsuite" else root.find("testsuite")
    assert suite is not None, p.stdout + p.stderr
    suite.set("_out", p.stdout + p.stderr)
    suite.set("_rc", str(p.returncode))
    return suite


def test_plugin_fixtures_against_the_fake_server(fake_server: Any) -> None:
    f = fake_server(by_op)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write(PLUGIN_FAKE_TEST)
        out = os.path.join(d, "out.jsonl")
        s = run_inner_pytest(d, {"OUT": out, "SBX_SOCKET": f.path,
                                 "PYTEST_XDIST_WORKER": "gw7"},
                             "--sbx-project", "myproj")
        assert (s.get("_rc"), s.get("tests"), s.get("failures"),
                s.get("errors"), s.get("skipped")) == \
            ("0", "3", "0", "0", "0"), s.get("_out")
        with open(out) as o:
            rows = [json.loads(x) for x in o]
    one, two = rows
    assert one["agent"] == agent_slug("test_inner.py::test_one", "gw7")
    assert two["agent"] == agent_slug("test_inner.py::test_two", "gw7")
    assert one["agent"].startswith("gw7-") and one["agent"] != two["agent"]
    assert one["project"] == "myproj"
    assert one["pg"] == sbx_client.types.parse_service("postgres", PG).url()
    assert one["redis"] == "unix://default:pw2@/run/sbx/1/a.redis/redis.sock?db=0"
    # each test's sandbox is requested bound to the test process and
    # released after its teardown (a release may come after the next
    # test's request); the test that uses no fixture asks for nothing
    assert sorted(f.ops()) == ["release"] * 2 + ["request_sandbox"] * 2
    r1, r2 = [r for r in f.requests if r["op"] == "request_sandbox"]
    assert f.requests[0] == r1
    assert (r1["agent"], r1["project"], r1["bind_pid"]) == \
        (one["agent"], "myproj", one["pid"])
    assert r2["agent"] == two["agent"] and r2["bind_pid"] == two["pid"]
    for r in (r1, r2):
        rel = {"op": "release", "agent": r["agent"]}
        assert f.requests.index(rel) > f.requests.index(r)
    assert one["pid"] != os.getpid()


def test_plugin_teardown_does_not_wait_for_the_release(
        fake_server: Any) -> None:
    """A release the server takes 1.5 s to answer: the test's teardown
    does not wait for it, the session's end (the last test's teardown)
    does."""
    def slow(req: Dict[str, Any]) -> Dict[str, Any]:
        if req["op"] == "release":
            time.sleep(1.5)
        return by_op(req)
    f = fake_server(slow)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write("def test_one(sbx_sandbox):\n    pass\n\n"
                    "def test_two():\n    pass\n")
        t0 = time.monotonic()
        s = run_inner_pytest(d, {"SBX_SOCKET": f.path, "SBX_PROJECT": "p"})
        took = time.monotonic() - t0
    assert (s.get("_rc"), s.get("tests"), s.get("failures"),
            s.get("errors")) == ("0", "2", "0", "0"), s.get("_out")
    one, two = s.findall("testcase")
    assert float(one.get("time", "9")) < 1.0, s.get("_out")
    assert float(two.get("time", "0")) >= 1.0, s.get("_out")
    assert f.ops() == ["request_sandbox", "release"] and took >= 1.5


def test_plugin_failed_release_is_a_warning(fake_server: Any) -> None:
    f = fake_server(lambda req: SANDBOX if req["op"] == "request_sandbox"
                    else {"ok": False, "error": "runtime_failed",
                          "message": "podman said no."})
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write("def test_one(sbx_sandbox):\n    pass\n")
        s = run_inner_pytest(d, {"SBX_SOCKET": f.path, "SBX_PROJECT": "p"})
    out = s.get("_out") or ""
    assert s.get("_rc") == "0", out
    assert "was not released" in out and "podman said no." in out, out
    assert f.ops() == ["request_sandbox", "release"]


PLUGIN_CLEAN_TEST = '''
import json, os

def test_a(sbx_clean, sbx_clean_postgres_url):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps([sbx_clean.agent, sbx_clean.project,
                            sbx_clean_postgres_url]) + "\\n")

def test_b(sbx_clean, sbx_clean_redis_url):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps([sbx_clean.agent, sbx_clean.project,
                            sbx_clean_redis_url]) + "\\n")

def test_c(sbx_clean):
    with open(os.environ["OUT"], "a") as f:
        f.write(json.dumps([sbx_clean.agent, sbx_clean.project]) + "\\n")
'''


def test_plugin_clean_fixture_resets_one_sandbox(fake_server: Any) -> None:
    """sbx_clean: one sandbox for the session, requested once, reset
    before each test but the first, released at the session's end."""
    f = fake_server(by_op)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write(PLUGIN_CLEAN_TEST)
        out = os.path.join(d, "out.jsonl")
        s = run_inner_pytest(d, {"OUT": out, "SBX_SOCKET": f.path,
                                 "PYTEST_XDIST_WORKER": "gw3"},
                             "--sbx-project", "myproj")
        assert (s.get("_rc"), s.get("tests"), s.get("failures"),
                s.get("errors")) == ("0", "3", "0", "0"), s.get("_out")
        with open(out) as o:
            rows = [json.loads(x) for x in o]
    pg = sbx_client.types.parse_service("postgres", PG).url()
    rd = sbx_client.types.parse_service("redis", RD).url()
    assert rows == [["gw3-clean", "myproj", pg], ["gw3-clean", "myproj", rd],
                    ["gw3-clean", "myproj"]]
    assert f.ops() == ["request_sandbox", "reset", "reset", "release"]
    assert f.requests[0]["agent"] == "gw3-clean"
    assert f.requests[1] == f.requests[2] == {"op": "reset",
                                              "agent": "gw3-clean"}
    assert f.requests[3] == {"op": "release", "agent": "gw3-clean"}


CONFTEST_PLUGINS = 'pytest_plugins = ["sbx_client.pytest_plugin"]\n'


@pytest.mark.parametrize("how", ["entry-point", "-p", "conftest",
                                 "-p-without-autoload"])
def test_plugin_loads_once(fake_server: Any, how: str) -> None:
    """Installed (entry point sbx) and named again by -p or by a
    conftest: one plugin, the fixtures work; pytest refuses a second
    registration of one module ("Plugin already registered")."""
    f = fake_server(by_op)
    args: List[str] = []
    env = {"SBX_SOCKET": f.path, "SBX_PROJECT": "p"}
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write("def test_one(sbx_clean_postgres_url):\n"
                    "    assert sbx_clean_postgres_url\n")
        if how == "conftest":
            with open(os.path.join(d, "conftest.py"), "w") as t:
                t.write(CONFTEST_PLUGINS)
        elif how.startswith("-p"):
            args = ["-p", "sbx_client.pytest_plugin"]
        if how == "-p-without-autoload":
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        s = run_inner_pytest(d, env, *args)
    out = s.get("_out") or ""
    assert (s.get("_rc"), s.get("tests"), s.get("failures"),
            s.get("errors")) == ("0", "1", "0", "0"), out
    assert "already registered" not in out
    assert f.ops() == ["request_sandbox", "release"]


def test_plugin_can_be_left_out(fake_server: Any) -> None:
    """-p no:sbx, the entry point's name, leaves the plugin out."""
    f = fake_server(by_op)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write("def test_one(sbx_clean):\n    pass\n")
        s = run_inner_pytest(d, {"SBX_SOCKET": f.path, "SBX_PROJECT": "p"},
                             "-p", "no:sbx")
    assert s.get("_rc") == "1" and s.get("errors") == "1", s.get("_out")
    assert "fixture 'sbx_clean' not found" in (s.get("_out") or "")
    assert f.requests == []


PLUGIN_SESSION_TEST = '''
import json, os

def test_a(sbx_session_sandbox, sbx_session_postgres_url):
    with open(os.environ["OUT"], "a") as f:
        f.write(sbx_session_sandbox.agent + "\\n")

def test_b(sbx_session_sandbox, sbx_session_redis_url):
    with open(os.environ["OUT"], "a") as f:
        f.write(sbx_session_sandbox.agent + "\\n")
'''


def test_plugin_session_fixture_is_one_sandbox(fake_server: Any) -> None:
    f = fake_server(by_op)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write(PLUGIN_SESSION_TEST)
        out = os.path.join(d, "out.txt")
        s = run_inner_pytest(d, {"OUT": out, "SBX_PROJECT": "envproj",
                                 "PYTEST_XDIST_WORKER": "gw2"},
                             "--sbx-socket", f.path)
        assert (s.get("_rc"), s.get("tests"), s.get("failures")) == \
            ("0", "2", "0"), s.get("_out")
        with open(out) as o:
            agents = o.read().split()
    assert agents == ["gw2-session", "gw2-session"]
    assert f.ops() == ["request_sandbox", "release"]
    assert f.requests[0]["project"] == "envproj"
    assert f.requests[1] == {"op": "release", "agent": "gw2-session"}


def test_plugin_without_a_project_skips(fake_server: Any) -> None:
    f = fake_server(by_op)
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write(PLUGIN_FAKE_TEST)
        env = {"OUT": os.path.join(d, "out"), "SBX_SOCKET": f.path,
               "SBX_PROJECT": ""}
        s = run_inner_pytest(d, env)
    assert (s.get("_rc"), s.get("tests"), s.get("skipped"),
            s.get("failures")) == ("0", "3", "2", "0"), s.get("_out")
    assert "--sbx-project" in (s.get("_out") or "")
    assert f.requests == []


def test_plugin_service_missing_is_a_clear_failure(fake_server: Any) -> None:
    f = fake_server(lambda req: {"ok": True, "services": {"redis": RD}}
                    if req["op"] == "request_sandbox"
                    else {"ok": True, "released": True})
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "test_inner.py"), "w") as t:
            t.write("def test_pg(sbx_postgres_url):\n    pass\n")
        s = run_inner_pytest(d, {"SBX_SOCKET": f.path,
                                 "SBX_PROJECT": "cache"})
    assert s.get("_rc") == "1" and s.get("errors") == "1", s.get("_out")
    assert "has no single postgres service (it has redis)" in \
        (s.get("_out") or "")
    assert f.ops() == ["request_sandbox", "release"]
