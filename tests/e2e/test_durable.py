"""Durable acknowledgement (docs/protocol.md, ack): slaqd confirms reports
once they are committed, clients resend what is unconfirmed after a
reconnection, slaqd drops what it already has; kill -9 loses nothing."""

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time

from conftest import BUILD, ROOT, wait_for

import slaq


class Session:
    """A raw job session on slaqd's socket."""

    def __init__(self, daemon, hello):
        self.s = socket.socket(socket.AF_UNIX)
        self.s.settimeout(5)
        self.s.connect(daemon.sock)
        self.buf = b""
        self.send(hello)

    def send(self, *msgs):
        self.s.sendall(b"".join(json.dumps(m).encode() + b"\n" for m in msgs))

    def recv(self, timeout=5.0):
        """The next message, or None after `timeout` seconds."""
        self.s.settimeout(timeout)
        while b"\n" not in self.buf:
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                return None
            if not data:
                return None
            self.buf += data
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def recv_not_alloc(self, timeout=5.0):
        m = self.recv(timeout)
        while m is not None and m["type"] == "alloc":
            m = self.recv(timeout)
        return m

    def recv_type(self, kind, timeout=5.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = self.recv(deadline - time.monotonic())
            if m is None:
                return None
            if m["type"] == kind:
                return m
        return None

    def close(self):
        self.s.close()


def rows(daemon, job):
    db = sqlite3.connect(os.path.join(daemon.state, "state.db"))
    try:
        return db.execute("SELECT iter, loss FROM reports WHERE job = ? "
                          "ORDER BY iter", (job,)).fetchall()
    finally:
        db.close()


def report(it, loss):
    return {"type": "report", "iter": it, "loss": loss}


def test_an_ack_comes_after_the_commit_and_resent_reports_are_dropped(
        daemon_factory):
    d = daemon_factory("--enforce", "none")
    s = Session(d, {"type": "hello", "name": "acked", "ack": True})
    w = s.recv_type("welcome")
    assert w["ack"] is True and w["next_iter"] == 0
    job = w["job"]
    s.send(*[report(k, 1.0 / (k + 1)) for k in range(10)])
    a = s.recv_type("ack")
    while a and a["iter"] < 9:
        a = s.recv_type("ack")
    assert a == {"type": "ack", "iter": 9}
    # Acknowledged means committed: another reader sees the rows now.
    assert [r[0] for r in rows(d, job)] == list(range(10))
    # A reconnection (replacing the old connection, as after a network
    # failure the job has not noticed) is told where to resume ...
    old = s
    s = Session(d, {"type": "hello", "job": job, "ack": True,
                    "secret": w["secret"]})
    w2 = s.recv_type("welcome")
    assert w2["next_iter"] == 10 and w2["last_iter"] == 9
    old.close()
    # ... and what it sends again anyway is dropped without an error.
    s.send(*[report(k, 1.0 / (k + 1)) for k in range(5, 13)])
    a = s.recv_not_alloc()
    while a and a["type"] == "ack" and a["iter"] < 12:
        a = s.recv_not_alloc()
    assert a == {"type": "ack", "iter": 12}
    st = d.request({"type": "status"})
    assert st["reports_duplicate_total"] == 5
    assert st["errors_total"] == 0
    assert [r[0] for r in rows(d, job)] == list(range(13))
    s.send({"type": "bye"})
    s.close()


def test_a_client_that_does_not_ask_gets_no_acks_and_old_errors(
        daemon_factory):
    d = daemon_factory("--enforce", "none")
    s = Session(d, {"type": "hello", "name": "old"})
    w = s.recv_type("welcome")
    assert "ack" not in w and w["next_iter"] == 0
    s.send(report(0, 1.0), report(1, 0.5))
    time.sleep(0.3)  # several commit ticks
    s.send(report(1, 0.5))  # a repeat is an error, as it always was
    m = s.recv_not_alloc()
    assert m["type"] == "error" and m["code"] == "bad_report", m
    assert s.recv_not_alloc(0.3) is None  # and no ack came
    assert [r[0] for r in rows(d, w["job"])] == [0, 1]
    s.close()


def test_python_client_loses_nothing_across_kill9(daemon_factory, tmp_path):
    d = daemon_factory("--enforce", "none")
    c = slaq.Client(socket_path=d.sock, job_id=0, name="py-durable")
    wait_for(lambda: c.poll() or c.connected, what="the client to connect")
    made = 0
    for k in range(300):
        assert c.report(k, 1.0 / (k + 1), cpu_s=0.0)
        made += 1
        if k == 100:
            d.kill9()
        if k == 150:
            d.start()
        time.sleep(0.003)
    wait_for(lambda: c.poll() or (c.connected and c.unacked == 0),
             timeout=15, what="every report to be acknowledged")
    assert c.acked == 299 and c.dropped == 0
    job = c.job_id
    c.close()
    got = rows(d, job)
    assert [r[0] for r in got] == list(range(made))
    assert all(abs(loss - 1.0 / (k + 1)) < 1e-12 for k, loss in got)


def test_kill9_soak_loses_and_duplicates_nothing():
    """The soak (bench/daemon/soak-kill9.py) at a bounded size: 6 kills of
    slaqd at random moments under 40 reporting clients."""
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "bench", "daemon", "soak-kill9.py"),
         "--build", BUILD, "--kills", "6", "--clients", "40", "--rate", "2000",
         "--up-min", "0.2", "--up-max", "0.8", "--ack-wait", "30"],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr
    r = json.loads(p.stdout)
    assert r["lost"] == 0 and r["extra"] == 0 and r["unacked"] == 0, r
    assert r["integrity"] == "ok"
    assert r["rows"] == r["reports_made"] > 1000, r


def test_python_client_attaching_during_a_restart_keeps_its_first_reports(
        daemon_factory):
    """A client that attaches while slaqd is being restarted after a kill
    -9 (its socket there, refusing connections) keeps the reports it makes
    before slaqd first answers and sends them once it does (issue: they
    were dropped; a soak lost iterations 1 to 47 of 16 of 20 jobs)."""
    d = daemon_factory("--enforce", "none")
    d.kill9()
    assert os.path.exists(d.sock)
    c = slaq.Client(socket_path=d.sock, job_id=0, name="py-early")
    for k in range(30):
        assert c.report(k, 1.0 / (k + 1), cpu_s=0.0)
        time.sleep(0.01)
    assert c.dropped == 0 and c.unacked == 30
    d.killed = False
    d.start()
    for k in range(30, 60):
        assert c.report(k, 1.0 / (k + 1), cpu_s=0.0)
        time.sleep(0.01)
    wait_for(lambda: c.poll() or (c.connected and c.unacked == 0),
             timeout=15, what="every report to be acknowledged")
    assert c.acked == 59 and c.dropped == 0
    job = c.job_id
    c.close()
    assert [r[0] for r in rows(d, job)] == list(range(60))
