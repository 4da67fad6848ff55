"""slaq.control — one control request to slaqd over its Unix socket or a
TCP port.

Over TCP slaqd takes in clear only what the job token allows (job
sessions): control requests there need a sealed session proving the
control token or a user's credential (docs/protocol.md, "Sealed sessions
over TCP"), which the slaq command's --host speaks and this module, on
the standard library alone, does not. A request with "token" or
"user_token" sent here over TCP is answered "unauthorized".

What `slaq ls`, `slaq status` and the other commands send (docs/protocol.md,
"Control sessions"): one JSON object on a line, answered by one JSON object
on a line. For scripts and tests that talk to slaqd directly; standard
library only.
"""

import json
import socket


def request(address, msg, timeout=10.0):
    """Sends `msg` (a dict) to the slaqd listening on `address` and returns
    its reply as a dict. `address` is the path of its Unix socket, or a
    (host, port) pair (where, in clear, only refusals come back: see
    above).
    Raises OSError when slaqd cannot be reached or closes the connection
    before answering, and ValueError when the reply is not JSON."""
    if isinstance(address, tuple):
        s = socket.create_connection(address, timeout=timeout)
    else:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
    try:
        if not isinstance(address, tuple):
            s.connect(address)
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
