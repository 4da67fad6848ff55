"""A lost agent under Slurm comes back (contrib/slurm/slaq-cluster.sbatch):
on the local three-node Slurm cluster, an agent killed with -9 is started
again by the batch script as a new job step on the same node once the
controller has called the node down (its job is lost, its process
stopped), and its node registers again and runs jobs; with SLAQ_AGENT_RETRIES=1 the second kill
in a row is not followed by a restart, and the batch script says why.
Skipped, with the reason, where Slurm cannot start."""

import os
import signal
import subprocess
import time

import pytest

from conftest import BUILD, SLAQ, wait_for
from slaq.control import request as control_request
from slurmlocal import start_or_skip

EPOCH = 0.5


@pytest.fixture
def slurm():
    c = start_or_skip()
    yield c
    c.down()


def slaq(c, *args, timeout=120):
    p = subprocess.run([SLAQ] + list(args), env=c.client_env, cwd=c.dir,
                       capture_output=True, text=True, timeout=timeout)
    assert p.returncode == 0, "slaq %s: %d\n%s%s" % (
        " ".join(args), p.returncode, p.stdout, p.stderr)
    return p


def step_of(pid):
    """(SLURM_JOB_ID, SLURM_STEP_ID, SLURMD_NODENAME) of a live process,
    from its environment; None if it is gone or a zombie."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return None
        with open("/proc/%d/environ" % pid, "rb") as f:
            env = dict(e.split(b"=", 1) for e in f.read().split(b"\0")
                       if b"=" in e)
    except OSError:
        return None
    return tuple(env.get(k, b"").decode() for k in (
        b"SLURM_JOB_ID", b"SLURM_STEP_ID", b"SLURMD_NODENAME"))


def test_a_killed_agent_comes_back_as_a_new_step(slurm):
    c = slurm
    cdir = os.path.join(c.dir, "slaq")
    c.client_env.update(SLAQ_CONTROLLER_HOST="127.0.0.1",
                        SLAQ_AGENT_CORES="1", SLAQ_AGENT_ENFORCE="signal",
                        SLAQ_AGENT_RETRIES="1")
    slaq(c, "cluster", "up", "--slurm", "--nodes", "3", "--time", "10",
         "--dir", cdir, "--epoch", str(EPOCH), "--wait", "60")
    sock = os.path.join(cdir, "slaq.sock")
    jobid = open(os.path.join(cdir, "jobid")).read().strip()
    lock = os.path.join(cdir, "agent-n2", "slaqd.lock")

    def agent():
        try:
            pid = int(open(lock).read())
        except (OSError, ValueError):
            return None
        s = step_of(pid)
        return (pid, s) if s else None

    def n2():
        return [n for n in control_request(sock, {"type": "nodes"})["nodes"]
                if n["name"] == "n2"][0]

    old_pid, (job, old_step, node) = agent()
    assert (job, node) == (jobid, "n2") and old_step != ""

    def show(i):
        return control_request(sock, {"type": "show", "job": i})["job"]

    def running(i):
        j = show(i)
        return j if j["state"] == "running" and j["pid"] else None
    first = int(slaq(c, "submit", "--socket", sock, "--node", "n2", "--",
                     "sleep", "600").stdout)
    first_pid = wait_for(lambda: running(first), timeout=20,
                         what="a job on n2")["pid"]
    os.kill(old_pid, signal.SIGKILL)
    t_kill = time.monotonic()
    # the node is called down before its new agent registers: its job
    # follows the rules for a lost node
    wait_for(lambda: n2()["state"] == "down", timeout=3 * EPOCH + 10,
             what="n2 to go down")
    wait_for(lambda: show(first)["state"] == "lost", timeout=10,
             what="n2's job to be lost")

    # a new agent on n2: another process, a new step of the same job
    pid, (job, step, node) = wait_for(
        lambda: (lambda a: a if a and a[0] != old_pid else None)(agent()),
        timeout=30, what="a new agent on n2")
    assert (job, node) == (jobid, "n2"), (job, node)
    assert step != old_step, (step, old_step)
    wait_for(lambda: n2()["state"] == "up" and n2()["connected"],
             timeout=20, what="n2 to register again")
    back = time.monotonic() - t_kill
    assert back < 20, back
    print("n2 back %.1f s after its agent was killed" % back)
    # the lost job's process, if it outlived its agent, is stopped there
    wait_for(lambda: step_of(first_pid) is None, timeout=20,
             what="the lost job's process to end")
    assert show(first)["state"] == "lost"
    out = open(os.path.join(cdir, "slurm-%s.out" % jobid)).read()
    assert "the agent on n2 ended" in out and "restart 1 of 1" in out, out

    # the node runs jobs again, started by the new agent
    jid = int(slaq(c, "submit", "--socket", sock, "--node", "n2", "--",
                   "sleep", "60").stdout)
    j = wait_for(lambda: running(jid), timeout=20, what="a job on n2")
    assert j["node"] == "n2"
    assert step_of(j["pid"]) is not None
    assert os.path.exists(os.path.join(cdir, "agent-n2", "jobs", str(jid)))

    # the bound: a second end in a row is not followed by a restart
    os.kill(pid, signal.SIGKILL)
    wait_for(lambda: n2()["state"] == "down", timeout=3 * EPOCH + 10,
             what="n2 to go down")
    wait_for(lambda: "not starting it again" in open(os.path.join(
        cdir, "slurm-%s.out" % jobid)).read(), timeout=15,
        what="the batch script to give up on n2")
    time.sleep(3)
    assert agent() is None and n2()["state"] == "down"
    # the other nodes are untouched
    others = [n for n in control_request(sock, {"type": "nodes"})["nodes"]
              if n["name"] != "n2"]
    assert all(n["state"] == "up" for n in others), others

    down = slaq(c, "cluster", "down", "--dir", cdir)
    assert "ended" in down.stdout
