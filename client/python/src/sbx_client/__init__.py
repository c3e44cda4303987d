"""sbx_client: throwaway postgres and redis sandboxes from sbx, for
Python orchestrators and agents.

    import sbx_client

    if "postgres" in sbx_client.available("myproj"):       # spawn time
        sb = sbx_client.ensure_sandbox("dev-1", "myproj", ["postgres"])
        psycopg2.connect(sb["postgres"].dsn())

The same calls as coroutines are in :mod:`sbx_client.aio`. The protocol
is sbx's docs/protocol.md.
"""
from .client import (Client, available, ensure_sandbox, ping, release,
                     status)
from .errors import (BadRequestError, BusyError, ClientTimeoutError,
                     ConflictError, ConnectError, DisabledError,
                     ForbiddenError, InternalError, NotOptedInError,
                     ProtocolError, RuntimeFailedError, SbxError,
                     ServerError, ServerTimeoutError, UnknownProjectError)
from .types import (PostgresService, RedisService, Sandbox, SandboxStatus,
                    Service)
from .aio import AsyncClient

__version__ = "0.1.0"

__all__ = [
    "Client", "AsyncClient", "available", "ensure_sandbox", "ping",
    "release", "status", "Sandbox", "SandboxStatus", "Service",
    "PostgresService", "RedisService", "SbxError", "ServerError",
    "ConnectError", "ClientTimeoutError", "ProtocolError",
    "BadRequestError", "DisabledError", "UnknownProjectError",
    "NotOptedInError", "ForbiddenError", "ConflictError",
    "RuntimeFailedError", "ServerTimeoutError", "BusyError",
    "InternalError",
]
