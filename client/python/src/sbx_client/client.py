"""The blocking client."""
from __future__ import annotations

import errno
import socket as _socket
import time
from typing import Any, Dict, List, Optional, Sequence

import msgpack

from . import _proto
from .errors import ClientTimeoutError, ConnectError, ProtocolError
from .types import Sandbox, SandboxStatus

__all__ = ["Client", "ping", "available", "ensure_sandbox", "release",
           "status"]

# A listener whose backlog is full answers a non-blocking connect with
# EAGAIN (Unix sockets do not queue us): try again this often until the
# connect timeout.
_RETRY_S = 0.02


class Client(_proto.Options):
    """Talks to sbx's agent socket: one connection per call.

    ``socket``: the agent socket (default ``$SBX_SOCKET``, else
    ``/run/sbx.sock``); ``connect_timeout``: seconds to get a connection;
    ``timeout``: seconds from then for the whole answer (a cold provision
    may take tens of seconds). A client holds no connection and no
    state, so one may be shared by threads.
    """


    def _connect(self) -> _socket.socket:
        deadline = time.monotonic() + self.connect_timeout
        while True:
            s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
            left = deadline - time.monotonic()
            try:
                if left <= 0:
                    raise _socket.timeout()
                s.settimeout(left)
                s.connect(self.socket)
                return s
            except _socket.timeout:
                s.close()
                raise ClientTimeoutError(
                    f"no connection to {self.socket} within "
                    f"{self.connect_timeout:g} s", "connect") from None
            except OSError as e:
                s.close()
                if e.errno in (errno.EAGAIN, errno.EINTR):
                    # the loop's top ends it at the deadline
                    time.sleep(max(0.0, min(_RETRY_S,
                                            deadline - time.monotonic())))
                    continue
                raise ConnectError(f"cannot connect to {self.socket}: "
                                   f"{e.strerror or e}") from None

    def call(self, req: Dict[str, Any]) -> Dict[str, Any]:
        """One request map, one reply map (raw, ``ok`` checked)."""
        data = _proto.pack(req)
        s = self._connect()
        try:
            deadline = time.monotonic() + self.timeout
            u = _proto.unpacker()
            reply: Any = None

            def left() -> float:
                t = deadline - time.monotonic()
                if t <= 0:
                    raise _socket.timeout()
                return t

            try:
                s.settimeout(left())
                try:
                    s.sendall(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # it may have answered first (busy): read that
                got = False
                while not got:
                    s.settimeout(left())
                    chunk = s.recv(65536)
                    if not chunk:
                        raise ProtocolError("the server closed the "
                                            "connection without a "
                                            "complete reply")
                    u.feed(chunk)
                    for reply in u:
                        got = True
                        break
            except _socket.timeout:
                raise ClientTimeoutError(
                    f"no complete answer from {self.socket} within "
                    f"{self.timeout:g} s", "answer") from None
            except (BrokenPipeError, ConnectionResetError) as e:
                raise ProtocolError(f"connection lost: {e.strerror}") \
                    from None
            except (ValueError, msgpack.UnpackException) as e:
                raise ProtocolError(f"unreadable reply: {e}") from None
        finally:
            s.close()
        # outside the try: a refusal "timeout" is a TimeoutError too
        return _proto.checked(reply)

    def ping(self) -> str:
        """The server's version."""
        return _proto.ping_result(self.call({"op": "ping"}))

    def available(self, project: str) -> List[str]:
        """The spawn-time probe: the services ``project`` offers the
        caller, ``[]`` when it offers none (or sandboxes are off). Never
        provisions; the server never refuses it."""
        return _proto.available_result(
            self.call({"op": "available", "project": project}))

    def ensure_sandbox(self, agent: str, project: str,
                       services: Optional[Sequence[str]] = None) -> Sandbox:
        """The on-demand provision: ``agent``'s sandbox for ``project``,
        made on a miss (the project's whole opted-in set) and answered
        from the server's cache on a hit. ``services`` names those the
        caller needs (each must be opted in); None or [] asks for the
        set as it is."""
        req = _proto.request_sandbox(agent, project, services)
        return _proto.sandbox_result(agent, project, self.call(req))

    def release(self, agent: str) -> bool:
        """Tear ``agent``'s sandbox down; False if it had none."""
        return _proto.release_result(
            self.call({"op": "release", "agent": agent}))

    def status(self) -> List[SandboxStatus]:
        """Every sandbox (root only; others get ForbiddenError)."""
        return _proto.status_result(self.call({"op": "status"}))


def _client(socket: Optional[str], kw: Dict[str, float]) -> Client:
    return Client(socket, **kw)


def ping(*, socket: Optional[str] = None, **kw: float) -> str:
    return _client(socket, kw).ping()


def available(project: str, *, socket: Optional[str] = None,
              **kw: float) -> List[str]:
    return _client(socket, kw).available(project)


def ensure_sandbox(agent: str, project: str,
                   services: Optional[Sequence[str]] = None, *,
                   socket: Optional[str] = None, **kw: float) -> Sandbox:
    return _client(socket, kw).ensure_sandbox(agent, project, services)


def release(agent: str, *, socket: Optional[str] = None,
            **kw: float) -> bool:
    return _client(socket, kw).release(agent)


def status(*, socket: Optional[str] = None,
           **kw: float) -> List[SandboxStatus]:
    return _client(socket, kw).status()
