"""Exceptions: every failure is an SbxError carrying a ``code``.

A refusal by the server (``{ok: false, error: CODE, message}``) raises the
subclass of :class:`ServerError` for CODE, with ``code`` the protocol's
code (docs/protocol.md, "Errors"). Failures on the client's side have
codes of their own: ``connect``, ``timeout`` and ``protocol``.
"""
from __future__ import annotations

from typing import Any, Dict, Mapping, Optional, Type

__all__ = [
    "SbxError", "ServerError", "ConnectError", "ClientTimeoutError",
    "ProtocolError", "BadRequestError", "DisabledError",
    "UnknownProjectError", "NotOptedInError", "ForbiddenError",
    "ConflictError", "RuntimeFailedError", "ServerTimeoutError",
    "BusyError", "InternalError", "NoSandboxError", "UnknownSnapshotError",
    "SeedFailedError", "SERVER_CODES", "server_error",
]


class SbxError(Exception):
    """Any failure of an sbx call; ``code`` says which."""

    code: str = "error"

    def __init__(self, message: str, code: Optional[str] = None) -> None:
        super().__init__(message)
        if code is not None:
            self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ServerError(SbxError):
    """The server answered ``ok: false``: ``code`` is its ``error``."""


class ConnectError(SbxError, ConnectionError):
    """No connection: no socket, refused, permission denied."""

    code = "connect"


class ClientTimeoutError(SbxError, TimeoutError):
    """No connection (``phase`` "connect") or no complete answer
    (``phase`` "answer") within the client's timeout."""

    code = "timeout"

    def __init__(self, message: str, phase: str) -> None:
        super().__init__(message)
        self.phase = phase


class ProtocolError(SbxError):
    """A reply that is not one this client can read: truncated, not a
    map, no ``ok``, or without the keys its op must have."""

    code = "protocol"


class BadRequestError(ServerError):
    code = "bad_request"


class DisabledError(ServerError):
    code = "disabled"


class UnknownProjectError(ServerError):
    code = "unknown_project"


class NotOptedInError(ServerError):
    code = "not_opted_in"


class ForbiddenError(ServerError, PermissionError):
    code = "forbidden"


class ConflictError(ServerError):
    code = "conflict"


class RuntimeFailedError(ServerError):
    code = "runtime_failed"


class ServerTimeoutError(ServerError, TimeoutError):
    code = "timeout"


class BusyError(ServerError):
    """A limit of the server's was reached; nothing was done. The
    client retries it by default (``retry_busy``); this is what is left
    when the retries ran out of time or are off. ``retry_after_ms`` is
    the server's hint, None when the reply had none."""

    code = "busy"

    def __init__(self, message: str,
                 retry_after_ms: Optional[int] = None) -> None:
        super().__init__(message)
        self.retry_after_ms = retry_after_ms


class InternalError(ServerError):
    code = "internal"


class NoSandboxError(ServerError):
    """reset or snapshot: the caller holds no sandbox for that agent."""

    code = "no_sandbox"


class UnknownSnapshotError(ServerError):
    """reset to a snapshot the sandbox does not have; nothing changed."""

    code = "unknown_snapshot"


class SeedFailedError(ServerError):
    """The project's seed SQL failed; the message names its file and
    line."""

    code = "seed_failed"


SERVER_CODES: Dict[str, Type[ServerError]] = {
    c.code: c for c in (
        BadRequestError, DisabledError, UnknownProjectError,
        NotOptedInError, ForbiddenError, ConflictError, RuntimeFailedError,
        ServerTimeoutError, BusyError, InternalError, NoSandboxError,
        UnknownSnapshotError, SeedFailedError)
}


def server_error(code: str, message: str,
                 reply: Optional[Mapping[str, Any]] = None) -> ServerError:
    """The exception for a refusal; a code this client does not know
    yet is a plain ServerError with that code. ``reply`` is the whole
    refusal, for the keys a code carries (busy: ``retry_after_ms``)."""
    cls = SERVER_CODES.get(code)
    if cls is None:
        return ServerError(message, code)
    if cls is BusyError:
        ra = (reply or {}).get("retry_after_ms")
        # a hint that is not a count of milliseconds is no hint
        if isinstance(ra, bool) or not isinstance(ra, int) or ra < 0:
            ra = None
        return BusyError(message, ra)
    return cls(message)
