"""The asyncio client: the same calls as :mod:`sbx_client.client`, as
coroutines. Nothing blocks the event loop; concurrent calls each have
their own connection (the server makes concurrent ``ensure_sandbox``
calls for one agent share one provision)."""
from __future__ import annotations

import asyncio
import contextlib
import logging
import socket as _socket
import time
from typing import Any, AsyncIterator, Dict, List, Optional, Sequence

import msgpack

from . import _proto
from .errors import (BusyError, ClientTimeoutError, ConnectError,
                     ProtocolError, SbxError)
from .types import Sandbox, SandboxStatus

__all__ = ["AsyncClient", "ping", "available", "ensure_sandbox", "release",
           "status", "reset", "snapshot", "request_sandbox", "sandbox"]

log = logging.getLogger("sbx_client")


class AsyncClient(_proto.Options):
    """Like :class:`sbx_client.Client`; every call is a coroutine (a
    busy's wait too: it sleeps with asyncio, never blocking the loop)."""

    @staticmethod
    async def _exchange(loop: asyncio.AbstractEventLoop, s: _socket.socket,
                        data: bytes) -> Any:
        try:
            await loop.sock_sendall(s, data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # it may have answered first (busy): read that
        u = _proto.unpacker()
        while True:
            chunk = await loop.sock_recv(s, 65536)
            if not chunk:
                raise ProtocolError("the server closed the connection "
                                    "without a complete reply")
            u.feed(chunk)
            for obj in u:
                return obj

    async def call(self, req: Dict[str, Any]) -> Dict[str, Any]:
        """One request map, one reply map (raw, ``ok`` checked); a
        ``busy`` is tried again while ``retry_busy`` and the time
        allow."""
        retry = self._retry()
        while True:
            try:
                return await self._call_once(req, retry.deadline)
            except BusyError as e:
                wait = retry.wait_for(e)
                if wait is None:
                    raise
                await asyncio.sleep(wait)

    async def _call_once(self, req: Dict[str, Any],
                         deadline: float) -> Dict[str, Any]:
        data = _proto.pack(req)
        loop = asyncio.get_running_loop()
        # A bare socket and the loop's sock_* calls, not streams: a
        # stream that fails to write drops what the server had answered.
        s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        try:
            s.setblocking(False)
            try:
                await asyncio.wait_for(loop.sock_connect(s, self.socket),
                                       self.connect_timeout)
            except asyncio.TimeoutError:
                raise ClientTimeoutError(
                    f"no connection to {self.socket} within "
                    f"{self.connect_timeout:g} s", "connect") from None
            except OSError as e:
                raise ConnectError(f"cannot connect to {self.socket}: "
                                   f"{e.strerror or e}") from None
            try:
                reply = await asyncio.wait_for(
                    self._exchange(loop, s, data),
                    max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                raise ClientTimeoutError(
                    f"no complete answer from {self.socket} within "
                    f"{self.timeout:g} s", "answer") from None
            except ConnectionResetError as e:
                raise ProtocolError(f"connection lost: {e.strerror}") \
                    from None
            except (ValueError, msgpack.UnpackException) as e:
                raise ProtocolError(f"unreadable reply: {e}") from None
            except OSError as e:
                raise ConnectError(f"cannot talk to {self.socket}: "
                                   f"{e.strerror or e}") from None
        finally:
            s.close()
        # outside the try: a refusal "timeout" is a TimeoutError too
        return _proto.checked(reply)

    async def ping(self) -> str:
        return _proto.ping_result(await self.call({"op": "ping"}))

    async def available(self, project: str) -> List[str]:
        return _proto.available_result(
            await self.call({"op": "available", "project": project}))

    async def ensure_sandbox(self, agent: str, project: str,
                             services: Optional[Sequence[str]] = None, *,
                             bind_pid: Optional[int] = None) -> Sandbox:
        req = _proto.request_sandbox(agent, project, services, bind_pid)
        return _proto.sandbox_result(agent, project, await self.call(req))

    request_sandbox = ensure_sandbox

    async def reset(self, agent: str, to: Optional[str] = None) -> Sandbox:
        return _proto.reset_result(
            agent, await self.call(_proto.reset_request(agent, to)))

    async def snapshot(self, agent: str, name: str) -> str:
        return _proto.snapshot_result(
            await self.call(_proto.snapshot_request(agent, name)))

    async def release(self, agent: str) -> bool:
        return _proto.release_result(
            await self.call({"op": "release", "agent": agent}))

    async def status(self) -> List[SandboxStatus]:
        return _proto.status_result(await self.call({"op": "status"}))


def _client(socket: Optional[str], kw: Dict[str, Any]) -> AsyncClient:
    return AsyncClient(socket, **kw)


async def ping(*, socket: Optional[str] = None, **kw: Any) -> str:
    return await _client(socket, kw).ping()


async def available(project: str, *, socket: Optional[str] = None,
                    **kw: Any) -> List[str]:
    return await _client(socket, kw).available(project)


async def ensure_sandbox(agent: str, project: str,
                         services: Optional[Sequence[str]] = None, *,
                         socket: Optional[str] = None,
                         bind_pid: Optional[int] = None,
                         **kw: Any) -> Sandbox:
    return await _client(socket, kw).ensure_sandbox(
        agent, project, services, bind_pid=bind_pid)


request_sandbox = ensure_sandbox


async def release(agent: str, *, socket: Optional[str] = None,
                  **kw: Any) -> bool:
    return await _client(socket, kw).release(agent)


async def reset(agent: str, to: Optional[str] = None, *,
                socket: Optional[str] = None, **kw: Any) -> Sandbox:
    return await _client(socket, kw).reset(agent, to)


async def snapshot(agent: str, name: str, *, socket: Optional[str] = None,
                   **kw: Any) -> str:
    return await _client(socket, kw).snapshot(agent, name)


async def status(*, socket: Optional[str] = None,
                 **kw: Any) -> List[SandboxStatus]:
    return await _client(socket, kw).status()


@contextlib.asynccontextmanager
async def sandbox(agent: str, project: str,
                  services: Optional[Sequence[str]] = None, *,
                  socket: Optional[str] = None,
                  bind_pid: _proto.BindPid = _proto.THIS_PROCESS,
                  **kw: Any) -> AsyncIterator[Sandbox]:
    """``async with sandbox(agent, project) as sb:`` -- as
    :func:`sbx_client.sandbox`: released when the block ends (by an
    exception or a cancellation too), bound by default to this
    process."""
    c = AsyncClient(socket, **kw)
    sb = await c.ensure_sandbox(agent, project, services,
                                bind_pid=_proto.bind_pid_of(bind_pid))
    try:
        yield sb
    except BaseException:
        try:
            await c.release(agent)
        except SbxError as e:
            log.warning("sbx: releasing %s failed: %s", agent, e)
        raise
    await c.release(agent)
