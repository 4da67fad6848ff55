"""slaq.control — one control request to slaqd over its Unix socket.

What `slaq ls`, `slaq status` and the other commands send (docs/protocol.md,
"Control sessions"): one JSON object on a line, answered by one JSON object
on a line. For scripts and tests that talk to slaqd directly; standard
library only.
"""

import json
import socket


def request(sock_path, msg, timeout=10.0):
    """Sends `msg` (a dict) to the slaqd listening on `sock_path` and
    returns its reply as a dict. Raises OSError when slaqd cannot be
    reached or closes the connection before answering, and ValueError when
    the reply is not JSON."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    try:
        s.connect(sock_path)
        s.sendall(json.dumps(msg).encode() + b"\n")
        buf = b""
        while b"\n" not in buf:
            data = s.recv(1 << 20)
            if not data:
                raise OSError("slaqd closed the connection before answering")
            buf += data
        return json.loads(buf.split(b"\n")[0])
    finally:
        s.close()
