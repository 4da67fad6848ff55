"""test_scaling.py — slaqd advises threads from what a job measured.

A real job under a real slaqd, through the Python client: every
iteration it asks Client.threads() and splits a fixed amount of
pure-Python work over that many threads, which meet at a spinning barrier
after every step (as OpenMP's do; under the interpreter's lock a spinning
thread holds the lock its partner needs, so two threads run an iteration
several times slower than one, as PyTorch's MLP did on two cores); the
client adds the threads and the wall time to each report.
Alone on two cores the thread rule alone would say 2; slaqd's model
explores 1 thread, then 2, measures 2 no faster, and advises 1, under
`fair` as under `slaq`.
"""

import os
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

JOB = r'''
import os, sys, threading
sys.path.insert(0, os.path.join(sys.argv[1], "python"))
import slaq

STEPS, WORK = 10, 1500000

def iteration(t):
    # WORK split over t threads that meet at a spinning barrier after
    # each of STEPS steps, as OpenMP's threads do between operators.
    arrived = [0]
    lock = threading.Lock()
    def worker():
        for s in range(STEPS):
            x = 0
            for i in range(WORK // (STEPS * t)):
                x += i * i
            with lock:
                arrived[0] += 1
            while arrived[0] < (s + 1) * t:
                pass
    ws = [threading.Thread(target=worker) for _ in range(t)]
    for w in ws:
        w.start()
    for w in ws:
        w.join()

job = slaq.Client()
job.report(0, 1.0)
for it in range(1, int(sys.argv[2]) + 1):
    t = job.threads()
    iteration(t)
    print("iter %d threads %d" % (it, t), flush=True)
    job.report(it, 1.0 / (1 + it), samples=100)
job.close()
'''


@pytest.mark.parametrize("policy", ["slaq", "fair"])
def test_a_job_measured_slower_on_two_threads_is_advised_one(
        daemon_factory, tmp_path, policy):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs 2 CPUs for the thread rule to say 2")
    script = tmp_path / "gil_job.py"
    script.write_text(JOB)
    d = daemon_factory("--policy", policy, "--cores", "2")
    jid = d.submit(sys.executable, str(script), REPO, "16")
    job = d.wait_state(jid, "done", timeout=120)
    assert job["reports"] == 17
    used = [int(line.split()[3]) for line in
            d.cli("logs", str(jid)).stdout.splitlines()
            if line.startswith("iter ")]
    assert len(used) == 16
    # It tried two threads (the share keeps two busy) ...
    assert 2 in used, used
    # ... found them no faster, and runs one from then on.
    last2 = max(i for i, t in enumerate(used) if t == 2)
    assert last2 < 12, used
    assert all(t == 1 for t in used[last2 + 1:]), used
