#!/usr/bin/env python3
"""soak.py — kill -9 a slaq cluster's controller and agents again and
again under ML jobs, a query and a sweep; then count what was lost.

Starts, on this machine and on a temporary directory, a controller
(slaqd --agents) and two node agents (slaqd --agent, nodes n1 and n2, as
tests/e2e/test_cluster_*.py start them), then submits through the
controller:

  - ML jobs: slaq-train (the C client) and tests/soak/pyjob.py (the
    Python client), a new one every --submit-every seconds while the kills
    go on, so that clients start and attach while slaqds restart;
  - --queries real slaq-aqp queries (q6, --batches mini-batches);
  - a sweep of slaq-train configurations on --slots slots (policy pop).

Every job's client logs what slaqd acknowledged (SLAQ_CLIENT_ACK_LOG:
"JOB ITER" per acknowledged report; set for the submitted jobs and in the
slaqds' environment, which the sweep's jobs get). Meanwhile, at seeded random moments,
it kills the controller and each agent with SIGKILL --kills times each
(one at a time, down for a random moment, then started again on the same
state directory; a submission made while the controller is down is
retried until it is taken). A watcher counts, from /proc, the sweep's
configurations whose processes run (not stopped) at the same time.

When the kills are done it waits for every job to end, stops the slaqds
with SIGTERM and reads the state databases with sqlite3:

  acked            reports the clients logged as acknowledged
  missing          of them, without a row in the controller's state.db
  missing_agent    of them, without a row in their agent's state.db
  reports_lost     reports_lost of the three databases' meta tables
                   (reports_lost_total: what slaqd knows it lost)
  unaccounted      missing - reports_lost (when positive): lost without
                   a count
  queries_exact    queries done with every mini-batch and a last one
                   whose bounds have closed on the estimate (the exact
                   answer), of queries
  sweep_max_running  the most configurations seen running at once, of
                   slots
  sweep_over       when that was more than slots: what was counted (the
                   processes, pid, ppid, state and node, of each
                   configuration's job, and the controller's view of
                   them), the first 5 times

Prints one JSON object (and, with --verbose, progress on stderr). Exits
0 when nothing acknowledged is unaccounted for, every query reached its
exact answer and the sweep never ran more configurations than slots; 1
otherwise; 2 on a usage or setup error.

  tests/soak/soak.py --kills 20 --seed 1     (make soak)
"""

import argparse
import collections
import json
import os
import random
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "python"))
from slaq.control import request  # noqa: E402

VERBOSE = False


def say(fmt, *args):
    if VERBOSE:
        sys.stderr.write("soak %7.1f  %s\n" % (time.monotonic() - T0,
                                                fmt % args))
        sys.stderr.flush()


T0 = time.monotonic()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Slaqd:
    """One slaqd process (controller or agent) on its state directory."""

    def __init__(self, name, build, state, args, env=None):
        self.name = name
        self.env = env
        self.state = state
        self.sock = os.path.join(state, "slaq.sock")
        self.cmd = [os.path.join(build, "bin", "slaqd"), "--state-dir",
                    state, "--http", "off"] + list(args)
        self.log = open(state + ".log", "a")
        self.proc = None
        self.kills = 0
        self.start_max = 0.0  # the longest start until it answered, s

    def ask(self, msg):
        try:
            return request(self.sock, msg)
        except (OSError, ValueError):
            return None

    def start(self, timeout=60.0):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, stdout=self.log,
                                     stderr=self.log, env=self.env)
        until = t0 + timeout
        while time.monotonic() < until:
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited with %s (log: %s.log)"
                                   % (self.name, self.proc.returncode,
                                      self.state))
            r = self.ask({"type": "status"})
            if r and r.get("ok"):
                self.start_max = max(self.start_max, time.monotonic() - t0)
                return
            time.sleep(0.02)
        raise RuntimeError("%s did not answer within %g s"
                           % (self.name, timeout))

    def up(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        self.proc.kill()
        self.proc.wait()
        self.kills += 1

    def stop(self):
        if self.up():
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def job_procs(stopped=False):
    """{job id: [process]} of every live process with SLAQ_JOB_ID in its
    environment that this soak started (stopped ones too with stopped);
    a process is a dict: pid, ppid, state (/proc/PID/stat's letter) and
    node (the agent whose socket its SLAQ_SOCKET names)."""
    out = collections.defaultdict(list)
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid, "rb") as f:
                st = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        state = st[0].decode()
        if state in ("Z", "X") or (state in ("T", "t") and not stopped):
            continue
        e = dict(x.split(b"=", 1) for x in env if b"=" in x)
        # a job of this soak's agents (a sweep's jobs have slaqd's
        # environment, not the submitter's): its socket is under the dir
        sock = e.get(b"SLAQ_SOCKET", b"")
        if not sock.startswith(SOAK_TAG + b"/") or b"SLAQ_JOB_ID" not in e:
            continue
        try:
            jid = int(e[b"SLAQ_JOB_ID"])
        except ValueError:
            continue
        node = os.path.basename(os.path.dirname(sock)).decode()
        out[jid].append({"pid": int(pid), "ppid": int(st[1]),
                         "state": state, "node": node})
    return out


SOAK_TAG = b""


class Soak:
    def __init__(self, a):
        self.a = a
        self.rng = random.Random(a.seed)
        self.dir = tempfile.mkdtemp(prefix="slaq-soak-", dir=a.tmp)
        self.ack_log = os.path.join(self.dir, "acks.log")
        self.jobs = []          # (id, kind)
        self.submit_failures = 0
        self.sweep_id = None
        self.sweep_jobs = set()
        self.sweep_max = 0
        self.sweep_over = []    # what the watcher saw above the slots
        self.done = threading.Event()
        self.lock = threading.Lock()
        global SOAK_TAG
        SOAK_TAG = self.dir.encode()

    # ---------------------------------------------------------- cluster

    def start_cluster(self):
        a = self.a
        token = os.path.join(self.dir, "agent.token")
        with open(token, "w") as f:
            f.write("soak-agent-token-%d\n" % self.rng.randrange(1 << 30))
        port = free_port()
        # A sweep's jobs run with slaqd's environment: they log theirs too.
        env = dict(os.environ, SLAQ_CLIENT_ACK_LOG=self.ack_log)
        self.ctl = Slaqd("controller", a.build,
                         os.path.join(self.dir, "controller"),
                         ["--agents", "127.0.0.1:%d" % port,
                          "--agent-token-file", token, "--epoch",
                          str(a.epoch), "--enforce", "none"], env)
        # Each agent holds its node's key only (slaq cluster node-key).
        for n in ("n1", "n2"):
            subprocess.run([os.path.join(a.build, "bin", "slaq"), "cluster",
                            "node-key", "--secret-file", token, "--out",
                            os.path.join(self.dir, n + ".key"), n],
                           check=True)
        self.agents = [Slaqd(n, a.build, os.path.join(self.dir, "agent-" + n),
                             ["--agent", "--join", "127.0.0.1:%d" % port,
                              "--node-key-file",
                              os.path.join(self.dir, n + ".key"),
                              "--cores", str(a.cores), "--enforce", "none"],
                             env)
                       for n in ("n1", "n2")]
        self.ctl.start()
        for g in self.agents:
            g.start()
        self.wait_nodes()

    def wait_nodes(self, timeout=30):
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            r = self.ctl.ask({"type": "nodes"})
            if r and r.get("ok") and sum(n.get("state") == "up" for n in
                                         r.get("nodes", [])) == 2:
                return
            time.sleep(0.1)
        raise RuntimeError("the agents did not join within %g s" % timeout)

    # ----------------------------------------------------------- jobs

    def env(self):
        e = dict(os.environ)
        e.pop("SLAQ_SOCKET", None)
        e["SLAQ_CLIENT_ACK_LOG"] = self.ack_log
        return e

    def slaq(self, *args, timeout=60):
        return subprocess.run([os.path.join(self.a.build, "bin", "slaq"),
                               args[0], "--socket", self.ctl.sock] +
                              list(args[1:]), capture_output=True, text=True,
                              env=self.env(), timeout=timeout)

    def submit(self, kind, *cmd):
        """Submits through the controller, retried while it is down (the
        client then attaches as it comes back); returns the job id."""
        until = time.monotonic() + 120
        while time.monotonic() < until:
            p = self.slaq("submit", "--name", "soak-" + kind, "--", *cmd)
            if p.returncode == 0:
                jid = int(p.stdout.strip())
                with self.lock:
                    self.jobs.append((jid, kind))
                say("submitted %s job %d", kind, jid)
                return jid
            self.submit_failures += 1
            time.sleep(0.1)
        raise RuntimeError("could not submit a %s job: %s" % (kind, p.stderr))

    def ml_job(self):
        a = self.a
        if self.rng.random() < 0.5:
            return self.submit("c", os.path.join(a.build, "bin",
                                                 "slaq-train"),
                               "logreg", "--subsample", "0.05", "--iters",
                               str(a.iters), "--threads", "1", "--quiet")
        return self.submit("py", sys.executable,
                           os.path.join(HERE, "pyjob.py"), str(a.iters),
                           "%g" % a.step)

    def start_sweep(self):
        a = self.a
        spec = {"name": "soak", "command": [
            os.path.join(a.build, "bin", "slaq-train"), "logreg",
            "--subsample", "0.05", "--validation", "0.2", "--lr", "{lr}",
            "--iters", "{epochs}", "--threads", "1", "--quiet"],
            "space": {"lr": {"type": "log-uniform", "low": 0.0001,
                             "high": 3}},
            "generator": {"type": "random", "seed": a.seed},
            "configs": a.configs, "metric": "val_accuracy",
            "direction": "max", "y_target": 0.999, "t_max": 600,
            "epochs": a.sweep_epochs, "b": 3, "slots": a.slots,
            "policy": "pop", "stop_at_target": False, "cwd": self.dir}
        path = os.path.join(self.dir, "sweep.json")
        with open(path, "w") as f:
            json.dump(spec, f)
        p = self.slaq("sweep", path)
        if p.returncode != 0:
            raise RuntimeError("slaq sweep: %s" % p.stderr)
        self.sweep_id = int(p.stdout.strip())
        say("sweep %d on %d slots", self.sweep_id, a.slots)

    def start_queries(self):
        a = self.a
        if not a.queries:
            return
        self.tpch = os.path.join(self.dir, "db.tpch")
        subprocess.run([os.path.join(a.build, "bin", "slaq-aqp"), "gen",
                        "--scale-factor", str(a.scale_factor), "--seed", "2",
                        "--out", self.tpch], check=True, capture_output=True,
                       timeout=300)
        for _ in range(a.queries):
            self.submit("query", os.path.join(a.build, "bin", "slaq-aqp"),
                        "run", "--data", self.tpch, "--query", "q6",
                        "--batches", str(a.batches), "--bootstrap",
                        "--threads", "1")

    def watch_sweep(self):
        """The sweep's configurations running at once, seen from /proc.
        When more than the slots run, what was counted is kept in
        sweep_over (and said with --verbose): each process, and the
        controller's view of its job and of the sweep's configurations."""
        seen = {}  # job id: the controller's last ls entry
        while not self.done.is_set():
            if self.ctl.up():
                r = self.ctl.ask({"type": "ls"})
                if r and r.get("ok"):
                    with self.lock:
                        for j in r["jobs"]:
                            if j.get("sweep") == self.sweep_id:
                                self.sweep_jobs.add(j["id"])
                                seen[j["id"]] = j
            # A configuration runs while any process of its job does
            # (its children share its SLAQ_JOB_ID), a SIGSTOPped one (a
            # POP suspend) excepted: one killed, or suspended with a
            # checkpoint, runs until it has exited, and slaqd keeps its
            # slot until then (sweepd.c, holds_slot).
            procs = job_procs()
            running = sorted(k for k in procs if k in self.sweep_jobs)
            if len(running) > self.sweep_max:
                self.sweep_max = len(running)
                say("sweep: %d configurations running (%s)", len(running),
                    running)
            if len(running) > self.a.slots and len(self.sweep_over) < 5:
                self.over(running, procs, seen)
            time.sleep(0.1)

    def over(self, running, procs, seen):
        """Keeps (and says) what the watcher counted above the slots."""
        cfgs = None
        w = self.ctl.ask({"type": "sweep_show", "sweep": self.sweep_id}) \
            if self.ctl.up() else None
        if w and w.get("ok"):
            cfgs = [{"index": c["index"], "state": c["state"],
                     "jobs": c["jobs"]} for c in w["sweep"]["config_list"]]
        ev = {"t": round(time.monotonic() - T0, 2), "jobs": [
            {"job": k, "procs": procs[k],
             "controller": {x: seen.get(k, {}).get(x)
                            for x in ("state", "node", "pid", "reason")}}
            for k in running], "configs": cfgs}
        self.sweep_over.append(ev)
        say("sweep: %d running on %d slots: %s", len(running), self.a.slots,
            json.dumps(ev))

    # ---------------------------------------------------------- kills

    def kills(self):
        a = self.a
        left = {s: a.kills for s in [self.ctl] + self.agents}
        next_submit = time.monotonic() + a.submit_every
        while any(left.values()):
            time.sleep(self.rng.uniform(a.up_min, a.up_max))
            victim = self.rng.choice([s for s, n in left.items() if n])
            left[victim] -= 1
            victim.kill9()
            say("killed %s (%d)", victim.name, victim.kills)
            down = self.rng.uniform(0, a.down_max)
            t = time.monotonic()
            if victim is self.ctl and t >= next_submit:
                # a job submitted while the controller is down: taken, and
                # its client attaching, as the controller comes back
                next_submit = t + a.submit_every
                threading.Thread(target=self.ml_job, daemon=True).start()
            time.sleep(down)
            victim.start()
            if time.monotonic() >= next_submit:
                next_submit = time.monotonic() + a.submit_every
                threading.Thread(target=self.ml_job, daemon=True).start()

    def wait_end(self, timeout):
        until = time.monotonic() + timeout
        while time.monotonic() < until:
            r = self.ctl.ask({"type": "ls", "active": True})
            if r and r.get("ok") and not r["jobs"]:
                w = self.ctl.ask({"type": "sweep_show",
                                  "sweep": self.sweep_id})
                if not w or not w.get("ok") or \
                        w["sweep"]["state"] != "running":
                    return True
            time.sleep(0.5)
        return False

    # ------------------------------------------------------- accounting

    def account(self, ended):
        a = self.a
        acked = set()
        if os.path.exists(self.ack_log):
            with open(self.ack_log) as f:
                for line in f:
                    job, it = line.split()
                    acked.add((int(job), int(it)))

        def rows(state):
            db = sqlite3.connect("file:%s?mode=ro" %
                                 os.path.join(state, "state.db"), uri=True)
            got = set(db.execute("SELECT job, iter FROM reports"))
            lost = db.execute("SELECT value FROM meta WHERE key = "
                              "'reports_lost'").fetchone()
            ok = db.execute("PRAGMA integrity_check").fetchone()[0]
            db.close()
            return got, int(lost[0]) if lost else 0, ok

        ctl_rows, ctl_lost, ctl_ok = rows(self.ctl.state)
        agent_rows, lost, integrity = set(), ctl_lost, [ctl_ok]
        for g in self.agents:
            r, n, ok = rows(g.state)
            agent_rows |= r
            lost += n
            integrity.append(ok)
        missing = sorted(acked - ctl_rows)
        missing_agent = sorted(acked - agent_rows)
        by_job = collections.Counter(j for j, _ in missing)

        db = sqlite3.connect("file:%s?mode=ro" %
                             os.path.join(self.ctl.state, "state.db"),
                             uri=True)
        states = dict(db.execute("SELECT id, state FROM jobs"))
        why_lost = collections.Counter(r[0] for r in db.execute(
            "SELECT reason FROM jobs WHERE state = 'lost'"))
        queries = [j for j, k in self.jobs if k == "query"]
        exact = 0
        for q in queries:
            last = db.execute("SELECT iter, estimates FROM reports WHERE job "
                              "= ? ORDER BY iter DESC LIMIT 1",
                              (q,)).fetchone()
            n = db.execute("SELECT count(*) FROM reports WHERE job = ?",
                           (q,)).fetchone()[0]
            if not last or not last[1]:
                continue
            e = json.loads(last[1])
            closed = all(x is None or (lo == x == hi) for x, lo, hi in
                         zip(e.get("estimates", []), e.get("lower", []),
                             e.get("upper", [])))
            if states.get(q) == "done" and last[0] == a.batches and \
                    n == a.batches and closed:
                exact += 1
        db.close()
        unaccounted = max(0, len(missing) - lost)
        return {
            "seed": a.seed,
            "kills": {s.name: s.kills for s in [self.ctl] + self.agents},
            "start_max_s": {s.name: round(s.start_max, 2)
                            for s in [self.ctl] + self.agents},
            "jobs": len(self.jobs),
            "job_states": dict(collections.Counter(
                states.get(j, "?") for j, _ in self.jobs)),
            "lost_reasons": dict(why_lost),
            "ended": ended,
            "submit_retries": self.submit_failures,
            "acked": len(acked),
            "controller_rows": len(ctl_rows),
            "missing": len(missing),
            "missing_by_job": {str(k): v for k, v in by_job.items()},
            "missing_first": missing[:10],
            "missing_agent": len(missing_agent),
            "reports_lost": lost,
            "unaccounted": unaccounted,
            "queries": len(queries),
            "queries_exact": exact,
            "sweep_slots": a.slots,
            "sweep_max_running": self.sweep_max,
            "sweep_over": self.sweep_over,
            "integrity": integrity,
            "dir": self.dir,
        }

    def run(self):
        a = self.a
        self.start_cluster()
        watcher = threading.Thread(target=self.watch_sweep, daemon=True)
        try:
            self.start_sweep()
            watcher.start()
            self.start_queries()
            for _ in range(a.jobs):
                self.ml_job()
            self.kills()
            say("kills done; waiting for the jobs to end")
            ended = self.wait_end(a.end_wait)
        finally:
            self.done.set()
            for s in [self.ctl] + self.agents:
                s.stop()
            for procs in job_procs(stopped=True).values():
                for x in procs:  # what did not end in time
                    try:
                        os.kill(x["pid"], signal.SIGKILL)
                    except OSError:
                        pass
        watcher.join(timeout=5)
        return self.account(ended)


def main():
    global VERBOSE
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--kills", type=int, default=20,
                   help="kills of each agent and of the controller")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--jobs", type=int, default=6,
                   help="ML jobs at the start (more come during the kills)")
    p.add_argument("--submit-every", type=float, default=3.0,
                   help="seconds between ML jobs submitted during the kills")
    p.add_argument("--iters", type=int, default=300,
                   help="iterations of each ML job")
    p.add_argument("--step", type=float, default=0.02,
                   help="seconds between a Python job's reports")
    p.add_argument("--queries", type=int, default=1)
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--scale-factor", type=float, default=0.3)
    p.add_argument("--slots", type=int, default=2)
    p.add_argument("--configs", type=int, default=6)
    p.add_argument("--sweep-epochs", type=int, default=30)
    p.add_argument("--cores", type=float, default=2)
    p.add_argument("--epoch", type=float, default=2.0,
                   help="the controller's epoch; a node is down after 3 "
                   "silent ones (its jobs lost, a query with them)")
    p.add_argument("--up-min", type=float, default=0.3)
    p.add_argument("--up-max", type=float, default=2.0)
    p.add_argument("--down-max", type=float, default=1.0)
    p.add_argument("--end-wait", type=float, default=300)
    p.add_argument("--tmp", default=None, help="where the run's directory "
                   "goes (default: the system's temporary directory)")
    p.add_argument("--keep", action="store_true",
                   help="keep the run's directory (kept anyway on failure)")
    p.add_argument("--verbose", action="store_true")
    a = p.parse_args()
    # the sweep's command names slaq-train under it, run in the soak's
    # directory: a relative --build would name nothing there
    a.build = os.path.abspath(a.build)
    VERBOSE = a.verbose
    if not os.access(os.path.join(a.build, "bin", "slaqd"), os.X_OK):
        sys.stderr.write("soak.py: no %s/bin/slaqd: run make build first\n"
                         % a.build)
        return 2
    s = Soak(a)
    try:
        r = s.run()
    except RuntimeError as e:
        sys.stderr.write("soak.py: %s (directory %s)\n" % (e, s.dir))
        return 2
    ok = (r["unaccounted"] == 0 and r["ended"] and
          r["queries_exact"] == r["queries"] and
          r["sweep_max_running"] <= r["sweep_slots"] and
          all(x == "ok" for x in r["integrity"]))
    r["ok"] = ok
    print(json.dumps(r, indent=1))
    if ok and not a.keep:
        shutil.rmtree(s.dir, ignore_errors=True)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
