#!/usr/bin/env python3
"""bench-suspend.py — how long slaqd takes to suspend a real training job,
and how large its checkpoint is (make bench-suspend).

Starts a slaqd of its own (temporary state directory, no HTTP), runs
`slaq-train mlpc` (Fashion-MNIST, one hidden layer of 100, as a small
CIFAR-size model of the thesis would be), and measures:

  signal      ROUNDS times: `suspend` (SIGSTOP) — slaqd's latency until the
              kernel shows the process stopped — then `resume` (SIGCONT);
  checkpoint  CK_ROUNDS times: `suspend` with checkpoint — the time from
              the request until the job has written its checkpoint and
              exited (slaqd's suspend_ms) and the checkpoint's size — then
              `resume` as a new job from the checkpoint.

Prints one line per measurement and a summary. Stops slaqd and its jobs.

usage: scripts/bench-suspend.py [BUILD_DIR] [--rounds N] [--ck-rounds N]
       [--hidden N]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "python"))
from slaq.control import request as control_request  # noqa: E402


def request(sock, msg):
    return control_request(sock, msg, timeout=30)


def wait(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise SystemExit("bench-suspend: timed out waiting for " + what)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", nargs="?", default="build")
    ap.add_argument("--rounds", type=int, default=20)
    ap.add_argument("--ck-rounds", type=int, default=5)
    ap.add_argument("--hidden", type=int, default=100)
    a = ap.parse_args()
    bindir = os.path.join(a.build, "bin")
    state = tempfile.mkdtemp(prefix="slaq-bench-suspend.")
    sock = os.path.join(state, "slaq.sock")
    log = open(os.path.join(state, "slaqd.log"), "w")
    d = subprocess.Popen([os.path.join(bindir, "slaqd"), "--state-dir", state,
                          "--http", "off", "--epoch", "0.5"], stdout=log,
                         stderr=log)
    try:
        wait(lambda: os.path.exists(sock) and
             request(sock, {"type": "status"})["ok"], 30, "slaqd")
        cmd = [os.path.abspath(os.path.join(bindir, "slaq-train")), "mlpc",
               "--subsample", "0.2", "--hidden", str(a.hidden), "--iters",
               "1000000", "--eval-every", "0"]
        r = request(sock, {"type": "submit", "cmd": cmd, "name": "bench"})
        jid = r["job"]
        show = lambda j: request(sock, {"type": "show", "job": j})["job"]
        wait(lambda: show(jid)["iter"] >= 3, 120, "the job's first iterations")
        sig = []
        for i in range(a.rounds):
            r = request(sock, {"type": "suspend", "job": jid})
            assert r["ok"], r
            sig.append(r["latency_ms"])
            print("signal suspend %2d: %.3f ms" % (i + 1, r["latency_ms"]))
            time.sleep(0.2)
            assert request(sock, {"type": "resume", "job": jid})["ok"]
            time.sleep(0.3)
        ck, size = [], []
        for i in range(a.ck_rounds):
            it = show(jid)["iter"]
            wait(lambda: show(jid)["iter"] >= it + 2, 120, "iterations")
            assert request(sock, {"type": "suspend", "job": jid,
                                  "checkpoint": True})["ok"]
            j = wait(lambda: (lambda j: j if j["state"] == "stopped" else
                              None)(show(jid)), 60, "the checkpoint")
            ck.append(j["suspend_ms"])
            size.append(j["checkpoint_bytes"])
            print("checkpoint suspend %d: %.1f ms, %d bytes (iteration %d)"
                  % (i + 1, j["suspend_ms"], j["checkpoint_bytes"], j["iter"]))
            r = request(sock, {"type": "resume", "job": jid})
            assert r["ok"], r
            jid = r["job"]["id"]
        print("summary: signal suspend mean %.3f ms, median %.3f ms, max %.3f "
              "ms over %d; checkpoint suspend mean %.1f ms, median %.1f ms; "
              "checkpoint %.0f KB (mlpc, hidden %d)"
              % (statistics.mean(sig), statistics.median(sig), max(sig),
                 len(sig), statistics.mean(ck), statistics.median(ck),
                 statistics.mean(size) / 1000, a.hidden))
        print("(thesis: 158 ms mean suspend latency, 358 KB checkpoint)")
        request(sock, {"type": "cancel", "job": jid, "now": True})
        wait(lambda: not request(sock, {"type": "ls", "active": True})["jobs"],
             30, "the job to end")
    finally:
        d.terminate()
        d.wait(timeout=30)
        log.close()
        shutil.rmtree(state, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
