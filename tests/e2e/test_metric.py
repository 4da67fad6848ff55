"""test_metric.py — jobs report a quality metric as well as their loss.

The Python client and slaq-train (through the C client) send it, slaqd
checks it, keeps it in its database (column reports.metric, jobs'
metric_name: an older database gains both when opened) and shows it in
`show` (history rows' sixth value, `metric`, `metric_name`), the HTTP API
and `slaq show`.
"""

import json
import os
import socket
import sqlite3
import sys

from conftest import BUILD, old_state_db, wait_for

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "python"))
import slaq  # noqa: E402

TRAIN = os.path.join(BUILD, "bin", "slaq-train")


def job_session(sock_path):
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(5)
    s.connect(sock_path)
    f = s.makefile("rwb")
    return s, f


def send(f, msg):
    f.write(json.dumps(msg).encode() + b"\n")
    f.flush()


def test_python_client_metric_reaches_show(slaqd):
    c = slaq.Client(socket_path=slaqd.sock, name="pym",
                    metric_name="val_accuracy")
    wait_for(lambda: (c.poll(), c.connected and c.job_id)[1], what="welcome")
    for k, (loss, acc) in enumerate([(2.0, 0.1), (1.0, 0.5), (0.5, None),
                                     (0.25, 0.75)]):
        assert c.report(k, loss, cpu_s=0.1, metric=acc)
    jid = c.job_id
    job = wait_for(lambda: (lambda j: j if j["reports"] == 4 else None)(
        slaqd.job(jid)), what="4 reports")
    assert job["metric_name"] == "val_accuracy"
    assert job["metric"] == 0.75 and job["metric_iter"] == 3
    assert [r[5] for r in job["history"]] == [0.1, 0.5, None, 0.75]
    out = slaqd.cli("show", str(jid)).stdout
    assert "metric      val_accuracy 0.75 at iteration 3" in out
    c.close()


def test_metric_refused_when_not_a_number(slaqd):
    s, f = job_session(slaqd.sock)
    try:
        send(f, {"type": "hello", "name": "bad", "metric_name": "x\u0001"})
        first = [json.loads(f.readline()), json.loads(f.readline())]
        first.sort(key=lambda m: m["type"])  # error, then welcome
        err, welcome = first
        assert welcome["type"] == "welcome"
        assert err["code"] == "bad_message" and "metric_name" in err["message"]
        send(f, {"type": "report", "iter": 0, "loss": 1.0, "metric": "high"})
        err = json.loads(f.readline())
        assert err["code"] == "bad_report" and '"metric"' in err["message"]
        send(f, {"type": "report", "iter": 1, "loss": 1.0, "metric": 1e300})
        err = json.loads(f.readline())
        assert err["code"] == "bad_report"
        send(f, {"type": "info", "metric_name": "rmse"})
        send(f, {"type": "report", "iter": 2, "loss": 0.5, "metric": 3.5})
        send(f, {"type": "ping"})
        assert json.loads(f.readline())["type"] == "pong"
        job = slaqd.job(welcome["job"])
        assert job["metric_name"] == "rmse" and job["metric"] == 3.5
        assert job["reports"] == 1
    finally:
        s.close()


def test_python_client_rejects_bad_metric():
    c = slaq.Client(socket_path=None)
    try:
        c.report(1, 1.0, metric=float("nan"))
        raise AssertionError("NaN metric accepted")
    except ValueError as e:
        assert "metric" in str(e)
    try:
        c.set_metric_name("")
        raise AssertionError("empty name accepted")
    except ValueError:
        pass


def test_slaq_train_reports_validation_metric(slaqd):
    jid = slaqd.submit(TRAIN, "logreg", "--subsample", "0.05", "--iters",
                       "6", "--validation", "0.2")
    job = slaqd.wait_state(jid, ("done", "failed"), timeout=120)
    assert job["state"] == "done", slaqd.cli("logs", str(jid)).stdout
    assert job["metric_name"] == "val_accuracy"
    accs = [r[5] for r in job["history"]]
    assert len(accs) == 7 and all(0 <= a <= 1 for a in accs)
    assert accs[-1] > accs[0]
    assert job["metric"] == accs[-1]


def test_metric_survives_restart_and_old_database_migrates(tmp_path,
                                                          daemon_factory):
    # A database as slaqd wrote it before metrics: no metric columns.
    state = tmp_path / "old"
    state.mkdir()
    old_state_db(state, before="jobs.metric_name")
    d = daemon_factory(state=state)
    old = d.job(1)
    assert old["metric"] is None and old["metric_name"] is None
    assert len(old["history"]) == 1 and old["history"][0][:2] == [0, 2.0]
    assert old["history"][0][5] is None
    c = slaq.Client(socket_path=d.sock, name="m", metric_name="accuracy")
    wait_for(lambda: (c.poll(), c.job_id)[1], what="welcome")
    c.report(0, 1.0, cpu_s=0, metric=0.25)
    c.report(1, 0.5, cpu_s=0, metric=0.5)
    jid = c.job_id
    wait_for(lambda: d.job(jid)["reports"] == 2, what="reports")
    c.close()
    d.wait_state(jid, "done")
    d.stop()
    d2 = daemon_factory(state=state)
    job = d2.job(jid)
    assert job["metric_name"] == "accuracy" and job["metric"] == 0.5
    assert [r[5] for r in job["history"]] == [0.25, 0.5]
    cols = [r[1] for r in sqlite3.connect(str(state / "state.db")).execute(
        "PRAGMA table_info(reports)")]
    assert "metric" in cols
