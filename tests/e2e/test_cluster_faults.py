"""Faults of a node's agent, seen from the controller.

An agent that dies and comes back (started again by hand or by a
supervisor) with its jobs gone (--end-jobs-at-exit: the kernel ended them)
has its restartable jobs started again, not recorded as lost.

Fenced restarts: each start of a job is a generation; when a restartable
job starts again after its node was lost, an instance of the earlier
generation that still runs there (the node was only cut off) can neither
report nor write the checkpoint the new one reads (docs/cluster-runtime.md,
"Generations (fenced restarts)").

Messages that went nowhere: a stop asked while the agent was away is sent
again when it is back; a start sent again for a run that ended while the
controller restarted is answered with that run, not run twice."""

import os
import signal
import socket
import sqlite3
import sys
import time

import pytest

from agentlink import ControllerLink, node_key_args
from conftest import free_port, wait_for
from test_cluster_agents import CKPT_JOB, EPOCH, cluster, nodes_of  # noqa: F401


def test_agent_back_without_its_jobs_restarts_restartable_ones(
        cluster, daemon_factory, tmp_path):
    ctl, _ = cluster(nodes=())
    m = cluster.made

    def agent():
        return daemon_factory("--agent", "--join", "127.0.0.1:%d" % m["port"],
                              *node_key_args(tmp_path, m["token"], "n1"),
                              "--cores", "2",
                              "--enforce", "signal", "--end-jobs-at-exit",
                              state=tmp_path / "agent-n1")

    a = agent()
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)] == ["up"],
             what="n1 to join")
    ck = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB).stdout)
    wait_for(lambda: ctl.job(ck)["iter"] >= 10, timeout=20,
             what="10 reports")
    pid = a.job(ck)["pid"]
    a.kill9()
    # The kernel ends its job with it (PR_SET_PDEATHSIG).
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
             open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
             == "Z", what="the job to end with its agent")
    agent()  # back before its node is called down
    j = wait_for(lambda: (lambda j: j if j.get("restarts") == 1 and
                          j["state"] == "running" else None)(ctl.job(ck)),
                 timeout=10, what="the job started again")
    assert j["node"] == "n1"
    assert "lost" not in [x["state"] for x in ctl.jobs()]
    reached = j["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 3, timeout=20,
             what="its reports after the restart")
    assert [n["state"] for n in nodes_of(ctl)] == ["up"]


FENCE_JOB = [sys.executable, os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "fence_job.py")]


def ckpt_of(pid):
    """The checkpoint the job process pid reads and writes: "ITER PID"."""
    with open("/proc/%d/environ" % pid, "rb") as f:
        env = dict(e.split(b"=", 1) for e in f.read().split(b"\0") if b"=" in e)
    return os.path.join(env[b"SLAQ_CHECKPOINT_DIR"].decode(), "ckpt")


def read_ckpt(path):
    with open(path) as f:
        it, pid = f.read().split()
    return int(it), int(pid)


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_old_generation_back_cannot_write_the_new_ones_checkpoint(cluster):
    """The agent of the node running a restartable job stops (SIGSTOP: its
    job runs on, unseen); the node goes down and the job starts again on
    the other node, from its checkpoint. The first instance keeps saving
    its checkpoint, and saves once more when its node comes back and it is
    told to stop: none of that reaches the checkpoint the second instance
    reads and writes, and nothing it sends counts."""
    ctl, agents = cluster(nodes=("n1", "n2"))
    ck = int(ctl.cli("submit", "--restartable", "--", *FENCE_JOB).stdout)
    home = ctl.wait_state(ck, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    wait_for(lambda: ctl.job(ck)["iter"] >= 10, timeout=20,
             what="10 reports")
    old = agents[home].job(ck)["pid"]
    agents[home].proc.send_signal(signal.SIGSTOP)
    try:
        moved = wait_for(lambda: (lambda j: j if j["node"] == other and
                                  j["state"] == "running" else None)(
                                      ctl.job(ck)), timeout=10,
                         what="the job started again on the other node")
        assert moved["restarts"] == 1
        new = wait_for(lambda: agents[other].job(ck)["pid"],
                       what="the second instance's pid")
        path = ckpt_of(new)
        wait_for(lambda: read_ckpt(path)[1] == new, timeout=10,
                 what="the second instance's first checkpoint")
        assert alive(old)  # the first one runs on, unseen
        t_end = time.monotonic() + 1.5
        while time.monotonic() < t_end:
            assert read_ckpt(path)[1] == new, "the first instance wrote it"
            time.sleep(0.01)
    finally:
        agents[home].proc.send_signal(signal.SIGCONT)
    # Its node back: the first instance is told to stop, saves on its way
    # out, and ends; the job runs on where it was started again.
    wait_for(lambda: not alive(old), timeout=15,
             what="the first instance to end")
    it, pid = read_ckpt(path)
    assert pid == new
    j = ctl.job(ck)
    assert j["state"] == "running" and j["node"] == other
    reached = j["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 5, timeout=20,
             what="the second instance's reports")
    assert read_ckpt(path)[1] == new


@pytest.mark.parametrize("linger", [0, 5])
def test_old_node_back_runs_the_new_generation_not_the_old(cluster, linger):
    """One node: its agent stops (SIGSTOP), the node goes down, the
    restartable job waits; the node comes back with the job's first
    instance still running there. That instance is ended, the second
    generation starts there from the last checkpoint the first completed
    before the fence, and only the second one's reports and checkpoints
    count. With linger the first instance is still stopping when the second
    generation's start arrives: the agent ends it at once (SIGKILL) and
    starts the second (before, it answered the start with the first
    one's pid, and the job ended with it)."""
    ctl, agents = cluster(nodes=("n1",))
    ck = int(ctl.cli("submit", "--restartable", "--", *FENCE_JOB,
                     "--linger", str(linger)).stdout)
    ctl.wait_state(ck, "running")
    wait_for(lambda: ctl.job(ck)["iter"] >= 10, timeout=20,
             what="10 reports")
    old = agents["n1"].job(ck)["pid"]
    agents["n1"].proc.send_signal(signal.SIGSTOP)
    try:
        wait_for(lambda: ctl.job(ck)["state"] == "pending", timeout=10,
                 what="the job to wait for a node")
        assert alive(old)
        time.sleep(0.5)  # the first instance runs on, unseen
    finally:
        agents["n1"].proc.send_signal(signal.SIGCONT)
    j = wait_for(lambda: (lambda j: j if j["state"] == "running" and
                          j.get("restarts") == 1 else None)(ctl.job(ck)),
                 timeout=10, what="the job running again")
    new = wait_for(lambda: (lambda p: p if p and p != old else None)(
        agents["n1"].job(ck)["pid"]), timeout=10,
        what="a second instance on n1")
    wait_for(lambda: not alive(old), timeout=10,
             what="the first instance to end")
    path = ckpt_of(new)
    assert "gen-2" in path
    wait_for(lambda: read_ckpt(path)[1] == new, timeout=10,
             what="the second instance's checkpoint")
    reached = ctl.job(ck)["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 5, timeout=20,
             what="the second instance's reports")
    assert ctl.job(ck)["state"] == "running"
    assert read_ckpt(path)[1] == new
    assert j["node"] == "n1"


PYJOB = [sys.executable, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "soak", "pyjob.py")]


def acked_iters(path, job):
    """The iterations a job's client logged as acknowledged."""
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {int(i) for j, i in (line.split() for line in f)
                if int(j) == job}


def test_reports_an_agent_acknowledged_after_its_node_was_lost_are_kept(
        cluster, daemon_factory, tmp_path):
    """The agent of a job's node is killed with -9; the controller calls
    the node down and the job lost; the agent comes back, first without a
    way to its controller, and takes and acknowledges the job's reports
    meanwhile; then it joins. Every report it acknowledged reaches the
    controller's database (issue: the controller counted the job as lost
    and dropped them, though the job's client had been told they were
    safe; a soak lost 18 of 963)."""
    ctl, agents = cluster(nodes=("n1",))
    m = cluster.made
    log = tmp_path / "acks"
    jid = int(ctl.cli("submit", "--", *PYJOB, "400", "0.02",
                      env={"SLAQ_CLIENT_ACK_LOG": str(log)}).stdout)
    wait_for(lambda: ctl.job(jid)["reports"] >= 20, timeout=30,
             what="20 reports")
    agents["n1"].kill9()
    wait_for(lambda: ctl.job(jid)["state"] == "lost", timeout=15,
             what="the job lost with its node")
    had = ctl.job(jid)["reports"]
    # The agent again, its controller out of reach: it serves the job.
    away = daemon_factory("--agent", "--join", "127.0.0.1:1",
                          *node_key_args(tmp_path, m["token"], "n1"),
                          "--cores", "2", "--enforce",
                          "signal", state=tmp_path / "agent-n1")
    wait_for(lambda: len(acked_iters(log, jid)) > had + 20, timeout=30,
             what="reports acknowledged by the agent")
    away.kill9()
    m["start_agent"]("n1")
    acked = acked_iters(log, jid)
    assert max(acked) >= had + 20

    def stored():
        db = sqlite3.connect(os.path.join(ctl.state, "state.db"))
        got = {r[0] for r in db.execute(
            "SELECT iter FROM reports WHERE job = ?", (jid,))}
        db.close()
        return got

    wait_for(lambda: acked <= stored(), timeout=20,
             what="every acknowledged report in the controller's database")
    assert ctl.job(jid)["state"] == "lost"
    assert ctl.job(jid)["iter"] >= max(acked)


def test_a_job_placed_while_its_agent_reconnects_is_started_not_lost(
        cluster):
    """The agent of the only node is killed with -9 and a job is submitted
    before the node is called down: the controller places it there, but
    its start goes nowhere. When the agent registers again the start is
    sent then (issue: the welcome counted the job as the agent's, the
    agent answered that it did not know it, and the job was lost "state
    directory lost"; a soak lost 10 of 67 jobs so)."""
    ctl, agents = cluster(nodes=("n1",), extra=("--epoch", "3"))
    agents["n1"].kill9()
    jid = int(ctl.cli("submit", "--", *PYJOB, "50", "0.02").stdout)
    assert ctl.job(jid)["state"] == "running"
    assert ctl.job(jid)["node"] == "n1"
    cluster.made["start_agent"]("n1")
    job = ctl.wait_state(jid, ("done", "lost", "failed"), timeout=60)
    assert job["state"] == "done", job
    assert job["reports"] == 50, job


@pytest.mark.parametrize("now", [False, True])
def test_a_job_cancelled_while_its_agent_is_away_is_stopped_when_it_is_back(
        cluster, now):
    """The agent of the only node is killed with -9 and its job (which
    runs on, nobody's child) is cancelled before the node is called down:
    the stop goes nowhere. When the agent is back and re-adopts the job,
    the stop is sent again and the job ends cancelled (it ran on to its
    end before, stopping all along, with the sweep slot it held; a soak
    saw a sweep run 3 configurations on 2 slots)."""
    ctl, agents = cluster(nodes=("n1",), extra=("--epoch", "3"))
    jid = int(ctl.cli("submit", "--", *PYJOB, "100000", "0.02").stdout)
    wait_for(lambda: ctl.job(jid)["iter"] >= 5, timeout=20,
             what="5 reports")
    pid = agents["n1"].job(jid)["pid"]
    agents["n1"].kill9()
    ctl.cli("cancel", *(["--now"] if now else []), str(jid))
    assert ctl.job(jid)["state"] == "stopping"
    time.sleep(0.5)
    assert alive(pid)  # it heard nothing
    cluster.made["start_agent"]("n1")
    job = ctl.wait_state(jid, ("cancelled", "lost", "done"), timeout=30)
    assert job["state"] == "cancelled", job
    wait_for(lambda: not alive(pid), timeout=10, what="its process to end")
    assert [n["state"] for n in nodes_of(ctl)] == ["up"]


def test_a_start_repeated_after_the_job_ended_is_answered_not_run_again(
        daemon_factory, tmp_path):
    """A controller that restarted before it read a job's "started" (its
    job record has no pid) sends the start again when the agent registers,
    taking it for one that went nowhere; the job meanwhile ran and ended
    there. The agent answers with the job's reports and exit and does not
    run it again (it did, deleting the first run's record and reports: a
    soak under load lost 13 acknowledged reports of a job so). A fake
    controller (agentlink.ControllerLink) plays both controllers."""
    token = tmp_path / "agent.token"
    token.write_text("agent-secret-token-1\n")
    runs = tmp_path / "runs"
    port = free_port()
    lsn = socket.socket()
    lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsn.bind(("127.0.0.1", port))
    lsn.listen(1)
    lsn.settimeout(30)
    daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                   *node_key_args(tmp_path, token, "n1"),
                   "--cores", "2", "--enforce", "signal",
                   state=tmp_path / "agent")
    start = {"type": "start", "job": 1, "secret": "%064x" % 1, "gen": 1,
             "name": "once", "cwd": str(tmp_path),
             "cmd": ["sh", "-c", "echo run >> %s && exec %s %s 5 0.01"
                     % (runs, sys.executable, PYJOB[1])]}

    def controller():
        conn, _ = lsn.accept()
        conn.settimeout(30)
        link = ControllerLink(conn, "agent-secret-token-1")
        reg = link.recv()
        assert reg["type"] == "register", reg
        link.send({"type": "welcome", "node": "n1", "epoch_s": 0.2,
                   "grace_s": 1, "jobs": {}})
        return conn, link, reg

    def until_exit(link):
        got = []
        while not got or got[-1]["type"] != "exit":
            m = link.recv()
            assert m is not None
            if m.get("job") == 1:
                got.append(m)
        return got

    try:
        conn, link, _ = controller()
        link.send(start)
        first = until_exit(link)
        assert first[0]["type"] == "started", first
        assert first[-1]["state"] == "done", first
        # The controller restarts, the job's run forgotten.
        conn.shutdown(socket.SHUT_RDWR)
        conn.close()
        conn, link, reg = controller()
        assert [j for j in reg["jobs"] if j["job"] == 1] == [], reg
        link.send(start)
        again = until_exit(link)
        conn.shutdown(socket.SHUT_RDWR)
        conn.close()
    finally:
        lsn.close()
    assert runs.read_text() == "run\n"  # it ran once
    assert again[-1]["state"] == "done" and again[-1]["status"] == 0, again
    assert sorted(m["iter"] for m in again if m["type"] == "report") == \
        sorted(m["iter"] for m in first if m["type"] == "report") == \
        list(range(5))
