#!/usr/bin/env python3
"""demo-deadlines.py — slaq-train jobs with deadlines, required accuracies
and urgencies on a slaq cluster of three agents, the same submissions
under each of several policies (by default mlfs, slaq and edf), side by
side: deadline-met and accuracy-met ratios, mean JCT, makespan, the moves
and what they cost, and what the moves lost or repeated (docs/deadlines.md,
"A real run").

The cluster is the local three-node Slurm cluster (scripts/slurm-local.sh),
and on it `slaq cluster up --slurm` starts the controller and one agent per
node as Slurm steps, as a user would; between policies the allocation is
ended (`slaq cluster down`) and a new one brought up, so every policy starts
from a fresh controller. When Slurm cannot start here the demo says why and
runs the controller and the three agents as plain processes on this machine
instead (--direct asks for that).

The jobs. Each is one of a few slaq-train models (logreg, svm and mlpc on
Fashion-MNIST, kmeans on Fashion-MNIST, linreg on Friedman #1), short or
long, restartable (checkpoints in $SLAQ_CHECKPOINT_DIR every
--checkpoint-every iterations and when told to stop, so a policy may move
it), of size one or two slots (a slot is a third of an agent's cores: its
max_cores). Each distinct command is first run alone, outside slaq, on one
core: its CPU time over its size is its solo time (how long it takes alone
on an agent), and its metric's first and last values bound its required
accuracy. From a seeded generator, each job gets
  - an arrival, uniform over --arrival-window seconds;
  - a deadline, arrival + U(--deadline-range) x its solo time (default
    U(1, 3): the traces' U(0.5, 1.5) x duration with a job's duration
    twice its solo time, for a job here never runs faster than alone at
    its size, and a factor below 1 could be met by no policy);
  - a required accuracy, its solo run's first metric plus U(0.5, 0.95) of
    the way to its last (a loss-like metric, rmse or distance, falls:
    direction min);
  - an urgency, uniform over 1..10.
Every policy gets the same list, submitted with `slaq submit --deadline
+S --accuracy A --direction D --urgency U --restartable --max-cores C` at
the same offsets.

Per job, from the controller's state.db (`slaq show`, `slaq history`): its
end, whether that is by its deadline, its last metric against its
requirement, its JCT (submit to end). Per move (the job's `move` events):
the controller's history of the job must hold every iteration any instance
reported, each once (none lost), and the agents' histories (each agent's
state.db, through its socket) how many the instances ran twice (repeated),
which must be at most the iterations since the last checkpoint
(--checkpoint-every - 1 per move). The moves' cost is the controller's
counters (moves_total, move_seconds_total, move_checkpoint_bytes_total,
and moves_skipped_total: the policy's moves not made as not worth their
cost).

--force-move moves one job per run with `slaq move` when the policy has
not moved one by the time a job is a fifth of the way through its
iterations, so that there is always a move to check (the CI test's
choice; it changes the comparison, so the demo does not use it by
default).

--jobs-from JSON runs the jobs of an earlier run's --out again (the same
commands, solo times, deadlines and requirements), so that a policy run
later gets the same submissions.

Usage: demo-deadlines.py [--jobs N] [--seed S] [--policies A,B,..]
                         [--arrival-window S] [--deadline-range A:B]
                         [--size small|full] [--epoch S] [--direct]
                         [--force-move] [--jobs-from JSON] [--work DIR]
                         [--out FILE] BUILD_DIR
"""

import argparse
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
# The local Slurm cluster's helper, shared with the tests and demo-queues.
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
import slaq.control  # noqa: E402

NODES = ("n1", "n2", "n3")
ENDED = ("done", "failed", "stopped", "cancelled", "lost")

# The models: slaq-train arguments, the metric the job reports and its
# direction, and iterations of a short and a long job. "full" makes jobs
# of about 5 and 18 CPU-seconds here; "small" (the CI test's) of about 1.
KINDS = {
    "full": [
        ("logreg-fmnist", ["logreg", "--subsample", "0.3"], "max", (100, 350)),
        ("svm-fmnist", ["svm", "--subsample", "0.3"], "max", (100, 350)),
        ("kmeans-fmnist", ["kmeans", "--subsample", "0.3"], "min", (120, 420)),
        ("linreg-friedman1", ["linreg"], "min", (250, 800)),
        ("mlpc-fmnist", ["mlpc", "--subsample", "0.1"], "max", (50, 180)),
    ],
    "small": [
        ("logreg-fmnist", ["logreg", "--subsample", "0.05"], "max",
         (60, 120)),
        ("svm-fmnist", ["svm", "--subsample", "0.05"], "max", (60, 120)),
    ],
}


def say(*a):
    print("demo-deadlines:", *a, flush=True)


def slaq_env(extra=None):
    env = dict(os.environ)
    for k in ("SLAQ_SOCKET", "SLAQ_HOST", "SLAQ_JOB_ID", "SLURM_JOB_ID",
              "SLURM_JOBID"):
        env.pop(k, None)
    env.update(extra or {})
    return env


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            v = pred()
        except OSError:
            v = None
        if v:
            return v
        time.sleep(0.1)
    raise SystemExit("demo-deadlines: timed out waiting for %s" % what)


# ---------------------------------------------------------------------------
# The workload

def plan(args):
    """The jobs every policy gets: command, size, arrival, deadline factor,
    accuracy share and urgency, all drawn from --seed."""
    rng = random.Random(args.seed)
    kinds = KINDS[args.size]
    jobs = []
    lo, hi = args.deadline_range
    for i in range(args.jobs):
        name, argv, direction, lengths = kinds[i % len(kinds)]
        long_ = rng.random() < 0.5
        jobs.append({
            "name": "%s-%d" % (name, i),
            "kind": name,
            "argv": argv + ["--iters", str(lengths[long_]), "--eval-every",
                            "5", "--checkpoint-every",
                            str(args.checkpoint_every), "--quiet"],
            "direction": direction,
            "slots": rng.choice((1, 2)),
            "arrival_s": rng.uniform(0, args.arrival_window),
            "deadline_factor": rng.uniform(lo, hi),
            "accuracy_share": rng.uniform(0.5, 0.95),
            "urgency": rng.randint(1, 10),
        })
    jobs.sort(key=lambda j: j["arrival_s"])
    return jobs


def load_jobs(path, train):
    """The jobs of an earlier run's JSON, checked for what run_policy
    reads."""
    try:
        with open(path) as f:
            jobs = json.load(f)["jobs"]
        need = ("name", "argv", "max_cores", "deadline_rel_s", "accuracy",
                "direction", "urgency", "arrival_s")
        for i, j in enumerate(jobs):
            miss = [k for k in need if k not in j]
            if miss:
                raise ValueError("job %d has no %s" % (i, ", ".join(miss)))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit("demo-deadlines: --jobs-from %s: %s (expected an "
                         "earlier run's --out)" % (path, e))
    say("%d jobs from %s" % (len(jobs), path))
    return jobs


def solo_run(train, argv, work):
    """Runs one command alone on one core, outside slaq: its CPU time (the
    whole process: loading, iterations, evaluations) and its metric's
    first and last values."""
    cmd = [train] + [a for a in argv if a != "--quiet"] + ["--threads", "1"]
    with tempfile.TemporaryFile(dir=work) as out:
        t0 = time.monotonic()
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.DEVNULL,
                             cwd=work, env=slaq_env())
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.monotonic() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit("demo-deadlines: %s failed (exit %d)"
                             % (" ".join(cmd),
                                os.waitstatus_to_exitcode(status)))
        out.seek(0)
        metric, values, iters = None, [], 0
        for line in out.read().decode().splitlines():
            if not line.startswith("iter="):
                continue
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            iters = int(fields["iter"])
            for k in ("accuracy", "test_rmse", "test_mean_sq_dist"):
                if k in fields:
                    metric = k
                    values.append(float(fields[k]))
        if len(values) < 2:
            raise SystemExit("demo-deadlines: %s reported no metric"
                             % " ".join(cmd))
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": wall,
            "metric": metric, "first": values[0], "last": values[-1],
            "iters": iters}


def measure(train, jobs, work, args):
    """Every distinct command once, two at a time (their CPU time does
    not depend on it); fills in each job's solo time, deadline and
    required accuracy."""
    distinct = sorted({tuple(j["argv"]) for j in jobs})
    say("measuring %d commands alone on one core" % len(distinct))
    solo = {}
    lock = threading.Lock()
    todo = list(distinct)

    def worker():
        while True:
            with lock:
                if not todo:
                    return
                argv = todo.pop()
            r = solo_run(train, list(argv), work)
            with lock:
                solo[argv] = r
    ts = [threading.Thread(target=worker) for _ in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if len(solo) != len(distinct):
        raise SystemExit("demo-deadlines: a solo run failed")
    for j in jobs:
        s = solo[tuple(j["argv"])]
        j["max_cores"] = round(j["slots"] * args.slot, 4)
        j["solo_cpu_s"] = round(s["cpu_s"], 3)
        j["solo_s"] = round(s["cpu_s"] / j["max_cores"], 2)
        j["deadline_rel_s"] = max(1, round(j["deadline_factor"] *
                                           j["solo_s"]))
        j["metric"] = s["metric"]
        acc = s["first"] + j["accuracy_share"] * (s["last"] - s["first"])
        j["accuracy"] = float("%.6g" % acc)
    return solo


# ---------------------------------------------------------------------------
# The clusters

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Cluster:
    """What both kinds of cluster share: `slaq` run against it."""

    def cli(self, *a, check=True, timeout=120):
        p = subprocess.run([self.slaq] + list(a), env=self.env, cwd=self.work,
                           capture_output=True, text=True, timeout=timeout)
        if check and p.returncode != 0:
            raise SystemExit("demo-deadlines: slaq %s: exit %d\n%s%s"
                             % (" ".join(a), p.returncode, p.stdout,
                                p.stderr))
        return p


class SlurmCluster(Cluster):
    """The local Slurm cluster of scripts/slurm-local.sh, in a private
    directory on free ports; each policy's run is one `slaq cluster up
    --slurm` allocation on it."""

    kind = "slurm"

    def __init__(self, build, work, epoch):
        from slurmlocal import SlurmLocal
        self.slaq = os.path.join(build, "bin", "slaq")
        self.work = work
        self.epoch = epoch
        self.local = SlurmLocal(len(NODES), 2)  # a private directory, free ports
        self.env = slaq_env({k: self.local.env[k] for k in (
            "SLAQ_SLURM_DIR", "SLAQ_SLURM_PORT", "SLAQ_SLURM_NODES",
            "SLAQ_SLURM_CPUS")})
        self.cdir = None

    def start(self):
        """None when up, else the reason it cannot start."""
        from slurmlocal import NEEDED
        path = os.environ.get("PATH", "") + ":/usr/sbin:/sbin"
        missing = [p for p in NEEDED if not shutil.which(p, path=path)]
        if missing:
            return ("%s not installed (Debian's slurm-wlm and munge, `make "
                    "deps`)" % ", ".join(missing))
        p = self.local.up()
        if p.returncode != 0:
            self.stop()
            return "scripts/slurm-local.sh up failed: " + \
                p.stderr.strip()[-600:]
        p = self.local.script("env", timeout=30)
        for line in p.stdout.splitlines():
            k, _, v = line.replace("export ", "").partition("=")
            self.env[k.strip()] = v.strip().strip("'\"")
        # Agents reach the controller on the loopback; hard quotas, so
        # that a job runs at what it is given, not at what others leave.
        self.env.update(SLAQ_CONTROLLER_HOST="127.0.0.1",
                        SLAQ_AGENT_SHARE="quota")
        self.cores = float(self.env.get("SLAQ_AGENT_CORES") or 1)
        return None

    def up(self, name):
        self.cdir = os.path.join(self.work, "cluster-" + name)
        t0 = time.monotonic()
        self.cli("cluster", "up", "--slurm", "--nodes", str(len(NODES)),
                 "--time", "60", "--dir", self.cdir, "--epoch",
                 str(self.epoch), "--wait", "120", timeout=180)
        say("%s: slaq cluster up --slurm: %.1f s" % (name,
                                                     time.monotonic() - t0))
        self.sock = os.path.join(self.cdir, "slaq.sock")
        self.agent_socks = {n: os.path.join(self.cdir, "agent-" + n,
                                            "slaq.sock") for n in NODES}

    def down(self):
        if self.cdir:
            self.cli("cluster", "down", "--dir", self.cdir, check=False,
                     timeout=150)
            self.cdir = None

    def stop(self):
        """Ends the allocation and the local cluster, whatever failed
        before (slurm-local.sh down finds what is left by its SLURM_CONF)."""
        try:
            self.down()
        except (OSError, subprocess.SubprocessError, SystemExit) as e:
            say("slaq cluster down: %s" % e)
        finally:
            self.local.down()


class DirectCluster(Cluster):
    """A controller and three agents as plain slaqd processes here (the
    agent link over the loopback), each with a third of this machine's
    CPUs, as slurm-local.sh's env gives the Slurm nodes."""

    kind = "direct"

    def __init__(self, build, work, epoch):
        self.slaq = os.path.join(build, "bin", "slaq")
        self.slaqd = os.path.join(build, "bin", "slaqd")
        self.work = work
        self.epoch = epoch
        self.env = slaq_env()
        self.procs = []
        self.cores = round((os.cpu_count() or 1) / len(NODES), 3)

    def start(self):
        return None

    def up(self, name):
        d = os.path.join(self.work, "cluster-" + name)
        os.makedirs(d, exist_ok=True)
        token = os.path.join(d, "agent.token")
        with open(token, "w") as f:
            f.write("demo-deadlines-%s\n" % name)
        os.chmod(token, 0o600)
        port = free_port()
        log = open(os.path.join(d, "slaqd.log"), "a")
        self.sock = os.path.join(d, "slaq.sock")

        def start(state, sock, *extra):
            self.procs.append(subprocess.Popen(
                [self.slaqd, "--state-dir", state, "--socket", sock, "--http",
                 "off"] + list(extra),
                stdout=log, stderr=log, env=self.env))
        start(os.path.join(d, "controller"), self.sock, "--agents",
              "127.0.0.1:%d" % port, "--agent-token-file", token, "--epoch",
              str(self.epoch))
        wait_for(lambda: os.path.exists(self.sock), 20, "the controller")
        self.agent_socks = {}
        for n in NODES:
            st = os.path.join(d, "agent-" + n)
            self.agent_socks[n] = os.path.join(st, "slaq.sock")
            key = os.path.join(d, n + ".key")  # its node's key only
            subprocess.run([os.path.join(os.path.dirname(self.slaqd), "slaq"),
                            "cluster", "node-key", "--secret-file", token,
                            "--out", key, n], check=True)
            start(st, self.agent_socks[n], "--agent", "--join",
                  "127.0.0.1:%d" % port, "--node-key-file", key, "--cores",
                  str(self.cores), "--share", "quota", "--end-jobs-at-exit")
        wait_for(lambda: sum(n["state"] == "up" for n in slaq.control.request(
            self.sock, {"type": "nodes"})["nodes"]) == len(NODES), 30,
            "the agents to join")

    def down(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in reversed(self.procs):
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []

    def stop(self):
        self.down()


# ---------------------------------------------------------------------------
# One policy's run

def req(sock, msg):
    r = slaq.control.request(sock, msg, timeout=30)
    if not r.get("ok", True):
        raise SystemExit("demo-deadlines: %s: %s" % (msg.get("type"), r))
    return r


def history(sock, jid):
    """Every report of job jid that slaqd at sock holds (its state.db)."""
    rows, after = [], None
    while True:
        r = req(sock, {"type": "history", "job": jid, "after": after})
        rows += r["rows"]
        after = r.get("next")
        if after is None:
            return rows


def move_check(c, jid, ctl_rows, checkpoint_every, moves):
    """What the moves of job jid lost and repeated: every iteration an
    instance reported (the agents' histories) must be in the controller's
    history once; an iteration two instances ran is repeated."""
    ran = []
    for n, sock in c.agent_socks.items():
        try:
            ran += [r[0] for r in history(sock, jid) if r[0] > 0]
        except (OSError, SystemExit):
            continue  # the job never ran on that node
    ctl = [r[0] for r in ctl_rows if r[0] > 0]
    last = max(ctl + ran, default=0)
    lost = sorted((set(ran) | set(range(1, last + 1))) - set(ctl))
    twice = len(ctl) - len(set(ctl))
    repeated = len(ran) - len(set(ran))
    return {"job": jid, "moves": moves, "iterations": last,
            "lost": len(lost), "lost_first": lost[:5],
            "counted_twice": twice, "repeated": repeated,
            "repeat_bound": moves * (checkpoint_every - 1),
            "ok": not lost and not twice and
            repeated <= moves * (checkpoint_every - 1)}


def run_policy(c, policy, jobs, args, train):
    c.up(policy)
    sock = c.sock
    try:
        c.cli("policy", "--socket", sock, policy)
        nodes = req(sock, {"type": "nodes"})["nodes"]
        assert sorted(n["name"] for n in nodes if n["state"] == "up") == \
            list(NODES), nodes
        ids = {}
        t0 = time.time()
        forced = None
        pending = list(jobs)
        while True:
            now = time.time() - t0
            while pending and pending[0]["arrival_s"] <= now:
                j = pending.pop(0)
                p = c.cli("submit", "--socket", sock, "--name", j["name"],
                          "--restartable", "--max-cores", str(j["max_cores"]),
                          "--deadline", "+%d" % j["deadline_rel_s"],
                          "--accuracy", repr(j["accuracy"]), "--direction",
                          j["direction"], "--urgency", str(j["urgency"]),
                          "--", train, *j["argv"])
                ids[j["name"]] = int(p.stdout.strip())
            ls = {x["id"]: x for x in req(sock, {"type": "ls"})["jobs"]}
            mine = [ls[i] for i in ids.values() if i in ls]
            if not pending and len(mine) == len(jobs) and \
                    all(x["state"] in ENDED for x in mine):
                break
            if args.force_move and forced is None:
                forced = force_move(c, sock, mine, jobs)
            if now > args.timeout:
                raise SystemExit("demo-deadlines: %s: jobs still running "
                                 "after %d s" % (policy, args.timeout))
            time.sleep(0.5)
        return collect(c, policy, jobs, ids, t0, args, forced)
    finally:
        c.down()


def force_move(c, sock, mine, jobs):
    """One job moved with `slaq move` (--force-move): the first running job
    between a fifth and two thirds of its iterations, if no move has been
    made."""
    if any(x.get("moves") for x in mine):
        return False
    iters = {j["name"]: int(j["argv"][j["argv"].index("--iters") + 1])
             for j in jobs}
    for x in mine:
        n = iters[x["name"]]
        if x["state"] == "running" and x.get("moving_to") is None and \
                max(2, n // 5) <= (x["iter"] or 0) <= 2 * n // 3 and \
                x["node"]:
            to = [n for n in NODES if n != x["node"]][0]
            p = c.cli("move", "--socket", sock, str(x["id"]), "--node", to,
                      check=False)
            if p.returncode == 0:
                say("moved job %d (%s) from %s to %s with slaq move"
                    % (x["id"], x["name"], x["node"], to))
                return x["id"]
    return None


def collect(c, policy, jobs, ids, t0, args, forced):
    sock = c.sock
    status = req(sock, {"type": "status"})
    rows, checks = [], []
    for j in jobs:
        jid = ids[j["name"]]
        x = req(sock, {"type": "show", "job": jid})["job"]
        h = history(sock, jid)
        metrics = [r[5] for r in h if r[5] is not None]
        last_metric = metrics[-1] if metrics else None
        def meets(m):
            return m is not None and (m >= j["accuracy"]
                                      if j["direction"] == "max"
                                      else m <= j["accuracy"])
        met_acc = meets(last_metric)
        # The simulator's accuracy met: a report by the deadline met it.
        by_deadline = any(meets(r[5]) and r[4] <= x["deadline"] for r in h)
        moves = x.get("moves") or 0
        rows.append({
            "id": jid, "name": j["name"], "state": x["state"],
            "reason": x.get("reason"), "node": x.get("node"),
            "submitted": x["submitted"], "ended": x["ended"],
            "deadline": x["deadline"], "accuracy": x["accuracy"],
            "direction": x["direction"], "urgency": x["urgency"],
            "max_cores": x.get("max_cores"),
            "jct_s": round(x["ended"] - x["submitted"], 3),
            "deadline_met": x["ended"] <= x["deadline"],
            "last_metric": last_metric, "accuracy_met": met_acc,
            "accuracy_by_deadline": by_deadline,
            "slaqd_accuracy_met": x.get("accuracy_met"),
            "iters": x["iter"], "moves": moves,
            "move_events": [e[2] for e in x.get("events", [])
                            if e[1] == "move"],
        })
        if moves:
            checks.append(move_check(c, jid, h, args.checkpoint_every, moves))
    n = len(rows)
    start = min(r["submitted"] for r in rows)
    return {
        "policy": policy, "cluster": c.kind, "jobs": n,
        "deadline_met": round(sum(r["deadline_met"] for r in rows) / n, 3),
        "accuracy_met": round(sum(r["accuracy_met"] for r in rows) / n, 3),
        "accuracy_by_deadline": round(sum(r["accuracy_by_deadline"]
                                          for r in rows) / n, 3),
        "mean_jct_s": round(sum(r["jct_s"] for r in rows) / n, 2),
        "makespan_s": round(max(r["ended"] for r in rows) - start, 2),
        "stopped_accuracy_met": sum(r["reason"] == "accuracy_met"
                                    for r in rows),
        "moves_total": status.get("moves_total", 0),
        "move_seconds_total": round(status.get("move_seconds_total", 0), 3),
        "move_checkpoint_bytes_total":
            status.get("move_checkpoint_bytes_total", 0),
        "moves_skipped_total": status.get("moves_skipped_total", 0),
        "forced_move": forced or None,
        "moves_checked": checks,
        "iterations_lost": sum(m["lost"] + m["counted_twice"]
                               for m in checks),
        "iterations_repeated": sum(m["repeated"] for m in checks),
        "submissions": [[r["name"], round(r["deadline"] - r["submitted"], 1),
                         r["accuracy"], r["direction"], r["urgency"],
                         r["max_cores"]] for r in rows],
        "job_rows": rows,
    }


# ---------------------------------------------------------------------------

def table(results):
    cols = [("deadline met", "deadline_met", "%.3f"),
            ("accuracy met", "accuracy_met", "%.3f"),
            ("  by the deadline", "accuracy_by_deadline", "%.3f"),
            ("mean JCT s", "mean_jct_s", "%.1f"),
            ("makespan s", "makespan_s", "%.1f"),
            ("stopped (acc. met)", "stopped_accuracy_met", "%d"),
            ("moves", "moves_total", "%d"),
            ("move s total", "move_seconds_total", "%.2f"),
            ("ckpt bytes moved", "move_checkpoint_bytes_total", "%d"),
            ("moves not worth it", "moves_skipped_total", "%d"),
            ("iters lost", "iterations_lost", "%d"),
            ("iters repeated", "iterations_repeated", "%d")]
    w = max(len(c[0]) for c in cols) + 2
    lines = ["%-*s" % (w, "") + "".join("%12s" % r["policy"]
                                        for r in results)]
    for label, key, fmt in cols:
        lines.append("%-*s" % (w, label) +
                     "".join("%12s" % (fmt % r[key]) for r in results))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--jobs", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--policies", default="mlfs,slaq,edf")
    ap.add_argument("--arrival-window", type=float, default=100)
    ap.add_argument("--deadline-range", default="1:3")
    ap.add_argument("--size", choices=sorted(KINDS), default="full")
    ap.add_argument("--checkpoint-every", type=int, default=10)
    ap.add_argument("--epoch", type=float, default=1)
    ap.add_argument("--timeout", type=float, default=1200,
                    help="seconds one policy's run may take")
    ap.add_argument("--direct", action="store_true",
                    help="plain processes, not Slurm")
    ap.add_argument("--force-move", action="store_true")
    ap.add_argument("--slurm-only", action="store_true",
                    help="exit 3 with the reason when Slurm cannot start")
    ap.add_argument("--jobs-from", metavar="JSON",
                    help="the jobs (and their measured solo times) of an "
                    "earlier run's --out, not drawn and measured again")
    ap.add_argument("--work", help="keep the run's files here")
    ap.add_argument("--out", help="the results as JSON")
    args = ap.parse_args()
    try:
        lo, hi = (float(x) for x in args.deadline_range.split(":"))
        if not 0 < lo <= hi:
            raise ValueError
    except ValueError:
        ap.error("--deadline-range wants A:B with 0 < A <= B, got '%s'"
                 % args.deadline_range)
    args.deadline_range = (lo, hi)
    if args.jobs < 1:
        ap.error("--jobs wants at least 1, got %d" % args.jobs)
    if args.checkpoint_every < 1:
        ap.error("--checkpoint-every wants at least 1")
    policies = [p for p in args.policies.split(",") if p]
    build = os.path.abspath(args.build)
    train = os.path.join(build, "bin", "slaq-train")
    work = os.path.abspath(args.work) if args.work else \
        tempfile.mkdtemp(prefix="slaq-demo-deadlines-")
    os.makedirs(work, exist_ok=True)

    c = None if args.direct else SlurmCluster(build, work, args.epoch)
    why = "--direct" if args.direct else c.start()
    if why:
        if c is not None:
            say("Slurm cannot start here: %s" % why)
            if args.slurm_only:
                return 3
        say("running the controller and three agents as plain processes "
            "instead")
        c = DirectCluster(build, work, args.epoch)
        c.start()
    else:
        say("the local Slurm cluster is up (%d nodes, %.3f cores per agent)"
            % (len(NODES), c.cores))
    try:
        args.slot = round(c.cores / 3, 4)
        if args.jobs_from:
            jobs = load_jobs(args.jobs_from, train)
        else:
            jobs = plan(args)
            measure(train, jobs, work, args)
        say("%d jobs, solo times %.0f-%.0f s, deadlines %.0f-%.0f s after "
            "arrival, arrivals over %.0f s"
            % (len(jobs), min(j["solo_s"] for j in jobs),
               max(j["solo_s"] for j in jobs),
               min(j["deadline_rel_s"] for j in jobs),
               max(j["deadline_rel_s"] for j in jobs), args.arrival_window))
        load = os.getloadavg()
        results = []
        for p in policies:
            t = time.monotonic()
            r = run_policy(c, p, jobs, args, train)
            say("%s: %d jobs ended in %.0f s; deadlines met %.3f, moves %d"
                % (p, r["jobs"], time.monotonic() - t, r["deadline_met"],
                   r["moves_total"]))
            results.append(r)
    finally:
        c.stop()
    print(table(results))
    bad = [m for r in results for m in r["moves_checked"] if not m["ok"]]
    for m in bad:
        say("job %d: a move lost %d, counted twice %d, repeated %d "
            "iterations (at most %d)" % (m["job"], m["lost"],
                                         m["counted_twice"], m["repeated"],
                                         m["repeat_bound"]))
    doc = {"command": " ".join(sys.argv), "cluster": c.kind,
           "cores_per_agent": c.cores, "seed": args.seed,
           "loadavg_at_start": [round(x, 2) for x in load],
           "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
           "jobs": jobs, "results": results}
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
        say("results in %s" % args.out)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
