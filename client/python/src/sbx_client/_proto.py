"""The wire: one msgpack map each way per connection (docs/protocol.md).
Shared by the sync and the asyncio client; no I/O here."""
from __future__ import annotations

import os
from typing import Any, Dict, List, Optional, Sequence

import msgpack

from .errors import ProtocolError, server_error
from .types import Sandbox, SandboxStatus, parse_service

DEFAULT_SOCKET = "/run/sbx.sock"
DEFAULT_CONNECT_TIMEOUT = 5.0
# A cold provision takes seconds to tens of seconds; the server's own
# deadlines (ready_timeout, runtime_timeout) end it within two minutes.
DEFAULT_TIMEOUT = 120.0
REPLY_MAX = 1 << 20


def default_socket() -> str:
    return os.environ.get("SBX_SOCKET") or DEFAULT_SOCKET


def pack(req: Dict[str, Any]) -> bytes:
    return msgpack.packb(req, use_bin_type=True)


def unpacker() -> msgpack.Unpacker:
    return msgpack.Unpacker(raw=False, max_buffer_size=REPLY_MAX,
                            strict_map_key=False)


def request_sandbox(agent: str, project: str,
                    services: Optional[Sequence[str]]) -> Dict[str, Any]:
    if isinstance(services, str):
        raise TypeError("services is a sequence of names, not a string")
    return {"op": "request_sandbox", "agent": agent, "project": project,
            "services": list(services or ())}


def checked(reply: Any) -> Dict[str, Any]:
    """The reply if ``ok`` is true; the refusal as its exception."""
    if not isinstance(reply, dict):
        raise ProtocolError("the reply is not a map")
    ok = reply.get("ok")
    if ok is True:
        return reply
    if ok is not False:
        raise ProtocolError("the reply has no 'ok' boolean")
    code = reply.get("error")
    msg = reply.get("message")
    raise server_error(code if isinstance(code, str) else "unknown",
                       msg if isinstance(msg, str) else
                       "the server gave no message")


def ping_result(reply: Dict[str, Any]) -> str:
    v = reply.get("version")
    if not isinstance(v, str):
        raise ProtocolError("the reply has no 'version' string")
    return v


def available_result(reply: Dict[str, Any]) -> List[str]:
    s = reply.get("services")
    if not isinstance(s, list) or not all(isinstance(x, str) for x in s):
        raise ProtocolError("the reply has no 'services' array of names")
    return list(s)


def sandbox_result(agent: str, project: str,
                   reply: Dict[str, Any]) -> Sandbox:
    s = reply.get("services")
    if not isinstance(s, dict):
        raise ProtocolError("the reply has no 'services' map")
    return Sandbox(agent=agent, project=project,
                   services={k: parse_service(k, v) for k, v in s.items()})


def release_result(reply: Dict[str, Any]) -> bool:
    r = reply.get("released")
    if not isinstance(r, bool):
        raise ProtocolError("the reply has no 'released' boolean")
    return r


def _int(row: Dict[str, Any], k: str) -> int:
    v = row.get(k)
    if isinstance(v, bool) or not isinstance(v, int):
        raise ProtocolError(f"a status row has no integer {k!r}")
    return v


def _str(row: Dict[str, Any], k: str) -> str:
    v = row.get(k)
    if not isinstance(v, str):
        raise ProtocolError(f"a status row has no string {k!r}")
    return v


def status_result(reply: Dict[str, Any]) -> List[SandboxStatus]:
    rows = reply.get("sandboxes")
    if not isinstance(rows, list):
        raise ProtocolError("the reply has no 'sandboxes' array")
    out = []
    for r in rows:
        if not isinstance(r, dict):
            raise ProtocolError("a status row is not a map")
        svcs = r.get("services")
        if not isinstance(svcs, list) or \
                not all(isinstance(x, str) for x in svcs):
            raise ProtocolError("a status row has no 'services' array")
        out.append(SandboxStatus(uid=_int(r, "uid"), agent=_str(r, "agent"),
                                 project=_str(r, "project"),
                                 services=tuple(svcs),
                                 age_s=_int(r, "age_s"),
                                 idle_s=_int(r, "idle_s")))
    return out


class Options:
    """The socket and timeouts both client flavours are made with."""

    def __init__(self, socket: Optional[str] = None, *,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 timeout: float = DEFAULT_TIMEOUT) -> None:
        if connect_timeout <= 0 or timeout <= 0:
            raise ValueError("timeouts are seconds > 0")
        self.socket = socket or default_socket()
        self.connect_timeout = connect_timeout
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.socket!r})"
