"""The local Slurm test cluster (scripts/slurm-local.sh): comes up in under
a minute, runs a step on all three nodes, is idempotent, touches nothing
under /etc, and goes down leaving no process and no directory."""

import os
import time

import pytest

from slurmlocal import members, start_or_skip


def etc_snapshot():
    out = {}
    for d in ("/etc/slurm", "/etc/munge", "/run/munge"):
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                st = os.stat(os.path.join(d, name))
                out[os.path.join(d, name)] = (st.st_mtime_ns, st.st_size)
    return out


@pytest.fixture
def cluster():
    before = etc_snapshot()
    c = start_or_skip()
    yield c
    c.down()
    assert etc_snapshot() == before, "files under /etc or /run/munge changed"


def test_up_srun_three_nodes_and_down(cluster):
    c = cluster
    assert c.up_seconds < 60, "up took %.1f s" % c.up_seconds
    st = c.script("status")
    assert st.returncode == 0, st.stdout + st.stderr
    assert "status: up" in st.stdout
    for n in ("n1", "n2", "n3"):
        assert "slurmd-%s: pid" % n in st.stdout

    p = c.run("srun", "-N3", "--ntasks-per-node=1", "bash", "-c",
              "echo $SLURMD_NODENAME $SLURM_NODEID")
    assert p.returncode == 0, p.stderr
    assert sorted(p.stdout.split("\n")[:-1]) == ["n1 0", "n2 1", "n3 2"]

    # Idempotent: a second up leaves the running daemons alone (their pid
    # files; the step's slurmstepd may still be leaving).
    def daemons():
        run = os.path.join(c.dir, "run")
        return {f: open(os.path.join(run, f)).read().strip()
                for f in sorted(os.listdir(run))}
    pids = daemons()
    assert len(pids) == 5  # munged, slurmctld, three slurmd
    again = c.up()
    assert again.returncode == 0, again.stderr
    assert "already up" in again.stderr
    assert daemons() == pids

    # A job still running at down is cancelled, its tasks too.
    c.run("sbatch", "-N3", "-o", "/dev/null", "--wrap",
          "srun -N3 --ntasks-per-node=1 sleep 300")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if any("sleep 300" in cmd for _, cmd in members(c.conf)):
            break
        time.sleep(0.1)
    else:
        pytest.fail("the batch job's tasks never started")

    down = c.script("down")
    assert down.returncode == 0, down.stderr
    assert members(c.conf) == [], "processes left after down"
    assert not os.path.exists(c.dir)
    st = c.script("status")
    assert st.returncode == 3 and "status: down" in st.stdout
    # down again: nothing to do, still fine
    assert c.script("down").returncode == 0


def test_munged_runs_as_the_munge_user(cluster):
    if os.getuid() != 0:
        pytest.skip("munged runs as the caller when not started by root")
    pid = int(open(os.path.join(cluster.dir, "run", "munged.pid")).read())
    with open("/proc/%d/status" % pid) as f:
        uid = [line.split()[1] for line in f if line.startswith("Uid:")][0]
    import pwd
    assert pwd.getpwuid(int(uid)).pw_name == "munge"
    assert pwd.getpwuid(os.stat(os.path.join(cluster.dir, "munge"))
                        .st_uid).pw_name == "munge"


def test_bad_settings_are_refused(tmp_path):
    import subprocess
    from slurmlocal import SCRIPT
    p = subprocess.run([SCRIPT, "up"], capture_output=True, text=True,
                       env=dict(os.environ, SLAQ_SLURM_DIR="relative/dir"))
    assert p.returncode == 1 and "absolute path" in p.stderr
    p = subprocess.run([SCRIPT, "up"], capture_output=True, text=True,
                       env=dict(os.environ, SLAQ_SLURM_DIR=str(tmp_path),
                                SLAQ_SLURM_NODES="three"))
    assert p.returncode == 1 and "SLAQ_SLURM_NODES" in p.stderr
    p = subprocess.run([SCRIPT, "sideways"], capture_output=True, text=True)
    assert p.returncode == 2 and "usage" in p.stderr.lower()
