"""pytest plugin: sbx sandboxes as fixtures (entry point ``pytest11``,
so installing sbx-client is enough; nothing to put in a conftest).

Options: ``--sbx-project`` (else ``$SBX_PROJECT``) and ``--sbx-socket``
(else ``$SBX_SOCKET``, else ``/run/sbx.sock``). With no project, every
test that uses one of these fixtures is *skipped*, with a reason that
names the option: a suite stays runnable on a machine without sbx.

Fixtures:

=============================  ==========================================
``sbx_sandbox``                the test's own sandbox (function scope),
                               released at its teardown
``sbx_postgres_url``           its postgres's URL (libpq / psycopg2)
``sbx_redis_url``              its redis's URL (redis-py ``from_url``)
``sbx_session_sandbox``        one sandbox for the whole session (per
                               xdist worker), released at its end
``sbx_session_postgres_url``   its postgres's URL
``sbx_session_redis_url``      its redis's URL
=============================  ==========================================

Each is bound to the test process (``bind_pid``): a server that supports
it tears the sandbox down if the process dies before its teardown.

A test's agent slug comes from its node id and the xdist worker
(``$PYTEST_XDIST_WORKER``, "gw0"...; "main" without xdist), so that two
tests, and the same test on two workers, never share a sandbox: see
:func:`agent_slug`.
"""
from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from typing import Iterator, Optional

import pytest

from . import _proto
from .client import sandbox
from .types import Sandbox

__all__ = ["agent_slug", "worker_id"]

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


@pytest.fixture
def sbx_sandbox(request: pytest.FixtureRequest,
                _sbx_settings: _Settings) -> Iterator[Sandbox]:
    """This test's own sandbox, released at its teardown."""
    project = _project(_sbx_settings)
    agent = agent_slug(request.node.nodeid, worker_id())
    with sandbox(agent, project, socket=_sbx_settings.socket,
                 bind_pid=os.getpid()) as sb:
        yield sb


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


@pytest.fixture(scope="session")
def sbx_session_postgres_url(sbx_session_sandbox: Sandbox) -> str:
    return _url(sbx_session_sandbox, "postgres")


@pytest.fixture(scope="session")
def sbx_session_redis_url(sbx_session_sandbox: Sandbox) -> str:
    return _url(sbx_session_sandbox, "redis")
