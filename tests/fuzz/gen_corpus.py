#!/usr/bin/env python3
"""gen_corpus.py - write the seed corpora in tests/fuzz/corpus/.

The seeds are committed; run this again (from the top of the checkout)
only to change them. msgpack is written by hand here: half the seeds are
shapes no packer produces, and it needs no python3-msgpack.

wire seeds:     one chunking-mode byte (see fuzz_wire.c), then the request.
dispatch seeds: fd count, one kind byte per fd (see fuzz_dispatch.c), then
                the fixed-form message of shared/msg.h.
"""
import os
import shutil
import struct

TOP = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")


# ---- msgpack, by hand -----------------------------------------------------

def mp_str(s):
    b = s.encode() if isinstance(s, str) else s
    n = len(b)
    if n < 32:
        return bytes([0xa0 | n]) + b
    if n < 256:
        return b"\xd9" + bytes([n]) + b
    if n < 65536:
        return b"\xda" + struct.pack(">H", n) + b
    return b"\xdb" + struct.pack(">I", n) + b


def mp_int(i):
    if 0 <= i < 128:
        return bytes([i])
    if -32 <= i < 0:
        return struct.pack("b", i)
    return b"\xd3" + struct.pack(">q", i)


def mp_arr(items):
    n = len(items)
    head = bytes([0x90 | n]) if n < 16 else b"\xdc" + struct.pack(">H", n)
    return head + b"".join(enc(x) for x in items)


def mp_map(pairs):
    n = len(pairs)
    head = bytes([0x80 | n]) if n < 16 else b"\xde" + struct.pack(">H", n)
    return head + b"".join(enc(k) + enc(v) for k, v in pairs)


class Raw(bytes):
    """Bytes that go in as they are (already msgpack)."""


def enc(x):
    if isinstance(x, Raw):
        return bytes(x)
    if x is None:
        return b"\xc0"
    if x is True:
        return b"\xc3"
    if x is False:
        return b"\xc2"
    if isinstance(x, int):
        return mp_int(x)
    if isinstance(x, float):
        return b"\xcb" + struct.pack(">d", x)
    if isinstance(x, (str, bytes)):
        return mp_str(x)
    if isinstance(x, list):
        return mp_arr(x)
    if isinstance(x, tuple):      # a map as a tuple of pairs: order, dups
        return mp_map(list(x))
    raise TypeError(x)


def bin8(b):
    return Raw(b"\xc4" + bytes([len(b)]) + b)


# ---- wire seeds -------------------------------------------------------------

SLUG63 = "a" + "b-c_d.e" * 8 + "0123456789abcdefghijklmnop"[:62 - 56]
assert len(SLUG63) == 63
SVC16 = ["svc%02d" % i for i in range(16)]

VALID = {
    "ping": (("op", "ping"),),
    "available": (("op", "available"), ("project", "demo")),
    "request_sandbox": (("op", "request_sandbox"), ("agent", "dev-1"),
                        ("project", "demo"),
                        ("services", ["postgres", "redis"])),
    "release": (("op", "release"), ("agent", "dev-1")),
    "status": (("op", "status"),),
    "reset": (("op", "reset"), ("agent", "dev-1")),
    "reset-to": (("op", "reset"), ("agent", "dev-1"), ("to", "clean")),
    "snapshot": (("op", "snapshot"), ("agent", "dev-1"), ("name", "clean")),
}


def wire_seeds():
    s = {}
    for name, m in VALID.items():
        s["ok-" + name] = enc(m)
        # the same request read 1 byte, a few bytes, and ~1 KiB at a time
        for mode in (1, 2, 3):
            s["ok-%s-chunk%d" % (name, mode)] = bytes([mode]) + enc(m)
        s["trunc-" + name] = enc(m)[:len(enc(m)) // 2]
        s["trunc1-" + name] = enc(m)[:-1]
    s["ok-sandbox-reordered"] = enc((("services", ["redis"]),
                                    ("project", "demo"), ("agent", "a"),
                                    ("op", "request_sandbox")))
    s["ok-sandbox-no-services"] = enc((("op", "request_sandbox"),
                                      ("agent", "a"), ("project", "p"),
                                      ("services", [])))
    s["ok-sandbox-16-services"] = enc((("op", "request_sandbox"),
                                      ("agent", SLUG63), ("project", SLUG63),
                                      ("services", SVC16)))
    s["ok-extra-keys"] = enc((("op", "ping"), ("x", 1), ("y", [1, 2.5]),
                             ("z", (("a", None),)), ("bin", bin8(b"\0\1"))))
    s["ok-trailing-bytes"] = enc(VALID["ping"]) + b"\xc1\xc1garbage"
    s["ok-two-maps"] = enc(VALID["status"]) + enc(VALID["ping"])
    s["ok-str8-op"] = b"\x81\xd9\x02op\xd9\x04ping"
    s["ok-near-64k"] = enc((("op", "ping"), ("pad", "x" * 65000)))

    s["bad-empty"] = b""
    s["bad-not-map-array"] = enc(["op", "ping"])
    s["bad-not-map-str"] = enc("ping")
    s["bad-not-map-int"] = enc(7)
    s["bad-not-map-nil"] = enc(None)
    s["bad-no-op"] = enc((("agent", "a"),))
    s["bad-op-int"] = enc((("op", 1),))
    s["bad-op-bin"] = enc((("op", bin8(b"ping")),))
    s["bad-op-nil"] = enc((("op", None),))
    s["bad-op-unknown"] = enc((("op", "pong"),))
    s["bad-op-prefix"] = enc((("op", "pin"),))
    s["bad-op-nul"] = enc((("op", "ping\0"),))
    s["bad-op-twice"] = enc((("op", "ping"), ("op", "status")))
    s["bad-agent-twice"] = enc((("op", "release"), ("agent", "a"),
                               ("agent", "b")))
    s["bad-key-int"] = enc((("op", "ping"), (1, 2)))
    s["bad-key-nil"] = enc(((None, 2), ("op", "ping")))
    s["bad-project-missing"] = enc((("op", "available"),))
    s["bad-project-int"] = enc((("op", "available"), ("project", 5)))
    s["bad-project-bin"] = enc((("op", "available"),
                               ("project", bin8(b"demo"))))
    for tag, slug in (("upper", "Demo"), ("dash-first", "-demo"),
                      ("dot-first", ".demo"), ("empty", ""),
                      ("64", "a" * 64), ("nul", "de\0mo"), ("space", "de mo"),
                      ("slash", "../etc"), ("utf8", "d\u00e9mo"),
                      ("long", "a" * 300)):
        s["bad-slug-" + tag] = enc((("op", "available"), ("project", slug)))
    s["bad-agent-missing"] = enc((("op", "release"),))
    s["bad-sandbox-no-agent"] = enc((("op", "request_sandbox"),
                                    ("project", "p"), ("services", [])))
    s["bad-services-missing"] = enc((("op", "request_sandbox"),
                                    ("agent", "a"), ("project", "p")))
    s["bad-services-str"] = enc((("op", "request_sandbox"), ("agent", "a"),
                                ("project", "p"), ("services", "redis")))
    s["bad-services-17"] = enc((("op", "request_sandbox"), ("agent", "a"),
                               ("project", "p"),
                               ("services", SVC16 + ["svc16"])))
    s["bad-services-dup"] = enc((("op", "request_sandbox"), ("agent", "a"),
                                ("project", "p"),
                                ("services", ["redis", "pg", "redis"])))
    s["bad-services-int"] = enc((("op", "request_sandbox"), ("agent", "a"),
                                ("project", "p"), ("services", ["redis", 3])))
    s["bad-services-nested"] = enc((("op", "request_sandbox"), ("agent", "a"),
                                   ("project", "p"),
                                   ("services", [["redis"]])))
    # lengths and counts that lie
    s["bad-str32-huge-claim"] = b"\x81\xa2op\xdb\xff\xff\xff\xffping"
    s["bad-array32-huge-claim"] = (b"\x82\xa2op\xa4ping\xa1x\xdd\xff\xff\xff"
                                   b"\xff\xc0")
    s["bad-map32-huge-claim"] = b"\xdf\xff\xff\xff\xff\xa2op\xa4ping"
    s["bad-map16-short"] = b"\xde\x00\x10\xa2op\xa4ping"
    s["bad-oversized-string"] = enc((("op", "ping"), ("pad", "x" * 70000)))
    s["bad-oversized-key"] = enc((("x" * 66000, 1), ("op", "ping")))
    s["bad-invalid-byte"] = b"\x81\xa2op\xc1"
    # msgpack-c's unpacker stack is 32 deep: 31 fits, 1000 does not
    s["ok-nested-31"] = (b"\x82\xa2op\xa4ping\xa1x" + b"\x91" * 30 + b"\xc0")
    s["bad-nested-1000"] = (b"\x82\xa2op\xa4ping\xa1x" + b"\x91" * 1000 +
                            b"\xc0")
    s["bad-nested-maps"] = (b"\x82\xa2op\xa4ping\xa1x" + b"\x81\xa1k" * 200 +
                            b"\xc0")
    s["bad-ext"] = b"\x81\xa2op\xd4\x01\x00"
    s["bad-float-agent"] = enc((("op", "release"), ("agent", 1.5)))
    s["bad-reset-no-agent"] = enc((("op", "reset"), ("to", "clean")))
    s["bad-reset-to-nil"] = enc((("op", "reset"), ("agent", "a"),
                                ("to", None)))
    s["bad-reset-to-slug"] = enc((("op", "reset"), ("agent", "a"),
                                 ("to", "../x")))
    s["bad-snapshot-no-name"] = enc((("op", "snapshot"), ("agent", "a")))
    s["bad-snapshot-name-twice"] = enc((("op", "snapshot"), ("agent", "a"),
                                       ("name", "s1"), ("name", "s2")))
    # every seed not already given a mode reads the whole buffer at once
    return {k: (v if k.startswith("ok-") and "-chunk" in k else b"\0" + v)
            for k, v in s.items()}


# ---- dispatch seeds ---------------------------------------------------------

MAGIC = 0x73627831
PING, AVAILABLE, SANDBOX, RELEASE, STATUS = 1, 2, 3, 4, 5
(K_AGENT, K_PAIR, K_LISTEN, K_ELSEWHERE, K_CLIENT, K_DGRAM, K_SEQPACKET,
 K_PIPE, K_DEVNULL, K_INET, K_TAKEN) = range(11)
GOOD_FDS = [K_AGENT]


def slug(s, size=64):
    b = s.encode() if isinstance(s, str) else s
    return b + b"\0" * (size - len(b))


def hdr(t, magic=MAGIC):
    return struct.pack("<II", magic, t)


def sandbox(agent="dev-1", project="demo", svcs=("postgres", "redis"),
            n=None, tail=b""):
    body = slug(agent) + slug(project) + struct.pack(
        "<I", len(svcs) if n is None else n)
    fields = b"".join(slug(x) for x in svcs) + tail
    return hdr(SANDBOX) + body + fields + b"\0" * (16 * 64 - len(fields))


def framed(msg, fds=GOOD_FDS):
    return bytes([len(fds)] + fds) + msg


def dispatch_seeds():
    s = {
        "ok-ping": framed(hdr(PING)),
        "ok-status": framed(hdr(STATUS)),
        "ok-available": framed(hdr(AVAILABLE) + slug("demo")),
        "ok-release": framed(hdr(RELEASE) + slug("dev-1")),
        "ok-sandbox": framed(sandbox()),
        "ok-sandbox-empty": framed(sandbox(svcs=())),
        "ok-sandbox-16": framed(sandbox(agent="a" * 63, project="b" * 63,
                                        svcs=["s%02d" % i
                                              for i in range(16)])),
        "bad-short": framed(hdr(PING)[:4]),
        "bad-empty": framed(b""),
        "bad-magic": framed(hdr(PING, magic=0x31786273)),
        "bad-type-0": framed(hdr(0)),
        "bad-type-6": framed(hdr(6)),
        "bad-type-huge": framed(hdr(0xffffffff)),
        "bad-ping-long": framed(hdr(PING) + b"\0"),
        "bad-available-short": framed(hdr(AVAILABLE) + slug("demo")[:-1]),
        "bad-available-long": framed(hdr(AVAILABLE) + slug("demo") + b"\0"),
        "bad-oversized": framed(sandbox() + b"\0"),
        "bad-oversized-more": framed(sandbox() + b"\0" * 40),
        "bad-slug-upper": framed(hdr(AVAILABLE) + slug("Demo")),
        "bad-slug-empty": framed(hdr(AVAILABLE) + slug("")),
        "bad-slug-dash-first": framed(hdr(RELEASE) + slug("-x")),
        "bad-slug-no-nul": framed(hdr(RELEASE) + b"a" * 64),
        "bad-slug-smuggled": framed(hdr(RELEASE) + b"ok\0evil" + b"\0" * 57),
        "bad-sandbox-17": framed(sandbox(n=17)),
        "bad-sandbox-n-huge": framed(sandbox(n=0xffffffff)),
        "bad-sandbox-past-n": framed(sandbox(svcs=("pg", "redis"), n=1)),
        "bad-sandbox-dup": framed(sandbox(svcs=("redis", "pg", "redis"))),
        "bad-sandbox-bad-svc": framed(sandbox(svcs=("pg", "Redis"))),
        "bad-sandbox-agent": framed(sandbox(agent="../x")),
        # descriptors: exactly one, the agent's fresh connection
        "bad-fds-none": framed(hdr(PING), []),
        "bad-fds-two": framed(hdr(PING), [K_AGENT, K_PAIR]),
        "bad-fds-two-agent-twice": framed(hdr(PING), [K_AGENT, K_AGENT]),
        "bad-fds-three": framed(hdr(PING), [K_AGENT, K_PAIR, K_PAIR]),
        "bad-fds-five": framed(hdr(PING), GOOD_FDS + [K_PIPE] * 4),
        "bad-fds-swapped": framed(hdr(PING), [K_PAIR, K_AGENT]),
        "bad-fds-pair": framed(hdr(PING), [K_PAIR]),
        "bad-fds-listen": framed(hdr(PING), [K_LISTEN]),
        "bad-fds-elsewhere": framed(hdr(PING), [K_ELSEWHERE]),
        "bad-fds-client": framed(hdr(PING), [K_CLIENT]),
        "bad-fds-dgram": framed(hdr(PING), [K_DGRAM]),
        "bad-fds-seqpacket": framed(hdr(PING), [K_SEQPACKET]),
        "bad-fds-pipe": framed(hdr(PING), [K_PIPE]),
        "bad-fds-devnull": framed(hdr(PING), [K_DEVNULL]),
        "bad-fds-inet": framed(hdr(PING), [K_INET]),
        "bad-fds-taken": framed(hdr(PING), [K_TAKEN]),
        "bad-fds-sandbox-taken": framed(sandbox(), [K_TAKEN]),
        "bad-fds-sandbox-listen": framed(sandbox(), [K_LISTEN]),
    }
    return s


def write(harness, seeds):
    d = os.path.join(TOP, harness)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name, data in sorted(seeds.items()):
        with open(os.path.join(d, name), "wb") as f:
            f.write(data)
    print("%s: %d seeds" % (d, len(seeds)))


write("wire", wire_seeds())
write("dispatch", dispatch_seeds())
