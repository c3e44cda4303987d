#!/usr/bin/env python3
"""gen_corpus.py - write the seed corpora in tests/fuzz/corpus/.

The seeds are committed; run this again (from the top of the checkout)
only to change them. msgpack is written by hand here: half the seeds are
shapes no packer produces, and it needs no python3-msgpack.

wire seeds:     one chunking-mode byte (see fuzz_wire.c), then the request.
dispatch seeds: fd count, one kind byte per fd (see fuzz_dispatch.c), then
                the fixed-form message of shared/msg.h.
results seeds:  the check's number (see fuzz_results.c), then its input:
                the worker's bytes, or for the jobs at start and the audit
                lines the layout fuzz_results.c gives each.
pool seeds:     even: a result pipe's size and script; odd: a sandbox's
                services for a liveness check (see fuzz_pool.c).
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


# ---- results seeds ----------------------------------------------------------

def le16(v):
    return struct.pack("<H", v)


def edit(anchor, off, data):
    """One edit over a sound answer (fuzz_results.c, edit())."""
    out = b""
    while True:
        chunk, data = data[:255], data[255:]
        out += bytes([anchor]) + le16(off) + bytes([len(chunk)]) + chunk
        off += len(chunk)
        if not data:
            return out


# config_read's anchors, in check_config_read's order
(C_MAGIC, C_OK, C_HIDDEN, C_ERR, C_SOCKET, C_MODE, C_RUNTIME, C_NRTARGS,
 C_STATE, C_RUN, C_MAXCHILD, C_USERNS, C_SUBUID, C_NSVC, C_SVC0, C_PORT0,
 C_NENV0, C_TRANSPORT0, C_SVC1, C_SVC2) = range(20)
# bind's descriptor kinds, as fuzz_results.c's enum
(K_GOOD, K_ELSEWHERE, K_NOLISTEN, K_SEQ, K_DGRAM, K_ABSTRACT, K_UNBOUND,
 K_PAIR_, K_PIPE_, K_DEVNULL_, K_TCP) = range(11)
ADOPT_MAGIC = 0x73627861
GONE_WHY_AT = 4 + 64 + 64 + 192        # struct adopt_gone: after its rt_gone


def config_read(mode, *edits, k=0):
    return bytes([11, mode]) + le16(k) + b"".join(edits)


def bind(mode, path, kinds, msg=b""):
    return bytes([12, mode << 1, path, len(kinds)] + list(kinds)) + msg


def adopt(nf, ng, size=0, k=0, edits=b""):
    return bytes([13, nf | ng << 2 | size << 5]) + le16(k) + edits


def audit(fn, op, ev, uid, agent, project, services, container=b"",
          n=None):
    head = bytes([14, fn + 3 * op, ev, 0]) + struct.pack("<I", uid)
    return (head + bytes([len(services) if n is None else n]) +
            slug(agent) + slug(project) + b"".join(slug(x) for x in
                                                   services) + container)


def claims(batch, n, codes):
    """check 4: a JOB_CLAIM of batch claims, answered n and codes."""
    codes = codes + [0] * (64 - len(codes))
    return bytes([4, batch]) + struct.pack("<I64I", n, *codes)


def results_seeds():
    s = {"check-%02d" % i: bytes([i]) + b"\0" * 8 for i in range(11)}
    s.update({
        "config-read-sound": config_read(0),
        "config-read-worker-failed": config_read(1),
        "config-read-short": config_read(2),
        "config-read-long": config_read(4),
        "config-read-long-page": config_read(4, k=4095),
        "config-read-bad-magic": config_read(0, edit(C_MAGIC, 0, b"\0")),
        "config-read-refusal": config_read(
            0, edit(C_OK, 0, b"\0" * 4),
            edit(C_ERR, 0, b"/etc/sbx/sbx.conf:3: unknown key\0")),
        "config-read-refusal-empty": config_read(0, edit(C_OK, 0, b"\0" * 4)),
        "config-read-refusal-unended": config_read(
            0, edit(C_OK, 0, b"\0" * 4), edit(C_ERR, 0, b"x" * 1024)),
        "config-read-refusal-newline": config_read(
            0, edit(C_OK, 0, b"\0" * 4),
            edit(C_ERR, 0, b"x\nsbx-monitor: started\0")),
        "config-read-hidepid-off": config_read(0, edit(C_HIDDEN, 0, b"\0" * 4)),
        "config-read-socket-relative": config_read(
            0, edit(C_SOCKET, 0, b"run/sbx.sock\0")),
        "config-read-socket-unended": config_read(
            0, edit(C_SOCKET, 0, b"/" * 108)),
        "config-read-mode": config_read(0, edit(C_MODE, 0, b"\xff\xff")),
        "config-read-rtargs": config_read(0, edit(C_NRTARGS, 0, b"\xff" * 8)),
        "config-read-run-dir": config_read(0, edit(C_RUN, 0, b"x\0")),
        "config-read-no-children": config_read(
            0, edit(C_MAXCHILD, 0, b"\0" * 4)),
        "config-read-userns-overflow": config_read(
            0, edit(C_USERNS, 0, b"\x00\xff\xff\xff")),
        "config-read-subuid": config_read(0, edit(C_SUBUID, 0, b"\x09")),
        "config-read-nservices-huge": config_read(
            0, edit(C_NSVC, 0, b"\xff" * 8)),
        "config-read-nservices-17": config_read(0, edit(C_NSVC, 0, b"\x11")),
        "config-read-nservices-3": config_read(0, edit(C_NSVC, 0, b"\x03")),
        "config-read-service-upper": config_read(
            0, edit(C_SVC0, 0, b"Postgres\0")),
        "config-read-service-twice": config_read(
            0, edit(C_SVC1, 0, b"postgres\0")),
        "config-read-service-unended": config_read(
            0, edit(C_SVC0, 0, b"p" * 64)),
        "config-read-port-zero": config_read(0, edit(C_PORT0, 0, b"\0" * 4)),
        "config-read-port-big": config_read(
            0, edit(C_PORT0, 0, b"\x00\x00\x01\x00")),
        "config-read-nenv": config_read(0, edit(C_NENV0, 0, b"\xff" * 8)),
        "config-read-transport": config_read(
            0, edit(C_TRANSPORT0, 0, b"\x04")),
        "config-read-runtime-relative": config_read(
            0, edit(C_RUNTIME, 0, b"podman\0")),
        "config-read-state-dir": config_read(0, edit(C_STATE, 0, b"\0")),
        # JOB_CLAIM: the batch's size, then claim_results (n, 64 codes)
        "claims-ok-3": claims(3, 3, [0, 0, 0]),
        "claims-one-refused": claims(3, 3, [0, 3, 0]),
        "claims-full": claims(64, 64, [0] * 64),
        "claims-count-lies": claims(3, 4, [0, 0, 0, 0]),
        "claims-past-batch": claims(3, 3, [0, 0, 0, 3]),
        "claims-code-huge": claims(2, 2, [0, 0xffffffff]),
        "claims-over-cap": claims(65, 65, [0] * 64),
        "claims-short": claims(3, 3, [0, 0, 0])[:-1],
        # JOB_BIND: mode 1 is the answer's exact size
        "bind-taken": bind(1, 0, [K_GOOD]),
        "bind-taken-elsewhere-named": bind(1, 1, [K_ELSEWHERE]),
        "bind-wrong-path": bind(1, 0, [K_ELSEWHERE]),
        "bind-not-listening": bind(1, 2, [K_NOLISTEN]),
        "bind-seqpacket": bind(1, 3, [K_SEQ]),
        "bind-dgram": bind(1, 4, [K_DGRAM]),
        "bind-abstract": bind(1, 0, [K_ABSTRACT]),
        "bind-unbound": bind(1, 0, [K_UNBOUND]),
        "bind-pair": bind(1, 0, [K_PAIR_]),
        "bind-pipe": bind(1, 0, [K_PIPE_]),
        "bind-devnull": bind(1, 0, [K_DEVNULL_]),
        "bind-tcp": bind(1, 0, [K_TCP]),
        "bind-no-fd": bind(1, 0, []),
        "bind-two-fds": bind(1, 0, [K_GOOD, K_GOOD]),
        "bind-five-fds": bind(1, 0, [K_GOOD, K_PIPE_, K_PIPE_, K_PIPE_,
                                     K_PIPE_]),
        "bind-seven-fds": bind(1, 0, [K_GOOD] * 7),
        "bind-sentence": bind(1, 0, [], b"cannot bind /run/sbx.sock: "
                              b"Address already in use\0"),
        "bind-sentence-and-fd": bind(1, 0, [K_GOOD], b"no\0"),
        "bind-sentence-unended": bind(1, 0, [], b"x" * 512),
        "bind-sentence-newline": bind(1, 0, [], b"x\nforged\0"),
        "bind-short": bind(2, 0, [K_GOOD]),
        "bind-long": bind(3, 0, [K_GOOD]),
        "bind-as-given": bind(0, 0, [K_GOOD], b"\0" * 16),
        "bind-as-given-empty": bind(0, 0, [K_GOOD]),
        "bind-worker-failed": bytes([12, 3, 0, 1, K_GOOD]),
        # JOB_ADOPT: records, orphans, their edits; anchors for (1, 1):
        # head, nfound, ngone, found[0], its record, gone[0], its container
        "adopt-empty": adopt(0, 0),
        "adopt-one-each": adopt(1, 1),
        "adopt-three-each": adopt(3, 3),
        "adopt-short": adopt(1, 1, size=1),
        "adopt-long": adopt(1, 1, size=2),
        "adopt-long-one-orphan": adopt(1, 1, size=2, k=523),
        "adopt-short-head": adopt(0, 0, size=1, k=0),
        "adopt-raw-head": bytes([13, 0x10, 0, 0]) +
        struct.pack("<IIII", ADOPT_MAGIC, 0, 0, 1),
        "adopt-raw-counts-lie": bytes([13, 0x10, 0, 0]) +
        struct.pack("<IIII", ADOPT_MAGIC, 0xffffffff, 0xffffffff, 1),
        "adopt-raw-one-short": bytes([13, 0x10, 0, 0]) +
        struct.pack("<IIII", ADOPT_MAGIC, 0, 1, 1) + b"\0" * 100,
        "adopt-bad-magic": adopt(1, 1, edits=edit(0, 0, b"\0")),
        "adopt-nfound-lies": adopt(1, 1, edits=edit(1, 0, b"\x02")),
        "adopt-ngone-lies": adopt(1, 1, edits=edit(2, 0, b"\0")),
        "adopt-file-dot": adopt(1, 1, edits=edit(3, 0, b".x\0")),
        "adopt-file-slash": adopt(1, 1, edits=edit(3, 0, b"../x\0")),
        "adopt-record-magic": adopt(1, 1, edits=edit(4, 0, b"\0")),
        "adopt-record-nservices": adopt(1, 1, edits=edit(4, 12, b"\xff")),
        "adopt-gone-why-whole": adopt(
            1, 1, edits=edit(5, GONE_WHY_AT, b"\0\0\0\0")),
        "adopt-gone-why-huge": adopt(
            1, 1, edits=edit(5, GONE_WHY_AT, b"\xff\xff\xff\xff")),
        "adopt-gone-agent": adopt(1, 1, edits=edit(5, 4, b"A\0")),
        "adopt-container-newline": adopt(
            1, 1, edits=edit(6, 0, b"sbx\naudit event=adopt\0")),
        "adopt-container-space": adopt(1, 1, edits=edit(6, 0, b"a b\0")),
        "adopt-container-unended": adopt(1, 1, edits=edit(6, 0, b"c" * 192)),
        "adopt-container-upper": adopt(1, 1, edits=edit(6, 0, b"Sbx-A_1.b\0")),
        # audit lines: (fn, op, event, uid, agent, project, services, tail)
        "audit-provision": audit(0, 0, 0, 1000, "dev-1", "demo",
                                 ["postgres", "redis"],
                                 b"sbx-1000-dev-1-redis"),
        "audit-none": audit(0, 0, 2, 0, "", "", []),
        "audit-agent-newline": audit(0, 0, 1, 1000,
                                     b"dev\naudit event=hit uid=0", "demo",
                                     []),
        "audit-unended": audit(0, 0, 1, 1000, b"a" * 64, b"b" * 64,
                               [b"c" * 64] * 16),
        "audit-spaces-and-equals": audit(0, 0, 1, 1000, b"a b=c", b"d e",
                                         [b"x,y", b"z w"]),
        "audit-high-bytes": audit(0, 0, 1, 1000, bytes(range(0x80, 0xc0)),
                                  bytes(range(0xc0, 0x100)), []),
        "audit-container-newline": audit(
            0, 0, 7, 1000, "a1", "demo", [],
            b"x\naudit event=adopt uid=0 agent=root"),
        "audit-container-controls": audit(0, 0, 7, 1000, "a1", "demo", [],
                                          bytes(range(1, 32)) + b"\x7f"),
        "audit-sandbox": audit(1, 0, 0, 1000, "dev-1", "demo",
                               ["postgres", "redis"]),
        "audit-sandbox-16": audit(1, 0, 1, 1000, "a" * 63, "b" * 63,
                                  ["s%02d" % i for i in range(16)]),
        "audit-sandbox-17": audit(1, 0, 1, 1000, "a", "b",
                                  ["s%02d" % i for i in range(17)]),
        "audit-sandbox-255": audit(1, 0, 1, 1000, "a", "b", ["s"] * 20,
                                   n=255),
        "audit-sandbox-newline": audit(1, 0, 4, 1000, b"a\nb", b"c\rd",
                                       [b"e\tf"]),
        "audit-refuse": audit(2, 3, 5, 1000, "dev-1", "demo", ["redis"]),
        "audit-refuse-255": audit(2, 3, 5, 1000, "dev-1", "demo",
                                  ["redis"] * 16, n=255),
        "audit-refuse-uid-max": audit(2, 5, 5, 0xffffffff, "x", "", []),
        # the spawner: (request what, type, foreground, flags, nfds, kinds,
        # answer pid, flags, pid choice); kinds as spawn_check.c's enum
        "spawn-worker": spawn(1, 1, 0, 0, 2, (0, 4)),
        "spawn-worker-one-fd": spawn(1, 1, 0, 0, 1, (0,)),
        "spawn-worker-unsealed": spawn(1, 1, 0, 0, 2, (3, 4)),
        "spawn-worker-fd3-dir": spawn(1, 1, 0, 0, 2, (0, 10)),
        "spawn-worker-type-0": spawn(1, 0, 0, 0, 2, (0, 4)),
        "spawn-broker": spawn(2, 0, 0, 0, 4, (6, 7, 1, 5), choice=2),
        "spawn-broker-fg": spawn(2, 0, 1, 0, 3, (6, 7, 1), choice=1),
        "spawn-broker-stream-chan": spawn(2, 0, 0, 0, 4, (6, 8, 1, 5)),
        "spawn-short": spawn(1, 1, 0, 0x30, 2, (0, 4)),
        "spawn-answer-errno": spawn(1, 1, 0, 0, 2, (0, 4), choice=13),
        "spawn-answer-short": spawn(1, 1, 0, 0, 2, (0, 4), aflags=6),
    })
    return s


def spawn(what, typ, fg, flags, nfds, kinds, pid=0, aflags=0, choice=0):
    """check_spawn's input (spawn_check.c): a request, its descriptors'
    kinds, an answer and which pid it names."""
    kinds = tuple(kinds) + (9,) * (4 - len(kinds))
    return (bytes([15]) + struct.pack("<IIII", 0x73627873, what, typ, fg) +
            bytes([flags, nfds]) + bytes(kinds) +
            struct.pack("<Ii", 0x73627873, pid) + bytes([aflags, choice]))


# ---- pool seeds -------------------------------------------------------------

def pipe(mode, *steps, k=0):
    """A result pipe: the size's mode (0 an outcome, 1 a code, 2 a data
    job's result, 3 1 + k), then steps: ("w", bytes), "loop", "close",
    "expire"."""
    out = bytes([0, mode]) + le16(k)
    for st in steps:
        if isinstance(st, tuple):
            out += bytes([0, len(st[1])]) + st[1]
        else:
            out += bytes([{"loop": 1, "close": 2, "expire": 3}[st]])
    return out


(AT_LISTEN, AT_FULL, AT_BOUND, AT_DGRAM, AT_SEQPACKET, AT_FILE, AT_FIFO,
 AT_DIR, AT_NOTHING, AT_LINK, AT_LOOP, AT_TCP_LISTEN, AT_TCP_CLOSED) = \
    range(13)
AT_NAMES = ["listen", "full", "bound", "dgram", "seqpacket", "file", "fifo",
            "dir", "nothing", "link", "loop", "tcp-listen", "tcp-closed"]
F_EXITED, F_NO_PIDFD, F_LOGIN_FAILED, F_FRESH = 1, 2, 4, 8


def live(*svcs):
    return bytes([1, len(svcs)] + [b for at, f in svcs for b in (at, f)])


def pool_seeds():
    code = b"\0\0\0\0"
    s = {
        "pipe-code": pipe(1, ("w", code), "loop"),
        "pipe-code-in-two": pipe(1, ("w", code[:2]), "loop", ("w", code[2:]),
                                 "loop"),
        "pipe-code-byte-by-byte": pipe(1, *[x for b in code for x in
                                            (("w", bytes([b])), "loop")]),
        "pipe-code-then-more": pipe(1, ("w", code + b"\1\2\3\4"), "loop",
                                    ("w", b"more"), "loop"),
        "pipe-code-short-eof": pipe(1, ("w", code[:3]), "close", "loop"),
        "pipe-code-eof-first": pipe(1, "close", "loop"),
        "pipe-code-nothing": pipe(1),
        "pipe-code-late": pipe(1, ("w", code[:2]), "loop", "expire",
                               ("w", code[2:]), "loop"),
        "pipe-code-expire-first": pipe(1, "expire"),
        "pipe-code-expire-after": pipe(1, ("w", code), "loop", "expire",
                                       "loop"),
        "pipe-code-close-then-loop": pipe(1, ("w", code), "close", "loop"),
        "pipe-outcome": pipe(0, ("w", b"\0" * 255), ("w", b"\1" * 45),
                             "loop"),
        "pipe-outcome-short": pipe(0, ("w", b"\0" * 255), "close", "loop"),
        "pipe-data": pipe(2, ("w", b"\0" * 255), "loop", ("w", b"\0" * 255),
                          "loop", ("w", b"\0" * 255), "loop"),
        "pipe-big": pipe(3, *[("w", bytes([i]) * 255) for i in range(16)],
                         "loop", k=4095),
        "pipe-one-byte": pipe(3, ("w", b"x"), "loop", k=0),
    }
    for at, name in enumerate(AT_NAMES):
        s["live-" + name] = live((at, 0))
        s["live-" + name + "-fresh"] = live((at, F_FRESH))
    s.update({
        "live-none": live(),
        "live-exited": live((AT_LISTEN, F_EXITED)),
        "live-no-pidfd": live((AT_LISTEN, F_NO_PIDFD)),
        "live-login-failed": live((AT_TCP_LISTEN, F_LOGIN_FAILED)),
        "live-four": live((AT_LISTEN, 0), (AT_TCP_LISTEN, 0), (AT_FULL, 0),
                          (AT_LINK, F_FRESH)),
        "live-four-last-gone": live((AT_LISTEN, 0), (AT_TCP_LISTEN, 0),
                                    (AT_FULL, 0), (AT_NOTHING, 0)),
        "live-four-last-exited": live((AT_LISTEN, 0), (AT_TCP_LISTEN, 0),
                                      (AT_FULL, 0), (AT_LISTEN, F_EXITED)),
    })
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
write("results", results_seeds())
write("pool", pool_seeds())
