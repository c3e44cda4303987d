"""The wire: one msgpack map each way per connection (docs/protocol.md).
Shared by the sync and the asyncio client; no I/O here."""
from __future__ import annotations

import enum
import os
import random
import time
from typing import Any, Dict, List, Optional, Sequence, Union

import msgpack

from .errors import BusyError, ProtocolError, server_error
from .types import Sandbox, SandboxStatus, parse_service

DEFAULT_SOCKET = "/run/sbx.sock"
DEFAULT_CONNECT_TIMEOUT = 5.0
# A cold provision takes seconds to tens of seconds; the server's own
# deadlines (ready_timeout, runtime_timeout) end it within two minutes.
DEFAULT_TIMEOUT = 120.0
REPLY_MAX = 1 << 20
# busy without the server's hint: waits of BUSY_FIRST_S, then doubling up
# to BUSY_MAX_S, each drawn from its upper half (jitter, so that callers
# refused together do not come back together).
BUSY_FIRST_S = 0.05
BUSY_MAX_S = 2.0
# With the hint (retry_after_ms): never earlier, up to this share later.
BUSY_HINT_SPREAD = 0.25


class _ThisProcess(enum.Enum):
    THIS_PROCESS = "the process that makes the request"


#: ``bind_pid``'s default in the context managers and the pytest
#: fixtures: the process that enters them (its os.getpid() then, so a
#: forked child binds to itself).
THIS_PROCESS = _ThisProcess.THIS_PROCESS
BindPid = Union[int, None, _ThisProcess]


def bind_pid_of(bind_pid: BindPid) -> Optional[int]:
    return os.getpid() if bind_pid is THIS_PROCESS else bind_pid  # type: ignore[return-value]


def default_socket() -> str:
    return os.environ.get("SBX_SOCKET") or DEFAULT_SOCKET


def pack(req: Dict[str, Any]) -> bytes:
    return msgpack.packb(req, use_bin_type=True)


def unpacker() -> msgpack.Unpacker:
    return msgpack.Unpacker(raw=False, max_buffer_size=REPLY_MAX,
                            strict_map_key=False)


def request_sandbox(agent: str, project: str,
                    services: Optional[Sequence[str]],
                    bind_pid: Optional[int] = None) -> Dict[str, Any]:
    """The request map; ``bind_pid`` only when there is one (a server
    that does not know the key ignores it, one that does tears the
    sandbox down when that process exits)."""
    if isinstance(services, str):
        raise TypeError("services is a sequence of names, not a string")
    req: Dict[str, Any] = {"op": "request_sandbox", "agent": agent,
                           "project": project,
                           "services": list(services or ())}
    if bind_pid is not None:
        if isinstance(bind_pid, bool) or not isinstance(bind_pid, int) or \
                bind_pid <= 0:
            raise ValueError("bind_pid is a process id (an int > 0) or None")
        req["bind_pid"] = bind_pid
    return req


def reset_request(agent: str, to: Optional[str]) -> Dict[str, Any]:
    req: Dict[str, Any] = {"op": "reset", "agent": agent}
    if to is not None:
        req["to"] = to
    return req


def snapshot_request(agent: str, name: str) -> Dict[str, Any]:
    return {"op": "snapshot", "agent": agent, "name": name}


def snapshot_result(reply: Dict[str, Any]) -> str:
    n = reply.get("name")
    if not isinstance(n, str):
        raise ProtocolError("the reply has no 'name' string")
    return n


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
                       "the server gave no message", reply)


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


def reset_result(agent: str, reply: Dict[str, Any]) -> Sandbox:
    """A reset answers as a hit does; it names no project unless the
    server adds one (then ``Sandbox.project`` is it, else "")."""
    p = reply.get("project")
    return sandbox_result(agent, p if isinstance(p, str) else "", reply)


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
        bp = r.get("bind_pid")
        if bp is not None and (isinstance(bp, bool) or
                               not isinstance(bp, int)):
            raise ProtocolError("a status row's 'bind_pid' is not an integer")
        out.append(SandboxStatus(uid=_int(r, "uid"), agent=_str(r, "agent"),
                                 project=_str(r, "project"),
                                 services=tuple(svcs),
                                 age_s=_int(r, "age_s"),
                                 idle_s=_int(r, "idle_s"),
                                 bind_pid=bp))
    return out


def busy_delay(attempt: int, retry_after_ms: Optional[int]) -> float:
    """Seconds to wait before try ``attempt + 1`` after a busy: the
    server's hint, jittered upwards, else jittered exponential backoff."""
    if retry_after_ms is not None:
        return retry_after_ms / 1000.0 * \
            (1.0 + BUSY_HINT_SPREAD * random.random())
    cap = min(BUSY_MAX_S, BUSY_FIRST_S * (2.0 ** min(attempt, 16)))
    return cap / 2.0 + random.random() * cap / 2.0


class BusyRetry:
    """One call's retries of ``busy``: all within the call's deadline
    (the client's ``timeout`` from the call's start), so that retrying
    never makes a call take longer than a call may."""

    def __init__(self, enabled: bool, deadline: float,
                 room: float = 0.0) -> None:
        self.enabled = enabled
        self.deadline = deadline
        self.room = room
        self.attempt = 0

    def wait_for(self, e: BusyError) -> Optional[float]:
        """The seconds to sleep before trying again, or None: give up
        and raise ``e`` (retries off, or the wait would leave the next
        try less than ``room`` before the deadline: no use waiting to
        fail, or to time out instead of being told busy)."""
        if not self.enabled:
            return None
        d = busy_delay(self.attempt, e.retry_after_ms)
        if time.monotonic() + d + self.room >= self.deadline:
            return None
        self.attempt += 1
        return d


class Options:
    """The socket, timeouts and busy policy both client flavours are made
    with. ``retry_busy``: a ``busy`` refusal is tried again (see
    :func:`busy_delay`) until the call's ``timeout`` is spent."""

    def __init__(self, socket: Optional[str] = None, *,
                 connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
                 timeout: float = DEFAULT_TIMEOUT,
                 retry_busy: bool = True) -> None:
        if connect_timeout <= 0 or timeout <= 0:
            raise ValueError("timeouts are seconds > 0")
        self.socket = socket or default_socket()
        self.connect_timeout = connect_timeout
        self.timeout = timeout
        self.retry_busy = retry_busy

    def _retry(self) -> BusyRetry:
        # A try after a wait keeps a quarter of the call's time.
        return BusyRetry(self.retry_busy, time.monotonic() + self.timeout,
                         self.timeout / 4)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.socket!r})"
