"""pytest plugin: sbx sandboxes as fixtures (entry point ``pytest11``,
so installing sbx-client is enough; nothing to put in a conftest).

Options: ``--sbx-project`` (else ``$SBX_PROJECT``) and ``--sbx-socket``
(else ``$SBX_SOCKET``, else ``/run/sbx.sock``). With no project, every
test that uses one of these fixtures is *skipped*, with a reason that
names the option: a suite stays runnable on a machine without sbx.

Fixtures:

=============================  ==========================================
``sbx_clean``                  a clean sandbox for the test (function
                               scope), fast: one sandbox per session (per
                               xdist worker), reset before each test but
                               the first (a reset takes tens of
                               milliseconds, a sandbox of its own
                               hundreds); the same credentials each time
``sbx_clean_postgres_url``     its postgres's URL
``sbx_clean_redis_url``        its redis's URL
``sbx_sandbox``                the test's own sandbox (function scope):
                               a new one, released after its teardown
                               without the test waiting for it
``sbx_postgres_url``           its postgres's URL (libpq / psycopg2)
``sbx_redis_url``              its redis's URL (redis-py ``from_url``)
``sbx_session_sandbox``        one sandbox for the whole session (per
                               xdist worker), never reset, released at
                               its end
``sbx_session_postgres_url``   its postgres's URL
``sbx_session_redis_url``      its redis's URL
=============================  ==========================================

Each is bound to the test process (``bind_pid``): a server that supports
it tears the sandbox down if the process dies before its teardown.

A test's agent slug comes from its node id and the xdist worker
(``$PYTEST_XDIST_WORKER``, "gw0"...; "main" without xdist), so that two
tests, and the same test on two workers, never share a sandbox: see
:func:`agent_slug`. ``sbx_clean``'s sandbox is ``<worker>-clean``, the
session's ``<worker>-session``: two sandboxes, so that a reset for one
test never empties what ``sbx_session_sandbox``'s tests keep.

The entry point names :mod:`sbx_client._pytest_entry`, which loads this
module by its own name: ``-p sbx_client.pytest_plugin``, or a conftest's
``pytest_plugins``, beside the entry point registers it once.
"""
from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
import warnings
from dataclasses import dataclass
from typing import Dict, Iterator, List, Optional

import pytest

from . import _proto
from .client import Client, sandbox
from .errors import SbxError
from .types import Sandbox

__all__ = ["agent_slug", "worker_id"]

log = logging.getLogger("sbx_client")

_SLUG = re.compile(r"[a-z0-9][a-z0-9._-]{0,62}\Z")
_SLUG_MAX = 63
_HASH_LEN = 10


def worker_id() -> str:
    """The xdist worker's id ("gw0"...), "main" when not under xdist."""
    return os.environ.get("PYTEST_XDIST_WORKER") or "main"


def agent_slug(nodeid: str, worker: str) -> str:
    """A valid agent slug (``[a-z0-9][a-z0-9._-]{0,62}``) for a test
    node on a worker: ``<worker>-<node id>`` lower-cased, each run of
    other characters made one ``-``. When that changed anything (the
    case too) or is too long, a hash of the exact worker and node id ends it
    (shortening the rest to fit), so that two node ids that clean up
    alike still get two slugs."""
    raw = f"{worker}-{nodeid}"
    clean = re.sub(r"[^a-z0-9._-]+", "-", raw.lower())
    clean = clean.lstrip("._-") or "t"
    if clean == raw and _SLUG.match(clean):
        return clean
    h = hashlib.sha256(raw.encode("utf-8", "surrogatepass")).hexdigest()
    head = clean[:_SLUG_MAX - _HASH_LEN - 1].rstrip("._-") or "t"
    return f"{head}-{h[:_HASH_LEN]}"


def pytest_addoption(parser: pytest.Parser) -> None:
    g = parser.getgroup("sbx", "sbx sandboxes (sbx_client.pytest_plugin)")
    g.addoption("--sbx-project", dest="sbx_project", default=None,
                metavar="SLUG",
                help="the sbx project whose sandboxes the sbx_* fixtures "
                     "request (default: $SBX_PROJECT; none: those tests "
                     "are skipped)")
    g.addoption("--sbx-socket", dest="sbx_socket", default=None,
                metavar="PATH",
                help="sbx's agent socket (default: $SBX_SOCKET, else "
                     f"{_proto.DEFAULT_SOCKET})")


@dataclass(frozen=True)
class _Settings:
    project: Optional[str]
    socket: str


def _settings(config: pytest.Config) -> _Settings:
    project = config.getoption("sbx_project") or \
        os.environ.get("SBX_PROJECT") or None
    sock = config.getoption("sbx_socket") or _proto.default_socket()
    return _Settings(project, sock)


def _project(s: _Settings) -> str:
    if not s.project:
        pytest.skip("no sbx project: pass --sbx-project SLUG or set "
                    "SBX_PROJECT")
    return s.project  # type: ignore[return-value]


def _url(sb: Sandbox, kind: str) -> str:
    svc = sb.only(kind)
    if svc is None:
        pytest.fail(f"sbx project {sb.project!r}: its sandbox has no "
                    f"single {kind} service (it has "
                    f"{', '.join(sorted(sb.services)) or 'none'})",
                    pytrace=False)
    return svc.url()


@pytest.fixture(scope="session")
def _sbx_settings(pytestconfig: pytest.Config) -> _Settings:
    return _settings(pytestconfig)


class _Releases:
    """The releases of the tests' own sandboxes, each a thread of its own
    that waits for the reply: a teardown starts one and returns, while
    the server takes the containers down. A busy refusal is retried and
    a failure is reported, which a release sent without reading its
    reply would lose. A new request for an agent whose release is still
    on its way (the same test again, by a rerun plugin) waits for it
    first: the server takes one uid's connections concurrently, so the
    request could otherwise overtake the release and be answered the
    sandbox about to go. The session's end waits for them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: Dict[str, threading.Thread] = {}
        self.failures: List[str] = []

    def start(self, client: Client, agent: str) -> None:
        t = threading.Thread(target=self._release, args=(client, agent),
                             name=f"sbx-release-{agent}", daemon=True)
        with self._lock:
            self._pending[agent] = t
        t.start()

    def _release(self, client: Client, agent: str) -> None:
        try:
            client.release(agent)
        except SbxError as e:
            log.warning("sbx: releasing %s failed: %s", agent, e)
            with self._lock:
                self.failures.append(f"{agent}: {e}")

    def wait(self, agent: str) -> None:
        with self._lock:
            t = self._pending.pop(agent, None)
        if t is not None:
            t.join()

    def wait_all(self) -> None:
        with self._lock:
            ts = list(self._pending.values())
            self._pending.clear()
        for t in ts:
            t.join()


@pytest.fixture(scope="session")
def _sbx_releases() -> Iterator[_Releases]:
    r = _Releases()
    yield r
    r.wait_all()
    for f in r.failures:
        warnings.warn(f"sbx: a test's sandbox was not released: {f}",
                      pytest.PytestWarning)


@pytest.fixture
def sbx_sandbox(request: pytest.FixtureRequest, _sbx_settings: _Settings,
                _sbx_releases: _Releases) -> Iterator[Sandbox]:
    """This test's own sandbox, released after its teardown (the test
    does not wait for the containers to go)."""
    project = _project(_sbx_settings)
    agent = agent_slug(request.node.nodeid, worker_id())
    c = Client(_sbx_settings.socket)
    _sbx_releases.wait(agent)
    sb = c.ensure_sandbox(agent, project, bind_pid=os.getpid())
    try:
        yield sb
    finally:
        _sbx_releases.start(c, agent)


@pytest.fixture
def sbx_postgres_url(sbx_sandbox: Sandbox) -> str:
    """The URL of this test's sandbox's postgres."""
    return _url(sbx_sandbox, "postgres")


@pytest.fixture
def sbx_redis_url(sbx_sandbox: Sandbox) -> str:
    """The URL of this test's sandbox's redis."""
    return _url(sbx_sandbox, "redis")


@pytest.fixture(scope="session")
def sbx_session_sandbox(_sbx_settings: _Settings) -> Iterator[Sandbox]:
    """One sandbox for the session (each xdist worker has its own),
    released when the session ends."""
    project = _project(_sbx_settings)
    agent = agent_slug("session", worker_id())
    with sandbox(agent, project, socket=_sbx_settings.socket,
                 bind_pid=os.getpid()) as sb:
        yield sb


class _Reused:
    """The session's sandbox that ``sbx_clean`` resets: as handed out
    until its first test has had it."""

    def __init__(self, client: Client, sb: Sandbox) -> None:
        self.client = client
        self.sb = sb
        self.fresh = True

    def clean(self) -> Sandbox:
        if self.fresh:
            self.fresh = False
            return self.sb
        r = self.client.reset(self.sb.agent)
        return Sandbox(self.sb.agent, self.sb.project, r.services)


@pytest.fixture(scope="session")
def _sbx_clean_sandbox(_sbx_settings: _Settings) -> Iterator[_Reused]:
    project = _project(_sbx_settings)
    agent = agent_slug("clean", worker_id())
    c = Client(_sbx_settings.socket)
    with sandbox(agent, project, socket=_sbx_settings.socket,
                 bind_pid=os.getpid()) as sb:
        yield _Reused(c, sb)


@pytest.fixture
def sbx_clean(_sbx_clean_sandbox: _Reused) -> Sandbox:
    """A sandbox as handed out (postgres with the project's seed, redis
    empty), for this test: the session's (per xdist worker), reset
    before each test that asks for it but the first. Every session to
    it is ended by the reset: connect in the test. Snapshots taken in
    one test are there in the next."""
    return _sbx_clean_sandbox.clean()


@pytest.fixture
def sbx_clean_postgres_url(sbx_clean: Sandbox) -> str:
    """The URL of the clean sandbox's postgres."""
    return _url(sbx_clean, "postgres")


@pytest.fixture
def sbx_clean_redis_url(sbx_clean: Sandbox) -> str:
    """The URL of the clean sandbox's redis."""
    return _url(sbx_clean, "redis")


@pytest.fixture(scope="session")
def sbx_session_postgres_url(sbx_session_sandbox: Sandbox) -> str:
    return _url(sbx_session_sandbox, "postgres")


@pytest.fixture(scope="session")
def sbx_session_redis_url(sbx_session_sandbox: Sandbox) -> str:
    return _url(sbx_session_sandbox, "redis")
