"""test_job_threads.py — under slaqd a job's math libraries start at
--job-threads threads (default 1) and their idle threads sleep instead of
spinning, unless the job's own environment says otherwise (slaqd(8),
--job-threads; docs/client.md, "Threads").

Without it a job that leaves its libraries at their defaults, as most
users' jobs do, runs numpy's OpenBLAS with one busy-waiting thread per
CPU: on a share of one core beside another job the threads spin on each
other and the same work costs more CPU than at one thread: about 1.5x
for the real BLAS job of the third test, which measures it.
"""

import json
import os
import subprocess
import sys
import time

import pytest

from conftest import ROOT, SLAQ, SLAQD

VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
        "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS",
        "SLAQ_DEFAULT_CORES", "OMP_WAIT_POLICY")

# Prints the thread variables it was given and, where numpy and
# threadpoolctl are installed, the BLAS pool's size.
ENV_JOB = r"""
import json, os
import slaq
out = {k: os.environ.get(k) for k in %r}
# What the client assumes before slaqd's welcome: the default allocation.
out["default_cores"] = slaq.Client(socket_path="/nonexistent").cores()
try:
    import numpy, threadpoolctl
    out["blas"] = [i["num_threads"] for i in threadpoolctl.threadpool_info()
                   if i["user_api"] == "blas"]
except ImportError:
    pass
print(json.dumps(out))
""" % (VARS,)

# A job written without slaq in mind: matrix products in a Python loop,
# numpy's BLAS at its defaults; prints the CPU-seconds the work took.
BLAS_JOB = r"""
import time
import numpy as np
a = np.random.default_rng(0).random((256, 256))
c0 = time.process_time()
for _ in range(2500):
    b = a @ a
    a = b / np.abs(b).max()
print("cpu_s=%.3f" % (time.process_time() - c0))
"""


def clean_env(**extra):
    """The submitter's environment without any thread variable, so the
    test sees slaqd's choice, not its caller's shell's."""
    env = {k: v for k, v in os.environ.items()
           if k not in VARS and k != "SLAQ_SOCKET"}
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    env.update(extra)
    return env


def submit(d, code, env, name="t"):
    p = subprocess.run([SLAQ, "submit", "--socket", d.sock, "--name", name,
                        "--", sys.executable, "-c", code],
                       capture_output=True, text=True, env=env, timeout=60,
                       check=True)
    return int(p.stdout.strip())


def output(d, jid, timeout=60):
    d.wait_state(jid, "done", timeout=timeout)
    return d.cli("logs", str(jid)).stdout


def test_a_jobs_libraries_start_at_one_thread_unless_it_says(daemon_factory):
    d = daemon_factory("--policy", "fair", "--cores", "2")
    got = json.loads(output(d, submit(d, ENV_JOB, clean_env())))
    for k in VARS[:-1]:
        assert got[k] == "1", (k, got)
    assert got["OMP_WAIT_POLICY"] == "PASSIVE", got
    assert got["default_cores"] == 1.0, got  # not the machine's CPUs
    if "blas" in got:
        assert got["blas"] and set(got["blas"]) == {1}, got
    # What the job's environment names is its own.
    got = json.loads(output(d, submit(
        d, ENV_JOB, clean_env(OMP_NUM_THREADS="3", OMP_WAIT_POLICY="active"))))
    assert got["OMP_NUM_THREADS"] == "3"
    assert got["OMP_WAIT_POLICY"] == "active"
    assert got["OPENBLAS_NUM_THREADS"] == "1"
    assert d.request({"type": "status"})["job_threads"] == 1


def test_job_threads_sets_the_count_and_zero_leaves_them_unset(
        daemon_factory):
    d = daemon_factory("--policy", "fair", "--cores", "2", "--job-threads",
                       "2")
    got = json.loads(output(d, submit(d, ENV_JOB, clean_env())))
    assert all(got[k] == "2" for k in VARS[:-1]), got
    d0 = daemon_factory("--policy", "fair", "--cores", "2", "--job-threads",
                        "0")
    got = json.loads(output(d0, submit(d0, ENV_JOB, clean_env())))
    assert all(got[k] is None for k in VARS), got
    bad = subprocess.run([SLAQD, "--job-threads", "-1", "--state-dir",
                          "/nonexistent"],
                         capture_output=True, text=True, timeout=10)
    assert bad.returncode != 0
    assert "--job-threads wants a whole number from 0 to 4096" in bad.stderr


def default_blas_threads():
    """The BLAS pool a plain numpy process starts with here (0: none)."""
    p = subprocess.run(
        [sys.executable, "-c", "import numpy, threadpoolctl; print(max("
         "[i['num_threads'] for i in threadpoolctl.threadpool_info() "
         "if i['user_api'] == 'blas'] or [0]))"],
        capture_output=True, text=True, env=clean_env(), timeout=60)
    return int(p.stdout) if p.returncode == 0 else 0


def test_a_blas_job_beside_a_busy_one_costs_what_it_costs_alone(
        daemon_factory):
    """The same matrix products cost no more CPU beside another job under
    slaqd than alone at one thread; before --job-threads they cost about
    1.5x (OpenBLAS's default pool spinning on a share of one core)."""
    if (os.cpu_count() or 1) < 2 or default_blas_threads() < 2:
        pytest.skip("numpy's BLAS starts at one thread here: nothing spins")
    ref = []
    for _ in range(2):  # the lower of two, plainly, at one thread
        p = subprocess.run([sys.executable, "-c", BLAS_JOB],
                           capture_output=True, text=True, timeout=120,
                           env=clean_env(OPENBLAS_NUM_THREADS="1"),
                           check=True)
        ref.append(float(p.stdout.split("=")[1]))
    d = daemon_factory("--policy", "fair", "--cores",
                       str(os.cpu_count()))
    busy = [submit(d, "while True: pass", clean_env(), name="busy")
            for _ in range(os.cpu_count() - 1)]
    time.sleep(1)
    out = output(d, submit(d, BLAS_JOB, clean_env(), name="blas"),
                 timeout=180)
    for jid in busy:
        d.cli("cancel", str(jid))
    cost = float(out.strip().split("=")[1])
    assert cost <= 1.25 * min(ref), (cost, ref)


def test_slaqd_records_what_a_jobs_work_costs(daemon_factory):
    """CPU-seconds per iteration and per sample, over the job's life (from
    its second report: the first covers its start), of its recent reports
    (a moving mean, 0.3 on the newest) and the lowest that mean has been;
    in the job view and `slaq show` (docs/metrics.md, "Cost of work")."""
    import slaq
    from conftest import wait_for
    d = daemon_factory("--policy", "fair", "--cores", "2")
    c = slaq.Client(socket_path=d.sock, name="costly")
    c.report(0, 2.3, cpu_s=9.0)                  # loading: not work
    for it, cpu in ((10, 1.0), (20, 1.0), (30, 1.0), (40, 4.0)):
        c.report(it, 2.3 - it / 100, cpu_s=cpu, samples=640)
    wait_for(lambda: (c.poll(), c.connected and c.job_id)[1],
             what="the job to attach")
    wait_for(lambda: d.job(c.job_id)["reports"] == 5, what="the reports")
    j = d.job(c.job_id)
    assert abs(j["cpu_per_iter"] - 7.0 / 40) < 1e-9, j["cpu_per_iter"]
    assert abs(j["cpu_per_sample"] - 7.0 / 2560) < 1e-9
    recent = 0.3 * 0.4 + 0.7 * 0.1                # 0.1, 0.1, 0.1, then 0.4
    assert abs(j["cpu_per_iter_recent"] - recent) < 1e-9
    assert abs(j["cpu_per_iter_best"] - 0.1) < 1e-9
    out = d.cli("show", str(c.job_id)).stdout
    assert "cost        0.175 CPU-s per iteration (recent 0.19, lowest " \
        "0.1: recent 1.90x), 0.00273 CPU-s per sample" in out, out
    c.close()
