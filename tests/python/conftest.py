"""Fixtures for the sbx_client tests: run.sh starts a real monitor and
names its socket in SBX_TEST_SOCKET."""
from __future__ import annotations

import os
import socket
import tempfile
from typing import Iterator

import pytest

import sbx_client


@pytest.fixture(scope="session")
def sock() -> str:
    path = os.environ.get("SBX_TEST_SOCKET")
    if not path:
        pytest.fail("SBX_TEST_SOCKET is not set: run tests/python/run.sh")
    return path


@pytest.fixture(scope="session")
def client(sock: str) -> sbx_client.Client:
    return sbx_client.Client(sock)


@pytest.fixture
def silent_listener() -> Iterator[str]:
    """A Unix socket of the test's own that accepts into its backlog and
    never answers."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "silent.sock")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen(8)
        try:
            yield path
        finally:
            srv.close()
