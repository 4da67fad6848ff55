"""End-to-end tests of who may do what to slaqd (docs/security.md): a job's
connection acts only on its own job, control requests need the control
credential (the peer's uid on the Unix socket, the control token over TCP),
and guessing a token is slowed down."""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

from agentlink import ADMIN_SALT, Session, ask, derive_key
from conftest import TOY, free_port, http_get, session, wait_for

import slaq


def _ask(s, f, msg):
    s.sendall(json.dumps(msg).encode() + b"\n")
    line = f.readline()
    return json.loads(line) if line else None


def _closed(f):
    try:
        return f.readline() == b""
    except ConnectionResetError:
        return True


def test_a_connection_cannot_take_over_another_job(daemon_factory):
    d = daemon_factory("--policy", "fair", "--cores", "2")
    victim = d.submit(TOY, "--forever", "--iter-cpu", "0.002")
    wait_for(lambda: d.job(victim)["connected"] and
             d.job(victim)["reports"] > 3, what="the job to report")
    # Its id alone, or a wrong secret, is refused and the connection closed.
    for hello in ({"type": "hello", "job": victim},
                  {"type": "hello", "job": victim, "secret": "0" * 64},
                  {"type": "hello", "job": str(victim), "secret": ""}):
        s, f = session(d.sock)
        r = _ask(s, f, hello)
        assert r["code"] == "unauthorized", r
        assert _closed(f)
        s.close()
    # The job kept its connection and goes on reporting.
    n = d.job(victim)["reports"]
    wait_for(lambda: d.job(victim)["reports"] > n + 3, what="more reports")
    job = d.job(victim)
    assert job["connected"] and job["state"] == "running"
    assert "secret" not in json.dumps(job)
    # An attached job's id is its connection's: another cannot claim it.
    c = slaq.Client(socket_path=d.sock, name="attached")
    c.report(0, 1.0)
    wait_for(lambda: (c.poll(), c.connected)[1], what="attach")
    s, f = session(d.sock)
    r = _ask(s, f, {"type": "hello", "job": c.job_id})
    assert r["code"] == "unauthorized"
    s.close()
    c.report(1, 0.5)
    wait_for(lambda: d.job(c.job_id)["reports"] == 2, what="its reports")
    assert d.job(c.job_id)["state"] == "running"
    c.close()
    d.wait_state(c.job_id, "done")
    assert "authentication failed" in d.read_log()


def test_jobs_reconnect_with_their_secrets_after_a_restart(daemon_factory):
    d = daemon_factory("--policy", "fair", "--cores", "2")
    managed = d.submit(TOY, "--forever", "--iter-cpu", "0.002")
    c = slaq.Client(socket_path=d.sock, name="attached")
    c.report(0, 1.0)
    wait_for(lambda: (c.poll(), c.connected)[1], what="attach")
    wait_for(lambda: d.job(managed)["connected"], what="managed job")
    d.kill9()
    d2 = daemon_factory("--policy", "fair", "--cores", "2", state=d.state)
    wait_for(lambda: d2.job(managed)["connected"], timeout=15,
             what="the started job to reconnect")
    c.report(1, 0.5)
    wait_for(lambda: (c.poll(), c.connected)[1], timeout=15,
             what="the attached job to reconnect")
    c.report(2, 0.25)
    wait_for(lambda: d2.job(c.job_id)["iter"] == 2, what="its report")
    assert "authentication failed" not in d2.read_log()
    c.close()


def _tcp_daemon(daemon_factory, tmp_path):
    port = free_port()
    (tmp_path / "control").write_text("control-token-1234\n")
    (tmp_path / "job").write_text("job-token-5678\n")
    d = daemon_factory("--tcp", "127.0.0.1:%d" % port, "--token-file",
                       str(tmp_path / "control"), "--job-token-file",
                       str(tmp_path / "job"))
    return d, ("127.0.0.1", port)


def test_a_tcp_job_token_grants_job_sessions_only(daemon_factory, tmp_path):
    d, addr = _tcp_daemon(daemon_factory, tmp_path)
    for req in ({"type": "submit", "cmd": ["true"]},
                {"type": "cancel", "job": 1},
                {"type": "policy", "name": "fair"},
                {"type": "ls"}):
        s, f = session(addr)
        r = _ask(s, f, dict(req, token="job-token-5678"))
        assert r["ok"] is False and r["code"] == "forbidden", r
        s.close()
    assert d.jobs() == []
    assert d.request({"type": "status"})["policy"] == "slaq"
    # A job attaches with it and reports (the C client, SLAQ_TOKEN).
    env = dict(os.environ, SLAQ_SOCKET="tcp:%s:%d" % addr,
               SLAQ_TOKEN="job-token-5678", SLAQ_JOB_NAME="remote")
    env.pop("SLAQ_JOB_ID", None)
    subprocess.run([TOY, "--iters", "5", "--iter-cpu", "0.001"], env=env,
                   check=True, timeout=30)
    job = d.jobs()[0]
    assert job["name"] == "remote" and job["reports"] == 6
    # The control token may do everything, proved in a sealed session;
    # sent in clear it is refused like a wrong token.
    r = Session("%s:%d" % addr, "admin:control-token-1234").request(
        {"type": "submit", "cmd": ["true"]})
    assert r["ok"], r
    s, f = session(addr)
    r = _ask(s, f, {"type": "submit", "cmd": ["true"],
                    "token": "control-token-1234"})
    assert r.get("ok") is not True and r["code"] == "unauthorized", r
    assert "proved in a sealed session" in r["message"]
    s.close()
    assert d.request({"type": "status"})["auth_failures_total"] == 1


def test_guessing_the_tcp_token_is_slowed(daemon_factory, tmp_path):
    d, addr = _tcp_daemon(daemon_factory, tmp_path)
    derive_key("control-token-1234", ADMIN_SALT)  # not while locked out
    checked = limited = 0
    t0 = time.monotonic()
    while time.monotonic() - t0 < 2.0:
        s, f = session(addr)
        r = _ask(s, f, {"type": "status", "token": "guess-%d" % checked})
        s.close()
        if r["code"] == "rate_limited":
            limited += 1
        else:
            assert r["code"] == "unauthorized"
            checked += 1
    # 0.1 + 0.2 + 0.4 + 0.8 s of lock-out: at most 5 guesses checked in 2 s.
    assert checked <= 5, checked
    assert limited > 10
    # While locked out, even the right token is not checked, in clear (the
    # job token) or in a sealed session (the control token).
    s, f = session(addr)
    r = _ask(s, f, {"type": "hello", "token": "job-token-5678"})
    assert r["code"] == "rate_limited" and "try again in" in r["message"]
    s.close()
    r = ask("%s:%d" % addr, "admin:control-token-1234", {"type": "status"})
    assert r["code"] == "rate_limited" and "try again in" in r["message"]
    # Logged in a few lines, not one per attempt.
    log = d.read_log()
    assert 1 <= log.count("authentication failed") <= 10
    assert log.count("rate_limited") <= 10
    # Counted; the Unix socket is not affected.
    assert d.request({"type": "status"})["auth_failures_total"] == checked
    metrics = http_get(d, "/metrics")[1]
    assert "slaq_auth_failures_total %d\n" % checked in metrics


@pytest.fixture
def open_socket_dir():
    """A directory any user may enter, for a socket others may reach."""
    path = tempfile.mkdtemp(prefix="slaq-auth-", dir="/tmp")
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


_AS_NOBODY = r"""
import json, socket, sys
out = []
for req in json.loads(sys.argv[2]):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sys.argv[1])
    s.sendall(json.dumps(req).encode() + b"\n")
    out.append(json.loads(s.makefile("rb").readline()))
    s.close()
print(json.dumps(out))
"""


def _as_user(uid, sock, reqs):
    p = subprocess.run([sys.executable, "-c", _AS_NOBODY, sock,
                        json.dumps(reqs)], user=uid, group=uid,
                       capture_output=True, text=True, timeout=30)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_acting_on_others_jobs_over_the_socket_needs_an_administrator(
        open_socket_dir, daemon_factory):
    """Any user who reaches the socket may look; only a job's owner and
    the administrators (here --allow-uid) may act on it or set the
    policy. Submitting as another user: tests/e2e/test_multiuser.py."""
    if os.geteuid() != 0:
        pytest.skip("needs root to act as another user")
    nobody = 65534
    sock = os.path.join(open_socket_dir, "a.sock")
    d = daemon_factory("--socket", sock)
    os.chmod(sock, 0o666)  # an operator opening the socket to others
    jid = d.submit("sleep", "300")
    replies = _as_user(nobody, sock, [
        {"type": "cancel", "job": jid}, {"type": "suspend", "job": jid},
        {"type": "logs", "job": jid}, {"type": "policy", "name": "fair"},
        {"type": "policy"}, {"type": "ls"}, {"type": "status"},
        {"type": "show", "job": jid}])
    assert [r.get("code") for r in replies[:4]] == \
        ["permission_denied"] * 4, replies
    assert "permission denied: job %d belongs to root" % jid in \
        replies[0]["message"]
    assert "65534" in replies[0]["message"]
    assert all(r["ok"] for r in replies[4:]), replies
    assert replies[4]["policy"] == "slaq"
    assert [j["user"] for j in replies[5]["jobs"]] == ["root"]
    assert d.job(jid)["state"] == "running"
    assert d.job(jid)["suspended"] is None
    assert d.request({"type": "cancel", "job": jid, "now": True})["ok"]
    d.wait_state(jid, "cancelled")
    d.stop()
    # --allow-uid makes that user an administrator.
    sock2 = os.path.join(open_socket_dir, "b.sock")
    d2 = daemon_factory("--socket", sock2, "--allow-uid", str(nobody))
    os.chmod(sock2, 0o666)
    jid = d2.submit("sleep", "300")
    r = _as_user(nobody, sock2, [{"type": "policy", "name": "fair"},
                                 {"type": "cancel", "job": jid}])
    assert r[0]["ok"] and r[0]["policy"] == "fair", r
    assert r[1]["ok"], r
    d2.wait_state(jid, "cancelled")
