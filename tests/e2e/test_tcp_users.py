"""The slaq command over TCP as an ordinary user (docs/security.md, "User
credentials"; docs/cli.md, --host).

slaqd runs as root with --tcp; users made for the test (test_multiuser's
People) get their credential over the Unix socket (`slaq token`) and then
act over TCP (`slaq --host`, SLAQ_HOST) exactly as over the socket: their
jobs run as them, they cancel their own and not another's. A credential
with another uid, expiry or generation, or an altered hash, is refused
and counted as a failed authentication; deleting slaqd's key revokes
every credential; a user cannot be issued anyone else's; without one the
command says what to do. Requests made here without the slaq command go
through agentlink.Session, the sealed session as docs/protocol.md gives
it (tests/security/test_tcp_sealed.py attacks it).
"""

import json
import os
import stat
import subprocess

from agentlink import ask
from conftest import SLAQ, free_port, session, wait_for
from test_multiuser import (as_user, needs_root, open_dir,  # noqa: F401
                            people, proc_status)


def _tcp_multiuser(people, open_dir, daemon_factory, tmp_path,
                   token="control-token-1234"):
    """slaqd as root on a socket the test's users reach, with --tcp and
    the control token; returns it, its socket and its TCP address."""
    port = free_port()
    (tmp_path / "control").write_text(token + "\n")
    sock = os.path.join(open_dir, "slaq.sock")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"], "--admin-group",
                       people.groups["adm"], "--tcp", "127.0.0.1:%d" % port,
                       "--token-file", str(tmp_path / "control"),
                       state=os.path.join(open_dir, "state"))
    return d, sock, "127.0.0.1:%d" % port


def _slaq(people, who, open_dir, *args, env=None):
    """`slaq ARGS` as `who`, with their own HOME (where --save writes and
    --host reads)."""
    e = {"HOME": people.pw(who).pw_dir}
    e.update(env or {})
    return as_user(people, who, os.path.join(open_dir, "slaq"), *args, env=e)


def _ask_checked(addr, cred, msg):
    """msg in a sealed session with cred, again while the address is locked
    out after a failed attempt (rate_limited is not a check of the
    credential)."""
    return wait_for(lambda: (lambda r: None if r.get("code") == "rate_limited"
                             else r)(ask(addr, cred, msg)), timeout=30,
                    what="the lock-out to pass")


@needs_root
def test_a_user_acts_over_tcp_as_themselves(people, open_dir,
                                            daemon_factory, tmp_path):
    d, sock, addr = _tcp_multiuser(people, open_dir, daemon_factory, tmp_path)
    # Alice saves her credential; Bob prints his.
    p = _slaq(people, "alice", open_dir, "token", "--save", "--socket", sock)
    assert p.returncode == 0, p.stderr
    home = people.pw("alice").pw_dir
    path = os.path.join(home, ".config", "slaq", "token")
    assert p.stdout.strip().endswith(path), p.stdout
    st = os.stat(path)
    assert stat.S_IMODE(st.st_mode) == 0o600
    assert st.st_uid == people.pw("alice").pw_uid
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    with open(path) as f:
        alice_tok = f.read().strip()
    assert alice_tok.startswith("%d:" % people.pw("alice").pw_uid)
    p = _slaq(people, "bob", open_dir, "token", "--socket", sock)
    assert p.returncode == 0, p.stderr
    bob_tok = p.stdout.strip()
    assert bob_tok.startswith("%d:" % people.pw("bob").pw_uid)
    assert bob_tok.split(":")[-1] != alice_tok.split(":")[-1]
    key = os.path.join(d.state, "user-token.key")
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600

    def alice(*args):  # --host, the credential from ~/.config/slaq/token
        return _slaq(people, "alice", open_dir, args[0], "--host", addr,
                     *args[1:])

    def bob(*args):  # SLAQ_HOST and SLAQ_USER_TOKEN
        return _slaq(people, "bob", open_dir, *args,
                     env={"SLAQ_HOST": addr, "SLAQ_USER_TOKEN": bob_tok})

    jobs = {}
    for who, run in (("alice", alice), ("bob", bob)):
        p = run("submit", "--name", "tcp-" + who, "--", "sleep", "300")
        assert p.returncode == 0, p.stderr
        jobs[who] = int(p.stdout)
    for who, jid in jobs.items():
        j = d.wait_state(jid, "running")
        pw = people.pw(who)
        assert (j["user"], j["uid"]) == (people.users[who], pw.pw_uid)
        assert proc_status(j["pid"])["Uid"] == [str(pw.pw_uid)] * 4
    # Both list every job over TCP.
    for run in (alice, bob):
        p = run("ls", "--json")
        assert p.returncode == 0, p.stderr
        assert sorted(j["id"] for j in json.loads(p.stdout)["jobs"]) == \
            sorted(jobs.values())
    # Bob may not cancel Alice's job, nor set the policy; he may cancel his.
    p = bob("cancel", "--now", str(jobs["alice"]))
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    assert "job %d belongs to %s" % (jobs["alice"], people.users["alice"]) \
        in p.stderr
    assert d.job(jobs["alice"])["state"] == "running"
    p = bob("policy", "fair")
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    assert d.request({"type": "policy"})["policy"] == "slaq"
    for who, run in (("bob", bob), ("alice", alice)):
        p = run("cancel", "--now", str(jobs[who]))
        assert p.returncode == 0, p.stderr
        d.wait_state(jobs[who], "cancelled")
    assert d.request({"type": "status"})["auth_failures_total"] == 0
    # A credential is not issued over TCP, even to a holder of one.
    p = alice("token")
    assert p.returncode != 0 and "Unix socket" in p.stderr, p.stderr
    r = ask(addr, alice_tok, {"type": "user_token"})
    assert r["ok"] is False and r["code"] == "permission_denied", r


@needs_root
def test_a_forged_or_revoked_user_credential_is_refused(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _tcp_multiuser(people, open_dir, daemon_factory, tmp_path)
    p = _slaq(people, "bob", open_dir, "token", "--socket", sock)
    assert p.returncode == 0, p.stderr
    tok = p.stdout.strip()
    uid, exp, gen, mac = tok.split(":")
    r = _ask_checked(addr, tok, {"type": "ls"})
    assert r["ok"] is True, r
    # The CLI finds that slaqd does not prove the key of a credential with
    # another uid (and sends nothing more).
    alice_uid = people.pw("alice").pw_uid
    p = _slaq(people, "bob", open_dir, "ls", "--host", addr,
              env={"SLAQ_USER_TOKEN": "%d:%s:%s:%s" % (alice_uid, exp, gen,
                                                       mac)})
    assert p.returncode != 0 and "is not the slaqd of your credential" in \
        p.stderr, p.stderr
    flipped = ("1" if mac[0] == "0" else "0") + mac[1:]
    forged = ["%d:%s:%s:%s" % (alice_uid, exp, gen, mac),
              "0:%s:%s:%s" % (exp, gen, mac),
              "%s:%s:%s:%s" % (uid, exp, gen, flipped),
              "%s:%s:%s:%s" % (uid, exp, gen, mac[:-2]),
              "%s0:%s:%s:%s" % (uid, exp, gen, mac),
              "%s:%d:%s:%s" % (uid, int(exp) + 1, gen, mac),
              "%s:%s:%d:%s" % (uid, exp, int(gen) + 1, mac)]
    for bad in forged:
        r = _ask_checked(addr, bad, {"type": "submit", "cmd": ["true"]})
        assert r.get("ok") is not True and r["code"] == "unauthorized", (bad, r)
    assert d.jobs() == []
    assert d.request({"type": "status"})["auth_failures_total"] == \
        len(forged)
    log = d.read_log()
    assert "a wrong user credential from 127.0.0.1" in log
    assert "an expired, revoked or malformed user credential from " \
        "127.0.0.1" in log  # the generation never issued
    # Sent in clear, even the right credential is refused and counted.
    r = _ask_clear(addr, {"type": "ls", "user_token": tok})
    assert r["code"] == "unauthorized" and "clear text" in r["message"], r
    assert d.request({"type": "status"})["auth_failures_total"] == \
        len(forged) + 1
    # Deleting the key revokes every credential; the next one differs.
    os.unlink(os.path.join(d.state, "user-token.key"))
    r = _ask_checked(addr, tok, {"type": "ls"})
    assert r.get("ok") is not True and r["code"] == "unauthorized", r
    p = _slaq(people, "bob", open_dir, "token", "--socket", sock)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() != tok
    r = _ask_checked(addr, p.stdout.strip(), {"type": "ls"})
    assert r["ok"] is True, r


def _ask_clear(addr, msg):
    """msg as the first line of a TCP connection, in clear (an older
    client), once the address is not locked out."""
    host, port = addr.split(":")

    def once():
        s, f = session((host, int(port)))
        s.sendall((json.dumps(msg) + "\n").encode())
        r = json.loads(f.readline())
        s.close()
        return None if r.get("code") == "rate_limited" else r
    return wait_for(once, timeout=30, what="the lock-out to pass")


@needs_root
def test_a_user_is_issued_only_their_own_credential(
        people, open_dir, daemon_factory, tmp_path):
    d, sock, addr = _tcp_multiuser(people, open_dir, daemon_factory, tmp_path)
    alice_uid = people.pw("alice").pw_uid
    bob_uid = people.pw("bob").pw_uid
    # Whatever Bob's request names, the kernel's word decides.
    script = ("import json, socket, sys\n"
              "s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])\n"
              "s.sendall((json.dumps({'type': 'user_token', 'uid': %d, "
              "'user': %r}) + '\\n').encode())\n"
              "print(s.makefile().readline())\n"
              % (alice_uid, people.users["alice"]))
    p = as_user(people, "bob", "/usr/bin/python3", "-c", script, sock)
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["ok"] is True, r
    assert r["uid"] == bob_uid and r["user"] == people.users["bob"]
    assert r["user_token"].startswith("%d:" % bob_uid)
    # Bob's credential acts as Bob, not Alice.
    r = ask(addr, r["user_token"], {"type": "submit", "cmd": ["sleep", "300"],
                                    "cwd": "/tmp"})
    assert r["ok"] is True, r
    assert d.job(r["job"])["uid"] == bob_uid
    # The control token acts as slaqd's user, but gets no credential: it
    # is not the kernel's word either.
    r = ask(addr, "admin:control-token-1234", {"type": "user_token"})
    assert r["ok"] is False and r["code"] == "permission_denied", r


def test_without_a_credential_slaq_says_what_to_do(tmp_path):
    env = dict(os.environ, HOME=str(tmp_path))
    for k in ("SLAQ_USER_TOKEN", "SLAQ_HOST", "SLAQ_SOCKET"):
        env.pop(k, None)
    port = free_port()
    p = subprocess.run([SLAQ, "ls", "--host", "127.0.0.1:%d" % port],
                       capture_output=True, text=True, env=env, timeout=30)
    assert p.returncode == 1
    assert "no user credential: run `slaq token --save` on the " \
        "controller's machine" in p.stderr, p.stderr
    # SLAQ_HOST alone selects TCP too; a named socket wins over it.
    p = subprocess.run([SLAQ, "status"], capture_output=True, text=True,
                       env=dict(env, SLAQ_HOST="127.0.0.1:%d" % port),
                       timeout=30)
    assert p.returncode == 1 and "no user credential" in p.stderr, p.stderr
    p = subprocess.run([SLAQ, "status", "--socket", str(tmp_path / "none")],
                       capture_output=True, text=True,
                       env=dict(env, SLAQ_HOST="127.0.0.1:%d" % port),
                       timeout=30)
    assert p.returncode == 1 and "cannot connect to %s" % (
        tmp_path / "none") in p.stderr, p.stderr
    # --host and --socket name two slaqds: refused.
    p = subprocess.run([SLAQ, "ls", "--host", "127.0.0.1:%d" % port,
                        "--socket", "x.sock"], capture_output=True,
                       text=True, env=env, timeout=30)
    assert p.returncode == 1 and "give one of them" in p.stderr, p.stderr
    # A malformed address names the field.
    p = subprocess.run([SLAQ, "ls", "--host", "localhost"],
                       capture_output=True, text=True,
                       env=dict(env, SLAQ_USER_TOKEN="1:ab"), timeout=30)
    assert p.returncode == 1 and "expected HOST:PORT" in p.stderr, p.stderr
