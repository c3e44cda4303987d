"""The asyncio client: the same calls as :mod:`sbx_client.client`, as
coroutines. Nothing blocks the event loop; concurrent calls each have
their own connection (the server makes concurrent ``ensure_sandbox``
calls for one agent share one provision)."""
from __future__ import annotations

import asyncio
import socket as _socket
from typing import Any, Dict, List, Optional, Sequence

import msgpack

from . import _proto
from .errors import ClientTimeoutError, ConnectError, ProtocolError
from .types import Sandbox, SandboxStatus

__all__ = ["AsyncClient", "ping", "available", "ensure_sandbox", "release",
           "status"]


class AsyncClient(_proto.Options):
    """Like :class:`sbx_client.Client`; every call is a coroutine."""


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
        """One request map, one reply map (raw, ``ok`` checked)."""
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
                    self._exchange(loop, s, data), self.timeout)
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
                             services: Optional[Sequence[str]] = None
                             ) -> Sandbox:
        req = _proto.request_sandbox(agent, project, services)
        return _proto.sandbox_result(agent, project, await self.call(req))

    async def release(self, agent: str) -> bool:
        return _proto.release_result(
            await self.call({"op": "release", "agent": agent}))

    async def status(self) -> List[SandboxStatus]:
        return _proto.status_result(await self.call({"op": "status"}))


def _client(socket: Optional[str], kw: Dict[str, float]) -> AsyncClient:
    return AsyncClient(socket, **kw)


async def ping(*, socket: Optional[str] = None, **kw: float) -> str:
    return await _client(socket, kw).ping()


async def available(project: str, *, socket: Optional[str] = None,
                    **kw: float) -> List[str]:
    return await _client(socket, kw).available(project)


async def ensure_sandbox(agent: str, project: str,
                         services: Optional[Sequence[str]] = None, *,
                         socket: Optional[str] = None,
                         **kw: float) -> Sandbox:
    return await _client(socket, kw).ensure_sandbox(agent, project, services)


async def release(agent: str, *, socket: Optional[str] = None,
                  **kw: float) -> bool:
    return await _client(socket, kw).release(agent)


async def status(*, socket: Optional[str] = None,
                 **kw: float) -> List[SandboxStatus]:
    return await _client(socket, kw).status()
