"""The blocking client."""
from __future__ import annotations

import contextlib
import errno
import logging
import socket as _socket
import time
from typing import Any, Dict, Iterator, List, Optional, Sequence

import msgpack

from . import _proto
from .errors import (BusyError, ClientTimeoutError, ConnectError,
                     ProtocolError, SbxError)
from .types import Sandbox, SandboxStatus

__all__ = ["Client", "ping", "available", "ensure_sandbox", "release",
           "status", "reset", "snapshot", "request_sandbox", "sandbox"]

log = logging.getLogger("sbx_client")

# A listener whose backlog is full answers a non-blocking connect with
# EAGAIN (Unix sockets do not queue us): try again this often until the
# connect timeout.
_RETRY_S = 0.02


class Client(_proto.Options):
    """Talks to sbx's agent socket: one connection per call.

    ``socket``: the agent socket (default ``$SBX_SOCKET``, else
    ``/run/sbx.sock``); ``connect_timeout``: seconds to get a connection;
    ``timeout``: seconds for the whole call, from its start (a cold
    provision may take tens of seconds), retries of ``busy`` included;
    ``retry_busy``: retry a ``busy`` refusal (after the server's
    ``retry_after_ms`` when it gives one, else with jittered exponential
    backoff) instead of raising BusyError at once. A client holds no
    connection and no state, so one may be shared by threads.
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
        """One request map, one reply map (raw, ``ok`` checked); a
        ``busy`` is tried again while ``retry_busy`` and the time
        allow."""
        retry = self._retry()
        while True:
            try:
                return self._call_once(req, retry.deadline)
            except BusyError as e:
                wait = retry.wait_for(e)
                if wait is None:
                    raise
                time.sleep(wait)

    def _call_once(self, req: Dict[str, Any],
                   deadline: float) -> Dict[str, Any]:
        data = _proto.pack(req)
        s = self._connect()
        try:
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
                       services: Optional[Sequence[str]] = None, *,
                       bind_pid: Optional[int] = None) -> Sandbox:
        """The on-demand provision: ``agent``'s sandbox for ``project``,
        made on a miss (the project's whole opted-in set) and answered
        from the server's cache on a hit. ``services`` names those the
        caller needs (each must be opted in); None or [] asks for the
        set as it is. ``bind_pid``: a process of the caller's uid whose
        exit tears the sandbox down (a server that does not know the key
        ignores it); None binds to none."""
        req = _proto.request_sandbox(agent, project, services, bind_pid)
        return _proto.sandbox_result(agent, project, self.call(req))

    #: The protocol's name for :meth:`ensure_sandbox`.
    request_sandbox = ensure_sandbox

    def reset(self, agent: str, to: Optional[str] = None) -> Sandbox:
        """Put ``agent``'s sandbox back as it was handed out (postgres
        with the seed applied, redis empty), or to snapshot ``to``; every
        session to it is ended. The same credentials come back.
        NoSandboxError: there is none; UnknownSnapshotError: no such
        snapshot, nothing changed."""
        return _proto.reset_result(
            agent, self.call(_proto.reset_request(agent, to)))

    def snapshot(self, agent: str, name: str) -> str:
        """Save the state of every service of ``agent``'s sandbox as
        ``name`` (a slug; one of that name is replaced), for a later
        ``reset(agent, to=name)``. Snapshots live and die with the
        sandbox. Answers the name."""
        return _proto.snapshot_result(
            self.call(_proto.snapshot_request(agent, name)))

    def release(self, agent: str) -> bool:
        """Tear ``agent``'s sandbox down; False if it had none."""
        return _proto.release_result(
            self.call({"op": "release", "agent": agent}))

    def status(self) -> List[SandboxStatus]:
        """The caller's sandboxes (root: every uid's). Today's server
        answers ForbiddenError to anyone but root."""
        return _proto.status_result(self.call({"op": "status"}))


def _client(socket: Optional[str], kw: Dict[str, Any]) -> Client:
    return Client(socket, **kw)


def ping(*, socket: Optional[str] = None, **kw: Any) -> str:
    return _client(socket, kw).ping()


def available(project: str, *, socket: Optional[str] = None,
              **kw: Any) -> List[str]:
    return _client(socket, kw).available(project)


def ensure_sandbox(agent: str, project: str,
                   services: Optional[Sequence[str]] = None, *,
                   socket: Optional[str] = None,
                   bind_pid: Optional[int] = None, **kw: Any) -> Sandbox:
    return _client(socket, kw).ensure_sandbox(agent, project, services,
                                              bind_pid=bind_pid)


request_sandbox = ensure_sandbox


def release(agent: str, *, socket: Optional[str] = None,
            **kw: Any) -> bool:
    return _client(socket, kw).release(agent)


def reset(agent: str, to: Optional[str] = None, *,
          socket: Optional[str] = None, **kw: Any) -> Sandbox:
    return _client(socket, kw).reset(agent, to)


def snapshot(agent: str, name: str, *, socket: Optional[str] = None,
             **kw: Any) -> str:
    return _client(socket, kw).snapshot(agent, name)


def status(*, socket: Optional[str] = None,
           **kw: Any) -> List[SandboxStatus]:
    return _client(socket, kw).status()


@contextlib.contextmanager
def sandbox(agent: str, project: str,
            services: Optional[Sequence[str]] = None, *,
            socket: Optional[str] = None,
            bind_pid: _proto.BindPid = _proto.THIS_PROCESS,
            **kw: Any) -> Iterator[Sandbox]:
    """``with sandbox(agent, project) as sb:`` -- ``agent``'s sandbox for
    the block, released when it ends, by an exception too. Bound by
    default to the process that enters it (``bind_pid``; None for no
    binding), so that a server which supports it tears the sandbox down
    even when this process dies before the block ends. ``kw``: the
    Client's ``connect_timeout``, ``timeout``, ``retry_busy``."""
    c = Client(socket, **kw)
    sb = c.ensure_sandbox(agent, project, services,
                          bind_pid=_proto.bind_pid_of(bind_pid))
    try:
        yield sb
    except BaseException:
        # the block's exception is the one to see: a failed release is
        # only logged then (a bound sandbox goes with its process anyway)
        try:
            c.release(agent)
        except SbxError as e:
            log.warning("sbx: releasing %s failed: %s", agent, e)
        raise
    c.release(agent)
