"""test_helpers.py — slaq's training-loop helpers (python/slaq/loop.py,
torch.py, sklearn.py, xgboost.py, skorch.py) train real models with the
real libraries (Debian's python3-torch, -sklearn, -xgboost, -skorch) under
a real slaqd: the examples in examples/python/ reach done with their
reports in state.db at the interval they asked for, they end promptly when
slaqd says stop (max_iters, cancel), they follow slaqd's thread advice,
and they run to completion without slaqd.
"""

import importlib.util
import os
import re
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import ROOT, wait_for

EXAMPLES = os.path.join(ROOT, "examples", "python")
PY = sys.executable


def have(*mods):
    return all(importlib.util.find_spec(m) is not None for m in mods)


def needs(*mods):
    deb = {"torch": "python3-torch", "sklearn": "python3-sklearn",
           "xgboost": "python3-xgboost", "skorch": "python3-skorch"}
    return pytest.mark.skipif(
        not have(*mods), reason="%s not installed for %s (Debian: %s)" % (
            ", ".join(mods), PY, " ".join(deb.get(m, m) for m in mods)))


# name: (libraries, example and its small budget, steps per report)
CASES = {
    "torch": (("torch", "sklearn"),
              ["torch_job.py", "--epochs", "2", "--every", "5"], 5),
    "sklearn-partial_fit": (("sklearn",),
                            ["sklearn_job.py", "--epochs", "4", "--every",
                             "3"], 3),
    "sklearn-warm_start": (("sklearn",),
                           ["sklearn_job.py", "--helper", "warm_start",
                            "--epochs", "9", "--every", "2"], 2),
    "xgboost": (("xgboost", "sklearn"),
                ["xgboost_job.py", "--rounds", "31", "--every", "3",
                 "--samples", "1500"], 3),
    "skorch": (("skorch", "sklearn"), ["skorch_job.py", "--epochs", "5"], 1),
    "skorch-batch": (("skorch", "sklearn"),
                     ["skorch_job.py", "--on", "batch", "--epochs", "2",
                      "--every", "4"], 4),
}

# name: (the example with a budget far beyond the stop, max_iters)
LONG = {
    "torch": (["torch_job.py", "--epochs", "2000", "--every", "5"], 40),
    "sklearn-partial_fit": (["sklearn_job.py", "--epochs", "5000",
                             "--every", "3"], 30),
    "sklearn-warm_start": (["sklearn_job.py", "--helper", "warm_start",
                            "--epochs", "5000"], 8),
    "xgboost": (["xgboost_job.py", "--rounds", "20000", "--samples", "1500"],
                15),
    "skorch": (["skorch_job.py", "--epochs", "2000"], 3),
    "skorch-batch": (["skorch_job.py", "--on", "batch", "--epochs", "2000",
                      "--every", "4"], 40),
}


def case(name):
    mods = CASES[name][0]
    return pytest.param(name, marks=needs(*mods), id=name)


ALL = [case(n) for n in CASES]


def example(args):
    return [PY, os.path.join(EXAMPLES, args[0])] + list(args[1:])


def reports(d, jid):
    """(iter, loss, cpu_s, samples, threads) of job jid, from state.db."""
    db = sqlite3.connect(os.path.join(d.state, "state.db"))
    try:
        return db.execute("SELECT iter, loss, cpu_s, samples, threads FROM "
                          "reports WHERE job = ? ORDER BY iter",
                          (jid,)).fetchall()
    finally:
        db.close()


def trained_steps(log):
    m = re.search(r"\((\d+) steps in (\d+) reports|trained (\d+) (?:steps|"
                  r"rounds) in (\d+) reports", log)
    assert m, log
    g = [int(x) for x in m.groups() if x is not None]
    return g[0], g[1]


@pytest.mark.parametrize("name", ALL)
def test_helper_reports_every_n_steps_under_slaqd(daemon_factory, name):
    _, args, every = CASES[name]
    d = daemon_factory("--policy", "slaq", "--cores", "2")
    jid = d.submit(*example(args))
    job = d.wait_state(jid, ("done", "failed", "stopped", "lost"),
                       timeout=120)
    log = d.cli("logs", str(jid)).stdout
    assert job["state"] == "done", (job, log)
    steps, n_reports = trained_steps(log)
    rows = [r for r in reports(d, jid) if r[0] > 0]  # iteration 0: initial
    iters = [r[0] for r in rows]
    # One report every `every` steps, at the steps' counts, and the
    # remainder at the end: ceil(steps / every) reports in all.
    assert len(rows) == n_reports == -(-steps // every), (iters, log)
    want = [k * every for k in range(1, steps // every + 1)]
    if steps % every:
        want.append(steps)
    assert iters == want
    # CPU seconds per interval, the threads the steps ran (slaqd's
    # advice, at most the 2 cores' rule), and it learnt.
    assert all(r[2] > 0 for r in rows), rows
    assert all(r[4] is not None and 1 <= r[4] <= 2 for r in rows), rows
    losses = [r[1] for r in reports(d, jid)]
    assert min(losses[-3:]) < losses[0]


@pytest.mark.parametrize("name", ALL)
def test_helper_stops_promptly_at_slaqds_stop(daemon_factory, name):
    args, max_iters = LONG[name]
    d = daemon_factory("--policy", "slaq", "--cores", "2")
    t0 = time.monotonic()
    jid = d.submit(*example(args), max_iters=max_iters)
    job = d.wait_state(jid, ("done", "failed", "stopped", "lost"),
                       timeout=120)
    took = time.monotonic() - t0
    log = d.cli("logs", str(jid)).stdout
    # It left by itself when told (exit 0, before any SIGTERM), within a
    # few steps of the stop, far short of its budget.
    assert job["state"] == "stopped" and job["reason"] == "max_iters", job
    assert job["exit_code"] == 0, (job, log)
    assert "stopped: max_iters" in log, log
    steps, _ = trained_steps(log)
    budget = int(args[args.index("--epochs" if "--epochs" in args
                                 else "--rounds") + 1])
    assert max_iters <= steps < budget / 10, log
    # Promptly: the process was gone within 3 s of the report that
    # reached max_iters (the stop comes at slaqd's next epoch, 0.2 s; the
    # loop looks every 0.2 s; the client waits for its last acks).
    db = sqlite3.connect(os.path.join(d.state, "state.db"))
    try:
        reached = db.execute("SELECT min(t) FROM reports WHERE job = ? AND "
                             "iter >= ?", (jid, max_iters)).fetchone()[0]
        ended = db.execute("SELECT ended FROM jobs WHERE id = ?",
                           (jid,)).fetchone()[0]
    finally:
        db.close()
    assert 0 <= ended - reached < 3.0, (ended - reached, log)
    assert took < 60


@pytest.mark.parametrize("name", ALL)
def test_helper_ends_training_on_cancel(daemon_factory, name):
    args, _ = LONG[name]
    d = daemon_factory("--policy", "slaq", "--cores", "2", "--grace", "5")
    jid = d.submit(*example(args))
    wait_for(lambda: d.job(jid)["reports"] >= 3, timeout=60,
             what="three reports")
    t0 = time.monotonic()
    d.cli("cancel", str(jid))
    job = d.wait_state(jid, "cancelled", timeout=30)
    took = time.monotonic() - t0
    log = d.cli("logs", str(jid)).stdout
    # The loop saw the stop and ended fit/train itself: exit 0 before the
    # 5 s grace (a SIGTERM would leave a signal and no closing line).
    assert job["exit_code"] == 0 and not job.get("signal"), (job, log)
    assert "stopped: cancelled" in log, log
    assert took < 5


@pytest.mark.parametrize("name", ALL)
def test_helper_runs_to_completion_without_slaqd(name, tmp_path):
    _, args, _ = CASES[name]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SLAQ_")}
    p = subprocess.run(example(args), env=env, capture_output=True,
                       text=True, timeout=120, cwd=str(tmp_path))
    assert p.returncode == 0, p.stderr
    assert "trained" in p.stdout and "stopped" not in p.stdout, p.stdout
    steps, n_reports = trained_steps(p.stdout)
    assert n_reports == -(-steps // CASES[name][2])


# ---------------------------------------------------------------- in process

def test_import_slaq_imports_no_training_library():
    code = ("import sys; sys.path.insert(0, %r); import slaq, slaq.loop; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('torch', 'sklearn', 'xgboost', 'skorch', 'numpy', "
            "'threadpoolctl')))" % os.path.join(ROOT, "python"))
    out = subprocess.run([PY, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == "[]"


def offline_client():
    import slaq
    return slaq.Client(socket_path="")


def test_loop_offline_reports_every_n_steps_and_flushes_the_rest():
    import slaq
    seen = []
    loop = slaq.Loop(every_steps=3, client=offline_client(),
                     on_report=seen.append)
    for k in range(10):
        assert loop.step(10.0 - k, samples=2)
    loop.close()
    assert [r.iteration for r in seen] == [3, 6, 9, 10]
    assert seen[0].loss == pytest.approx(9.0)  # mean of 10, 9, 8
    assert seen[0].samples == 6 and seen[-1].steps == 1
    assert not any(r.sent for r in seen)  # no slaqd: dropped
    assert loop.client.dropped == 4


def test_loop_weighted_mean_and_report_numbering():
    import slaq
    seen = []
    loop = slaq.Loop(every_steps=2, iteration="report",
                     client=offline_client(), on_report=seen.append)
    loop.initial_loss(5.0)
    loop.step(1.0, samples=1)
    loop.step(4.0, samples=3)
    loop.step(2.0)
    loop.close()
    assert [(r.iteration, r.loss) for r in seen] == [(0, 5.0), (1, 3.25),
                                                     (2, 2.0)]


def test_loop_every_seconds():
    import slaq
    seen = []
    loop = slaq.Loop(every_seconds=0.1, client=offline_client(),
                     on_report=seen.append)
    t0 = time.monotonic()
    while time.monotonic() - t0 < 0.55:
        loop.step(1.0)
        time.sleep(0.01)
    assert 4 <= len(seen) <= 6, [r.iteration for r in seen]


def test_loop_targets_stop_it():
    import slaq
    loop = slaq.Loop(every_steps=1, target_loss=0.5, client=offline_client())
    assert loop.step(1.0) and loop.step(0.6)
    assert not loop.step(0.4)
    assert loop.stop_reason == "target_loss" and loop.should_stop()
    loop = slaq.Loop(every_steps=4, max_steps=6, raise_on_stop=True,
                     client=offline_client())
    with loop:
        for k in range(100):
            loop.step(1.0)
    assert k == 5 and loop.stop_reason == "max_steps"
    assert loop.last_report.iteration == 6  # the rest was reported


def test_loop_refuses_a_non_finite_loss_and_bad_options():
    import slaq
    loop = slaq.Loop(every_steps=1, client=offline_client())
    with pytest.raises(ValueError, match="nan"):
        loop.step(float("nan"))
    with pytest.raises(ValueError):
        slaq.Loop(every_steps=0, client=offline_client())
    with pytest.raises(ValueError):
        slaq.Loop(iteration="epoch", client=offline_client())


@pytest.fixture
def attached(daemon_factory, monkeypatch):
    """A slaqd to which this test process attaches as a job."""
    d = daemon_factory("--policy", "slaq", "--cores", "2")
    monkeypatch.setenv("SLAQ_SOCKET", d.sock)
    for k in ("SLAQ_JOB_ID", "SLAQ_JOB_SECRET", "SLAQ_DEFAULT_CORES"):
        monkeypatch.delenv(k, raising=False)
    return d


@needs("torch")
def test_torch_job_sets_the_advised_threads_only_when_they_change(
        attached, monkeypatch):
    import torch
    import slaq.torch
    calls = []
    real = torch.set_num_threads
    monkeypatch.setattr(torch, "set_num_threads",
                        lambda n: (calls.append(n), real(n)))
    before = torch.get_num_threads()
    real(2)
    try:
        job = slaq.torch.Job(every_steps=5)
        # slaqd advises one thread until it has measured the job.
        assert torch.get_num_threads() == 1 and calls == [1]
        w = torch.zeros(4, requires_grad=True)
        for _ in range(30):
            loss = ((w - 1) ** 2).sum()
            loss.backward()
            with torch.no_grad():
                w -= 0.1 * w.grad
                w.grad.zero_()
            assert job.step(loss, samples=8)
        jid = job.client.job_id
        job.close()
        # Set again only when the advice changed (slaqd may try two
        # threads once it has measured one, the job alone on 2 cores).
        assert all(a != b for a, b in zip(calls, calls[1:])), calls
        assert torch.get_num_threads() == job.threads == calls[-1]
        rows = reports(attached, jid)
        assert [r[0] for r in rows] == [5, 10, 15, 20, 25, 30]
        assert rows[0][4] == 1 and all(r[3] == 40 for r in rows), rows
        assert attached.wait_state(jid, "done")["reports"] == 6
    finally:
        real(before)


@needs("torch", "threadpoolctl", "numpy")
def test_torch_job_sizes_the_blas_pool_with_torchs(attached):
    """PyTorch built against OpenBLAS (Debian's) runs its matrix products
    on OpenBLAS's own pool, one thread per CPU unless limited: sized with
    torch's pool, the advice of one thread leaves one BLAS thread, not a
    pool that spins beside torch's on a share of one core."""
    import numpy  # noqa: F401  (loads the BLAS library)
    import threadpoolctl
    import torch
    import slaq.torch
    blas = lambda: [i["num_threads"] for i in threadpoolctl.threadpool_info()
                    if i["user_api"] == "blas"]
    if not blas():
        pytest.skip("no BLAS library threadpoolctl can size")
    before = torch.get_num_threads()
    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        try:
            assert set(blas()) == {2}
            job = slaq.torch.Job(every_steps=5)
            assert torch.get_num_threads() == 1
            assert set(blas()) == {1}, blas()
            job.close()
        finally:
            torch.set_num_threads(before)


@needs("xgboost", "sklearn")
def test_xgboost_callback_sets_nthread_and_stops_on_max_steps(attached):
    import json
    import xgboost
    import slaq.xgboost
    from sklearn.datasets import make_classification
    x, y = make_classification(n_samples=500, random_state=1)
    dm = xgboost.DMatrix(x, y)
    cb = slaq.xgboost.Callback(max_steps=7)
    b = xgboost.train({"objective": "binary:logistic",
                       "eval_metric": "auc"}, dm, 50,
                      evals=[(dm, "train")], callbacks=[cb],
                      verbose_eval=False)
    assert b.num_boosted_rounds() == 7 and cb.loop.stop_reason == "max_steps"
    # nthread is slaqd's advice: one thread until slaqd has measured the
    # job (it may then try two, alone on the 2 cores).
    cfg = json.loads(b.save_config())["learner"]["generic_param"]
    assert int(cfg["nthread"]) == cb.loop.threads
    rows = reports(attached, cb.loop.client.job_id)
    assert [r[0] for r in rows] == list(range(1, 8))
    assert rows[0][4] == 1 and rows[-1][4] == cb.loop.threads
    # auc is maximised: the loss is its negation, falling as auc rises.
    assert all(-1 <= r[1] < 0 for r in rows)


@needs("xgboost")
def test_xgboost_callback_needs_an_evaluation_set():
    import xgboost
    import numpy as np
    import slaq.xgboost
    dm = xgboost.DMatrix(np.random.rand(50, 3), np.random.rand(50))
    with pytest.raises(ValueError, match="evals="):
        xgboost.train({}, dm, 3, callbacks=[slaq.xgboost.Callback(
            client=offline_client())])


@needs("sklearn")
def test_sklearn_helpers_limit_blas_to_the_advice(attached):
    import numpy as np
    import threadpoolctl
    import slaq.sklearn
    from sklearn.datasets import load_digits
    from sklearn.neural_network import MLPClassifier
    x, y = load_digits(return_X_y=True)
    seen = []

    def blas(rep):  # called before the next interval's threads are set
        seen.append(({i["num_threads"] for i in threadpoolctl.threadpool_info()
                      if i["user_api"] == "blas"}, rep.threads))
    run = slaq.sklearn.warm_start_fit(
        MLPClassifier(hidden_layer_sizes=(16,), max_iter=1), x / 16, y,
        rounds=4, on_report=blas)
    assert run.steps == 4 and len(seen) == 4, seen
    assert seen[0][1] == 1 and all(s <= {t} for s, t in seen), seen
    with pytest.raises(ValueError, match="loss_"):
        from sklearn.linear_model import SGDClassifier
        slaq.sklearn.partial_fit(SGDClassifier(), [(x, y)],
                                 classes=np.arange(10),
                                 client=offline_client())
    with pytest.raises(ValueError, match="one-shot"):
        slaq.sklearn.partial_fit(MLPClassifier(), iter([(x, y)]), epochs=2,
                                 client=offline_client())


@needs("torch", "sklearn")
def test_torch_job_stops_at_target_reduction(daemon_factory):
    # The quick start's submit: slaqd stops the job once its loss has
    # fallen by half of the predicted total, long before its 300 epochs.
    d = daemon_factory("--policy", "slaq", "--cores", "2")
    jid = d.submit(*example(["torch_job.py", "--epochs", "300", "--every",
                             "10"]), target_reduction=0.5)
    job = d.wait_state(jid, ("done", "failed", "stopped", "lost"),
                       timeout=120)
    log = d.cli("logs", str(jid)).stdout
    assert job["state"] == "stopped", (job, log)
    assert job["reason"] == "target_reduction" and job["exit_code"] == 0
    assert "stopped: target_reduction" in log, log
    steps, _ = trained_steps(log)
    assert steps < 300 * 29 / 4, log
