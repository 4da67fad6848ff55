"""The agent link (docs/protocol.md, "The agent link") as the tests speak
it: an agent's side of the handshake and the sealed lines, written from
the document with libsodium (through ctypes) and hashlib's BLAKE2b, so
that a test can play an agent, or a controller, and tamper with what it
sends. The sealing, the session's key derivation and Session, the slaq
command's sealed sessions on slaqd's TCP port ("Sealed sessions over
TCP"), are the Python client's (python/slaq/sealed.py)."""

import hashlib
import hmac
import json
import os
import socket
import sys
import threading

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
from slaq import sealed as _sealed  # noqa: E402
from slaq.sealed import (ADMIN_SALT, SESSION_LABEL, Refused,  # noqa: E402,F401
                         open_sealed, recv_line, seal, session_identity,
                         session_kdf)

_sealed.load_sodium()
LABEL = b"slaq agent link 2: "
NODE_LABEL = b"slaq node key 1: "
SALT = b"slaq-agent-link\0"


def derive_key(token, salt=SALT):
    """The link key of an agent token (or, with ADMIN_SALT, the key of a
    session's "admin" identity from the control token): Argon2id,
    libsodium's interactive limits, the protocol's fixed salt."""
    return _sealed.argon2id_key(token, salt)


def node_key(token, node):
    """Node's key under the cluster key of token: keyed BLAKE2b-256 of the
    node label and the name."""
    return hashlib.blake2b(NODE_LABEL + node.encode(), digest_size=32,
                           key=derive_key(token)).digest()


def write_node_key(path, token, node, key=None):
    """A node key file, NODE:HEX, mode 0600 (what `slaq cluster node-key
    --out` writes); key instead of node's own makes a wrong one."""
    fd = os.open(str(path), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write("%s:%s\n" % (node, (key or node_key(token, node)).hex()))
    return path


def kdf(key, what, na, nc):
    """A proof or a key: keyed BLAKE2b-256 of the label, what and both
    nonces."""
    return hashlib.blake2b(LABEL + what.encode() + na + nc, digest_size=32,
                           key=key).digest()


def node_key_args(directory, token, node):
    """slaqd --agent's options for node: --node-key-file (its key, from
    token's cluster key, written into directory) and --node-name. token is
    the cluster secret or a file holding it."""
    if hasattr(token, "read_text"):
        token = token.read_text().strip()
    path = os.path.join(str(directory), "%s.key" % node)
    write_node_key(path, token, node)
    return ["--node-key-file", path, "--node-name", node]


class AgentLink:
    """An agent's connection to a controller's agent port: the handshake
    as node (its hello names it) with node's key under token's cluster key
    (or with key, 32 bytes, whatever it is), then send()/recv() of sealed
    JSON messages. With check_controller=False the controller's proof is
    not checked (a fake agent that does not know the key goes on to send
    its own proof)."""

    def __init__(self, port, token, node="n1", key=None,
                 check_controller=True, timeout=10, source=None):
        self.s = socket.create_connection(("127.0.0.1", port),
                                          timeout=timeout,
                                          source_address=source)
        self.f = self.s.makefile("rb")
        # Re-entrant: send() seals and writes under it, so that lines from
        # two threads leave in the order of their counters (the controller
        # closes the link on a line out of order).
        self.lock = threading.RLock()
        key = key or node_key(token, node)
        na = os.urandom(32)
        self.send_raw(json.dumps({"type": "link_hello", "version": 2,
                                  "node": node,
                                  "nonce": na.hex()}).encode())
        ch = self._plain_line()
        if ch.get("type") != "link_challenge":
            raise Refused(ch)
        nc = bytes.fromhex(ch["nonce"])
        if check_controller and not hmac.compare_digest(
                bytes.fromhex(ch["proof"]),
                kdf(key, "proof of the controller", na, nc)):
            raise Refused("the controller did not prove the token")
        self.send_raw(json.dumps({"type": "link_proof", "proof": kdf(
            key, "proof of the agent", na, nc).hex()}).encode())
        self.tx = kdf(key, "key agent to controller", na, nc)
        self.rx = kdf(key, "key controller to agent", na, nc)
        self.txn = self.rxn = 0
        self.sent = []  # every sealed line sent, for replays

    def _plain_line(self):
        line = self.f.readline()
        if not line:
            raise Refused("connection closed")
        return json.loads(line)

    def send_raw(self, line):
        with self.lock:
            self.s.sendall(line + b"\n")

    def sealed(self, msg):
        """The next sealed line for msg (counted as sent)."""
        with self.lock:
            line = seal(self.tx, self.txn, json.dumps(msg).encode())
            self.txn += 1
        self.sent.append(line)
        return line

    def send(self, msg):
        with self.lock:
            self.send_raw(self.sealed(msg))

    def recv(self):
        """The next message: a sealed one opened, or a plain error line
        (with "plain": True); None when the connection closed."""
        return recv_line(self, "a line from the controller does not open")

    def closed_by_peer(self, timeout=5):
        """True once the controller has closed the connection (what it
        sent before is read and dropped)."""
        self.s.settimeout(timeout)
        try:
            while self.s.recv(65536):
                pass
            return True
        except (socket.timeout, TimeoutError):
            return False
        except OSError:
            return True

    def close(self):
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()


class ControllerLink:
    """A controller's side of one accepted agent connection (a socket from
    accept()): the handshake under the key of the node the hello names
    (from token's cluster key, or key, 32 bytes, whatever it is), then
    send()/recv() of sealed JSON messages, as AgentLink does for the
    agent's side. A test that plays the controller to a real agent uses
    it. Raises Refused when the agent hangs up on its proof."""

    def __init__(self, conn, token, key=None):
        self.s = conn
        self.f = conn.makefile("rb")
        self.lock = threading.Lock()
        hello = json.loads(self.f.readline())
        if hello.get("type") != "link_hello":
            raise Refused(hello)
        self.node = hello.get("node")
        key = key or node_key(token, self.node)
        na = bytes.fromhex(hello["nonce"])
        nc = os.urandom(32)
        self.send_raw(json.dumps({"type": "link_challenge", "nonce": nc.hex(),
                                  "proof": kdf(key, "proof of the controller",
                                               na, nc).hex()}).encode())
        line = self.f.readline()
        if not line:
            raise Refused("the agent hung up: it did not take our proof")
        proof = json.loads(line)
        if not hmac.compare_digest(bytes.fromhex(proof.get("proof", "")),
                                   kdf(key, "proof of the agent", na, nc)):
            raise Refused("the agent did not prove the token")
        self.tx = kdf(key, "key controller to agent", na, nc)
        self.rx = kdf(key, "key agent to controller", na, nc)
        self.txn = self.rxn = 0

    def send_raw(self, line):
        with self.lock:
            self.s.sendall(line + b"\n")

    def send(self, msg):
        with self.lock:
            line = seal(self.tx, self.txn, json.dumps(msg).encode())
            self.txn += 1
            self.s.sendall(line + b"\n")

    def recv(self):
        """The next message from the agent, or None when it closed."""
        line = self.f.readline()
        if not line:
            return None
        plain = open_sealed(self.rx, self.rxn, line.strip())
        if plain is None:
            raise Refused("a line from the agent does not open")
        self.rxn += 1
        return json.loads(plain)


class Session(_sealed.Session):
    """The slaq command's side of a sealed session on slaqd's TCP port:
    slaq.sealed.Session, the client's one implementation (see there), with
    closed_by_peer() for the tests."""

    closed_by_peer = AgentLink.closed_by_peer


def ask(addr, cred, msg):
    """One request in a sealed session; slaqd's answer (a refusal of the
    handshake as its plain error message)."""
    try:
        s = Session(addr, cred, check_server=False)
    except Refused as e:
        r = e.args[0]
        return r if isinstance(r, dict) else {"code": "refused",
                                              "message": str(r)}
    try:
        return s.request(msg)
    finally:
        s.close()
