"""test_suspend.py — slaqd suspends and resumes jobs it started.

SIGSTOP/SIGCONT: the process group stops (state T), reports stop, its
allocation drops to ~0, and it goes on from where it was when resumed.
Checkpoint and exit: slaq-train leaves its checkpoint in
SLAQ_CHECKPOINT_DIR and exits; resuming starts a new job that continues
from the saved iteration (its first report is the next iteration, its
loss near the saved one, not the initial loss).
"""

import os
import time

from conftest import BUILD, wait_for

TRAIN = os.path.join(BUILD, "bin", "slaq-train")


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def test_signal_suspend_and_resume(slaqd):
    jid = slaqd.submit(TRAIN, "logreg", "--subsample", "0.05", "--iters",
                       "100000", "--eval-every", "0")
    wait_for(lambda: slaqd.job(jid)["iter"] >= 3, timeout=60,
             what="3 iterations")
    r = slaqd.request({"type": "suspend", "job": jid})
    assert r["ok"], r
    assert 0 <= r["latency_ms"] < 2000
    job = slaqd.job(jid)
    assert job["suspended"] == "signal" and job["state"] == "running"
    assert proc_state(job["pid"]) in ("T", "t")
    time.sleep(0.5)
    it = slaqd.job(jid)["iter"]
    time.sleep(1.5)
    assert slaqd.job(jid)["iter"] == it  # nothing ran
    wait_for(lambda: slaqd.job(jid)["cores"] < 0.01, timeout=5,
             what="its cores to go")
    again = slaqd.request({"type": "suspend", "job": jid})
    assert not again["ok"] and again["code"] == "not_suspendable"
    r = slaqd.request({"type": "resume", "job": jid})
    assert r["ok"] and r["job"]["id"] == jid, r
    wait_for(lambda: slaqd.job(jid)["iter"] > it + 2, timeout=30,
             what="iterations after the resume")
    assert slaqd.job(jid)["suspended"] is None
    out = slaqd.cli("show", str(jid)).stdout
    assert "state       running" in out


def test_checkpoint_suspend_and_resume_as_new_job(slaqd):
    jid = slaqd.submit(TRAIN, "logreg", "--subsample", "0.05", "--iters",
                       "100000", "--eval-every", "0")
    wait_for(lambda: slaqd.job(jid)["iter"] >= 5, timeout=60,
             what="5 iterations")
    first_loss = slaqd.job(jid)["first_loss"]
    r = slaqd.request({"type": "suspend", "job": jid, "checkpoint": True})
    assert r["ok"], r
    early = slaqd.request({"type": "resume", "job": jid})
    job = slaqd.wait_state(jid, "stopped", timeout=30)
    if not early["ok"]:
        assert "being written" in early["message"]
        assert job["reason"] == "suspend" and job["suspended"] == "checkpoint"
        assert job["checkpoint_bytes"] > 1000 and job["suspend_ms"] > 0
        saved_iter, saved_loss = job["iter"], job["loss"]
        r = slaqd.request({"type": "resume", "job": jid})
        assert r["ok"], r
        new = r["job"]["id"]
    else:  # the job had exited already: resumed at once
        saved_iter, saved_loss = job["iter"], job["loss"]
        new = early["job"]["id"]
    assert new != jid
    assert slaqd.job(jid)["continued_by"] == new
    nj = wait_for(lambda: (lambda j: j if j["reports"] >= 2 else None)(
        slaqd.job(new)), timeout=60, what="the resumed job's reports")
    assert nj["resumed_from"] == jid
    assert nj["history"][0][0] == saved_iter + 1
    # It continues: close to the saved loss, far below the initial one.
    assert nj["history"][0][1] <= saved_loss + 0.05 * (first_loss - saved_loss)
    logdir = slaqd.request({"type": "logs", "job": new})["dir"]
    with open(os.path.join(logdir, "stdout.log")) as f:
        assert "# resumed at iter=%d " % saved_iter in f.read()
    ck = os.path.join(slaqd.state, "checkpoints")
    assert os.path.isdir(ck)
    not_ckpt = slaqd.request({"type": "resume", "job": new})
    assert not not_ckpt["ok"] and not_ckpt["code"] == "not_resumable"
