#!/usr/bin/python3
"""sbx_request.py - ask sbx for a sandbox from Python, with msgpack only.

    sbx_request.py [-S SOCKET] AGENT PROJECT [SERVICE...]

Prints one "NAME host port user password database socket" line per
service of the project ("-" for what the service's transport does not
give), or "sbx: CODE: message" on stderr and exits 1. The protocol is
docs/protocol.md: one msgpack map each way per connection.

Connecting with what it gets (transport unix, the default, gives socket;
tcp gives host 127.0.0.1 and port; both gives all three):

    # psycopg / psycopg2: libpq takes a host that is a directory for the
    # socket in it, named .s.PGSQL.<port> (with transport unix, c["host"]
    # and c["port"] are these two already)
    d, _, n = c["socket"].rpartition("/.s.PGSQL.")
    psycopg.connect(host=d, port=n, user=c["user"],
                    password=c["password"], dbname=c["database"])
    # redis-py
    redis.Redis(unix_socket_path=c["socket"], username=c["user"],
                password=c["password"], db=int(c["database"]))
    # over tcp, for either: host=c["host"], port=c["port"]
"""
import argparse
import os
import socket
import sys

import msgpack  # Debian: python3-msgpack


def call(path, request, timeout=120.0):
    """Send one request map, return the one reply map."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)  # a cold provision takes seconds
        s.connect(path)
        s.sendall(msgpack.packb(request))
        unpacker = msgpack.Unpacker(raw=False)
        while True:
            data = s.recv(65536)
            if not data:
                raise ConnectionError("the server closed without a reply")
            unpacker.feed(data)
            for reply in unpacker:  # the first complete object is it
                return reply


def main():
    ap = argparse.ArgumentParser(description="ask sbx for a sandbox")
    ap.add_argument("-S", "--socket",
                    default=os.environ.get("SBX_SOCKET", "/run/sbx.sock"))
    ap.add_argument("agent")
    ap.add_argument("project")
    ap.add_argument("services", nargs="*")
    a = ap.parse_args()
    reply = call(a.socket, {"op": "request_sandbox", "agent": a.agent,
                            "project": a.project, "services": a.services})
    if not reply.get("ok"):
        print("sbx: %s: %s" % (reply.get("error"), reply.get("message")),
              file=sys.stderr)
        return 1
    for name, c in sorted(reply["services"].items()):
        # socket, host and port are there only where the transport has them
        print(name, c.get("host", "-"), c.get("port", "-"), c["user"],
              c["password"], c["database"], c.get("socket", "-"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
