"""The slaq command over TCP, attacked (docs/security.md, "User credentials
over TCP"; docs/protocol.md, "Sealed sessions over TCP").

slaqd runs as root with --tcp. Between `slaq --host` and slaqd sits a
proxy written here, which records every byte and may replay or alter a
line; in other tests a fake server takes slaqd's address. Each test is an
attack that must fail: reading the credential, the control token or the
requests on the wire; learning the credential by posing as slaqd; using
an expired or revoked credential (and one user's revocation must not
touch another's); replaying or altering a sealed line.
"""

import json
import os
import socket
import threading
import time

from agentlink import Refused, Session
from conftest import SLAQ, wait_for
from test_tcp_users import _tcp_multiuser
from test_multiuser import (as_user, needs_root, open_dir,  # noqa: F401
                            people)

CONTROL = "control-token-sealed-1234"


class Proxy:
    """A TCP proxy from a port of its own to slaqd's: every byte of every
    connection is kept (up and down), and tamper(line) may change the
    client's lines: it returns the lines to send instead (bytes, without
    newlines). reply_tamper does the same for slaqd's lines."""

    def __init__(self, target, tamper=None, reply_tamper=None):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.tamper, self.reply_tamper = tamper, reply_tamper
        self.up, self.down = bytearray(), bytearray()
        self.ls = socket.socket()
        self.ls.bind(("127.0.0.1", 0))
        self.ls.listen(16)
        self.addr = "127.0.0.1:%d" % self.ls.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            s = socket.create_connection(self.target)
            threading.Thread(target=self._pump, daemon=True,
                             args=(c, s, self.up, self.tamper)).start()
            threading.Thread(target=self._pump, daemon=True,
                             args=(s, c, self.down,
                                   self.reply_tamper)).start()

    @staticmethod
    def _pump(src, dst, log, tamper):
        buf = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                log.extend(data)
                if not tamper:
                    dst.sendall(data)
                    continue
                buf += data
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    for out in tamper(line):
                        dst.sendall(out + b"\n")
        except OSError:
            pass
        for s in (dst, src):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.ls.close()


def _daemon(people, open_dir, daemon_factory, tmp_path):
    return _tcp_multiuser(people, open_dir, daemon_factory, tmp_path,
                          token=CONTROL)


def _slaq(people, who, open_dir, *args, cred=None):
    """`slaq ARGS` as `who` (their HOME; SLAQ_USER_TOKEN=cred if given)."""
    env = {"HOME": people.pw(who).pw_dir}
    if cred:
        env["SLAQ_USER_TOKEN"] = cred
    return as_user(people, who, os.path.join(open_dir, "slaq"), *args,
                   env=env)


def _token(people, who, open_dir, sock, *args):
    p = _slaq(people, who, open_dir, "token", "--socket", sock, *args)
    assert p.returncode == 0, p.stderr
    return p.stdout.strip()


def _failures(d):
    return d.request({"type": "status"})["auth_failures_total"]


def _after_lockout():
    time.sleep(0.5)  # a failure locks the address out for 0.1 s, 0.2 s ...


@needs_root
def test_a_recorded_tcp_session_shows_no_credential_token_or_request(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _daemon(people, open_dir, daemon_factory, tmp_path)
    cred = _token(people, "alice", open_dir, sock)
    secret = cred.rsplit(":", 1)[1]
    proxy = Proxy(addr)
    name = "probe-name-7f3e1c"
    p = _slaq(people, "alice", open_dir, "submit", "--host", proxy.addr,
              "--name", name, "--", "sleep", "300", cred=cred)
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    assert d.wait_state(jid, "running")["user"] == people.users["alice"]
    p = _slaq(people, "alice", open_dir, "ls", "--json", "--host",
              proxy.addr, cred=cred)
    assert p.returncode == 0, p.stderr
    assert [j["name"] for j in json.loads(p.stdout)["jobs"]] == [name]
    wire = bytes(proxy.up + proxy.down)
    for clear in (secret, name, '"submit"', "user_token"):
        assert clear.encode() not in wire, clear
    # The control token, as the "admin" identity.
    p = _slaq(people, "bob", open_dir, "show", str(jid), "--host",
              proxy.addr, cred="admin:" + CONTROL)
    assert p.returncode == 0 and name in p.stdout, p.stderr
    wire = bytes(proxy.up + proxy.down)
    assert len(proxy.up) > 1000 and len(proxy.down) > 1000
    for clear in (secret, secret.upper(), CONTROL, name, '"ok"', '"result"',
                  '"submit"', '"jobs"', "sleep", "user_token"):
        assert clear.encode() not in wire, clear
    # The hellos name who claims a session, and nothing secret.
    hellos = [json.loads(x) for x in proxy.up.split(b"\n")
              if x.startswith(b'{"type":"link_hello"')]
    assert sorted(h["as"] for h in hellos) == sorted(
        [cred.rsplit(":", 1)[0]] * 2 + ["admin"])
    assert _failures(d) == 0
    proxy.close()


@needs_root
def test_a_fake_server_learns_no_credential_and_slaq_says_so(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _daemon(people, open_dir, daemon_factory, tmp_path)
    cred = _token(people, "alice", open_dir, sock)
    secret = cred.rsplit(":", 1)[1]
    # Whoever listens on the address answers a hello with a challenge it
    # cannot prove, and keeps everything it hears.
    heard = bytearray()
    fake = socket.socket()
    fake.bind(("127.0.0.1", 0))
    fake.listen(8)
    fake_addr = "127.0.0.1:%d" % fake.getsockname()[1]

    def serve():
        while True:
            try:
                c, _ = fake.accept()
            except OSError:
                return
            f = c.makefile("rb")
            c.settimeout(5)
            try:
                while True:
                    line = f.readline()
                    if not line:
                        break
                    heard.extend(line)
                    c.sendall(json.dumps({
                        "type": "link_challenge",
                        "nonce": os.urandom(32).hex(),
                        "proof": os.urandom(32).hex()}).encode() + b"\n")
            except OSError:
                pass
            c.close()

    threading.Thread(target=serve, daemon=True).start()
    for c in (cred, "admin:" + CONTROL):
        p = _slaq(people, "alice", open_dir, "submit", "--host", fake_addr,
                  "--", "sleep", "300", cred=c)
        assert p.returncode == 1, p.stderr
        assert "is not the slaqd of your credential" in p.stderr, p.stderr
        assert "did not prove it holds the key" in p.stderr, p.stderr
    fake.close()
    assert heard.count(b"\n") == 2  # two hellos, then nothing
    for clear in (secret, CONTROL, "submit", "sleep"):
        assert clear.encode() not in heard, clear
    assert d.jobs() == []


@needs_root
def test_an_expired_credential_is_refused(people, open_dir, daemon_factory,
                                          tmp_path):
    d, sock, addr = _daemon(people, open_dir, daemon_factory, tmp_path)
    cred = _token(people, "alice", open_dir, sock, "--expires", "2s")
    uid, expires, gen, secret = cred.split(":")
    assert uid == str(people.pw("alice").pw_uid) and gen == "0"
    assert abs(int(expires) - (time.time() + 2)) < 3
    p = _slaq(people, "alice", open_dir, "ls", "--host", addr, cred=cred)
    assert p.returncode == 0, p.stderr
    wait_for(lambda: time.time() > int(expires) + 0.2, timeout=5,
             what="the credential to expire")
    p = _slaq(people, "alice", open_dir, "ls", "--host", addr, cred=cred)
    assert p.returncode == 1
    assert "credential of uid %s expired on " % uid in p.stderr, p.stderr
    assert "run `slaq token --save` on the machine slaqd runs on" in \
        p.stderr, p.stderr
    assert _failures(d) == 1
    # A later expiry claimed with the same secret: the proof is wrong.
    _after_lockout()
    later = "%s:%d:%s:%s" % (uid, int(expires) + 86400, gen, secret)
    try:
        s = Session(addr, later, check_server=False)
        r = s.recv()
    except Refused as e:
        r = e.args[0]
    assert r["code"] == "unauthorized" and "proof does not match" in \
        r["message"], r
    assert _failures(d) == 2
    # Beyond a year, or malformed, --expires is refused before asking.
    for bad in ("367d", "0", "2w", "-5m"):
        p = _slaq(people, "alice", open_dir, "token", "--socket", sock,
                  "--expires", bad)
        assert p.returncode == 2 and "--expires" in p.stderr, (bad, p.stderr)
    # The default is 30 days.
    cred = _token(people, "alice", open_dir, sock)
    assert abs(int(cred.split(":")[1]) - (time.time() + 30 * 86400)) < 60


@needs_root
def test_revoking_a_users_credentials_leaves_other_users_valid(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _daemon(people, open_dir, daemon_factory, tmp_path)
    alice = _token(people, "alice", open_dir, sock)
    bob = _token(people, "bob", open_dir, sock)

    def ls(who, cred):
        return _slaq(people, who, open_dir, "ls", "--host", addr, cred=cred)

    assert ls("alice", alice).returncode == 0
    assert ls("bob", bob).returncode == 0
    p = _slaq(people, "alice", open_dir, "token", "--revoke", "--socket",
              sock)
    assert p.returncode == 0, p.stderr
    assert "revoked every credential of %s" % people.users["alice"] in \
        p.stdout
    p = ls("alice", alice)
    assert p.returncode == 1 and "was revoked" in p.stderr, p.stderr
    assert _failures(d) == 1
    _after_lockout()
    assert ls("bob", bob).returncode == 0
    # A new credential is valid; a revocation over TCP is refused.
    alice2 = _token(people, "alice", open_dir, sock)
    assert alice2.split(":")[2] == "1"
    assert ls("alice", alice2).returncode == 0
    r = Session(addr, alice2).request({"type": "user_token_revoke"})
    assert r["ok"] is False and r["code"] == "permission_denied", r
    # Bob may not revoke Alice's; an administrator (root) revokes Bob's.
    p = _slaq(people, "bob", open_dir, "token", "--revoke", "--user",
              people.users["alice"], "--socket", sock)
    assert p.returncode == 1 and "permission denied" in p.stderr, p.stderr
    assert ls("alice", alice2).returncode == 0
    p = _slaq(people, "carol", open_dir, "token", "--revoke", "--user",
              people.users["bob"], "--socket", sock)
    assert p.returncode == 0, p.stderr
    assert ls("bob", bob).returncode == 1
    _after_lockout()
    # Revocations survive a restart of slaqd.
    d.stop()
    d.start()
    assert ls("alice", alice).returncode == 1
    _after_lockout()
    assert ls("bob", bob).returncode == 1
    _after_lockout()
    assert ls("alice", alice2).returncode == 0
    gens = open(os.path.join(d.state, "user-token.gen")).read().split("\n")
    assert sorted(gens[:-1]) == sorted(
        ["%d 1" % people.pw(w).pw_uid for w in ("alice", "bob")])
    assert "user credentials of %s (uid %d) revoked by %s" % (
        people.users["bob"], people.pw("bob").pw_uid,
        people.users["carol"]) in d.read_log()


@needs_root
def test_a_replayed_or_altered_line_closes_the_session(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _daemon(people, open_dir, daemon_factory, tmp_path)
    cred = _token(people, "alice", open_dir, sock)
    # The request line played twice: the first is answered, the second
    # does not open and the session is closed.
    s = Session(addr, cred)
    s.send({"type": "status"})
    assert s.recv()["ok"] is True
    s.send_raw(s.sent[0])
    assert s.closed_by_peer()
    assert "sealed session (127.0.0.1): line 2 from the peer does not " \
        "open" in d.read_log()
    # A session's line played on another session of the same credential.
    s2 = Session(addr, cred)
    s2.send_raw(s.sent[0])
    assert s2.closed_by_peer()

    def flip(line):
        if line.startswith(b"{"):  # the handshake, in clear
            return [line]
        b = bytearray(line)
        b[len(b) // 2] = ord("A") if b[len(b) // 2] != ord("A") else ord("B")
        return [bytes(b)]

    # Altered on the way up: not run, the session closed, no reply.
    proxy = Proxy(addr, tamper=flip)
    p = _slaq(people, "alice", open_dir, "submit", "--host", proxy.addr,
              "--", "sleep", "300", cred=cred)
    assert p.returncode == 1
    assert "closed the connection without a reply" in p.stderr, p.stderr
    assert d.jobs() == []
    proxy.close()
    # Replayed on the way up by the proxy: the first copy only is taken
    # (its reply may be lost when slaqd closes the session at the copy).
    proxy = Proxy(addr, tamper=lambda line: [line] if line.startswith(b"{")
                  else [line, line])
    _slaq(people, "alice", open_dir, "submit", "--host", proxy.addr, "--",
          "sleep", "300", cred=cred)
    wait_for(lambda: len(d.jobs()) == 1, what="one job")
    time.sleep(0.5)
    assert len(d.jobs()) == 1
    proxy.close()
    # Altered on the way down: slaq does not take the reply.
    proxy = Proxy(addr, reply_tamper=flip)
    p = _slaq(people, "alice", open_dir, "ls", "--host", proxy.addr,
              cred=cred)
    assert p.returncode == 1 and "does not open" in p.stderr, p.stderr
    proxy.close()
    assert _failures(d) == 0
