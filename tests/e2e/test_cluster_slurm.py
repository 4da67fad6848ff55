"""slaq cluster up --slurm through the local three-node Slurm cluster
(scripts/slurm-local.sh): 12 jobs (9 slaq-train, 3 restartable
checkpointing jobs) spread over the nodes within each node's cores; one
agent killed with -9 (its restartable jobs resume elsewhere from their
checkpoints within 3 epochs, the others are lost); the controller killed
with -9 (restarted by the batch script, nothing lost); `slaq cluster down`
leaves no process. Skipped, with the reason, where Slurm cannot start."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from conftest import BUILD, SLAQ, wait_for
from slurmlocal import members, start_or_skip

HERE = os.path.dirname(os.path.abspath(__file__))
TRAIN = os.path.join(BUILD, "bin", "slaq-train")
CKPT_JOB = [sys.executable, os.path.join(HERE, "ckpt_job.py"), "100000",
            "0.05"]
EPOCH = 0.5
CORES = 0.6  # per agent: three agents on this machine's 2 CPUs


@pytest.fixture
def slurm():
    c = start_or_skip()
    yield c
    c.down()


def slaq(c, *args, check=True, timeout=120):
    p = subprocess.run([SLAQ] + list(args), env=c.client_env, cwd=c.dir,
                       capture_output=True, text=True, timeout=timeout)
    if check and p.returncode != 0:
        raise AssertionError("slaq %s: %d\n%s%s" % (" ".join(args),
                                                   p.returncode, p.stdout,
                                                   p.stderr))
    return p


def rpc(sock, msg):
    import socket
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sock)
    s.sendall(json.dumps(msg).encode() + b"\n")
    f = s.makefile("rb")
    r = json.loads(f.readline())
    s.close()
    return r


def allocation_procs(root):
    """Live processes of the allocation: the batch script, srun, the
    controller, the agents (all run with SLURM_JOB_ID) and their jobs
    (whose SLAQ_SOCKET is an agent's, in the cluster's directory)."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read()
        except OSError:
            continue
        if not alive(int(pid)):
            continue
        if any(e.startswith(b"SLURM_JOB_ID=") or
               e.startswith(b"SLAQ_SOCKET=" + root.encode()) for e in env) \
                or root.encode() in cmd:
            out.append(int(pid))
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_cluster_up_jobs_faults_down(slurm):
    c = slurm
    cdir = os.path.join(c.dir, "slaq")
    c.client_env.update(SLAQ_CONTROLLER_HOST="127.0.0.1",
                        SLAQ_AGENT_CORES=str(CORES))
    t0 = time.monotonic()
    up = slaq(c, "cluster", "up", "--slurm", "--nodes", "3", "--time", "10",
              "--dir", cdir, "--epoch", str(EPOCH), "--wait", "60")
    assert "up, Slurm job" in up.stdout and "3 nodes" in up.stdout, up.stdout
    assert time.monotonic() - t0 < 60
    sock = os.path.join(cdir, "slaq.sock")
    nodes = rpc(sock, {"type": "nodes"})["nodes"]
    assert sorted(n["name"] for n in nodes) == ["n1", "n2", "n3"]
    assert all(n["cores"] == CORES for n in nodes)

    env = ["--socket", sock]
    plain = [int(slaq(c, "submit", *env, "--", TRAIN, "linreg", "--iters",
                      "1000000", "--quiet").stdout) for _ in range(9)]
    ck = [int(slaq(c, "submit", *env, "--restartable", "--", *CKPT_JOB)
              .stdout) for _ in range(3)]
    ids = plain + ck

    def jobs():
        return {j["id"]: j for j in rpc(sock, {"type": "ls"})["jobs"]}

    wait_for(lambda: all(j["state"] == "running" and j["iter"] >= 1
                         for j in jobs().values()), timeout=90,
             what="12 jobs running and reporting")
    on = [j["node"] for j in jobs().values()]
    assert sorted(set(on)) == ["n1", "n2", "n3"]
    assert all(on.count(n) == 4 for n in ("n1", "n2", "n3")), on
    for _ in range(6):
        for n in rpc(sock, {"type": "nodes"})["nodes"]:
            assert n["allocated"] <= n["cores"] + 1e-9, n
        time.sleep(EPOCH)

    # kill -9 of one agent holding a restartable job.
    victim = jobs()[ck[0]]["node"]
    lock = os.path.join(cdir, "agent-" + victim, "slaqd.lock")
    apid = int(open(lock).read())
    theirs = [i for i, j in jobs().items() if j["node"] == victim]
    reached = {i: jobs()[i]["iter"] for i in theirs}
    os.kill(apid, signal.SIGKILL)
    t_kill = time.monotonic()
    wait_for(lambda: [n for n in rpc(sock, {"type": "nodes"})["nodes"]
                      if n["name"] == victim][0]["state"] == "down",
             timeout=3 * EPOCH + 5, what="the node to go down")
    for i in theirs:
        if i in ck:
            j = wait_for(lambda: (lambda j: j if j["state"] == "running" and
                                  j["node"] not in (None, victim) else None)(
                                      jobs()[i]), timeout=5,
                         what="job %d on another node" % i)
            assert j["restarts"] == 1
        else:
            j = wait_for(lambda: (lambda j: j if j["state"] == "lost"
                                  else None)(jobs()[i]), timeout=5,
                         what="job %d lost" % i)
    assert time.monotonic() - t_kill < 3 * EPOCH + 6
    for i in theirs:
        if i in ck:
            path = os.path.join(cdir, "controller", "checkpoints", str(i),
                                "starts")
            starts = wait_for(lambda: (lambda s: s if len(s) >= 4 else None)(
                open(path).read().split()), timeout=15,
                what="job %d to start again" % i)
            assert starts[:2] == ["start", "0"] and len(starts) == 4
            assert int(starts[3]) >= reached[i] - 5

    # kill -9 of the controller: the batch script starts it again, the
    # agents reconnect, nothing is lost.
    before = jobs()
    def controller_pid():
        try:  # the batch script may be writing it
            return int(open(os.path.join(cdir, "controller.pid")).read())
        except (OSError, ValueError):
            return None
    cpid = controller_pid()
    os.kill(cpid, signal.SIGKILL)
    wait_for(lambda: controller_pid() not in (None, cpid), timeout=15,
             what="the controller to be started again")

    def settled():
        try:
            ns = rpc(sock, {"type": "nodes"})["nodes"]
            return sum(n["connected"] for n in ns) == 2
        except OSError:
            return False
    wait_for(settled, timeout=15, what="agents to reconnect")
    after = jobs()
    for i, j in before.items():
        assert after[i]["state"] == j["state"], (i, j, after[i])
        assert after[i]["node"] == j["node"]
    running = [i for i, j in after.items() if j["state"] == "running"]
    wait_for(lambda: all(jobs()[i]["iter"] > after[i]["iter"]
                         for i in running), timeout=30,
             what="reports after the controller restart")

    pids = allocation_procs(cdir)
    assert len(pids) >= 3 + 11  # agents, jobs (one was lost), controller
    down = slaq(c, "cluster", "down", "--dir", cdir)
    assert "ended" in down.stdout
    wait_for(lambda: not any(alive(p) for p in pids), timeout=10,
             what="every process of the allocation to end")
    assert allocation_procs(cdir) == []
    st = slaq(c, "cluster", "status", "--dir", cdir, check=False)
    assert st.returncode == 1 and "no cluster" in st.stdout
