#!/usr/bin/env python3
"""demo-queues.py — a task array and ML jobs on a controller and three
agents, with node queues (--queue-bound B, slaqd's default auto) and
without (--queue-bound 0):
makespan and utilisation of the task cores, the idle gap between tasks and
the ML jobs' time to 90 % of their loss drop (docs/arrays.md, "Node
queues").

Each run starts a controller and three agents: through the local Slurm
cluster (scripts/slurm-local.sh, nodes n1..n3) with `slaq cluster up
--slurm`, as a user would, the agents Slurm job steps on the three nodes;
or, where Slurm cannot start here (it says why) or with --direct, as three
slaqd processes started directly on this machine. It submits the ML jobs
(slaq-train, one core each at most: tasks take the rest), then the array:
task i sleeps (1 + (7 i mod 5)) x SCALE seconds, 1 to 5 s at SCALE 1. The
makespan is from the array's submit to its last task's end; the
utilisation is the tasks' run time over the task cores (the nodes' cores
less the ML jobs' max cores, their mean over the run) x the makespan. The
idle gap is, on each core, the time from a task's end to the next task's
start there (averaged): what the node queues remove. An ML job's t90 is
`slaq report`'s, from the controller's state.db once the run has ended
and the job been cancelled with it: the time from its submission to its
first report with 90 % of the drop from its first loss to its last
(docs/metrics.md).

Usage: demo-queues.py [--tasks N] [--jobs M] [--scale S] [--bound B]
                      [--cores C] [--slurm | --direct] [--out FILE]
                      BUILD_DIR
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

sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))

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


class Direct:
    """A controller and three agents started directly on this machine."""

    name = "direct"

    def __init__(self, build, args):
        self.slaqd = os.path.join(build, "bin", "slaqd")
        self.args = args

    def start(self, bound, work):
        token = os.path.join(work, "agent.token")
        with open(token, "w") as f:
            f.write("demo-queues-agent-token\n")
        os.chmod(token, 0o600)
        port = free_port()
        self.procs = []
        self.log = open(os.path.join(work, "slaqd.log"), "a")
        self.work = work

        def start(state, *extra):
            p = subprocess.Popen([self.slaqd, "--state-dir", state, "--http",
                                  "off"] + list(extra), stdout=self.log,
                                 stderr=self.log)
            self.procs.append(p)
            return p
        ctl_state = os.path.join(work, "controller")
        sock = os.path.join(ctl_state, "slaq.sock")
        start(ctl_state, "--agents", "127.0.0.1:%d" % port,
              "--agent-token-file", token, "--epoch", "1",
              "--queue-bound", str(bound))
        wait_for(lambda: os.path.exists(sock), 20, "the controller")
        for n in NODES:
            key = os.path.join(work, n + ".key")  # its node's key only
            subprocess.run([os.path.join(os.path.dirname(self.slaqd), "slaq"),
                            "cluster", "node-key", "--secret-file", token,
                            "--out", key, n], check=True)
            start(os.path.join(work, "agent-" + n), "--agent", "--join",
                  "127.0.0.1:%d" % port, "--node-key-file", key, "--cores",
                  str(self.args.cores), "--enforce", "signal")
        return sock

    def agent_pids(self):
        return {n: p.pid for n, p in zip(NODES, self.procs[1:])}

    def state_dir(self):
        return os.path.join(self.work, "controller")

    def agent_dir(self, node):
        return os.path.join(self.work, "agent-" + node)

    def stop(self):
        for p in reversed(self.procs):
            p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
        self.log.close()

    def close(self):
        pass


class Slurm:
    """The local Slurm cluster (scripts/slurm-local.sh, nodes n1..n3),
    and in it `slaq cluster up --slurm`: the controller in the batch
    script, each agent a job step on its node."""

    name = "slurm"

    def __init__(self, build, args):
        from slurmlocal import NEEDED, SlurmLocal
        missing = [p for p in NEEDED if not shutil.which(
            p, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin")]
        if missing:
            raise RuntimeError("%s not installed (Debian's slurm-wlm and "
                               "munge, `make deps`)" % ", ".join(missing))
        self.slaq = os.path.join(build, "bin", "slaq")
        self.args = args
        self.cluster = SlurmLocal(len(NODES), 2)
        p = self.cluster.up()
        if p.returncode != 0:
            self.cluster.down()
            raise RuntimeError("scripts/slurm-local.sh up failed: " +
                               p.stderr.strip()[-1000:])
        self.runs = 0

    def _slaq(self, *argv, timeout=180):
        return subprocess.run([self.slaq] + list(argv), env=self.env,
                              cwd=self.cluster.dir, capture_output=True,
                              text=True, timeout=timeout)

    def start(self, bound, work):
        self.runs += 1
        self.dir = os.path.join(self.cluster.dir, "slaq-%d" % self.runs)
        self.env = dict(self.cluster.client_env,
                        SLAQ_CONTROLLER_HOST="127.0.0.1",
                        SLAQ_AGENT_CORES=str(self.args.cores),
                        SLAQ_AGENT_ENFORCE="signal",
                        SLAQ_CONTROLLER_OPTS="--queue-bound %s" % bound)
        p = self._slaq("cluster", "up", "--slurm", "--nodes", str(len(NODES)),
                       "--time", "60", "--dir", self.dir, "--epoch", "1",
                       "--wait", "90")
        if p.returncode != 0:
            raise SystemExit("demo-queues: slaq cluster up failed:\n" +
                             p.stdout + p.stderr)
        self.jobid = open(os.path.join(self.dir, "jobid")).read().strip()
        return os.path.join(self.dir, "slaq.sock")

    def agent_dir(self, node):
        return os.path.join(self.dir, "agent-" + node)

    def state_dir(self):
        # the controller's (contrib/slurm/slaq-cluster.sbatch)
        return os.path.join(self.dir, "controller")

    def agent_pids(self):
        out = {}
        for n in NODES:
            try:
                with open(os.path.join(self.agent_dir(n), "slaqd.lock")) as f:
                    out[n] = int(f.read())
            except (OSError, ValueError):
                pass
        return out

    def stop(self):
        p = self._slaq("cluster", "down", "--dir", self.dir)
        if p.returncode != 0:
            print("demo-queues: slaq cluster down: " + p.stderr.strip(),
                  file=sys.stderr)

    def close(self):
        self.cluster.down()


def slurm_step(pid):
    """The Slurm job and node of process pid, from its environment
    (None, None for a process Slurm did not start)."""
    try:
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = dict(e.split(b"=", 1) for e in f.read().split(b"\0")
                       if b"=" in e)
    except OSError:
        return None, None
    job = env.get(b"SLURM_JOB_ID")
    node = env.get(b"SLURMD_NODENAME")
    return (job.decode() if job else None, node.decode() if node else None)


def t90s(build, state, jobs):
    """The t90 of each of the jobs (ids), rounded to 0.01 s, or None
    where it has none: `slaq report --json` on the controller's state
    directory (docs/cli.md), slaq's own metric code."""
    out = subprocess.run([os.path.join(build, "bin", "slaq"), "report",
                          "--json", state], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    t90 = {j["id"]: j["t90_s"] for j in json.loads(out)["jobs"]}
    return [None if t90.get(j) is None else round(t90[j], 2) for j in jobs]


def run(backend, build, args, bound, work):
    ml = []
    sock = backend.start(bound, work)

    def req(m):
        return slaq.control.request(sock, m)
    try:
        wait_for(lambda: sum(n["state"] == "up" for n in
                             req({"type": "nodes"})["nodes"]) == len(NODES),
                 30, "the agents to join")
        agents = backend.agent_pids()
        steps = {n: slurm_step(p) for n, p in agents.items()}
        env = [k + "=" + v for k, v in os.environ.items()
               if not k.startswith("SLURM")]
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
                             == "running" for j in ml), 30,
                 "the ML jobs to start")
        # Each task says which task it is and who started it (its parent:
        # the agent), then sleeps its time.
        sleep = ("echo index={index} ppid=$PPID; "
                 "sleep $(awk 'BEGIN{print (1 + ({index} * 7) %% 5) * %g}')"
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
        runs = []
        for t in tasks:
            if t["state"] != "done":
                continue
            node = req({"type": "show", "job": t["id"]})["job"]["node"]
            try:
                with open(os.path.join(backend.agent_dir(node), "jobs",
                                       str(t["id"]), "stdout.log")) as f:
                    said = f.read().split()
            except OSError:
                said = []
            runs.append({"index": t["index"], "started": t["started"],
                         "ended": t["ended"], "node": node,
                         "said": said})
        makespan = max(x["ended"] for x in runs) - t0
        busy = sum(x["ended"] - x["started"] for x in runs)
        # idle gaps: per node, each start after the first k (the most
        # tasks it ran at once) follows an end; pair sorted ends, starts
        gaps = []
        for n in NODES:
            mine = [(x["started"], x["ended"]) for x in runs
                    if x["node"] == n]
            k = max((sum(1 for s2, e2 in mine if s2 <= s < e2)
                     for s, _ in mine), default=0)
            starts = sorted(s for s, _ in mine)
            ends = sorted(e for _, e in mine)
            for s, e in zip(starts[k:], ends):
                gaps.append(max(s - e, 0))
        # what each task said against what it should have: its own index,
        # started by its node's agent
        wrong = [x for x in runs if x["said"] != [
            "index=%d" % x["index"], "ppid=%d" % agents.get(x["node"], -1)]]
        result = {
            "backend": backend.name, "slurm_job": getattr(backend, "jobid",
                                                          None),
            "bound": bound, "tasks": args.tasks,
            "done": a["counts"]["done"],
            "makespan_s": round(makespan, 3),
            "task_cores": round(task_cores, 2),
            "utilisation": round(busy / (task_cores * makespan), 4)
            if task_cores else None,
            "mean_idle_gap_ms": round(1000 * sum(gaps) / len(gaps), 1)
            if gaps else None,
            "busy_s": round(busy, 2),
            "agents": {n: {"pid": agents.get(n), "slurm_job": steps[n][0],
                           "slurm_node": steps[n][1]} for n in NODES},
            "task_runs": [{"index": x["index"], "node": x["node"],
                           "started": x["started"], "ended": x["ended"]}
                          for x in runs],
            "wrong_output": [x["index"] for x in wrong],
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
        except (OSError, SystemExit):
            pass
        backend.stop()
    # the ML jobs' t90, now that they have ended (cancelled): the
    # controller has stopped with its state.db whole
    for j, t in zip(result["ml_jobs"], t90s(build, backend.state_dir(), ml)):
        j["t90_s"] = t
    return result


def bound_arg(text):
    """--bound: "auto", a whole number >= 1 (as an int) or "mwt:S"."""
    if text == "auto":
        return text
    if text.startswith("mwt:"):
        try:
            if float(text[4:]) > 0:
                return text
        except ValueError:
            pass
    elif text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(
        "expected auto, a whole number >= 1 or mwt:SECONDS, got '%s'" % text)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--tasks", type=int, default=500)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--bound", type=bound_arg, default="auto",
                    help="the node queues' bound: auto (the default), a "
                    "length N >= 1 or mwt:SECONDS (slaqd --queue-bound)")
    ap.add_argument("--cores", type=int, default=4)
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--slurm", action="store_true",
                     help="through the local Slurm cluster, or fail")
    how.add_argument("--direct", action="store_true",
                     help="agents started directly, not through Slurm")
    ap.add_argument("--out")
    args = ap.parse_args()
    args.build = os.path.abspath(args.build)
    if args.tasks < 1 or args.jobs < 0 or not args.scale > 0 or \
            args.cores < 1:
        ap.error("--tasks and --cores must be >= 1, --jobs >= 0, "
                 "--scale > 0")
    backend = None
    why = None
    if not args.direct:
        try:
            backend = Slurm(args.build, args)
        except (RuntimeError, OSError, subprocess.SubprocessError) as e:
            why = str(e)
            if args.slurm:
                raise SystemExit("demo-queues: Slurm cannot start here: " +
                                 why)
            print("demo-queues: Slurm cannot start here (%s); the agents "
                  "are started directly instead" % why, file=sys.stderr)
    if backend is None:
        backend = Direct(args.build, args)
    results = []
    try:
        for bound in (args.bound, 0):
            work = tempfile.mkdtemp(prefix="slaq-demo-queues-")
            os.chmod(work, 0o755)
            try:
                results.append(run(backend, args.build, args, bound, work))
            finally:
                shutil.rmtree(work, ignore_errors=True)
    finally:
        backend.close()
    print("agents: %s" % ("Slurm job steps on the local Slurm cluster's "
                          "nodes n1..n3" if backend.name == "slurm" else
                          "started directly on this machine"))
    print("%-26s %6s %10s %7s %10s %s" % ("", "TASKS", "MAKESPAN", "UTIL",
                                         "IDLE GAP", "ML t90 (s)"))
    for r in results:
        name = ("node queues (bound %s)" % r["bound"] if r["bound"]
                else "no node queues")
        print("%-26s %6d %9.2fs %6.1f%% %8.1fms %s" % (
            name, r["done"], r["makespan_s"], 100 * (r["utilisation"] or 0),
            r["mean_idle_gap_ms"] or 0, " ".join(
                "-" if j["t90_s"] is None else "%.1f" % j["t90_s"]
                for j in r["ml_jobs"]) or "-"))
    if args.out:
        with open(args.out, "w") as f:
            json.dump({"tasks": args.tasks, "jobs": args.jobs,
                       "scale": args.scale, "cores_per_node": args.cores,
                       "nodes": len(NODES), "backend": backend.name,
                       "slurm_unavailable": why, "runs": results}, f,
                      indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
