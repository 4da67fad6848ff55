"""`slaq cancel`: slaqd first asks a job with a client to stop (stop reason
"cancelled") and signals it only after the grace period, so the job can
save its work and exit by itself; `slaq cancel --now` sends SIGTERM at
once; a job without a client is signalled at once as before."""

import os
import signal
import sys
import time

from conftest import ROOT, TOY, wait_for

# A job that reports every 50 ms; asked to stop, it "saves its work" for
# half a second, writes the stop reason to MARKER and exits 0. With IGNORE
# it never looks at the stop request.
JOB = r"""
import os, sys, time
sys.path.insert(0, %r)
import slaq
marker, ignore = sys.argv[1], sys.argv[2] == "ignore"
job = slaq.Client()
job.report(0, 1.0)
it = 0
while True:
    it += 1
    time.sleep(0.05)
    job.report(it, 1.0 / (it + 1))
    if not ignore and job.should_stop():
        time.sleep(0.5)
        with open(marker, "w") as f:
            f.write(job.stop_reason)
        job.close()
        sys.exit(0)
""" % os.path.join(ROOT, "python")


def _submit(d, marker, mode="obey"):
    jid = d.submit(sys.executable, "-c", JOB, str(marker), mode)
    wait_for(lambda: d.job(jid)["reports"] > 2, what="reports")
    return jid


def test_cancel_asks_the_job_which_saves_and_exits(daemon_factory, tmp_path):
    d = daemon_factory("--grace", "5")
    marker = tmp_path / "saved"
    jid = _submit(d, marker)
    t0 = time.monotonic()
    assert "stopping" in d.cli("cancel", str(jid)).stdout
    job = d.wait_state(jid, "cancelled", timeout=15)
    assert time.monotonic() - t0 < 5, "the job should end before the grace"
    assert job["exit_code"] == 0 and not job.get("signal"), job
    assert job["reason"] == "cancelled"
    assert marker.read_text() == "cancelled"


def test_cancel_now_terminates_before_the_job_can_save(daemon_factory,
                                                       tmp_path):
    d = daemon_factory("--grace", "5")
    marker = tmp_path / "saved"
    jid = _submit(d, marker)
    assert "stopping" in d.cli("cancel", "--now", str(jid)).stdout
    job = d.wait_state(jid, "cancelled", timeout=15)
    assert job["signal"] == signal.SIGTERM, job
    time.sleep(0.7)  # longer than the job's "saving"
    assert not marker.exists()


def test_job_ignoring_the_request_gets_sigterm_after_the_grace(
        daemon_factory, tmp_path):
    d = daemon_factory("--grace", "2")
    jid = _submit(d, tmp_path / "saved", "ignore")
    t0 = time.monotonic()
    d.cli("cancel", str(jid))
    time.sleep(1)
    assert d.job(jid)["state"] == "stopping"  # asked, not yet signalled
    job = d.wait_state(jid, "cancelled", timeout=15)
    assert time.monotonic() - t0 >= 1.9
    assert job["signal"] == signal.SIGTERM, job


def test_c_client_job_leaves_by_itself_on_cancel(slaqd):
    jid = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002")
    wait_for(lambda: slaqd.job(jid)["reports"] > 2, what="reports")
    slaqd.cli("cancel", str(jid))
    job = slaqd.wait_state(jid, "cancelled")
    assert job["exit_code"] == 0, job
    assert "stopping at iteration" in open(
        os.path.join(slaqd.job(jid)["log_dir"], "stdout.log")).read()


def test_cancel_rejects_a_non_boolean_now(slaqd):
    jid = slaqd.submit(TOY, "--forever", "--iter-cpu", "0.002")
    r = slaqd.request({"type": "cancel", "job": jid, "now": "yes"})
    assert not r["ok"] and r["code"] == "bad_request"
    assert slaqd.job(jid)["state"] == "running"
