"""The local Slurm test cluster (scripts/slurm-local.sh) as a test helper:
a private directory and free ports per test, and a skip (not a failure)
with the reason when Slurm cannot start on this machine."""

import os
import shutil
import socket
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPT = os.path.join(ROOT, "scripts", "slurm-local.sh")
NEEDED = ("slurmctld", "slurmd", "srun", "sbatch", "munged")


def _port_free(port):
    s = socket.socket()
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind(("0.0.0.0", port))
        return True
    except OSError:
        return False
    finally:
        s.close()


def _ephemeral_low():
    """The first port the kernel hands out to outgoing connections."""
    try:
        with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
            return int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_port_run(n):
    """A port p with p .. p+n-1 all free (slurmctld and one per slurmd),
    below the kernel's ephemeral range: there, a busy machine's outgoing
    connections (thousands in a test that opens many) take ports at any
    moment, and a run of n free ones could not be found."""
    import random
    top = max(_ephemeral_low(), 12000) - n
    rng = random.Random()
    for _ in range(500):
        base = rng.randrange(10000, top)
        if all(_port_free(base + i) for i in range(n)):
            return base
    raise AssertionError("no run of %d free ports in %d..%d" % (n, 10000,
                                                                top + n))


def members(conf):
    """Live processes whose environment carries SLURM_CONF=conf, plus the
    cluster's munged (its command line names the directory)."""
    directory = os.path.dirname(conf)
    found = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == os.getpid():
            continue
        try:
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                    continue
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/cmdline" % pid, "rb") as f:
                cmd = f.read().replace(b"\0", b" ")
        except OSError:
            continue
        if ("SLURM_CONF=" + conf).encode() in env or \
                (b"munged" in cmd and directory.encode() in cmd):
            found.append((int(pid), cmd.decode(errors="replace")))
    return found


class SlurmLocal:
    def __init__(self, nodes=3, cpus=2):
        self.nodes = nodes
        self.cpus = cpus
        # munged wants every directory above its socket searchable by all:
        # not pytest's 0700 tmp_path.
        self.dir = tempfile.mkdtemp(prefix="slaq-slurm-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.dir = os.path.join(self.dir, "c")
        self.conf = os.path.join(self.dir, "slurm.conf")
        self.port = free_port_run(nodes + 1)
        self.env = dict(os.environ, SLAQ_SLURM_DIR=self.dir,
                        SLAQ_SLURM_PORT=str(self.port),
                        SLAQ_SLURM_NODES=str(nodes),
                        SLAQ_SLURM_CPUS=str(cpus))
        self.env.pop("SLURM_JOB_ID", None)
        self.env.pop("SLURM_JOBID", None)
        self.client_env = dict(self.env, SLURM_CONF=self.conf)
        self.up_seconds = None

    def script(self, *args, timeout=120):
        return subprocess.run([SCRIPT] + list(args), env=self.env,
                              capture_output=True, text=True, timeout=timeout)

    def up(self):
        t0 = time.monotonic()
        p = self.script("up")
        self.up_seconds = time.monotonic() - t0
        return p

    def down(self):
        keep = os.environ.get("SLAQ_SLURM_KEEP")
        if keep and os.path.isdir(self.dir):
            # The cluster's files (logs, state) for a look afterwards; a
            # file still being written may be missing from the copy.
            try:
                shutil.copytree(self.dir, os.path.join(keep, os.path.basename(
                    os.path.dirname(self.dir))), symlinks=True,
                    ignore=shutil.ignore_patterns("*.sock", "*.socket"),
                    ignore_dangling_symlinks=True)
            except (OSError, shutil.Error) as e:
                print("slurmlocal: SLAQ_SLURM_KEEP: %s" % e)
        p = self.script("down")
        shutil.rmtree(os.path.dirname(self.dir), ignore_errors=True)
        return p

    def run(self, *cmd, timeout=60, **kw):
        return subprocess.run(list(cmd), env=self.client_env, cwd=self.dir,
                              capture_output=True, text=True, timeout=timeout,
                              **kw)


def start_or_skip(nodes=3, cpus=2):
    """A running local cluster, or pytest.skip with the reason it cannot
    start here."""
    import pytest  # here: scripts/demo-queues.py uses the rest without it
    missing = [p for p in NEEDED if not shutil.which(p, path=os.environ.get(
        "PATH", "") + ":/usr/sbin:/sbin")]
    if missing:
        pytest.skip("Slurm cannot start here: %s not installed (Debian's "
                    "slurm-wlm and munge, `make deps`)" % ", ".join(missing))
    c = SlurmLocal(nodes, cpus)
    p = c.up()
    if p.returncode != 0:
        c.down()
        pytest.skip("Slurm cannot start here: scripts/slurm-local.sh up "
                    "failed:\n" + p.stderr[-2000:])
    return c
