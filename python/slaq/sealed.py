"""slaq.sealed — the client's side of a sealed session on slaqd's TCP port
(docs/protocol.md, "Sealed sessions over TCP"), as `slaq --host` speaks it.

The handshake proves slaqd to the client before the client proves its
credential; the credential's secret itself is never sent. After it, every
line both ways is sealed with ChaCha20-Poly1305 (IETF) under a key of each
direction, with the line's number as its nonce.

BLAKE2b comes from hashlib; the AEAD and, for the control token's key,
Argon2id come from the system's libsodium through ctypes. Without
libsodium, `load_sodium()` raises `RuntimeError` saying so, and nothing of
this module is usable (the Unix socket needs none of it).

The test suite's agent-link helper (tests/e2e/agentlink.py) uses the
same functions for its sessions.
"""

import base64
import ctypes
import ctypes.util
import functools
import hashlib
import hmac
import json
import os
import socket

SESSION_LABEL = b"slaq sealed session 1: "
ADMIN_SALT = b"slaq-admin-key\0\0"

_sodium = None


def load_sodium():
    """libsodium through ctypes, loaded and initialised once. Raises
    RuntimeError naming the package to install when it is missing."""
    global _sodium
    if _sodium is not None:
        return _sodium
    name = ctypes.util.find_library("sodium") or "libsodium.so.23"
    try:
        lib = ctypes.CDLL(name)
    except OSError as e:
        raise RuntimeError(
            "TCP needs libsodium (Debian: apt install libsodium23): %s" % e)
    if lib.sodium_init() < 0:
        raise RuntimeError("libsodium cannot start (sodium_init failed)")
    lib.crypto_pwhash_opslimit_interactive.restype = ctypes.c_size_t
    lib.crypto_pwhash_memlimit_interactive.restype = ctypes.c_size_t
    lib.crypto_pwhash.argtypes = [
        ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p,
        ctypes.c_ulonglong, ctypes.c_char_p, ctypes.c_ulonglong,
        ctypes.c_size_t, ctypes.c_int]
    lib.crypto_aead_chacha20poly1305_ietf_encrypt.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulonglong),
        ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p,
        ctypes.c_ulonglong, ctypes.c_char_p, ctypes.c_char_p,
        ctypes.c_char_p]
    lib.crypto_aead_chacha20poly1305_ietf_decrypt.argtypes = [
        ctypes.c_char_p, ctypes.POINTER(ctypes.c_ulonglong),
        ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulonglong,
        ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_char_p,
        ctypes.c_char_p]
    _sodium = lib
    return lib


@functools.lru_cache(maxsize=8)
def argon2id_key(secret, salt):
    """32 bytes of Argon2id over `secret` (text) with the 16-byte `salt`,
    libsodium's interactive limits (the agent link's and the admin
    identity's key)."""
    lib = load_sodium()
    out = ctypes.create_string_buffer(32)
    pw = secret.encode()
    if lib.crypto_pwhash(out, 32, pw, len(pw), salt,
                         lib.crypto_pwhash_opslimit_interactive(),
                         lib.crypto_pwhash_memlimit_interactive(),
                         lib.crypto_pwhash_alg_argon2id13()) != 0:
        raise RuntimeError("Argon2id failed (out of memory?)")
    return out.raw


def _nonce(n):
    return n.to_bytes(8, "little") + b"\0" * 4


def seal(key, n, plain):
    """The n-th sealed line of a direction under key: base64 of the
    ciphertext and its tag, without a newline."""
    lib = load_sodium()
    out = ctypes.create_string_buffer(len(plain) + 16)
    olen = ctypes.c_ulonglong(0)
    lib.crypto_aead_chacha20poly1305_ietf_encrypt(
        out, ctypes.byref(olen), plain, len(plain), None, 0, None,
        _nonce(n), key)
    return base64.b64encode(out.raw[:olen.value])


def open_sealed(key, n, line):
    """The plaintext of the n-th sealed line under key, or None when it
    does not open (altered, out of order, or under another key)."""
    lib = load_sodium()
    try:
        c = base64.b64decode(line, validate=True)
    except ValueError:
        return None
    if len(c) < 16:
        return None
    out = ctypes.create_string_buffer(len(c))
    olen = ctypes.c_ulonglong(0)
    rc = lib.crypto_aead_chacha20poly1305_ietf_decrypt(
        out, ctypes.byref(olen), None, c, len(c), None, 0, _nonce(n), key)
    return out.raw[:olen.value] if rc == 0 else None


def session_kdf(key, what, na, nc, claim):
    """A session's proof or direction key: BLAKE2b-256 keyed with key over
    the session label, what, both nonces and the claimed identity."""
    return hashlib.blake2b(SESSION_LABEL + what.encode() + na + nc +
                           claim.encode(), digest_size=32, key=key).digest()


def check_credential(cred):
    """Raises ValueError, saying what to do, unless cred has the form of
    a credential: "admin:TOKEN" or "UID:EXPIRES:GENERATION:HEX" with 64
    hex digits (the slaq command's checks before it connects)."""
    if cred.startswith("admin:"):
        return
    parts = cred.split(":")
    if len(parts) == 2:
        raise ValueError("the credential is of an older slaq (UID:HEX, one "
                         "that never expired): run `slaq token --save` again "
                         "on the machine slaqd runs on")
    hexdigits = set("0123456789abcdefABCDEF")
    if len(parts) != 4 or len(parts[3]) != 64 or \
            not set(parts[3]) <= hexdigits:
        raise ValueError("the user credential is not UID:EXPIRES:GENERATION:"
                         "HEX (64 hex digits), nor admin:TOKEN: run `slaq "
                         "token --save` on the machine slaqd runs on")


def session_identity(cred):
    """(the identity a hello claims, the session key) of a credential:
    "admin:TOKEN" (the control token's key, derived) or a user's
    "UID:EXPIRES:GENERATION:HEX" (HEX is the key). Takes whatever splits
    so, so that tests can send malformed claims; check_credential first
    for a user's. ValueError when HEX is not hex."""
    if cred.startswith("admin:"):
        return "admin", argon2id_key(cred[6:], ADMIN_SALT)
    claim, _, secret = cred.rpartition(":")
    return claim, bytes.fromhex(secret)


def recv_line(link, refused):
    """The next message on a link that is open (link.f its reader, link.rx
    and link.rxn its key and count of lines opened): a sealed line opened
    (link.rxn counts it), a plain error line marked "plain": True, or None
    at the end. Raises Refused(refused) when a sealed line does not open.
    Both a session and the tests' agent link read this way."""
    line = link.f.readline()
    if not line:
        return None
    line = line.strip()
    if line.startswith(b"{"):
        m = json.loads(line)
        m["plain"] = True
        return m
    plain = open_sealed(link.rx, link.rxn, line)
    if plain is None:
        raise Refused(refused)
    link.rxn += 1
    return json.loads(plain)


class Refused(Exception):
    """slaqd refused the handshake (args[0]: its plain error line as a
    dict), or the server did not prove the credential's key (a string)."""


class Session:
    """One sealed session to slaqd's TCP port at addr ("HOST:PORT") with
    credential cred (see session_identity). The constructor does the
    handshake and raises Refused when slaqd refuses it or cannot prove the
    key (then nothing but the hello was sent), OSError when slaqd cannot
    be reached. Then send()/recv() carry sealed JSON messages and
    request() does one round trip. With check_server=False slaqd's proof
    is not checked (for tests of a client without the key); claim
    replaces the identity the hello claims."""

    def __init__(self, addr, cred, check_server=True, claim=None,
                 timeout=10):
        host, _, port = addr.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError("expected HOST:PORT (e.g. 10.0.0.5:7071, the "
                             "address given to slaqd --tcp), got %r" % addr)
        ident, key = session_identity(cred)
        ident = claim or ident
        self.s = socket.create_connection((host.strip("[]"), int(port)),
                                          timeout=timeout)
        self.f = self.s.makefile("rb")
        self.sent = []  # every sealed line sent, for tests of replays
        na = os.urandom(32)
        self.send_raw(json.dumps({"type": "link_hello", "version": 1,
                                  "nonce": na.hex(), "as": ident}).encode())
        line = self.f.readline()
        if not line:
            raise Refused("slaqd closed the connection during the handshake")
        ch = json.loads(line)
        if ch.get("type") != "link_challenge":
            raise Refused(ch)
        nc = bytes.fromhex(ch["nonce"])
        if check_server and not hmac.compare_digest(
                bytes.fromhex(ch.get("proof", "")),
                session_kdf(key, "proof of the slaqd", na, nc, ident)):
            raise Refused("the server at %s is not the slaqd of your "
                          "credential: it did not prove its key; nothing of "
                          "the credential or the request was sent" % addr)
        self.send_raw(json.dumps({"type": "link_proof", "proof": session_kdf(
            key, "proof of the client", na, nc, ident).hex()}).encode())
        self.tx = session_kdf(key, "key client to slaqd", na, nc, ident)
        self.rx = session_kdf(key, "key slaqd to client", na, nc, ident)
        self.txn = self.rxn = 0

    def send_raw(self, line):
        """Writes line (bytes) and a newline as they are."""
        self.s.sendall(line + b"\n")

    def sealed(self, msg):
        """The next sealed line for msg (a dict), counted as sent."""
        line = seal(self.tx, self.txn, json.dumps(msg).encode())
        self.txn += 1
        self.sent.append(line)
        return line

    def send(self, msg):
        """Sends msg (a dict) sealed."""
        self.send_raw(self.sealed(msg))

    def recv(self):
        """The next message: a sealed one opened, or a plain error line
        (marked "plain": True); None when slaqd closed the connection.
        Raises Refused when a sealed line does not open."""
        return recv_line(self, "slaqd's reply does not open (altered on the "
                               "way, or not from the slaqd that proved "
                               "itself)")

    def request(self, msg):
        """Sends msg sealed and returns the next message back (see recv)."""
        self.send(msg)
        return self.recv()

    def close(self):
        try:
            self.s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.s.close()
