"""Jobs under slaqd declare their convergence class, as the simulator's
workload jobs do: `slaq submit --convergence`, the submit request's and the
hello's `convergence` field (libslaq-client, the Python client). The class
is kept in state.db (a column added to older databases when opened) and
reaches the core: with `--predictor slaq-fit` a job's curve is fitted with
its class's family only."""

import socket
import sqlite3
import time

import pytest

from conftest import TOY, wait_for

from slaq.client import Client


def model(d, job):
    j = d.job(job)
    return (j.get("prediction") or {}).get("model")


def test_submit_declares_the_class_and_slaq_fit_uses_it(daemon_factory):
    # The toy job's curve is rational, 1/(0.1k + 1) + 0.1: undeclared,
    # slaq-fit picks the rational family by residual; declared linear, it
    # must fit the exponential one.
    d = daemon_factory("--predictor", "slaq-fit", "--cores", "2")
    assert d.request({"type": "status"})["predictor"] == "slaq-fit"
    lin = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="lin",
                   convergence="linear")
    sub = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="sub",
                   convergence="sublinear")
    und = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="und")
    assert d.job(lin)["convergence"] == "linear"
    assert d.job(sub)["convergence"] == "sublinear"
    assert d.job(und)["convergence"] == "unknown"
    # Until its first refit at an epoch boundary a job's forecast is the
    # strawman's ("linear"); wait for a fitted family, not just any model.
    fitted = ("rational", "exponential")
    wait_for(lambda: d.job(und)["reports"] > 30 and
             all(model(d, j) in fitted for j in (lin, sub, und)), timeout=20,
             what="fits of all three jobs after 30 reports")
    assert model(d, lin) == "exponential"
    assert model(d, sub) == "rational"
    assert model(d, und) == "rational"


def test_bad_class_is_refused(daemon_factory):
    d = daemon_factory()
    p = d.cli("submit", "--convergence", "fast", "--", TOY, check=False)
    assert p.returncode == 2
    assert "--convergence" in p.stderr and "sublinear" in p.stderr
    r = d.request({"type": "submit", "cmd": [TOY], "convergence": "fast"})
    assert not r["ok"] and "convergence" in r["message"]
    r = d.request({"type": "submit", "cmd": [TOY], "convergence": 3})
    assert not r["ok"] and "convergence" in r["message"]
    assert d.jobs() == []


def test_class_survives_a_restart_and_old_databases_gain_it(daemon_factory,
                                                            tmp_path):
    state = tmp_path / "st"
    d = daemon_factory(state=state)
    j = d.submit(TOY, "--iters", "5", "--iter-cpu", "0.001",
                 convergence="superlinear")
    d.wait_state(j, "done")
    assert d.stop() == 0
    db = sqlite3.connect(str(state / "state.db"))
    assert db.execute("SELECT convergence FROM jobs WHERE id = ?",
                      (j,)).fetchone() == ("linear",)
    db.close()
    d2 = daemon_factory(state=state)
    assert d2.job(j)["convergence"] == "linear"
    assert d2.stop() == 0
    # A state.db from before the column: it opens, the column is added,
    # the old job has no class, a new one keeps its own.
    db = sqlite3.connect(str(state / "state.db"))
    db.execute("ALTER TABLE jobs DROP COLUMN convergence")
    db.commit()
    assert "convergence" not in [r[1] for r in
                                 db.execute("PRAGMA table_info(jobs)")]
    db.close()
    d3 = daemon_factory(state=state)
    assert d3.job(j)["convergence"] == "unknown"
    k = d3.submit(TOY, "--iters", "3", "--iter-cpu", "0.001",
                  convergence="sublinear")
    assert d3.job(k)["convergence"] == "sublinear"
    d3.wait_state(k, "done")


def test_hello_and_info_declare_the_class(daemon_factory):
    d = daemon_factory()
    c = Client(socket_path=d.sock, name="attached-sgd",
               convergence="sublinear")
    c.report(0, 1.0, cpu_s=0.01)
    jobs = wait_for(lambda: [j for j in d.jobs()
                             if j["name"] == "attached-sgd"], what="attach")
    jid = jobs[0]["id"]
    wait_for(lambda: d.job(jid)["convergence"] == "sublinear",
             what="the hello's class")
    # declared again once connected: an info message
    c.set_convergence("superlinear")
    c.report(1, 0.9, cpu_s=0.01)
    wait_for(lambda: d.job(jid)["convergence"] == "linear",
             what="the info's class")
    with pytest.raises(ValueError):
        c.set_convergence("fast")
    c.close()

    # Declared non-convex (a network trained with SGD): kept as declared,
    # in the job and in state.db, not shown as "unknown".
    n = Client(socket_path=d.sock, name="attached-nn", convergence="nonconvex")
    n.report(0, 1.0, cpu_s=0.01)
    jobs = wait_for(lambda: [j for j in d.jobs()
                             if j["name"] == "attached-nn"], what="attach")
    wait_for(lambda: d.job(jobs[0]["id"])["convergence"] == "nonconvex",
             what="the hello's nonconvex class")
    n.close()
    sub = d.submit(TOY, "--iters", "3", "--iter-cpu", "0.001",
                   convergence="nonconvex")
    assert d.job(sub)["convergence"] == "nonconvex"
    assert "  convergence nonconvex (declared)\n" in \
        d.cli("show", str(sub)).stdout

    # A bad class in a hello: an error, and the session goes on.
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(d.sock)
    s.sendall(b'{"type":"hello","name":"bad","convergence":"fast"}\n')
    buf = b""
    deadline = time.monotonic() + 5
    while buf.count(b"\n") < 2 and time.monotonic() < deadline:
        buf += s.recv(4096)
    s.close()
    assert b'"bad_message"' in buf and b"convergence" in buf
