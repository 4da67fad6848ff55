"""Fixtures for slaqd's end-to-end tests: a real slaqd on a temporary state
directory and a free HTTP port, the slaq command, and the example job.

The build directory comes from $SLAQ_BUILD (default build/), so the same
tests run against the sanitizer build. Every daemon a test starts is
stopped at the end of the test, and every job process with it.
"""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import urllib.request

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.path.join(ROOT, os.environ.get("SLAQ_BUILD", "build"))
SLAQD = os.path.join(BUILD, "bin", "slaqd")
SLAQ = os.path.join(BUILD, "bin", "slaq")
TOY = os.path.join(BUILD, "bin", "slaq-toy-job")
sys.path.insert(0, os.path.join(ROOT, "python"))
import slaq.control  # noqa: E402


_handed_out = set()


def free_port():
    """A port nothing listens on now and this process has not handed out
    before: a port is only bound when its slaqd starts, so two ports asked
    for in a row (a controller's --agents and its --http) must differ even
    if the kernel offers the same free one twice."""
    while True:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        if port not in _handed_out:
            _handed_out.add(port)
            return port


def wait_for(pred, timeout=10.0, step=0.05, what="condition"):
    """Polls pred() until it returns something true; fails after timeout."""
    deadline = time.monotonic() + timeout
    while True:
        value = pred()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %.1f s waiting for %s"
                                 % (timeout, what))
        time.sleep(step)


# Straight to slaqd, whatever proxy the environment names.
OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_get(d, path, timeout=10):
    """GETs `path` from daemon d's HTTP port: (Content-Type, body text).
    Raises urllib.error.HTTPError on an error status."""
    r = OPENER.open("http://127.0.0.1:%d%s" % (d.port, path), timeout=timeout)
    return r.headers.get("Content-Type"), r.read().decode()


def api(d, path):
    """The JSON document at `path` of daemon d's HTTP API."""
    return json.loads(http_get(d, path)[1])


def session(address, timeout=5):
    """A raw connection to slaqd, as a job or a peer would open it: to the
    Unix socket at `address`, or to a (host, port) pair. Returns the socket
    and a binary file to read its lines from."""
    if isinstance(address, tuple):
        s = socket.create_connection(address, timeout=timeout)
    else:
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(timeout)
        s.connect(address)
    return s, s.makefile("rb")


# The columns slaqd's store added to its first schema, in the order it added
# them (the migration table added[][3] in src/daemon/store.c).
STORE_ADDED = (
    ("jobs", "secret", "TEXT"), ("jobs", "metric_name", "TEXT"),
    ("reports", "metric", "REAL"), ("jobs", "suspended", "INTEGER"),
    ("jobs", "continued_by", "INTEGER"), ("jobs", "resumed_from", "INTEGER"),
    ("jobs", "sweep", "INTEGER"), ("jobs", "convergence", "TEXT"),
    ("jobs", "node", "TEXT"), ("jobs", "restartable", "INTEGER"),
    ("jobs", "pin", "TEXT"), ("jobs", "launch", "TEXT"),
    ("jobs", "kind", "TEXT"), ("reports", "estimates", "TEXT"),
    ("reports", "threads", "REAL"), ("reports", "wall_s", "REAL"),
    ("jobs", "uid", "INTEGER"), ("jobs", "user", "TEXT"),
    ("jobs", "gen", "INTEGER"), ("jobs", "array_id", "INTEGER"),
    ("jobs", "array_index", "INTEGER"),
    ("jobs", "deadline", "REAL"), ("jobs", "accuracy", "REAL"),
    ("jobs", "direction", "TEXT"), ("jobs", "urgency", "INTEGER"),
    ("jobs", "moves", "INTEGER"), ("jobs", "move_s", "REAL"),
    ("jobs", "stop", "TEXT"), ("jobs", "env", "TEXT"),
)


def old_state_db(state_dir, before):
    """Writes state_dir/state.db as a slaqd older than the column `before`
    ("table.column", one of STORE_ADDED) left it: the first schema and the
    columns added before that one, holding one finished job (id 1, 'old',
    ended now) with one report (iteration 0, loss 2.0). Returns the path."""
    names = ["%s.%s" % (t, c) for t, c, _ in STORE_ADDED]
    cols = {"jobs": [], "reports": []}
    for t, c, ty in STORE_ADDED[:names.index(before)]:
        cols[t].append(", %s %s" % (c, ty))
    path = os.path.join(str(state_dir), "state.db")
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE jobs(id INTEGER PRIMARY KEY, name TEXT, cmd TEXT, "
        "cwd TEXT, weight REAL, max_cores REAL, target REAL, max_iters "
        "INTEGER, max_time REAL, managed INTEGER, state TEXT, pid INTEGER, "
        "pstart INTEGER, exit_status INTEGER, reason TEXT, submitted REAL, "
        "started REAL, ended REAL%s);"
        "CREATE TABLE reports(job INTEGER, iter INTEGER, loss REAL, cpu_s "
        "REAL, samples REAL, t REAL%s, PRIMARY KEY(job, iter)) "
        "WITHOUT ROWID;" % ("".join(cols["jobs"]), "".join(cols["reports"])))
    now = time.time()
    db.execute("INSERT INTO jobs(id, name, cmd, cwd, weight, target, "
               "max_iters, max_time, managed, state, pid, pstart, submitted, "
               "started, ended) VALUES (1, 'old', '[\"true\"]', '/', 1, 0, "
               "0, 0, 0, 'done', 0, 0, ?, ?, ?)", (now, now, now))
    db.execute("INSERT INTO reports(job, iter, loss, cpu_s, samples, t) "
               "VALUES (1, 0, 2.0, 0, 0, ?)", (now,))
    db.commit()
    db.close()
    return path


class Daemon:
    """One slaqd process on its own state directory."""

    def __init__(self, state_dir, args):
        self.state = str(state_dir)
        self.sock = os.path.join(self.state, "slaq.sock")
        self.args = list(args)
        if "--socket" in self.args:
            self.sock = self.args[self.args.index("--socket") + 1]
        self.port = None
        self.proc = None
        self.killed = False
        self.log_path = os.path.join(self.state + ".log")

    def start(self):
        self.port = free_port()
        cmd = [SLAQD, "--state-dir", self.state, "--http",
               "127.0.0.1:%d" % self.port] + self.args
        if os.environ.get("SLAQ_VALGRIND"):
            cmd = ["valgrind", "--error-exitcode=99", "--leak-check=full",
                   "--errors-for-leak-kinds=definite", "-q"] + cmd
        self.log = open(self.log_path, "a")
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=self.log)
        wait_for(lambda: self._up(), timeout=30, what="slaqd to start")
        return self

    def _up(self):
        if self.proc.poll() is not None:
            raise AssertionError("slaqd exited with %s:\n%s"
                                 % (self.proc.returncode, self.read_log()))
        try:
            return self.request({"type": "status"})["ok"]
        except OSError:
            return False

    def read_log(self):
        with open(self.log_path) as f:
            return f.read()

    def request(self, msg):
        """One control request over the socket; returns the reply."""
        return slaq.control.request(self.sock, msg)

    def cli(self, *args, check=True, env=None):
        """Runs `slaq ARGS --socket SOCK`; returns the CompletedProcess."""
        full_env = dict(os.environ)
        full_env.pop("SLAQ_SOCKET", None)
        full_env.update(env or {})
        args = list(args)
        p = subprocess.run([SLAQ, args[0], "--socket", self.sock] + args[1:],
                           capture_output=True, text=True, env=full_env,
                           timeout=60)
        if check and p.returncode != 0:
            raise AssertionError("slaq %s exited %d: %s"
                                 % (" ".join(args), p.returncode, p.stderr))
        return p

    def submit(self, *cmd, **opts):
        args = ["submit"]
        for k, v in opts.items():
            args += ["--" + k.replace("_", "-"), str(v)]
        return int(self.cli(*(args + ["--"] + list(cmd))).stdout.strip())

    def job(self, job_id):
        r = self.request({"type": "show", "job": job_id})
        assert r["ok"], r
        return r["job"]

    def jobs(self):
        return self.request({"type": "ls"})["jobs"]

    def wait_state(self, job_id, states, timeout=15):
        if isinstance(states, str):
            states = (states,)
        return wait_for(lambda: (lambda j: j if j["state"] in states else
                                 None)(self.job(job_id)), timeout=timeout,
                        what="job %s to reach %s" % (job_id, states))

    def kill9(self):
        self.killed = True
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                rc = self.proc.wait()
            self.log.close()
            return rc
        return self.proc.returncode if self.proc else 0


def _remove_cgroup(path):
    """Removes a slaqd's cgroup once its killed jobs have left it."""
    deadline = time.monotonic() + 5
    for name in os.listdir(path):
        sub = os.path.join(path, name)
        while os.path.isdir(sub):
            try:
                os.rmdir(sub)
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)
    try:
        os.rmdir(path)
    except OSError:
        pass


@pytest.fixture
def daemon_factory(tmp_path):
    """start(*args) starts a slaqd; all are stopped and their jobs killed."""
    started = []

    def start(*args, state=None):
        d = Daemon(state or tmp_path / ("state%d" % len(started)),
                   ["--epoch", "0.2", "--grace", "2"] + list(args))
        started.append(d)
        return d.start()

    yield start
    for d in started:
        pids, cgroup = [], None
        try:
            if d.proc.poll() is None:
                active = [j for j in d.jobs()
                          if j["state"] in ("running", "stopping")]
                pids = [j["pid"] for j in active if j["pid"]]
                cgroup = d.request({"type": "status"}).get("cgroup")
                # Cancelled jobs end in slaqd's hands, cgroups removed.
                for j in active:
                    d.request({"type": "cancel", "job": j["id"], "now": True})
                wait_for(lambda: not d.request({"type": "ls",
                                                "active": True})["jobs"],
                         timeout=10, what="jobs to end")
        except (OSError, AssertionError):
            pass
        rc = d.stop()
        for pid in pids:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        if cgroup and os.path.isdir(cgroup):
            _remove_cgroup(cgroup)
        # A clean exit: also what the sanitizers and valgrind report by.
        assert d.killed or rc == 0, \
            "slaqd exited with %s:\n%s" % (rc, d.read_log()[-4000:])


def _jobs_of(prefix):
    """PIDs of the processes whose SLAQ_SOCKET lies under prefix: the jobs
    of the slaqds and agents a test started there."""
    want = b"SLAQ_SOCKET=" + os.fsencode(prefix)
    pids = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % name, "rb") as f:
                env = f.read()
        except OSError:
            continue
        if any(v.startswith(want) for v in env.split(b"\0")):
            pids.append(int(name))
    return pids


@pytest.fixture(autouse=True)
def reap_jobs(tmp_path):
    """After every test, kills what its slaqds left running: the jobs of a
    slaqd or agent that was killed with -9 and not started again keep
    running by design (a slaqd started again adopts them), and nothing
    else would stop them."""
    yield
    for pid in _jobs_of(tmp_path):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


@pytest.fixture
def slaqd(daemon_factory):
    return daemon_factory()
