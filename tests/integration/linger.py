"""linger.py SOCKET GO_FILE DONE_FILE LINGER_S - an agent that tries to make the
monitor's last close of its socket wait (run.sh, "a socket's queued
descriptors").

It sends request_sandbox for never-ready (project slow, agent linger1),
whose provision takes its ready_timeout. Once GO_FILE exists (run.sh makes
it when the monitor's worker is probing, so the request has been handed
over), it tries to queue, on its own connection, one byte carrying a TCP
socket with SO_LINGER LINGER_S and unsent data: a socket whose last close
waits LINGER_S seconds. If that byte were queued, the monitor would
release it when it closes the connection after its answer, and its loop
would wait. Prints "send: ok" or "send: EPIPE", then "reply: <error>"
("reset" if the monitor closed with input unread), then keeps the TCP
listener, without which the linger ends at once, until DONE_FILE exists
or LINGER_S have passed.
"""
import errno
import os
import socket
import struct
import sys
import time

path, go, done, linger = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])


def fixstr(s):
    b = s.encode()
    return bytes([0xa0 | len(b)]) + b


request = (bytes([0x84]) + fixstr('op') + fixstr('request_sandbox') +
           fixstr('agent') + fixstr('linger1') + fixstr('project') +
           fixstr('slow') + fixstr('services') + bytes([0x91]) +
           fixstr('never-ready'))

# A connection to a listener that never accepts nor reads, its send
# buffer full: its close waits for its linger time.
lst = socket.socket()
lst.bind(('127.0.0.1', 0))
lst.listen(1)
tcp = socket.socket()
tcp.connect(lst.getsockname())
tcp.setblocking(False)
try:
    while True:
        tcp.send(b'x' * 65536)
except BlockingIOError:
    pass
tcp.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack('ii', 1, linger))

agent = socket.socket(socket.AF_UNIX)
agent.connect(path)
agent.sendall(request)


def wait_file(name, seconds):
    for _ in range(int(seconds * 20)):
        if os.path.exists(name):
            return
        time.sleep(0.05)


wait_file(go, 30)
try:
    socket.send_fds(agent, [b'z'], [tcp.fileno()], socket.MSG_NOSIGNAL)
    print('send: ok', flush=True)
except OSError as e:
    print('send: ' + errno.errorcode.get(e.errno, str(e.errno)), flush=True)
tcp.close()
agent.settimeout(60)
reply = b''
word = 'none'
try:
    while True:
        chunk = agent.recv(4096)
        if not chunk:
            break
        reply += chunk
    for w in (b'runtime_failed', b'timeout', b'internal'):
        if w in reply:
            word = w.decode()
            break
except ConnectionResetError:
    word = 'reset'
print('reply: ' + word, flush=True)
wait_file(done, linger)
