"""End-to-end tests of approximate queries in slaqd (docs/relaqs.md): a
job becomes a query by its hello or its first report with estimates, its
reports are checked as mini-batches, /api/jobs/ID/estimates serves its
estimates and bounds, and under relaqs real slaq-aqp queries and an ML job
share the cores, each scheduled by its own metric."""

import json
import os
import sqlite3
import subprocess
import time

import pytest

from conftest import BUILD, TOY, api, old_state_db, session, wait_for

from slaq.client import Client

AQP = os.path.join(BUILD, "bin", "slaq-aqp")
def _send(s, f, msg):
    """Sends msg and returns slaqd's answer, skipping the allocation
    updates slaqd pushes to a job session every epoch."""
    s.sendall(json.dumps(msg).encode() + b"\n")
    while True:
        r = json.loads(f.readline())
        if r.get("type") != "alloc":
            return r


def _report(s, it, est, **kw):
    msg = {"type": "report", "iter": it, "loss": 0.1, "cpu_s": 0.01,
           "samples": 100, "estimates": est}
    msg.update(kw)
    s.sendall(json.dumps(msg).encode() + b"\n")


def _answer(f, want):
    """The next message of type `want`, skipping allocation updates."""
    while True:
        r = json.loads(f.readline())
        if r.get("type") == want or r.get("type") == "error":
            return r


@pytest.fixture
def holder():
    """A process that stands for an attached query's program: slaqd keeps
    a job whose process is alive across its restart (and the teardown may
    kill its process group, so it is not this one)."""
    p = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield p.pid
    p.kill()
    p.wait()


def _query_survives_kill9(d, pid):
    # a query that declared itself in its hello and has not reported yet
    s2, f2 = session(d.sock)
    w2 = _send(s2, f2, {"type": "hello", "name": "q2", "pid": pid,
                        "kind": "query"})
    # and one as slaq-aqp declares it: by its first report's estimates
    s, f = session(d.sock)
    w = _send(s, f, {"type": "hello", "name": "q", "pid": pid, "ack": True})
    jid, secret = w["job"], w["secret"]
    _report(s, 1, [10.0, None], lower=[9, None], upper=[11, None])
    _report(s, 2, [10.5, 3.0], lower=[10, 2], upper=[11, 4])
    _report(s, 3, [10.25, 3.5], lower=[10.1, 3.2], upper=[10.4, 3.8])
    # acknowledged once committed, with everything slaqd took before
    wait_for(lambda: _answer(f, "ack")["iter"] == 3, timeout=10,
             what="mini-batch 3 to be committed")
    before = api(d, "/api/jobs/%d/estimates" % jid)
    s.close()
    s2.close()
    d.kill9()
    d.start()
    job = d.job(jid)
    assert job["kind"] == "query" and job["state"] == "running"
    assert d.job(w2["job"])["kind"] == "query"
    e = api(d, "/api/jobs/%d/estimates" % jid)
    assert e["points"] == before["points"]
    assert [p["iter"] for p in e["points"]] == [1, 2, 3]
    assert e["points"][2]["lower"] == [10.1, 3.2]
    assert e["cells"] == 2 and e["progress"] == pytest.approx(0.75)
    # the query goes on where it was, checked as before
    s, f = session(d.sock)
    w = _send(s, f, {"type": "hello", "job": jid, "secret": secret,
                     "pid": pid})
    assert w["type"] == "welcome" and w["next_iter"] == 4
    r = _send(s, f, {"type": "report", "iter": 4, "loss": 1,
                     "estimates": [1.0]})
    assert r["code"] == "bad_report" and "first report had 2" in r["message"]
    _report(s, 4, [10.25, 3.5])
    e = wait_for(lambda: (lambda e: e if len(e["points"]) == 4 else None)(
        api(d, "/api/jobs/%d/estimates" % jid)), what="mini-batch 4")
    assert e["progress"] == 0  # nothing moved: the history was replayed
    s.close()
    for j in (jid, w2["job"]):
        d.request({"type": "cancel", "job": j, "now": True})
    return jid


def test_query_survives_kill9(daemon_factory, holder):
    d = daemon_factory("--policy", "relaqs", "--cores", "2")
    jid = _query_survives_kill9(d, holder)
    d.wait_state(jid, ("cancelled", "done", "failed"))
    # a finished query's estimates are served from the database
    d.kill9()
    d.start()
    e = api(d, "/api/jobs/%d/estimates" % jid)
    assert e["kind"] == "query" and e["cells"] == 2
    assert [p["iter"] for p in e["points"]] == [1, 2, 3, 4]
    assert e["points"][1]["upper"] == [11, 4]


def test_old_database_gains_query_columns(tmp_path, daemon_factory, holder):
    # state.db as slaqd wrote it before queries were kept: no jobs.kind,
    # no reports.estimates
    state = tmp_path / "old"
    state.mkdir()
    old_state_db(state, before="jobs.kind")
    d = daemon_factory("--policy", "relaqs", "--cores", "2", state=state)
    old = d.job(1)
    assert old["kind"] == "ml" and old["history"][0][:2] == [0, 2.0]
    db = sqlite3.connect(str(state / "state.db"))
    for table, col in (("jobs", "kind"), ("reports", "estimates")):
        assert col in [r[1] for r in db.execute(
            "PRAGMA table_info(%s)" % table)]
    db.close()
    jid = _query_survives_kill9(d, holder)
    db = sqlite3.connect(str(state / "state.db"))
    kind, = db.execute("SELECT kind FROM jobs WHERE id = ?", (jid,)).fetchone()
    vec, = db.execute("SELECT estimates FROM reports WHERE job = ? AND "
                      "iter = 2", (jid,)).fetchone()
    db.close()
    assert kind == "query"
    assert json.loads(vec) == {"estimates": [10.5, 3.0], "lower": [10, 2],
                               "upper": [11, 4]}


def test_python_client_reports_a_query(daemon_factory):
    """Client.report(estimates=..., lower=..., upper=...) makes the job a
    query and its cells reach /api/jobs/ID/estimates; bad cells are refused
    in the client, naming the argument."""
    d = daemon_factory()
    c = Client(socket_path=d.sock, name="py-query")
    with pytest.raises(ValueError, match="lower and upper need estimates"):
        c.report(1, 0.5, lower=[1.0])
    with pytest.raises(ValueError, match="upper has 1 cells, estimates 2"):
        c.report(1, 0.5, estimates=[1.0, 2.0], upper=[1.0])
    with pytest.raises(ValueError, match=r"estimates\[1\] must be a finite"):
        c.report(1, 0.5, estimates=[1.0, float("nan")])
    assert c.report(1, 0.5, cpu_s=0.01, estimates=[10.0, None],
                    lower=[9.0, None], upper=[11.0, None])
    assert c.report(2, 0.5, cpu_s=0.01, estimates=[10.5, 3.0],
                    lower=[10.0, 2.0], upper=[11.0, 4.0])
    jid = wait_for(lambda: [j["id"] for j in d.jobs()
                            if j["name"] == "py-query"], what="attach")[0]
    e = wait_for(lambda: (lambda e: e if len(e["points"]) == 2 else None)(
        api(d, "/api/jobs/%d/estimates" % jid)), what="two mini-batches")
    assert d.job(jid)["kind"] == "query"
    assert e["cells"] == 2
    assert e["points"][1]["lower"] == [10.0, 2.0]
    c.close()


def test_query_min_cores_option(daemon_factory):
    d = daemon_factory("--policy", "relaqs", "--query-min-cores", "0.5")
    st = d.request({"type": "status"})
    assert st["policy"] == "relaqs" and st["query_min_cores"] == 0.5


def test_query_reports_are_checked(daemon_factory):
    d = daemon_factory("--policy", "relaqs", "--cores", "2")
    s, f = session(d.sock)
    w = _send(s, f, {"type": "hello", "name": "q", "kind": "query"})
    assert w["type"] == "welcome"
    jid = w["job"]
    assert d.job(jid)["kind"] == "query"
    # a query's report must carry its estimates
    r = _send(s, f, {"type": "report", "iter": 1, "loss": 1})
    assert r["code"] == "bad_report" and "estimates" in r["message"]
    _report(s, 1, [10.0, None], lower=[9, None], upper=[11, None])
    _report(s, 2, [10.5, 3.0], lower=[10, 2], upper=[11, 4])
    r = _send(s, f, {"type": "report", "iter": 3, "loss": 1,
                     "estimates": [1.0]})
    assert r["code"] == "bad_report" and "first report had 2" in r["message"]
    r = _send(s, f, {"type": "report", "iter": 5, "loss": 1,
                     "estimates": [1.0, 2.0]})
    assert r["code"] == "bad_report" and "next mini-batch" in r["message"]
    r = _send(s, f, {"type": "report", "iter": 3, "loss": 1,
                     "estimates": [1.0, "x"]})
    assert r["code"] == "bad_report" and "element 1" in r["message"]
    r = _send(s, f, {"type": "report", "iter": 3, "loss": 1,
                     "estimates": [1.0, 2.0], "lower": [1]})
    assert r["code"] == "bad_report" and "\"lower\"" in r["message"]
    _report(s, 3, [10.25, 3.5])
    e = wait_for(lambda: (lambda e: e if len(e["points"]) == 3 else None)(
        api(d, "/api/jobs/%d/estimates" % jid)), what="3 mini-batches")
    assert e["kind"] == "query" and e["cells"] == 2
    assert [p["iter"] for p in e["points"]] == [1, 2, 3]
    assert e["points"][0]["est"] == [10.0, None]
    assert e["points"][1]["lower"] == [10, 2]
    # P_3: column 0 |10.25-10.5|/0.5 = 0.5, column 1 its first change, 1
    assert e["progress"] == pytest.approx(0.75)
    # a job that reported as an ML job cannot turn into a query
    s2, f2 = session(d.sock)
    w2 = _send(s2, f2, {"type": "hello", "name": "ml"})
    s2.sendall(b'{"type":"report","iter":0,"loss":1}\n')
    r = _send(s2, f2, {"type": "report", "iter": 1, "loss": 0.5,
                       "estimates": [1.0]})
    assert r["code"] == "bad_report" and "cannot become a query" in \
        r["message"]
    assert d.job(w2["job"])["kind"] == "ml"
    s.close()
    s2.close()


@pytest.fixture
def tpch(tmp_path):
    path = str(tmp_path / "sf.tpch")
    subprocess.run([AQP, "gen", "--scale-factor", "0.02", "--seed", "3",
                    "--out", path], check=True, capture_output=True,
                   timeout=120)
    return path


def test_slaq_aqp_queries_with_an_ml_job(daemon_factory, tpch):
    d = daemon_factory("--policy", "relaqs", "--cores", "2")
    ml = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="ml")
    qs = [d.submit(AQP, "run", "--quiet", "--data", tpch, "--query", q,
                   "--batches", "20", name=q) for q in ("q6", "q1")]
    for q in qs:
        d.wait_state(q, "done", timeout=60)
    for q in qs:
        job = d.job(q)
        assert job["kind"] == "query" and job["iter"] == 20
        e = api(d, "/api/jobs/%d/estimates" % q)
        assert [p["iter"] for p in e["points"]] == list(range(1, 21))
        for p in e["points"]:
            for x, lo, hi in zip(p["est"], p["lower"], p["upper"]):
                if x is not None and lo is not None:
                    assert lo <= x * (1 + 1e-9) + 1e-9 and \
                        x <= hi * (1 + 1e-9) + 1e-9
        last = e["points"][-1]  # the exact answer: no width left
        assert last["lower"] == last["est"] == last["upper"]
    # the ML job kept running, scheduled by its own loss
    job = d.job(ml)
    assert job["kind"] == "ml" and job["state"] == "running"
    assert job["reports"] > 0


def test_a_real_query_survives_its_single_slaqd_killed_with_9(
        daemon_factory, tmp_path):
    """A real slaq-aqp query of 200 mini-batches under a single slaqd that
    is killed with -9 and started again while it runs: the query's client
    keeps its mini-batches (estimates and bounds) until they are
    acknowledged and resends them, so its progress goes on after the
    restart, every mini-batch is stored and the last one is the exact
    answer (issue: the query froze at 58 of 200 and ended without it)."""
    db = str(tmp_path / "db.tpch")
    subprocess.run([AQP, "gen", "--scale-factor", "0.3", "--seed", "2",
                    "--out", db], check=True, capture_output=True,
                   timeout=120)
    exact = subprocess.run([AQP, "run", "--quiet", "--data", db, "--query",
                            "q6", "--batches", "1"], check=True,
                           capture_output=True, text=True).stdout
    d = daemon_factory("--policy", "relaqs", "--cores", "2",
                       "--enforce", "none")
    # About 30 ms of CPU a mini-batch (bootstrap bounds): some 6 s in all.
    jid = d.submit(AQP, "run", "--data", db, "--query", "q6", "--batches",
                   "200", "--bootstrap", "--threads", "1")
    wait_for(lambda: d.job(jid)["reports"] >= 20, timeout=60,
             what="the query's first mini-batches")
    before = d.job(jid)
    assert before["state"] == "running" and before["reports"] < 150, before
    d.kill9()
    time.sleep(1.0)  # the query goes on without slaqd meanwhile
    d.killed = False
    d.start()
    job = d.wait_state(jid, ("done", "failed", "lost"), timeout=120)
    assert job["state"] == "done", job
    assert job["reports"] == 200 and job["iter"] == 200, job
    assert job["query"]["batch"] == 200, job["query"]
    e = api(d, "/api/jobs/%d/estimates" % jid)
    assert [p["iter"] for p in e["points"]] == list(range(1, 201))
    last = e["points"][-1]  # the exact answer: no width left
    assert last["lower"] == last["est"] == last["upper"]
    log = d.cli("logs", str(jid)).stdout
    assert exact.strip() in log, (exact, log[-500:])
