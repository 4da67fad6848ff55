"""slaq-aqp under slaqd: a query job started by `slaq submit` reports one
report per mini-batch (its estimates included) and ends with its exact
answer; cancelled, it stops between mini-batches by itself."""

import os
import subprocess

from conftest import BUILD, wait_for

AQP = os.path.join(BUILD, "bin", "slaq-aqp")


def _db(tmp_path, sf="0.02"):
    path = str(tmp_path / "db.tpch")
    subprocess.run([AQP, "gen", "--scale-factor", sf, "--seed", "2",
                    "--out", path], check=True, capture_output=True)
    return path


def test_query_job_reports_every_minibatch_and_ends_exact(slaqd, tmp_path):
    db = _db(tmp_path)
    exact = subprocess.run([AQP, "run", "--quiet", "--data", db, "--query",
                            "q14", "--batches", "1"], check=True,
                           capture_output=True, text=True).stdout
    jid = slaqd.submit(AQP, "run", "--data", db, "--query", "q14",
                       "--batches", "12")
    job = slaqd.wait_state(jid, ("done", "failed"), timeout=60)
    assert job["state"] == "done", job
    assert job["reports"] == 12, job
    assert job["exit_code"] == 0, job
    log = slaqd.cli("logs", str(jid)).stdout
    # its answer after the last mini-batch is the one-batch exact answer
    assert exact.strip() in log, (exact, log[-500:])
    assert "mini-batch 12/12" in log
    # slaq show and slaq ls speak of a query as a query: its progress and
    # its last mini-batch's estimates with bounds, no loss or convergence
    q = slaqd.job(jid)["query"]
    assert q["batch"] == 12 and q["cells"] >= 1 and q["progress"] is not None
    out = slaqd.cli("show", str(jid)).stdout
    assert "  query       progress " in out, out
    assert "  estimates   after mini-batch 12," in out, out
    assert "    cell 0    " in out, out
    assert "convergence" not in out and "  loss        " not in out, out
    row = [r for r in slaqd.cli("ls", "--all").stdout.splitlines()
           if r.split()[0] == str(jid)][0]
    assert " - " in row and "%" in row, row  # LOSS "-", REDUC its progress


def test_cancelled_query_stops_between_minibatches(daemon_factory, tmp_path):
    d = daemon_factory("--grace", "10")
    db = _db(tmp_path, "0.3")
    jid = d.submit(AQP, "run", "--data", db, "--query", "q17",
                   "--batches", "100000")
    wait_for(lambda: d.job(jid)["reports"] >= 3, timeout=30,
             what="three mini-batches")
    d.cli("cancel", str(jid))
    job = d.wait_state(jid, ("cancelled",), timeout=30)
    assert job["exit_code"] == 0 and not job.get("signal"), job
    assert "stopped by slaq after" in d.cli("logs", str(jid)).stdout


def test_join_query_reports_its_groups_and_ends_exact(slaqd, tmp_path):
    # Q5 joins lineitem with orders, customer, supplier, nation and region
    # and groups by nation: its five cells travel through the client
    # protocol after every mini-batch and slaq show lists them
    db = _db(tmp_path)
    exact = subprocess.run([AQP, "run", "--quiet", "--data", db, "--query",
                            "q5", "--batches", "1"], check=True,
                           capture_output=True, text=True).stdout
    assert len(exact.strip().splitlines()) == 5, exact
    jid = slaqd.submit(AQP, "run", "--data", db, "--query", "q5",
                       "--batches", "10")
    job = slaqd.wait_state(jid, ("done", "failed"), timeout=60)
    assert job["state"] == "done" and job["exit_code"] == 0, job
    assert job["reports"] == 10, job
    log = slaqd.cli("logs", str(jid)).stdout
    assert exact.strip() in log, (exact, log[-500:])
    q = slaqd.job(jid)["query"]
    assert q["batch"] == 10 and q["cells"] == 5, q
    out = slaqd.cli("show", str(jid)).stdout
    assert "  estimates   after mini-batch 10, 5 cells" in out, out
    assert "    cell 3    " in out, out
