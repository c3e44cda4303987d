"""Fixtures for the sbx_client tests: run.sh starts a real monitor and
names its socket in SBX_TEST_SOCKET."""
from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, Optional

import msgpack
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "root: needs root (run.sh runs these as root, "
        "every other test as an ordinary user)")


class FakeServer:
    """An sbx of the test's own on a temporary Unix socket: each
    connection gets one request read and one reply from ``answer(req)``
    (a msgpack map; None closes without a reply). It keeps every request
    and the monotonic time it was read, for the checks."""

    def __init__(self, answer: Callable[[Dict[str, Any]],
                                        Optional[Dict[str, Any]]]) -> None:
        self.answer = answer
        self.requests: List[Dict[str, Any]] = []
        self.times: List[float] = []
        self.dir = tempfile.mkdtemp(prefix="sbxfake.", dir="/tmp")
        self.path = os.path.join(self.dir, "sbx.sock")
        self.srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.srv.bind(self.path)
        os.chmod(self.path, 0o600)
        self.srv.listen(16)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            try:
                c, _a = self.srv.accept()
            except OSError:
                return
            with c:
                u = msgpack.Unpacker(raw=False)
                req = None
                while req is None:
                    chunk = c.recv(65536)
                    if not chunk:
                        break
                    u.feed(chunk)
                    for req in u:
                        break
                if req is None:
                    continue
                self.times.append(time.monotonic())
                self.requests.append(req)
                reply = self.answer(req)
                if reply is not None:
                    c.sendall(msgpack.packb(reply, use_bin_type=True))

    def ops(self) -> List[str]:
        return [r.get("op") for r in self.requests]

    def close(self) -> None:
        # shutdown wakes the accept() of the serving thread
        try:
            self.srv.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.srv.close()
        self.thread.join(5)
        try:
            os.unlink(self.path)
        except OSError:
            pass
        os.rmdir(self.dir)


@pytest.fixture
def fake_server() -> Iterator[Callable[..., FakeServer]]:
    """fake_server(answer) -> a started FakeServer; closed at teardown."""
    made: List[FakeServer] = []

    def make(answer: Callable[[Dict[str, Any]],
                              Optional[Dict[str, Any]]]) -> FakeServer:
        f = FakeServer(answer)
        made.append(f)
        return f

    yield make
    for f in made:
        f.close()
