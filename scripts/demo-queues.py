#!/usr/bin/env python3
"""demo-queues.py — a task array and ML jobs on a controller and three
agents, with node queues (--queue-bound B) and without (--queue-bound 0):
makespan and utilisation of the task cores (docs/arrays.md, "Node
queues").

Each run starts a controller and three agents on this machine (real slaqd
processes on the agent link), submits the ML jobs (slaq-train, one core
each at most: tasks take the rest), then the array: task i sleeps
(1 + (7 i mod 5)) × SCALE seconds, 1 to 5 s at SCALE 1. The makespan is
from the array's submit to its last task's end; the utilisation is the
tasks' run time over the task cores (the nodes' cores less the ML jobs'
max cores, their mean over the run) × the makespan. The idle gap is, on each core, the time from a
task's end to the next task's start there (averaged): what the node
queues remove.

Usage: demo-queues.py [--tasks N] [--jobs M] [--scale S] [--bound B]
                      [--cores C] [--out FILE] BUILD_DIR
"""

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import slaq.control  # noqa: E402

NODES = ("n1", "n2", "n3")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = pred()
        if v:
            return v
        time.sleep(0.05)
    raise SystemExit("demo-queues: timed out waiting for %s" % what)


def run(build, args, bound, work):
    build = os.path.abspath(build)
    slaqd = os.path.join(build, "bin", "slaqd")
    token = os.path.join(work, "agent.token")
    with open(token, "w") as f:
        f.write("demo-queues-agent-token\n")
    os.chmod(token, 0o600)
    port = free_port()
    procs = []
    ml = []
    log = open(os.path.join(work, "slaqd.log"), "a")

    def start(state, *extra):
        p = subprocess.Popen([slaqd, "--state-dir", state, "--http", "off",
                              "--agent-token-file", token] + list(extra),
                             stdout=log, stderr=log)
        procs.append(p)
        return p

    ctl_state = os.path.join(work, "controller")
    sock = os.path.join(ctl_state, "slaq.sock")
    try:
        start(ctl_state, "--agents", "127.0.0.1:%d" % port, "--epoch", "1",
              "--queue-bound", str(bound))
        wait_for(lambda: os.path.exists(sock), 20, "the controller")
        for n in NODES:
            start(os.path.join(work, "agent-" + n), "--agent", "--join",
                  "127.0.0.1:%d" % port, "--node-name", n, "--cores",
                  str(args.cores), "--enforce", "signal")

        def req(m):
            return slaq.control.request(sock, m)
        wait_for(lambda: sum(n["state"] == "up" for n in
                             req({"type": "nodes"})["nodes"]) == len(NODES),
                 20, "the agents to join")
        env = [k + "=" + v for k, v in os.environ.items()]
        train = os.path.join(build, "bin", "slaq-train")
        for i in range(args.jobs):
            r = req({"type": "submit", "cmd": [
                train, "logreg", "--subsample", "0.05", "--iters",
                "10000000", "--quiet", "--seed", str(i)],
                "cwd": work, "env": env, "name": "train%d" % i,
                "max_cores": 1})
            assert r["ok"], r
            ml.append(r["job"])
        wait_for(lambda: all(req({"type": "show", "job": j})["job"]["state"]
                             == "running" for j in ml), 20,
                 "the ML jobs to start")
        sleep = ("sleep $(awk 'BEGIN{print (1 + ({index} * 7) %% 5) * %g}')"
                 % args.scale)
        t0 = time.time()
        r = req({"type": "submit", "array": "1-%d" % args.tasks,
                 "cmd": ["sh", "-c", sleep], "cwd": work, "env": env,
                 "name": "tasks", "task_estimate": 3 * args.scale})
        assert r["ok"], r
        aid = r["array"]
        # the task cores (each node's cores less its ML jobs' max cores),
        # sampled while the array runs: their mean is the capacity
        samples = []
        deadline = time.monotonic() + 60 + args.tasks * 5 * args.scale
        while True:
            a = req({"type": "show", "job": aid})["array"]
            if a["state"] not in ("running", "pending"):
                break
            if time.monotonic() > deadline:
                raise SystemExit("demo-queues: the array did not end")
            samples.append(sum(n["task_cores"] for n in
                               req({"type": "queue"})["nodes"]))
            time.sleep(0.1)
        task_cores = sum(samples) / len(samples) if samples else 0
        tasks = a["task_list"]
        runs = [(t["started"], t["ended"], req({"type": "show", "job":
                                                  t["id"]})["job"]["node"])
                for t in tasks if t["state"] == "done"]
        makespan = max(e for _, e, _ in runs) - t0
        busy = sum(e - s for s, e, _ in runs)
        # idle gaps: per node, each start after the first k (the most
        # tasks it ran at once) follows an end; pair sorted ends, starts
        gaps = []
        for n in NODES:
            mine = [(s, e) for s, e, m in runs if m == n]
            k = max((sum(1 for s2, e2 in mine if s2 <= s < e2)
                     for s, _ in mine), default=0)
            starts = sorted(s for s, _ in mine)
            ends = sorted(e for _, e in mine)
            for s, e in zip(starts[k:], ends):
                gaps.append(max(s - e, 0))
        return {
            "bound": bound, "tasks": args.tasks, "done": a["counts"]["done"],
            "makespan_s": round(makespan, 3),
            "task_cores": round(task_cores, 2),
            "utilisation": round(busy / (task_cores * makespan), 4)
            if task_cores else None,
            "mean_idle_gap_ms": round(1000 * sum(gaps) / len(gaps), 1)
            if gaps else None,
            "busy_s": round(busy, 2),
            "ml_jobs": [(lambda j: {"state": j["state"], "node": j["node"],
                                    "iter": j["iter"], "reason": j["reason"]})(
                req({"type": "show", "job": j})["job"]) for j in ml],
        }
    finally:
        # the ML jobs end with the run (agents leave jobs running when
        # they exit, to take them up again)
        try:
            for j in ml:
                req({"type": "cancel", "job": j, "now": True})
            wait_for(lambda: not any(
                x.get("kind") != "array" for x in
                req({"type": "ls", "active": True})["jobs"]), 30,
                "the ML jobs to end")
        except (OSError, NameError, SystemExit):
            pass
        for p in reversed(procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        log.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--bound", type=int, default=4)
    ap.add_argument("--cores", type=int, default=4)
    ap.add_argument("--out")
    args = ap.parse_args()
    if args.tasks < 1 or args.jobs < 0 or not args.scale > 0 or \
            args.bound < 1 or args.cores < 1:
        ap.error("--tasks, --bound and --cores must be >= 1, --jobs >= 0, "
                 "--scale > 0")
    results = []
    for bound in (args.bound, 0):
        work = tempfile.mkdtemp(prefix="slaq-demo-queues-")
        try:
            results.append(run(args.build, args, bound, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    print("%-22s %8s %10s %8s %12s" % ("", "TASKS", "MAKESPAN", "UTIL",
                                       "IDLE GAP"))
    for r in results:
        name = ("node queues (bound %d)" % r["bound"] if r["bound"]
                else "no node queues")
        print("%-22s %8d %9.2fs %7.1f%% %10.1fms" % (
            name, r["done"], r["makespan_s"], 100 * (r["utilisation"] or 0),
            r["mean_idle_gap_ms"] or 0))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"tasks": args.tasks, "jobs": args.jobs,
                       "scale": args.scale, "cores_per_node": args.cores,
                       "nodes": len(NODES), "runs": results}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
