"""sbx_client: throwaway postgres and redis sandboxes from sbx, for
Python orchestrators and agents.

    import sbx_client

    if "postgres" in sbx_client.available("myproj"):       # spawn time
        sb = sbx_client.ensure_sandbox("dev-1", "myproj", ["postgres"])
        psycopg2.connect(sb["postgres"].dsn())

    with sbx_client.sandbox("dev-1", "myproj") as sb:     # released at the end
        ...

The same calls as coroutines are in :mod:`sbx_client.aio`. The protocol
is sbx's docs/protocol.md.
"""
from ._proto import THIS_PROCESS
from .client import (Client, available, ensure_sandbox, ping, release,
                     request_sandbox, reset, sandbox, snapshot, status)
from .errors import (BadRequestError, BusyError, ClientTimeoutError,
                     ConflictError, ConnectError, DisabledError,
                     ForbiddenError, InternalError, NoSandboxError,
                     NotOptedInError, ProtocolError, RuntimeFailedError,
                     SbxError, SeedFailedError, ServerError,
                     ServerTimeoutError, UnknownProjectError,
                     UnknownSnapshotError)
from .types import (PostgresService, RedisService, Sandbox, SandboxStatus,
                    Service)
from .aio import AsyncClient

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "available", "ensure_sandbox", "ping",
    "release", "status", "request_sandbox", "reset", "snapshot",
    "sandbox", "THIS_PROCESS", "Sandbox", "SandboxStatus", "Service",
    "PostgresService", "RedisService", "SbxError", "ServerError",
    "ConnectError", "ClientTimeoutError", "ProtocolError",
    "BadRequestError", "DisabledError", "UnknownProjectError",
    "NotOptedInError", "ForbiddenError", "ConflictError",
    "RuntimeFailedError", "ServerTimeoutError", "BusyError",
    "InternalError", "NoSandboxError", "UnknownSnapshotError",
    "SeedFailedError",
]
