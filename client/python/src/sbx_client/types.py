"""Typed results: a dataclass per service, the sandbox, a status row.

A service entry of a ``request_sandbox`` reply has ``user``, ``password``
and ``database`` always, and ``socket``, ``host`` and ``port`` where its
transport gives them (docs/protocol.md, "Reaching a sandbox"):

=========  ===============================================================
unix       ``socket``; postgres also ``host`` = the socket's directory and
           ``port`` = the number in its name ``.s.PGSQL.<port>``
tcp        ``host`` 127.0.0.1 and ``port``
both       all three: the socket, and tcp's host and port
=========  ===============================================================

``url()`` follows the URL rule the ``sbx`` command follows too: the
loopback port when the service has one (tcp, both), which every URL
reader takes; else the Unix socket (postgres:
``postgresql://U:P@localhost/DB?host=DIR&port=N``, the directory as is;
redis: redis-py's ``unix://U:P@/path?db=N``). ``dsn()`` and
``connect_kwargs()`` name the Unix socket when there is one (only the
owning uid can enter its directory; a loopback port is guarded by the
password alone), else the loopback port. ``tcp=True`` asks any of them
for the port.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple, Union
from urllib.parse import quote

from .errors import ProtocolError

__all__ = [
    "Service", "PostgresService", "RedisService", "Sandbox",
    "SandboxStatus", "service_kind", "parse_service",
]

_PG_SOCK = ".s.PGSQL."


def service_kind(name: str) -> str:
    """"postgres", "redis" or "other", from a service's name, as the
    ``sbx`` command decides (postgres*, pg, pg-*, pg_*, pg.*; redis*,
    valkey*)."""
    if name.startswith("postgres") or name == "pg" or \
            name.startswith(("pg-", "pg_", "pg.")):
        return "postgres"
    if name.startswith(("redis", "valkey")):
        return "redis"
    return "other"


def _q(s: str) -> str:
    """Percent-encoded where a byte is not unreserved (RFC 3986)."""
    return quote(s, safe="")


def _socket_dir_param(d: str) -> str:
    """A socket directory as the value of libpq's ``host`` parameter:
    as it is (libpq takes ``?host=/path`` undecoded; a URL with no
    ``%`` suits configparser, hence alembic), each byte but unreserved
    ones and ``/`` encoded, which no path sbx makes has."""
    return quote(d, safe="/")


def _userinfo(user: str, password: str) -> str:
    if not user and not password:
        return ""
    return _q(user) + (":" + _q(password) if password else "") + "@"


def _hostport(host: str, port: int) -> str:
    if ":" in host and not host.startswith("["):
        host = "[" + host + "]"
    return f"{host}:{port}"


def _libpq_value(v: str) -> str:
    """A libpq keyword/value: bare when it can be, else single-quoted
    with ' and \\ escaped."""
    if v and not any(c in v for c in " '\\\t\n\r\f\v"):
        return v
    return "'" + v.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass(frozen=True)
class Service:
    """One service of a sandbox. ``password`` is left out of repr()."""

    name: str
    user: str
    password: str = field(repr=False)
    database: str
    socket: Optional[str] = None
    host: Optional[str] = None
    port: Optional[int] = None

    kind = "other"

    @property
    def tcp(self) -> Optional[Tuple[str, int]]:
        """(host, port) on the loopback address, if the transport
        publishes one (tcp, both)."""
        if self.host and not self.host.startswith("/") and self.port:
            return (self.host, self.port)
        return None

    def url(self, *, tcp: bool = False) -> str:
        """A URL for the service's usual clients: over the loopback port
        when the service has one, else over its Unix socket;
        ``tcp=True``: the port or ValueError."""
        raise ValueError(f"service {self.name!r}: no URL scheme known "
                         "for it (not a postgres or redis service)")

    def dsn(self, *, tcp: bool = False) -> str:
        """The service's connection string; the URL unless the kind has a
        form of its own."""
        return self.url(tcp=tcp)

    def _need_tcp(self) -> Tuple[str, int]:
        t = self.tcp
        if t is None:
            raise ValueError(f"service {self.name!r} has no loopback "
                             "port (its transport is unix)")
        return t


@dataclass(frozen=True)
class PostgresService(Service):
    """A postgres: ``url()`` is libpq's URI, over the loopback port when
    there is one, else ``postgresql://U:P@localhost/DB?host=DIR&port=N``
    (the query's host, the socket's directory, overrides ``localhost``
    in libpq, psycopg, SQLAlchemy and node-postgres; ``localhost`` is
    there for readers that refuse credentials without a host, such as
    WHATWG ``new URL()``). ``dsn()`` is libpq's keyword/value string and
    takes the socket's directory as the host when there is a
    socket."""

    kind = "postgres"

    @property
    def socket_dir(self) -> Optional[Tuple[str, int]]:
        """libpq's (directory, port) for the socket: from the socket's
        name ``.s.PGSQL.<port>``, else from a host that is a directory."""
        if self.socket:
            d, sep, n = self.socket.rpartition("/" + _PG_SOCK)
            if sep and n.isdigit() and 0 < int(n) < 65536:
                return (d or "/", int(n))
        if self.host and self.host.startswith("/") and self.port:
            return (self.host, self.port)
        return None

    def _where(self, tcp: bool) -> Tuple[str, int, bool]:
        if not tcp:
            s = self.socket_dir
            if s is not None:
                return (s[0], s[1], True)
        h, p = self._need_tcp()
        return (h, p, False)

    def url(self, *, tcp: bool = False) -> str:
        auth = _userinfo(self.user, self.password)
        db = _q(self.database)
        s = self.socket_dir
        if tcp or self.tcp is not None or s is None:
            host, port = self._need_tcp()
            return f"postgresql://{auth}{_hostport(host, port)}/{db}"
        return (f"postgresql://{auth}localhost/{db}"
                f"?host={_socket_dir_param(s[0])}&port={s[1]}")

    def connect_kwargs(self, *, tcp: bool = False) -> Dict[str, Any]:
        """Keyword arguments for psycopg2.connect / psycopg.connect."""
        host, port, _ = self._where(tcp)
        return {"host": host, "port": port, "user": self.user,
                "password": self.password, "dbname": self.database}

    def dsn(self, *, tcp: bool = False) -> str:
        return " ".join(f"{k}={_libpq_value(str(v))}"
                        for k, v in self.connect_kwargs(tcp=tcp).items())


@dataclass(frozen=True)
class RedisService(Service):
    """A redis: ``url()`` is ``redis://`` over the loopback port when
    there is one, which every redis client reads; else redis-py's
    ``unix://`` over the socket (read by redis-py, hence RQ; not by
    Celery's kombu, node-redis or ioredis). ``dsn()`` is the same URL;
    ``connect_kwargs()`` takes the socket when there is one."""

    kind = "redis"

    def url(self, *, tcp: bool = False) -> str:
        auth = _userinfo(self.user, self.password)
        if self.socket and not tcp and self.tcp is None:
            q = f"?db={_q(self.database)}" if self.database else ""
            return f"unix://{auth}{quote(self.socket, safe='/')}{q}"
        host, port = self._need_tcp()
        return f"redis://{auth}{_hostport(host, port)}/{_q(self.database)}"

    def connect_kwargs(self, *, tcp: bool = False) -> Dict[str, Any]:
        """Keyword arguments for redis.Redis."""
        kw: Dict[str, Any] = {"username": self.user,
                              "password": self.password}
        if self.database.isdigit():
            kw["db"] = int(self.database)
        if self.socket and not tcp:
            kw["unix_socket_path"] = self.socket
        else:
            kw["host"], kw["port"] = self._need_tcp()
        return kw


AnyService = Union[PostgresService, RedisService, Service]


@dataclass(frozen=True)
class Sandbox:
    """An agent's sandbox: every service of the project's opted-in set,
    by name. Two answers for the same live sandbox compare equal."""

    agent: str
    project: str
    services: Mapping[str, AnyService]

    def __getitem__(self, name: str) -> AnyService:
        return self.services[name]

    def __contains__(self, name: object) -> bool:
        return name in self.services

    def only(self, kind: str) -> Optional[AnyService]:
        """The service of that kind ("postgres", "redis") if the
        sandbox has exactly one, else None."""
        found = [s for s in self.services.values() if s.kind == kind]
        return found[0] if len(found) == 1 else None

    @property
    def postgres(self) -> Optional[PostgresService]:
        s = self.only("postgres")
        return s if isinstance(s, PostgresService) else None

    @property
    def redis(self) -> Optional[RedisService]:
        s = self.only("redis")
        return s if isinstance(s, RedisService) else None

    def env(self) -> Dict[str, str]:
        """Variables as ``sbx request`` prints them: NAME_URL per
        service, and DATABASE_URL / REDIS_URL for the only postgres and
        the only redis."""
        out: Dict[str, str] = {}
        for s in self.services.values():
            if s.kind == "other":
                continue
            n = "".join(c if c.isalnum() else "_" for c in s.name.upper())
            if n[0].isdigit():
                n = "_" + n
            out[n + "_URL"] = s.url()
        if self.postgres is not None:
            out.setdefault("DATABASE_URL", self.postgres.url())
        if self.redis is not None:
            out.setdefault("REDIS_URL", self.redis.url())
        return out


@dataclass(frozen=True)
class SandboxStatus:
    """A row of ``status``: never a password. ``bind_pid`` is the
    process the sandbox is bound to (torn down at its exit), None when
    it is bound to none or the server does not say."""

    uid: int
    agent: str
    project: str
    services: Tuple[str, ...]
    age_s: int
    idle_s: int
    bind_pid: Optional[int] = None


def _opt_str(entry: Mapping[str, Any], key: str, name: str) -> Optional[str]:
    v = entry.get(key)
    if v is None:
        return None
    if not isinstance(v, str):
        raise ProtocolError(f"service {name!r}: {key} is not a string")
    return v


def parse_service(name: Any, entry: Any) -> AnyService:
    """One entry of the reply's ``services`` map, checked."""
    if not isinstance(name, str) or not name:
        raise ProtocolError("a service name in the reply is not a string")
    if not isinstance(entry, dict):
        raise ProtocolError(f"service {name!r} is not a map")
    vals = {}
    for k in ("user", "password", "database"):
        v = _opt_str(entry, k, name)
        if v is None:
            raise ProtocolError(f"service {name!r} has no {k}")
        vals[k] = v
    sock = _opt_str(entry, "socket", name) or None
    host = _opt_str(entry, "host", name) or None
    port = entry.get("port")
    if port is not None and (isinstance(port, bool) or
                             not isinstance(port, int) or
                             not 0 < port < 65536):
        raise ProtocolError(f"service {name!r}: port is not a port number")
    if sock is None and (host is None or port is None):
        raise ProtocolError(f"service {name!r} has neither a socket nor "
                            "a host and port")
    cls = {"postgres": PostgresService, "redis": RedisService}.get(
        service_kind(name), Service)
    return cls(name=name, socket=sock, host=host, port=port, **vals)
