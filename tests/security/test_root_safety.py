"""Attacks by an ordinary local user on slaqd run as root (docs/security.md,
"Threat model"): two users made for each test, alice (the attacker, unless
said otherwise) and bob, both in the socket's group; slaqd as root with
--socket-group and, where the attack needs it, --tcp.

Each test is an attack that once worked; each asserts that it fails now:
  - slaqd's TCP token reaching a job (a raw submit, a sweep or a resume
    without the submitter's environment got slaqd's own);
  - a failed submit leaving its log directory for the next job of the same
    id, whose logs the attacker then redirected (to her file, to a path of
    root's choosing, to a FIFO that hung slaqd);
  - a FIFO planted in a new job's log directory before the job opened its
    logs, hanging slaqd;
  - paths resolved as root: a working directory's target, or whether a
    root-only file exists, told in an error; a checkpoint made a link to a
    root-only file whose size slaqd published;
  - the slaq command sending a submit (with the whole environment) to a
    socket another user put in ./var of a shared directory.
"""

import json
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from conftest import SLAQ, BUILD, free_port, wait_for
from test_multiuser import needs_root, people, proc_env  # noqa: F401

PY = "/usr/bin/python3"

# A raw control request as the calling user: no client library, no
# environment of its own (what a user could type into socat).
RAW = r"""
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(30)
s.connect(sys.argv[1])
s.sendall(sys.argv[2].encode() + b"\n")
buf = b""
while b"\n" not in buf:
    data = s.recv(65536)
    if not data:
        break
    buf += data
print(buf.decode().strip())
"""


@pytest.fixture
def shared():
    """A directory every user may enter (mode 0755, root's), with a copy
    of the slaq command in it."""
    path = tempfile.mkdtemp(prefix="slaq-sec-", dir="/tmp")
    os.chmod(path, 0o755)
    shutil.copy(SLAQ, os.path.join(path, "slaq"))
    os.chmod(os.path.join(path, "slaq"), 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def clean_env(people, who, extra=None):
    """A login-like environment of user `who`: nothing of root's (no
    SLAQ_TOKEN, no SLAQ_SOCKET)."""
    pw = people.pw(who)
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": pw.pw_dir,
           "USER": pw.pw_name, "LOGNAME": pw.pw_name, "LANG": "C.UTF-8"}
    env.update(extra or {})
    return env


def run_as(people, who, *argv, cwd=None, env=None, timeout=60, **kw):
    pw = people.pw(who)
    return subprocess.run(
        ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
         "--init-groups", "--"] + list(argv), cwd=cwd or pw.pw_dir,
        env=clean_env(people, who, env), capture_output=True, text=True,
        timeout=timeout, **kw)


def popen_as(people, who, *argv, cwd=None, **kw):
    pw = people.pw(who)
    return subprocess.Popen(
        ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
         "--init-groups", "--"] + list(argv), cwd=cwd or pw.pw_dir,
        env=clean_env(people, who), **kw)


def raw_as(people, who, sock, msg):
    """One control request sent by user `who` as raw JSON; the reply."""
    p = run_as(people, who, PY, "-c", RAW, sock, json.dumps(msg))
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def slaq_as(people, who, shared, sock, *args, cwd=None, env=None):
    return run_as(people, who, os.path.join(shared, "slaq"), args[0],
                  "--socket", sock, *args[1:], cwd=cwd, env=env)


def start(daemon_factory, people, shared, *args):
    sock = os.path.join(shared, "slaq.sock")
    return daemon_factory("--socket", sock, "--socket-group",
                          people.groups["sock"], *args,
                          state=os.path.join(shared, "state"))


def log_of(d, jid, name="stdout.log"):
    with open(os.path.join(d.state, "jobs", str(jid), name)) as f:
        return f.read()


def env_lines(text):
    return dict(l.split("=", 1) for l in text.splitlines() if "=" in l)


@needs_root
def test_slaqds_token_reaches_no_job(people, shared, daemon_factory,
                                     monkeypatch, tmp_path):
    """slaqd given its TCP token in SLAQ_TOKEN: no job sees it, whether its
    request carried an environment or not (a raw submit, a sweep's
    configuration, a resumed job). Before: a raw submit without "env"
    printed SLAQ_TOKEN=..., and that token ran `id` as root over TCP."""
    token = "tok-" + os.urandom(12).hex()
    monkeypatch.setenv("SLAQ_TOKEN", token)
    d = start(daemon_factory, people, shared, "--tcp",
              "127.0.0.1:%d" % free_port())
    alice = people.pw("alice")
    sock = d.sock

    # A raw submit without "env", as alice: a login's environment.
    r = raw_as(people, "alice", sock, {"type": "submit", "cmd": [
        "/bin/sh", "-c", "env"], "cwd": alice.pw_dir})
    assert r["ok"], r
    d.wait_state(r["job"], "done")
    out = log_of(d, r["job"])
    assert token not in out and "SLAQ_TOKEN" not in out, out
    env = env_lines(out)
    assert env["PATH"] == "/usr/local/bin:/usr/bin:/bin", env
    assert env["HOME"] == alice.pw_dir and env["USER"] == alice.pw_name
    assert env["SLAQ_JOB_ID"] == str(r["job"])

    # The same as root (slaqd's own user's job): nothing of slaqd's either.
    r = d.request({"type": "submit", "cmd": ["/bin/sh", "-c", "env"]})
    assert r["ok"], r
    d.wait_state(r["job"], "done")
    out = log_of(d, r["job"])
    assert token not in out and "PYTEST" not in out, out
    assert env_lines(out)["PATH"] == "/usr/local/bin:/usr/bin:/bin"

    # A sweep's configurations: the environment `slaq sweep` was run with
    # (alice's, with a marker), nothing of slaqd's; a raw sweep without
    # one gets a login's.
    script = os.path.join(shared, "cfg.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\nenv > \"$HOME/sweep-env-$SLAQ_JOB_ID\"\n")
    os.chmod(script, 0o755)
    spec = {"name": "envs", "command": script + " {lr}",
            "space": {"lr": {"type": "uniform", "low": 0, "high": 1}},
            "generator": {"type": "random", "seed": 1}, "configs": 2,
            "metric": "val_accuracy", "direction": "max", "y_target": 0.9,
            "t_max": 20, "epochs": 2, "b": 2, "slots": 2, "policy": "pop"}
    spath = os.path.join(shared, "spec.json")
    with open(spath, "w") as f:
        json.dump(spec, f)
    os.chmod(spath, 0o644)
    p = slaq_as(people, "alice", shared, sock, "sweep", spath,
                env={"SWEEP_MARKER": "from-alice"})
    assert p.returncode == 0, p.stderr
    r = raw_as(people, "alice", sock, {"type": "sweep_submit", "spec": dict(
        spec, name="raw"), "cwd": alice.pw_dir})
    assert r["ok"], r

    def sweep_files():
        return [n for n in os.listdir(alice.pw_dir)
                if n.startswith("sweep-env-")]
    wait_for(lambda: len(sweep_files()) >= 4, timeout=60,
             what="four configurations' environments")
    marked = 0
    for name in sweep_files():
        with open(os.path.join(alice.pw_dir, name)) as f:
            text = f.read()
        assert token not in text and "SLAQ_TOKEN" not in text, text
        marked += "SWEEP_MARKER=from-alice" in text
    assert marked >= 2, marked  # the CLI's sweep carries alice's own

    # A resumed job: the environment it was submitted with (before: none,
    # so slaqd's own, token and all).
    train = os.path.join(shared, "slaq-train")
    shutil.copy(os.path.join(BUILD, "bin", "slaq-train"), train)
    os.chmod(train, 0o755)
    p = slaq_as(people, "alice", shared, sock, "submit", "--", train,
                "linreg", "--iters", "1000000", "--eval-every", "0",
                env={"RESUME_MARKER": "kept"})
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    wait_for(lambda: d.job(jid)["iter"] >= 3, timeout=60, what="3 iters")
    p = slaq_as(people, "alice", shared, sock, "suspend", "--checkpoint",
                str(jid))
    assert p.returncode == 0, p.stderr
    d.wait_state(jid, "stopped", timeout=30)
    p = slaq_as(people, "alice", shared, sock, "resume", str(jid))
    assert p.returncode == 0, p.stderr
    new = d.job(jid)["continued_by"]
    pid = wait_for(lambda: d.job(new)["pid"], timeout=30, what="its pid")
    env = proc_env(pid)
    assert env.get("RESUME_MARKER") == "kept", env
    assert "SLAQ_TOKEN" not in env and token not in env.values()
    assert env["SLAQ_JOB_ID"] == str(new)


@needs_root
def test_a_failed_submit_leaves_nothing_for_the_next_job(
        people, shared, daemon_factory):
    """A refused start takes its id for good and leaves no log directory:
    alice cannot plant links or FIFOs for the next job of that id (before:
    STATE/jobs/N stayed hers, and bob's next job wrote into her file;
    root's created a file of her choosing; a FIFO hung slaqd)."""
    d = start(daemon_factory, people, shared)
    sock = d.sock
    mine = os.path.join(people.pw("alice").pw_dir, "collected")
    run_as(people, "alice", "/bin/sh", "-c", "touch %s && chmod 666 %s"
           % (mine, mine))
    probe = "/etc/slaq-probe-%s" % os.urandom(4).hex()

    def submit(who, *cmd):
        p = slaq_as(people, who, shared, sock, "submit", "--", *cmd)
        return p
    p = submit("alice", "true")
    assert p.returncode == 0, p.stderr
    first = int(p.stdout)
    p = submit("alice", "/nonexistent/prog")
    assert p.returncode != 0 and "nonexistent" in p.stderr, p.stderr
    failed = first + 1
    jobs_dir = os.path.join(d.state, "jobs")
    assert not os.path.lexists(os.path.join(jobs_dir, str(failed)))
    # Alice tries to make the directory of the id that failed, or of the
    # next one, with her traps in it.
    for n in (failed, failed + 1):
        p = run_as(people, "alice", "/bin/sh", "-c",
                   "mkdir %s/%d && ln -s %s %s/%d/stdout.log && "
                   "mkfifo %s/%d/stderr.log" % (jobs_dir, n, mine, jobs_dir,
                                                n, jobs_dir, n))
        assert p.returncode != 0, "alice made STATE/jobs/%d" % n
    p = submit("bob", "/bin/sh", "-c", "echo private-of-bob")
    assert p.returncode == 0, p.stderr
    bobs = int(p.stdout)
    assert bobs == failed + 1, (bobs, failed)  # the id is not used again
    d.wait_state(bobs, "done")
    assert log_of(d, bobs).strip() == "private-of-bob"
    with open(mine) as f:
        assert "private-of-bob" not in f.read()
    # Root's job, and slaqd still answers at once.
    r = d.request({"type": "submit", "cmd": ["/bin/sh", "-c", "echo root"]})
    assert r["ok"], r
    d.wait_state(r["job"], "done")
    assert not os.path.lexists(probe)
    t0 = time.monotonic()
    assert raw_as(people, "bob", sock, {"type": "status"})["ok"]
    assert time.monotonic() - t0 < 5


@needs_root
def test_links_and_fifos_planted_by_a_user_never_hang_slaqd(
        people, shared, daemon_factory):
    """Alice plants FIFOs and links at every path of her jobs she can
    reach, before and after each start (her log directories, the files in
    them, her checkpoint directory), while her jobs start, suspend with a
    checkpoint, resume and end; bob's requests are answered within 1 s
    throughout. Before: a FIFO made in STATE/jobs/N between slaqd giving
    her the directory and the job opening its logs blocked slaqd's wait
    for the child, and every user's status timed out."""
    d = start(daemon_factory, people, shared)
    sock = d.sock
    alice = people.pw("alice")
    jobs_dir = os.path.join(d.state, "jobs")
    ckdir = os.path.join(d.state, "user-checkpoints", "uid-%d" % alice.pw_uid)
    attacker = r"""
import os, sys, time
jobs, ckdir, stop = sys.argv[1], sys.argv[2], sys.argv[3]
n = 0
while not os.path.exists(stop):
    for k in range(1, 60):  # STATE/jobs cannot be listed: ids are guessed
        p = os.path.join(jobs, str(k))
        for f in ("stdout.log", "stderr.log", "x"):
            try:
                os.unlink(os.path.join(p, f))
            except OSError:
                pass
            try:
                os.mkfifo(os.path.join(p, f))
                n += 1
            except OSError:
                pass
    if os.path.isdir(ckdir):
        for k in range(1, 200):
            q = os.path.join(ckdir, "job-%d.ckpt" % k)
            if not os.path.lexists(q):
                try:
                    os.mkfifo(q) if k % 2 else os.symlink("/etc/shadow", q)
                except OSError:
                    pass
    time.sleep(0.001)
print(n)
"""
    stop = os.path.join(shared, "stop")
    # Her checkpoint directory exists once she has run a job.
    p = slaq_as(people, "alice", shared, sock, "submit", "--", "true")
    assert p.returncode == 0, p.stderr
    d.wait_state(int(p.stdout), "done")
    att = popen_as(people, "alice", PY, "-c", attacker, jobs_dir, ckdir,
                   stop, stdout=subprocess.PIPE, text=True)
    # Bob asks for slaqd's status every 20 ms throughout, timing each
    # answer in his own process.
    watcher = r"""
import os, socket, sys, time
worst, n = 0.0, 0
while not os.path.exists(sys.argv[2]):
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(sys.argv[1])
    s.sendall(b'{"type":"status"}\n')
    buf = b""
    while b"\n" not in buf:
        buf += s.recv(1 << 20)
    s.close()
    worst, n = max(worst, time.monotonic() - t0), n + 1
    time.sleep(0.02)
print(worst, n)
"""
    bob = popen_as(people, "bob", PY, "-c", watcher, sock, stop,
                   stdout=subprocess.PIPE, text=True)
    try:
        ids = []
        for i in range(12):
            cmd = (["/bin/sh", "-c", "trap 'exit 0' TERM; echo hi; sleep 60 "
                    "& wait"] if i % 3 == 0 else ["/bin/echo", "x"])
            p = slaq_as(people, "alice", shared, sock, "submit", "--", *cmd)
            assert p.returncode == 0, p.stderr
            ids.append(int(p.stdout))
        long = [j for k, j in enumerate(ids) if k % 3 == 0]
        for j in long:
            p = slaq_as(people, "alice", shared, sock, "suspend",
                        "--checkpoint", str(j))
            assert p.returncode == 0, p.stderr
        for j in long:
            d.wait_state(j, "stopped", timeout=30)
            slaq_as(people, "alice", shared, sock, "resume", str(j))
        for j in ids:
            d.request({"type": "cancel", "job": j, "now": True})
        # slaqd itself answers bob fast, whatever alice planted.
        for _ in range(20):
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(1.0)
            t0 = time.monotonic()
            s.connect(sock)
            s.sendall(b'{"type":"status"}\n')
            assert b"\n" in s.recv(1 << 20)
            s.close()
            assert time.monotonic() - t0 < 1.0
    finally:
        with open(stop, "w"):
            pass
        out, _ = att.communicate(timeout=60)
        seen, _ = bob.communicate(timeout=60)
    assert int(out.strip() or 0) > 0  # she did get to plant FIFOs
    worst, asked = seen.split()
    assert int(asked) >= 5, seen
    assert float(worst) < 1.0, seen  # no answer waited on a FIFO
    for j in ids:
        assert d.job(j)["state"] in ("done", "cancelled", "stopped"), \
            d.job(j)
    # (A link to /etc/shadow as a checkpoint has the size alice herself
    # can see with stat; test_paths_are_resolved_as_the_user_not_as_root
    # shows a root-only file's is not published.)


@needs_root
def test_paths_are_resolved_as_the_user_not_as_root(people, shared,
                                                    daemon_factory):
    """A working directory is entered as the user, and its error tells
    nothing root could see and the user cannot (before: the target of a
    link into a root-only directory was printed, and EACCES against
    ENOENT told whether a root-only path exists); a checkpoint made a link
    to a root-only file does not publish that file's size (before: it did,
    in the job's events, to every user)."""
    d = start(daemon_factory, people, shared)
    sock = d.sock
    alice = people.pw("alice")
    hidden = tempfile.mkdtemp(prefix="slaq-root-only-", dir="/tmp")
    try:
        os.chmod(hidden, 0o700)
        inside = os.path.join(hidden, "inside-secret-name")
        os.mkdir(inside)
        secret = os.path.join(hidden, "secret")
        with open(secret, "wb") as f:
            f.write(b"x" * 12345)
        link = os.path.join(alice.pw_dir, "link")
        run_as(people, "alice", "ln", "-s", inside, link)
        r = raw_as(people, "alice", sock, {"type": "submit", "cmd": ["true"],
                                           "cwd": link})
        assert not r["ok"], r
        assert "inside-secret-name" not in r["message"], r["message"]
        assert "permission denied" in r["message"].lower(), r["message"]
        # Whether a root-only path exists: the same answer either way.
        answers = []
        for name in ("inside-secret-name", "no-such-thing"):
            r = raw_as(people, "alice", sock, {
                "type": "submit", "cmd": ["true"],
                "cwd": os.path.join(hidden, name)})
            assert not r["ok"], r
            answers.append(r["message"].replace(name, "NAME"))
        assert answers[0] == answers[1], answers

        # A checkpoint that is a link to the root-only file.
        job = ("ln -s %s \"$SLAQ_CHECKPOINT_DIR/job-$SLAQ_JOB_ID.ckpt\"; "
               "trap 'exit 0' TERM; sleep 60 & wait" % secret)
        p = slaq_as(people, "alice", shared, sock, "submit", "--", "/bin/sh",
                    "-c", job)
        assert p.returncode == 0, p.stderr
        jid = int(p.stdout)
        ck = os.path.join(d.state, "user-checkpoints",
                          "uid-%d" % alice.pw_uid, "job-%d.ckpt" % jid)
        wait_for(lambda: os.path.lexists(ck), what="the planted link")
        p = slaq_as(people, "alice", shared, sock, "suspend", "--checkpoint",
                    str(jid))
        assert p.returncode == 0, p.stderr
        j = d.wait_state(jid, "stopped", timeout=30)
        assert j["checkpoint_bytes"] != 12345, j
        shown = slaq_as(people, "bob", shared, sock, "show", "--json",
                        str(jid)).stdout
        assert "12345" not in shown, shown
    finally:
        shutil.rmtree(hidden, ignore_errors=True)


@needs_root
def test_the_cli_sends_nothing_to_another_users_socket(people, shared,
                                                       daemon_factory):
    """Bob listens on ./var/slaq.sock in a directory every user may write
    (sticky, as /tmp); alice runs `slaq submit` there without naming a
    socket. Before: her whole environment reached bob's server, which
    answered with a job id of its own. Now: nothing is sent, and alice is
    told whose socket it is and how to name one she trusts."""
    d = start(daemon_factory, people, shared)
    common = os.path.join(shared, "common")
    os.mkdir(common)
    os.chmod(common, 0o1777)
    got = os.path.join(common, "got")
    fake = r"""
import os, socket, sys
os.makedirs("var", exist_ok=True)
s = socket.socket(socket.AF_UNIX)
s.bind("var/slaq.sock")
os.chmod("var/slaq.sock", 0o777)
s.listen(5)
open("ready", "w").close()
s.settimeout(20)
total = 0
try:
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            data = c.recv(1 << 20)
            total += len(data)
            c.sendall(b'{"ok":true,"job":{"id":4242}}\n')
        except OSError:
            pass
        c.close()
        with open(sys.argv[1], "w") as f:
            f.write(str(total))
except OSError:
    pass
"""
    srv = popen_as(people, "bob", PY, "-c", fake, got, cwd=common)
    try:
        wait_for(lambda: os.path.exists(os.path.join(common, "ready")),
                 what="bob's fake slaqd")
        p = run_as(people, "alice", os.path.join(shared, "slaq"), "submit",
                   "--", "true", cwd=common,
                   env={"ALICE_SECRET": "do-not-leak"})
        assert p.returncode != 0, p.stdout
        assert "4242" not in p.stdout
        assert "refusing" in p.stderr and "uid %d" % people.pw(
            "bob").pw_uid in p.stderr, p.stderr
        p = run_as(people, "alice", os.path.join(shared, "slaq"), "ls",
                   cwd=common)
        assert p.returncode != 0 and "refusing" in p.stderr, p.stderr
        time.sleep(0.3)
        assert not os.path.exists(got) or open(got).read() == "0"
    finally:
        srv.kill()
        srv.wait()
    # Named by the user, the real slaqd's socket is used as before.
    p = run_as(people, "alice", os.path.join(shared, "slaq"), "ls",
               "--socket", d.sock, cwd=common)
    assert p.returncode == 0, p.stderr
