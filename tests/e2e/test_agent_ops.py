"""Operations on a job that a node agent runs go to that agent.

A controller's suspend and resume of such a job are messages to its agent
("suspend", "resume"; docs/protocol.md), which acts on the process group
it started and answers with an "op_result": the controller never signals a
pid an agent reported, since that pid names a process on the agent's
machine, not its own. An agent's pid of 0, 1 or below is refused.

The fake agents here are Python sockets speaking the agent protocol with
the real agent token; connect_as_agent() is the one place that knows how an
agent connects and registers.
"""

import json
import os
import socket
import subprocess
import threading
import time

import pytest

from agentlink import AgentLink
from conftest import BUILD, TOY, wait_for
from test_cluster_agents import cluster, nodes_of  # noqa: F401 (fixture)

TRAIN = os.path.join(BUILD, "bin", "slaq-train")


def proc_state(pid):
    with open("/proc/%d/stat" % pid) as f:
        return f.read().rsplit(")", 1)[1].split()[0]


def connect_as_agent(port, token, node, cores=2, jobs=()):
    """Opens an agent connection to the controller at 127.0.0.1:port (the
    agent link's handshake with the token: tests/e2e/agentlink.py) and
    registers `node` with `jobs` (the register's job entries). Returns
    (send(msg), recv() -> msg or None at EOF, close())."""
    link = AgentLink(port, token, node=node)
    link.send({"type": "register", "node": node, "cores": cores,
               "enforce": "signal", "jobs": list(jobs)})
    return link.send, link.recv, link.close


class FakeAgent:
    """An agent that runs nothing: it answers "start" with `pid` as the
    job's process, heartbeats at every allocs, records what it is sent,
    and answers "suspend"/"resume" with `answer` (None: never)."""

    def __init__(self, port, token, node, pid, answer=None):
        self.pid = pid
        self.answer = answer
        self.got = []
        self.jobs = []
        self.send, self.recv, self._close = connect_as_agent(
            port, token, node)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                m = self.recv()
            except (OSError, ValueError):
                return
            if m is None:
                return
            self.got.append(m)
            t = m.get("type")
            try:
                if t == "start":
                    self.jobs.append(m["job"])
                    self.send({"type": "started", "job": m["job"],
                               "pid": self.pid})
                elif t == "allocs":
                    self.send({"type": "heartbeat"})
                elif t in ("suspend", "resume") and self.answer is not None:
                    self.send(dict(self.answer, type="op_result",
                                   job=m["job"], seq=m["seq"], op=t))
            except OSError:
                return

    def of_type(self, t):
        return [m for m in self.got if m.get("type") == t]

    def close(self):
        """Ends its jobs (an exit each) and disconnects."""
        for j in self.jobs:
            try:
                self.send({"type": "exit", "job": j, "state": "cancelled",
                           "reason": "test over"})
            except OSError:
                pass
        time.sleep(0.2)
        self._close()


@pytest.fixture
def bystander():
    """A process of this machine that no slaqd started (its own group)."""
    p = subprocess.Popen(["sleep", "120"], start_new_session=True)
    yield p.pid
    p.kill()
    p.wait()


def start_ctl(cluster, nodes=("n1",)):
    ctl, agents = cluster(nodes=nodes)
    m = cluster.made
    return ctl, agents, m["port"], m["token"].read_text().strip()


def test_register_with_pid_1_is_refused(cluster):
    ctl, _, port, token = start_ctl(cluster)
    send, recv, close = connect_as_agent(port, token, "evil",
                                         jobs=[{"job": 1, "pid": 1}])
    try:
        m = recv()
        assert m["type"] == "error" and m["code"] == "bad_register", m
        assert "pid 1" in m["message"]
    finally:
        close()
    for bad in (0, -1):
        send, recv, close = connect_as_agent(port, token, "evil",
                                             jobs=[{"job": 1, "pid": bad}])
        try:
            m = recv()
            assert m["code"] == "bad_register" and "pid %d" % bad in \
                m["message"], m
        finally:
            close()
    assert "evil" not in [n["name"] for n in nodes_of(ctl)]
    assert "register refused: job 1: pid 1 is not a process" in \
        ctl.read_log()


def test_fake_agent_pid_1_is_refused_and_suspend_says_why(cluster):
    ctl, _, port, token = start_ctl(cluster)
    fake = FakeAgent(port, token, "evil", pid=1)
    try:
        wait_for(lambda: any(n["name"] == "evil" and n["state"] == "up"
                             for n in nodes_of(ctl)), what="evil to join")
        jid = ctl.submit(TOY, "--forever", node="evil")
        wait_for(lambda: fake.of_type("start"), what="the start")
        # The refusal comes first: before it, a suspend would have been
        # kill(-1, SIGSTOP) on this machine (every process), so nothing
        # below runs unless the pid was refused.
        wait_for(lambda: "started refused for job %d: pid 1" % jid in
                 ctl.read_log(), what="the refusal in the log")
        assert ctl.job(jid)["pid"] == 0
        # the controller logs the refusal before the fake agent's reader
        # has taken the error it was sent
        errs = wait_for(lambda: [m for m in fake.of_type("error")
                                 if m["code"] == "bad_pid"],
                        what="the bad_pid error at the agent")
        assert "pid 1 is not a process" in errs[0]["message"]
        p = ctl.cli("suspend", str(jid), check=False)
        assert p.returncode == 1
        assert "no usable process" in p.stderr and "pid 1" in p.stderr, \
            p.stderr
        assert ctl.job(jid)["suspended"] is None
        assert not fake.of_type("suspend")  # nothing to act on
    finally:
        fake.close()
        # Ended before the fixtures clean up, which signal the groups of
        # active jobs' pids: never that of pid 1.
        wait_for(lambda: ctl.job(jid)["state"] not in
                 ("running", "stopping", "pending"), what="the job to end")


def test_suspend_never_signals_a_local_process_an_agent_names(cluster,
                                                              bystander):
    ctl, _, port, token = start_ctl(cluster)
    fake = FakeAgent(port, token, "liar", pid=bystander)
    try:
        wait_for(lambda: any(n["name"] == "liar" and n["state"] == "up"
                             for n in nodes_of(ctl)), what="liar to join")
        jid = ctl.submit(TOY, "--forever", node="liar")
        wait_for(lambda: ctl.job(jid)["pid"] == bystander,
                 what="the agent's pid")
        t0 = time.monotonic()
        p = ctl.cli("suspend", str(jid), check=False)
        took = time.monotonic() - t0
        # This machine's process with that number was not touched ...
        assert proc_state(bystander) not in ("T", "t")
        # ... the request went to the agent, which did not answer.
        sent = fake.of_type("suspend")
        assert len(sent) == 1 and sent[0]["job"] == jid, fake.got
        assert p.returncode == 1
        assert "node liar did not answer the suspend within 5 s" in \
            p.stderr, p.stderr
        assert 4 < took < 9
        assert ctl.job(jid)["suspended"] is None
        # It may yet have acted: the controller undoes it (seq 0).
        wait_for(lambda: any(m["seq"] == 0 for m in fake.of_type("resume")),
                 what="the undoing resume")
        # An agent that answers with a failure: shown as it said it.
        fake.answer = {"ok": False, "message": "no such process group"}
        p = ctl.cli("suspend", str(jid), check=False)
        assert p.returncode == 1
        assert "node liar: no such process group" in p.stderr, p.stderr
        assert proc_state(bystander) not in ("T", "t")
        assert ctl.job(jid)["suspended"] is None
        # ... and one that answers it did: the job counts as suspended,
        # the local process is still untouched.
        fake.answer = {"ok": True, "latency_ms": 1.5}
        p = ctl.cli("suspend", str(jid))
        assert "suspended (SIGSTOP) in 1.500 ms" in p.stdout
        assert ctl.job(jid)["suspended"] == "signal"
        p = ctl.cli("resume", str(jid))
        assert ctl.job(jid)["suspended"] is None
        assert proc_state(bystander) not in ("T", "t")
    finally:
        fake.close()


def test_real_agent_suspends_and_resumes_its_job(cluster):
    ctl, agents, _, _ = start_ctl(cluster)
    jid = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01", node="n1")
    wait_for(lambda: ctl.job(jid)["iter"] >= 3, timeout=30,
             what="3 relayed iterations")
    pid = agents["n1"].job(jid)["pid"]
    assert pid > 1
    p = ctl.cli("suspend", str(jid))
    assert "suspended (SIGSTOP) in" in p.stdout, p.stdout
    assert proc_state(pid) in ("T", "t")
    on_ctl = ctl.job(jid)
    assert on_ctl["suspended"] == "signal" and on_ctl["suspend_ms"] >= 0
    assert agents["n1"].job(jid)["suspended"] == "signal"
    time.sleep(0.5)
    it = ctl.job(jid)["iter"]
    time.sleep(1.0)
    assert ctl.job(jid)["iter"] == it  # stopped there
    again = ctl.cli("suspend", str(jid), check=False)
    assert again.returncode != 0 and "already suspended" in again.stderr
    p = ctl.cli("resume", str(jid))
    assert "resumed" in p.stdout
    assert proc_state(pid) not in ("T", "t")
    assert ctl.job(jid)["suspended"] is None
    wait_for(lambda: ctl.job(jid)["iter"] > it + 2, timeout=30,
             what="iterations after the resume")
    # The controller's log names the agent as the one that acted.
    log = ctl.read_log()
    assert "suspended by node n1's agent" in log
    assert "resumed by node n1's agent" in log


def test_checkpoint_resume_runs_where_the_checkpoint_is(cluster):
    ctl, agents, _, _ = start_ctl(cluster, nodes=("n1", "n2"))
    jid = ctl.submit(TRAIN, "logreg", "--subsample", "0.05", "--iters",
                     "100000", "--eval-every", "0", node="n2")
    wait_for(lambda: ctl.job(jid)["iter"] >= 5, timeout=60,
             what="5 iterations")
    p = ctl.cli("suspend", "--checkpoint", str(jid))
    assert "checkpoint" in p.stdout
    job = ctl.wait_state(jid, "stopped", timeout=30)
    assert job["suspended"] == "checkpoint" and job["reason"] == "suspend"
    assert job["checkpoint_bytes"] > 1000  # measured on the agent
    ck = os.path.join(agents["n2"].state, "checkpoints")
    assert os.path.exists(os.path.join(ck, "job-%d.ckpt" % jid))
    saved = job["iter"]
    r = ctl.request({"type": "resume", "job": jid})
    assert r["ok"], r
    new = r["job"]["id"]
    nj = wait_for(lambda: (lambda j: j if j["reports"] >= 2 else None)(
        ctl.job(new)), timeout=60, what="the resumed job's reports")
    assert nj["node"] == "n2" and nj["resumed_from"] == jid
    assert nj["history"][0][0] == saved + 1
    assert not os.path.exists(os.path.join(ck, "job-%d.ckpt" % jid))


def rise(top, rate, n=120):
    return [top - (top - 0.1) * (i + 1) ** -rate for i in range(n)]


def test_sweep_whose_suspension_fails_never_runs_more_than_its_slots(
        cluster, tmp_path):
    """POP suspends configuration 1 (slower) at its first boundary; its
    agent answers that it could not: the configuration ends (its job is
    cancelled) rather than running on beside the one started in its slot.
    The fake agent reports the jobs' curves and counts how many it was
    told to run at once."""
    ctl, _, port, token = start_ctl(cluster, nodes=())
    # A pid no process has: the old controller's kill() of it failed, and
    # it only logged that.
    fake = FakeAgent(port, token, "sw", pid=4194000,
                     answer={"ok": False, "message": "cannot stop it"})
    wait_for(lambda: any(n["name"] == "sw" and n["state"] == "up"
                         for n in nodes_of(ctl)), what="sw to join")
    curves = {0: rise(0.90, 0.9), 1: rise(0.85, 0.5), 2: rise(0.90, 0.9)}
    spec = {"name": "t", "command": "/bin/true --lr {lr} --epochs {epochs}",
            "space": {"lr": {"type": "log-uniform", "low": 0.001,
                             "high": 1}},
            "generator": {"type": "random", "seed": 3}, "configs": 3,
            "metric": "val_accuracy", "direction": "max", "y_target": 0.80,
            "t_max": 60, "epochs": 120, "b": 10, "slots": 2,
            "policy": "pop", "stop_at_target": False}
    r = ctl.request({"type": "sweep_submit", "spec": spec,
                     "cwd": str(tmp_path)})
    assert r["ok"], r
    sid = r["sweep"]["id"] if isinstance(r.get("sweep"), dict) \
        else r["sweep"]
    running, epoch, most = {}, {}, 0  # job -> its config, its epoch
    seen = 0
    deadline = time.monotonic() + 40
    try:
        while time.monotonic() < deadline:
            for m in fake.got[seen:]:
                seen += 1
                if m["type"] == "start":
                    running[m["job"]] = int(m["name"].rsplit("-", 1)[1])
                    epoch[m["job"]] = 0
                elif m["type"] == "stop" and m["job"] in running:
                    del running[m["job"]]
                    fake.send({"type": "exit", "job": m["job"],
                               "state": "cancelled", "reason": m["reason"]})
            most = max(most, len(running))
            for j, cfg in list(running.items()):
                e = epoch[j] = epoch[j] + 1
                if e <= 40:
                    fake.send({"type": "report", "job": j, "iter": e,
                               "loss": 1.0 / e, "cpu_s": 0.01,
                               "samples": 10,
                               "metric": curves[cfg][e - 1]})
            if 2 in running.values() and epoch[[j for j, c in
                                                running.items()
                                                if c == 2][0]] >= 5:
                break  # configuration 2 runs in 1's slot
            time.sleep(0.05)
        assert most <= 2, "%d configurations ran at once" % most
        sent = fake.of_type("suspend")
        assert sent, "POP suspended nothing: %s" % fake.got[-5:]
        w = ctl.request({"type": "sweep_show", "sweep": sid})["sweep"]
        cfg1 = [c for c in w["config_list"] if c["index"] == 1][0]
        assert cfg1["state"] == "ended", cfg1
        # Its slot went to configuration 2, with 1 already told to stop.
        wait_for(lambda: 2 in [int(m["name"].rsplit("-", 1)[1])
                               for m in fake.of_type("start")],
                 what="configuration 2's start")
        assert ctl.job(sent[0]["job"])["state"] == "cancelled"
        assert "could not be suspended" in ctl.read_log()
    finally:
        ctl.request({"type": "sweep_cancel", "sweep": sid})
        for m in fake.got:
            if m["type"] == "start":
                fake.send({"type": "exit", "job": m["job"],
                           "state": "cancelled", "reason": "test over"})
        time.sleep(0.3)
        fake._close()


def test_checkpoint_resume_without_checkpoint_fails_saying_where(cluster):
    ctl, agents, _, _ = start_ctl(cluster)
    jid = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01", node="n1")
    wait_for(lambda: ctl.job(jid)["iter"] >= 3, timeout=30,
             what="3 reports")
    ctl.cli("suspend", "--checkpoint", str(jid))
    job = ctl.wait_state(jid, "stopped", timeout=30)
    assert job["suspended"] == "checkpoint"
    r = ctl.request({"type": "resume", "job": jid})
    assert r["ok"], r
    new = ctl.wait_state(r["job"]["id"], "failed", timeout=15)
    assert "job %d left no checkpoint on node n1" % jid in new["reason"]
    # the controller's own state directory was never looked at
    assert not os.path.exists(os.path.join(ctl.state, "checkpoints",
                                           "job-%d.ckpt" % jid))
