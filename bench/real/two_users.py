#!/usr/bin/env python3
"""two_users.py — shares between users on real jobs: one user's four
PyTorch jobs, another's one, under no scheduler, slaqd with fair-share
off and slaqd with fair-share on (docs/slaqd.md, "SHARES BETWEEN USERS").

Run as root: it makes two users and a group for the run (removed at its
end) and runs slaqd as root with the socket in that group, each user
submitting as themselves. The jobs are one of bench/real/jobs' PyTorch
loops written as users write them (--job: u_torch_default.py, the
framework's default threads and a report every mini-batch, following no
advice; or u_torch_cores.py, threads from cores()), on Fashion-MNIST; the
heavy user's four start together, the light user's one --delay seconds
later. Printed per mode: each user's mean wall time, the light user's
mean cores while it ran (slaqd's allocations), the makespan, and each
job's CPU-seconds, the whole process's (imports and start-up included,
read from the kernel's rusage by a small wrapper in every mode).

    sudo python3 bench/real/two_users.py --build build --reps 1
"""

import argparse
import json
import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def run(*cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, text=True,
                          timeout=120, **kw)


def rpc(sock, msg):
    with socket.socket(socket.AF_UNIX) as s:
        s.settimeout(30)
        s.connect(sock)
        s.sendall((json.dumps(msg) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    return json.loads(buf)


class Users:
    """A group and two users made for the run, removed by remove()."""

    def __init__(self):
        tag = secrets.token_hex(3)
        self.group = "slqg" + tag
        self.names = {"heavy": "slqh" + tag, "light": "slql" + tag}
        run("groupadd", self.group)
        for n in self.names.values():
            run("useradd", "-M", "-d", "/tmp", "-s", "/bin/sh", "-G",
                self.group, n)

    def remove(self):
        for n in self.names.values():
            subprocess.run(["userdel", "-f", n], capture_output=True)
        subprocess.run(["groupdel", self.group], capture_output=True)


def as_user(name, argv, env):
    return ["setpriv", "--reuid=" + name, "--regid=" + name,
            "--init-groups", "--", "env"] + [
                "%s=%s" % kv for kv in env.items()] + argv


# Runs a job as its child and writes the child's CPU-seconds (user +
# system, from the kernel) to the file named first: the same count with
# or without slaqd.
CPU_WRAPPER = """import resource, subprocess, sys
rc = subprocess.call(sys.argv[2:])
u = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(sys.argv[1], "w") as f:
    f.write("%.3f\\n" % (u.ru_utime + u.ru_stime))
sys.exit(rc)
"""


def cpu_of(work, tag):
    with open(os.path.join(work, "cpu", tag)) as f:
        return float(f.read())


def one(mode, users, work, build, delay, epochs, jobfile):
    """One run; returns {user: [job dicts]}, the light job's cores and
    the makespan."""
    env = {"HOME": "/tmp", "PYTHONPATH": os.path.join(work, "py") + ":" +
           os.path.join(work, "jobs"), "SLAQ_BENCH_ROWS": "20000",
           "PATH": "/usr/bin:/bin"}
    def job(who, k):
        return ["/usr/bin/python3", os.path.join(work, "cpu.py"),
                os.path.join(work, "cpu", "%s-%s-%d" % (mode, who, k)),
                "/usr/bin/python3", os.path.join(work, "jobs", jobfile),
                "--epochs", str(epochs)]
    state = os.path.join(work, "state-" + mode)
    os.makedirs(state)
    os.chmod(state, 0o755)
    sock = os.path.join(state, "slaq.sock")
    t0 = time.time()
    if mode == "plain":
        procs = {}
        for k in range(4):
            procs[("heavy", k)] = (time.time(), subprocess.Popen(
                as_user(users.names["heavy"], job("heavy", k), env),
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(delay)
        procs[("light", 0)] = (time.time(), subprocess.Popen(
            as_user(users.names["light"], job("light", 0), env),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        out = {"heavy": [], "light": []}
        left = dict(procs)
        while left:
            for key, (start, p) in list(left.items()):
                if p.poll() is not None:
                    out[key[0]].append({"wall": time.time() - start,
                                        "cpu": cpu_of(work, "%s-%s-%d" % (
                                            mode, key[0], key[1]))})
                    del left[key]
            time.sleep(0.1)
        return out, None, time.time() - t0
    slaqd = subprocess.Popen(
        [os.path.join(build, "bin", "slaqd"), "--state-dir", state,
         "--socket", sock, "--socket-group", users.group, "--http", "off",
         "--fair-share", "on" if mode == "shares" else "off"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        slaq = os.path.join(work, "slaq")

        def submit(who, k):
            p = subprocess.run(as_user(users.names[who], [
                slaq, "submit", "--socket", sock, "--name", who, "--"] +
                job(who, k), env), capture_output=True, text=True,
                timeout=60)
            if p.returncode:
                sys.exit("two_users: submit as %s: %s" % (who, p.stderr))
            return int(p.stdout)

        ids = {"heavy": [submit("heavy", k) for k in range(4)]}
        time.sleep(delay)
        ids["light"] = [submit("light", 0)]
        while any(j["state"] in ("running", "stopping", "pending")
                  for j in rpc(sock, {"type": "ls"})["jobs"]):
            time.sleep(0.5)
        out, light_cores = {}, None
        for who, js in ids.items():
            out[who] = []
            for k, i in enumerate(js):
                j = rpc(sock, {"type": "show", "job": i})["job"]
                if j["state"] != "done":
                    sys.exit("two_users: job %d of %s ended %s (%s): see "
                             "%s" % (i, who, j["state"], j.get("reason"),
                                     state))
                out[who].append({"wall": j["ended"] - j["started"],
                                 "cpu": cpu_of(work, "%s-%s-%d" % (
                                     mode, who, k))})
                if who == "light":
                    a = j["allocations"]  # [t, cores, epoch], changes
                    span = j["ended"] - j["started"]
                    area = sum(c * (min(a[k + 1][0] if k + 1 < len(a)
                                        else j["ended"], j["ended"]) - t)
                               for k, (t, c, _) in enumerate(a))
                    light_cores = area / span if span > 0 else None
        return out, light_cores, time.time() - t0
    finally:
        slaqd.terminate()
        slaqd.wait(timeout=30)


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--delay", type=float, default=3.0,
                    help="seconds between the heavy and the light user's "
                         "submits (3)")
    ap.add_argument("--epochs", type=int, default=2,
                    help="each job's epochs of 20,000 images (2)")
    ap.add_argument("--modes", default="plain,noshares,shares")
    ap.add_argument("--job", default="u_torch_default.py",
                    choices=["u_torch_default.py", "u_torch_cores.py"],
                    help="the PyTorch loop each job runs "
                         "(u_torch_default.py)")
    a = ap.parse_args()
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        ap.error("run as root with setpriv: it makes two users")
    modes = a.modes.split(",")
    bad = [m for m in modes if m not in ("plain", "noshares", "shares")]
    if bad:
        ap.error("unknown mode %s (expected plain, noshares, shares)"
                 % bad[0])
    users = Users()
    work = tempfile.mkdtemp(prefix="slaq-2u-", dir="/tmp")
    try:
        os.chmod(work, 0o755)
        shutil.copytree(os.path.join(ROOT, "bench", "real", "jobs"),
                        os.path.join(work, "jobs"))
        shutil.copytree(os.path.join(ROOT, "python", "slaq"),
                        os.path.join(work, "py", "slaq"))
        shutil.copy(os.path.join(a.build, "bin", "slaq"),
                    os.path.join(work, "slaq"))
        with open(os.path.join(work, "cpu.py"), "w") as f:
            f.write(CPU_WRAPPER)
        os.makedirs(os.path.join(work, "cpu"))
        os.chmod(os.path.join(work, "cpu"), 0o1777)
        subprocess.run(["chmod", "-R", "a+rX", work], check=True)
        rows = []
        for rep in range(a.reps):
            for m in modes:
                print("rep %d: %s" % (rep + 1, m), file=sys.stderr,
                      flush=True)
                out, lc, span = one(m, users, work, a.build, a.delay,
                                    a.epochs, a.job)
                shutil.rmtree(os.path.join(work, "state-" + m))
                for f in os.listdir(os.path.join(work, "cpu")):
                    os.unlink(os.path.join(work, "cpu", f))
                rows.append((m, out, lc, span))
        print("%s, %d epochs a job, %d rep(s)" % (a.job, a.epochs, a.reps))
        print("%-9s %10s %10s %12s %9s %10s" % (
            "mode", "heavy_wall", "light_wall", "light_cores", "makespan",
            "cpu/job"))
        for m in modes:
            rs = [r for r in rows if r[0] == m]
            hw = sum(sum(j["wall"] for j in r[1]["heavy"]) / 4
                     for r in rs) / len(rs)
            lw = sum(r[1]["light"][0]["wall"] for r in rs) / len(rs)
            lcs = [r[2] for r in rs if r[2] is not None]
            cpr = [j["cpu"] for r in rs for js in r[1].values() for j in js]
            print("%-9s %9.1fs %9.1fs %12s %8.1fs %10s" % (
                m, hw, lw, "%.2f" % (sum(lcs) / len(lcs)) if lcs else "-",
                sum(r[3] for r in rs) / len(rs),
                "%.1fs" % (sum(cpr) / len(cpr))))
    finally:
        if not os.environ.get("SLAQ_KEEP"):
            shutil.rmtree(work, ignore_errors=True)
        users.remove()


if __name__ == "__main__":
    main()
