"""slaqd as a multi-user service (docs/slaqd.md, "Users"; docs/security.md).

Two (and three) ordinary users are created for the test, with homes, and
removed at its end. slaqd runs as root with a socket group all of them are
in; each user runs the slaq command as themselves (setpriv, keeping root's
environment, so that what the job gets comes from slaqd, not from the
caller). Checked: each may submit, each sees every job, each may cancel
only their own ("permission denied" for the other's), a job's processes
run with its submitter's uid, gid, groups and HOME, root and a member of
the admin group may cancel any, and a slaqd run as an ordinary user runs
that user's jobs and refuses others'.
"""

import json
import os
import pathlib
import pwd
import grp
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from agentlink import ControllerLink, node_key_args
from conftest import BUILD, SLAQ, SLAQD, free_port, old_state_db, wait_for

needs_root = pytest.mark.skipif(
    os.geteuid() != 0 or not all(shutil.which(t) for t in (
        "useradd", "userdel", "groupadd", "groupdel", "setpriv")),
    reason="creates users and groups and runs slaqd as root: needs root and "
           "useradd, userdel, groupadd, groupdel and setpriv")


def _run(*cmd):
    subprocess.run(cmd, check=True, capture_output=True, timeout=60)


@pytest.fixture
def open_dir():
    """A directory every user may enter, with a copy of the slaq command
    (the build directory may sit under one they cannot)."""
    path = tempfile.mkdtemp(prefix="slaq-mu-", dir="/tmp")
    os.chmod(path, 0o755)
    shutil.copy(SLAQ, os.path.join(path, "slaq"))
    os.chmod(os.path.join(path, "slaq"), 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)


class People:
    """Groups and users made for one test: sock (the socket's group),
    adm (the admin group), extra (one more group of alice's); users alice
    (sock, extra), bob (sock) and carol (sock, adm)."""

    def __init__(self):
        tag = secrets.token_hex(3)
        self.groups = {k: "slg%s%s" % (k[0], tag)
                       for k in ("sock", "adm", "extra")}
        self.users = {"alice": "slua%s" % tag, "bob": "slub%s" % tag,
                      "carol": "sluc%s" % tag}
        self.made_groups, self.made_users = [], []
        try:
            self._make()
        except BaseException:
            self.remove()
            raise

    def _make(self):
        for g in self.groups.values():
            _run("groupadd", g)
            self.made_groups.append(g)
        member = {"alice": ("sock", "extra"), "bob": ("sock",),
                  "carol": ("sock", "adm")}
        for who, name in self.users.items():
            _run("useradd", "-m", "-s", "/bin/sh", "-G",
                 ",".join(self.groups[g] for g in member[who]), name)
            self.made_users.append(name)
            os.chmod(self.pw(who).pw_dir, 0o700)

    def pw(self, who):
        return pwd.getpwnam(self.users[who])

    def gid(self, group):
        return grp.getgrnam(self.groups[group]).gr_gid

    def remove(self):
        for name in self.made_users:
            subprocess.run(["userdel", "-r", "-f", name], capture_output=True,
                           timeout=60)
        for g in self.made_groups:
            subprocess.run(["groupdel", g], capture_output=True, timeout=60)


@pytest.fixture
def people():
    p = People()
    try:
        yield p
    finally:
        p.remove()


def as_user(people, who, *argv, cwd=None, env=None):
    """Runs argv as user `who` (uid, primary group, their supplementary
    groups) with root's environment plus env, in cwd (their home)."""
    pw = people.pw(who)
    e = dict(os.environ)
    e.pop("SLAQ_SOCKET", None)
    e.update({"HOME": "/root", "USER": "root", "LOGNAME": "root"})
    e.update(env or {})
    return subprocess.run(
        ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
         "--init-groups", "--"] + list(argv),
        cwd=cwd or pw.pw_dir, env=e, capture_output=True, text=True,
        timeout=60)


def slaq_as(people, who, open_dir, sock, *args, cwd=None):
    return as_user(people, who, os.path.join(open_dir, "slaq"), args[0],
                   "--socket", sock, *args[1:], cwd=cwd)


def proc_status(pid):
    """/proc/PID/status as {field: value}."""
    out = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            k, _, v = line.partition(":")
            out[k] = v.split()
    return out


def proc_env(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return dict(e.decode().split("=", 1) for e in f.read().split(b"\0")
                    if b"=" in e)


@needs_root
def test_two_users_share_slaqd_each_acting_on_their_own_jobs(
        people, open_dir, daemon_factory):
    sock = os.path.join(open_dir, "slaq.sock")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"], "--admin-group",
                       people.groups["adm"], state=os.path.join(open_dir,
                                                                "state"))
    st = os.stat(sock)
    assert stat.S_IMODE(st.st_mode) == 0o660
    assert st.st_gid == people.gid("sock")
    assert "jobs run as the users who submit them" in d.read_log()

    def slaq(who, *args, **kw):
        return slaq_as(people, who, open_dir, sock, *args, **kw)

    # Each submits; the job is theirs.
    jobs = {}
    for who in ("alice", "bob"):
        p = slaq(who, "submit", "--name", "sleep-" + who, "--", "sleep",
                 "300")
        assert p.returncode == 0, p.stderr
        jobs[who] = int(p.stdout)
    for who, jid in jobs.items():
        j = d.job(jid)
        assert j["state"] == "running", j
        assert (j["user"], j["uid"]) == (people.users[who],
                                         people.pw(who).pw_uid)

    # Their processes run as them: uid, gid, groups, HOME and the rest
    # from passwd, whatever the submitting environment said.
    for who, jid in jobs.items():
        pw = people.pw(who)
        pid = d.job(jid)["pid"]
        s = proc_status(pid)
        assert s["Uid"] == [str(pw.pw_uid)] * 4, s["Uid"]
        assert s["Gid"] == [str(pw.pw_gid)] * 4, s["Gid"]
        groups = {int(g) for g in s["Groups"]}
        want = {people.gid("sock"), pw.pw_gid} | (
            {people.gid("extra")} if who == "alice" else set())
        assert groups == want, (who, groups, want)
        env = proc_env(pid)
        assert env["HOME"] == pw.pw_dir and env["USER"] == pw.pw_name
        assert env["LOGNAME"] == pw.pw_name and env["SHELL"] == "/bin/sh"
        assert os.readlink("/proc/%d/cwd" % pid) == pw.pw_dir
    # The cgroup, and so the quota, stays slaqd's.
    cg = d.request({"type": "status"})["cgroup"]
    if cg:
        for name in ("cpu.max", "cpu.weight", "cgroup.procs"):
            f = os.path.join(cg, "job-%d" % jobs["alice"], name)
            if os.path.exists(f):
                assert os.stat(f).st_uid == 0, f

    # Both see every job, with its user.
    for who in ("alice", "bob"):
        p = slaq(who, "ls")
        assert p.returncode == 0, p.stderr
        lines = p.stdout.splitlines()
        assert lines[0].split()[:3] == ["ID", "USER", "NAME"]
        rows = {int(l.split()[0]): l.split()[1] for l in lines[1:]}
        assert rows == {jobs["alice"]: people.users["alice"][:10],
                        jobs["bob"]: people.users["bob"][:10]}
        js = json.loads(slaq(who, "ls", "--json").stdout)["jobs"]
        assert sorted(j["user"] for j in js) == sorted(
            people.users[w] for w in ("alice", "bob"))
        top = slaq(who, "top", "--once").stdout.splitlines()
        assert top[1].split()[:3] == ["ID", "USER", "NAME"]
        assert sorted(l.split()[1] for l in top[2:] if l.strip()) == sorted(
            people.users[w][:10] for w in ("alice", "bob"))
        show = slaq(who, "show", str(jobs["alice"])).stdout
        assert "user        %s (uid %d)" % (
            people.users["alice"], people.pw("alice").pw_uid) in show

    # Bob may not cancel, suspend or read the logs of Alice's job.
    for args in (["cancel"], ["suspend"], ["logs"]):
        p = slaq("bob", *(args + [str(jobs["alice"])]))
        assert p.returncode != 0, (args, p.stdout)
        assert "permission denied" in p.stderr, p.stderr
        assert "job %d belongs to %s" % (jobs["alice"],
                                         people.users["alice"]) in p.stderr
    assert d.job(jobs["alice"])["state"] == "running"
    assert d.job(jobs["alice"])["suspended"] is None
    # ... nor set the policy.
    p = slaq("bob", "policy", "fair")
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    assert d.request({"type": "policy"})["policy"] == "slaq"

    # Alice may cancel hers.
    p = slaq("alice", "cancel", "--now", str(jobs["alice"]))
    assert p.returncode == 0, p.stderr
    d.wait_state(jobs["alice"], "cancelled")

    # Carol (the admin group) may cancel Bob's and set the policy.
    p = slaq("carol", "cancel", "--now", str(jobs["bob"]))
    assert p.returncode == 0, p.stderr
    d.wait_state(jobs["bob"], "cancelled")
    p = slaq("carol", "policy", "fair")
    assert p.returncode == 0, p.stderr
    assert d.request({"type": "policy"})["policy"] == "fair"

    # Root may cancel anyone's.
    p = slaq("bob", "submit", "--", "sleep", "300")
    assert p.returncode == 0, p.stderr
    jb = int(p.stdout)
    assert d.request({"type": "cancel", "job": jb, "now": True})["ok"]
    d.wait_state(jb, "cancelled")

    # A user reads their own job's logs (written as them); not another's.
    p = slaq("alice", "submit", "--", "sh", "-c", "echo out-$(id -un)")
    assert p.returncode == 0, p.stderr
    ja = int(p.stdout)
    d.wait_state(ja, "done")
    p = slaq("alice", "logs", str(ja))
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "out-" + people.users["alice"]
    p = slaq("bob", "logs", str(ja))
    assert p.returncode != 0 and "permission denied" in p.stderr
    p = slaq("carol", "logs", str(ja))  # the admin group reads them
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "out-" + people.users["alice"]
    jr = d.submit("sh", "-c", "echo out-$(id -un)")  # root's own job
    d.wait_state(jr, "done")
    p = slaq("carol", "logs", str(jr))
    assert p.returncode == 0 and p.stdout.strip() == "out-root", p.stderr
    logdir = d.job(ja)["log_dir"]
    st = os.stat(os.path.join(logdir, "stdout.log"))
    assert st.st_uid == people.pw("alice").pw_uid
    assert st.st_gid == people.gid("adm")  # administrators may read them
    assert os.stat(logdir).st_uid == people.pw("alice").pw_uid

    # A working directory the submitter cannot enter is refused, clearly.
    p = slaq("alice", "submit", "--cwd", people.pw("bob").pw_dir, "--",
             "true")
    assert p.returncode != 0
    assert "permission denied" in p.stderr.lower(), p.stderr
    assert people.pw("bob").pw_dir in p.stderr
    assert "as user " + people.users["alice"] in p.stderr


@needs_root
def test_a_job_of_an_allowed_uid_runs_as_that_user_not_root(
        people, open_dir, daemon_factory):
    """--allow-uid used to let a user run code as root: their jobs ran
    as slaqd's user. Now the job runs as them (only options main had)."""
    sock = os.path.join(open_dir, "a.sock")
    uid = people.pw("bob").pw_uid
    d = daemon_factory("--socket", sock, "--allow-uid", str(uid),
                       state=os.path.join(open_dir, "state"))
    os.chmod(sock, 0o666)  # an operator opening the socket, as before
    p = slaq_as(people, "bob", open_dir, sock, "submit", "--", "sleep", "300")
    assert p.returncode == 0, p.stderr
    pid = d.job(int(p.stdout))["pid"]
    s = proc_status(pid)
    assert s["Uid"] == [str(uid)] * 4, "the job runs as uid %s" % s["Uid"]
    assert s["Gid"] == [str(people.pw("bob").pw_gid)] * 4


@needs_root
def test_slaqd_as_an_ordinary_user_runs_only_that_users_jobs(
        people, open_dir):
    """Not root: alice's own slaqd runs her jobs and says at start what it
    cannot do; bob (who reaches its socket) may look but not submit."""
    alice = people.pw("alice")
    state = os.path.join(open_dir, "astate")
    os.mkdir(state)
    os.chown(state, alice.pw_uid, alice.pw_gid)
    sock = os.path.join(state, "slaq.sock")
    os.chmod(state, 0o755)
    log = open(os.path.join(open_dir, "alice-slaqd.log"), "w")
    binary = os.path.join(open_dir, "slaqd")
    shutil.copy(SLAQD, binary)
    os.chmod(binary, 0o755)
    pids = []
    proc = subprocess.Popen(
        ["setpriv", "--reuid=%d" % alice.pw_uid, "--regid=%d" % alice.pw_gid,
         "--init-groups", "--", binary, "--state-dir", state, "--http", "off",
         "--epoch", "0.2", "--grace", "1", "--enforce", "auto",
         "--socket-group", people.groups["sock"]],
        cwd=alice.pw_dir, stdout=log, stderr=log)
    try:
        def up():
            assert proc.poll() is None, open(log.name).read()
            return os.path.exists(sock)
        wait_for(up, timeout=30, what="alice's slaqd")

        def slaq(who, *args):
            return slaq_as(people, who, open_dir, sock, *args)
        wait_for(lambda: slaq("alice", "status").returncode == 0,
                 what="alice's slaqd to answer")
        text = open(log.name).read()
        assert "not root: it runs only %s's jobs" % alice.pw_name in text
        assert "submits are refused" in text
        p = slaq("alice", "submit", "--", "sleep", "300")
        assert p.returncode == 0, p.stderr
        jid = int(p.stdout)
        js = json.loads(slaq("alice", "show", "--json", str(jid)).stdout)
        pid = js["pid"]
        pids.append(pid)
        assert proc_status(pid)["Uid"] == [str(alice.pw_uid)] * 4
        p = slaq("bob", "submit", "--", "sleep", "300")
        assert p.returncode != 0
        assert "permission denied" in p.stderr and "not root" in p.stderr
        assert p.stderr.count("\n") <= 2, p.stderr
        # Bob still sees the jobs, and may not cancel alice's.
        p = slaq("bob", "ls")
        assert p.returncode == 0 and people.users["alice"][:10] in p.stdout
        p = slaq("bob", "cancel", str(jid))
        assert p.returncode != 0 and "permission denied" in p.stderr
        p = slaq("alice", "cancel", "--now", str(jid))
        assert p.returncode == 0, p.stderr
        wait_for(lambda: json.loads(slaq("alice", "show", "--json", str(jid))
                                    .stdout)["state"] == "cancelled",
                 what="alice's job to be cancelled")
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
        for pid in pids:  # a job left by a failed check
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass


def test_jobs_of_an_older_database_belong_to_slaqds_user(daemon_factory,
                                                         tmp_path):
    """A state.db from before jobs had owners: its jobs ran as slaqd's
    user, and are shown (and kept) as that user's."""
    state = tmp_path / "old"
    state.mkdir()
    old_state_db(state, before="jobs.uid")
    d = daemon_factory(state=state)
    me = pwd.getpwuid(os.geteuid())
    j = d.job(1)
    assert (j["user"], j["uid"]) == (me.pw_name, me.pw_uid)
    assert d.cli("ls", "--all").stdout.splitlines()[1].split()[:3] == [
        "1", me.pw_name[:10], "old"]
    jid = d.submit("true")
    d.wait_state(jid, "done")
    assert d.job(jid)["user"] == me.pw_name


@needs_root
def test_an_agent_runs_a_job_as_the_user_who_submitted_it(
        people, open_dir, daemon_factory):
    """A controller passes the submitter in its start message; the agent
    (root) starts the job as that user; the owner rules hold on the
    controller."""
    token = os.path.join(open_dir, "agent.token")
    with open(token, "w") as f:
        f.write("agent-secret-token-1\n")
    os.chmod(token, 0o600)
    port = free_port()
    sock = os.path.join(open_dir, "ctl.sock")
    ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                         "--agent-token-file", token, "--socket", sock,
                         "--socket-group", people.groups["sock"],
                         state=os.path.join(open_dir, "ctl"))
    agent = daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                           *node_key_args(open_dir, pathlib.Path(token),
                                          "n1"),
                           "--cores", "2", "--enforce", "signal",
                           state=os.path.join(open_dir, "agent"))
    wait_for(lambda: [n["state"] for n in ctl.request(
        {"type": "nodes"})["nodes"]] == ["up"], what="the agent to join")
    p = slaq_as(people, "alice", open_dir, sock, "submit", "--", "sleep",
                "300")
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    ctl.wait_state(jid, "running")
    alice = people.pw("alice")
    on_agent = wait_for(lambda: (lambda r: r["job"] if r["ok"] and
                                 r["job"]["pid"] else None)(
        agent.request({"type": "show", "job": jid})), what="the agent's job")
    assert (on_agent["user"], on_agent["uid"]) == (alice.pw_name,
                                                   alice.pw_uid)
    s = proc_status(on_agent["pid"])
    assert s["Uid"] == [str(alice.pw_uid)] * 4, s["Uid"]
    assert proc_env(on_agent["pid"])["HOME"] == alice.pw_dir
    p = slaq_as(people, "bob", open_dir, sock, "cancel", str(jid))
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    p = slaq_as(people, "alice", open_dir, sock, "cancel", "--now", str(jid))
    assert p.returncode == 0, p.stderr
    ctl.wait_state(jid, "cancelled")


@needs_root
def test_only_a_jobs_owner_or_an_admin_may_move_it(people, open_dir,
                                                   daemon_factory):
    """slaq move follows the owner rules of cancel (docs/security.md):
    bob's move of alice's job on a controller is refused "permission
    denied" and asks nothing of its agent (the job runs on, on its node,
    no move asked); alice's own move of it is carried out."""
    token = os.path.join(open_dir, "agent.token")
    with open(token, "w") as f:
        f.write("agent-secret-token-1\n")
    os.chmod(token, 0o600)
    port = free_port()
    sock = os.path.join(open_dir, "ctl.sock")
    ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                         "--agent-token-file", token, "--socket", sock,
                         "--socket-group", people.groups["sock"],
                         state=os.path.join(open_dir, "ctl"))
    for name in ("n1", "n2"):
        daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                       *node_key_args(open_dir, pathlib.Path(token), name),
                       "--cores", "2", "--enforce", "signal",
                       state=os.path.join(open_dir, "agent-" + name))
    wait_for(lambda: [n["state"] for n in ctl.request(
        {"type": "nodes"})["nodes"]] == ["up", "up"], what="the agents")
    p = slaq_as(people, "alice", open_dir, sock, "submit", "--restartable",
                "--", "sleep", "300")
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    home = ctl.wait_state(jid, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    p = slaq_as(people, "bob", open_dir, sock, "move", str(jid), "--node",
                other)
    assert p.returncode != 0, p.stdout
    assert "permission denied" in p.stderr and \
        people.pw("alice").pw_name in p.stderr, p.stderr
    time.sleep(0.5)
    j = ctl.job(jid)
    assert j["state"] == "running" and j["node"] == home, j
    assert not j.get("moving_to") and not j.get("moves"), j
    assert "move_asked" not in [e[1] for e in j["events"]], j["events"]
    p = slaq_as(people, "alice", open_dir, sock, "move", str(jid), "--node",
                other)
    assert p.returncode == 0, p.stderr
    assert "moving from node %s to node %s" % (home, other) in p.stdout
    wait_for(lambda: ctl.job(jid)["node"] == other, timeout=20,
             what="alice's move")
    p = slaq_as(people, "alice", open_dir, sock, "cancel", "--now",
                str(jid))
    assert p.returncode == 0, p.stderr


@needs_root
def test_a_sweep_runs_as_its_submitter_and_is_theirs_to_cancel(
        people, open_dir, daemon_factory):
    sock = os.path.join(open_dir, "slaq.sock")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"],
                       state=os.path.join(open_dir, "state"))
    spec = {"name": "mu", "command": "sleep 300 {lr}",
            "space": {"lr": {"type": "log-uniform", "low": 0.0001,
                             "high": 0.001}},
            "generator": {"type": "random", "seed": 3}, "configs": 2,
            "metric": "val_accuracy", "direction": "max", "y_target": 0.75,
            "t_max": 600, "epochs": 12, "b": 3, "slots": 2, "policy": "pop"}
    path = os.path.join(open_dir, "spec.json")
    with open(path, "w") as f:
        json.dump(spec, f)
    os.chmod(path, 0o644)
    p = slaq_as(people, "alice", open_dir, sock, "sweep", path)
    assert p.returncode == 0, p.stderr
    w = d.request({"type": "sweep_show", "sweep": 1})["sweep"]
    assert w["user"] == people.users["alice"]
    jobs = wait_for(lambda: [j for j in d.jobs() if j["sweep"] == 1 and
                             j["pid"]], what="the sweep's jobs")
    alice = people.pw("alice")
    for j in jobs:
        assert j["user"] == alice.pw_name
        assert proc_status(j["pid"])["Uid"] == [str(alice.pw_uid)] * 4
    p = slaq_as(people, "bob", open_dir, sock, "sweep", "cancel", "1")
    assert p.returncode != 0, p.stdout
    assert "permission denied: sweep 1 belongs to %s" % alice.pw_name in \
        p.stderr, p.stderr
    assert d.request({"type": "sweep_show", "sweep": 1})["sweep"][
        "state"] == "running"
    p = slaq_as(people, "alice", open_dir, sock, "sweep", "cancel", "1")
    assert p.returncode == 0, p.stderr
    assert d.request({"type": "sweep_show", "sweep": 1})["sweep"][
        "state"] == "cancelled"


@needs_root
def test_an_agent_refuses_a_uid_that_names_another_user_on_its_node(
        people, open_dir, daemon_factory):
    """The test plays the controller: a start whose uid is alice's here but
    whose user is someone else is refused (the nodes' users differ); with
    the right name the job runs as alice."""
    token = os.path.join(open_dir, "agent.token")
    with open(token, "w") as f:
        f.write("agent-secret-token-1\n")
    lsn = socket.socket()
    lsn.bind(("127.0.0.1", 0))
    lsn.listen(1)
    lsn.settimeout(30)
    agent = daemon_factory("--agent", "--join", "127.0.0.1:%d" %
                           lsn.getsockname()[1],
                           *node_key_args(open_dir, pathlib.Path(token),
                                          "n1"),
                           "--enforce", "signal",
                           "--end-jobs-at-exit",
                           state=os.path.join(open_dir, "agent"))
    conn, _ = lsn.accept()
    conn.settimeout(30)
    link = ControllerLink(conn, "agent-secret-token-1")

    def until(kind):
        while True:
            m = link.recv()
            if m["type"] == kind or m["type"] in ("started",
                                                  "start_failed"):
                return m
    assert until("register")["node"] == "n1"
    link.send({"type": "welcome", "node": "n1", "epoch_s": 0.2,
               "grace_s": 1, "jobs": {}})
    alice = people.pw("alice")
    start = {"type": "start", "job": 1, "secret": "ab" * 32, "name": "x",
             "cmd": ["sleep", "300"], "cwd": alice.pw_dir,
             "uid": alice.pw_uid, "user": people.users["bob"]}
    link.send(start)
    m = until("start_failed")
    assert m["type"] == "start_failed", m
    assert "uid %d is %s on this node but %s on the controller" % (
        alice.pw_uid, alice.pw_name, people.users["bob"]) in m["message"]
    start.update(job=2, user=alice.pw_name)
    link.send(start)
    m = until("started")
    assert m["type"] == "started", m
    try:
        assert proc_status(m["pid"])["Uid"] == [str(alice.pw_uid)] * 4
        assert agent.job(2)["user"] == alice.pw_name
        # --end-jobs-at-exit holds for a job run as another user too: the
        # kernel ends it with its agent (the change of user clears the
        # parent-death signal; slaqd sets it after).
        agent.kill9()
        wait_for(lambda: not os.path.exists("/proc/%d" % m["pid"]) or
                 proc_status(m["pid"])["State"][0] == "Z", timeout=10,
                 what="the job to end with its agent")
    finally:
        try:
            os.killpg(m["pid"], signal.SIGKILL)
        except OSError:
            pass
        conn.close()
        lsn.close()


@needs_root
def test_owners_survive_a_restart_of_slaqd(people, open_dir,
                                           daemon_factory):
    sock = os.path.join(open_dir, "slaq.sock")
    state = os.path.join(open_dir, "state")
    args = ("--socket", sock, "--socket-group", people.groups["sock"])
    d = daemon_factory(*args, state=state)
    p = slaq_as(people, "alice", open_dir, sock, "submit", "--", "sleep",
                "300")
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    pid = d.job(jid)["pid"]
    d.kill9()
    d = daemon_factory(*args, state=state)
    j = d.job(jid)
    assert (j["state"], j["pid"], j["user"]) == (
        "running", pid, people.users["alice"])
    p = slaq_as(people, "bob", open_dir, sock, "cancel", str(jid))
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    p = slaq_as(people, "alice", open_dir, sock, "cancel", "--now", str(jid))
    assert p.returncode == 0, p.stderr
    d.wait_state(jid, "cancelled")


@needs_root
def test_a_users_job_checkpoints_in_that_users_directory_and_resumes(
        people, open_dir, daemon_factory):
    """Checkpoint suspend and resume of a job run as alice: the checkpoint
    is written as alice into her own directory under STATE/checkpoints
    (not one every user could plant files in), and the resumed job runs
    as alice too."""
    sock = os.path.join(open_dir, "slaq.sock")
    state = os.path.join(open_dir, "state")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"], state=state)
    train = os.path.join(open_dir, "slaq-train")
    shutil.copy(os.path.join(BUILD, "bin", "slaq-train"), train)
    os.chmod(train, 0o755)
    alice = people.pw("alice")

    def slaq(who, *args):
        return slaq_as(people, who, open_dir, sock, *args)
    p = slaq("alice", "submit", "--", train, "linreg", "--iters", "1000000",
             "--eval-every", "0")
    assert p.returncode == 0, p.stderr
    jid = int(p.stdout)
    wait_for(lambda: d.job(jid)["iter"] >= 3, timeout=60,
             what="3 iterations")
    p = slaq("alice", "suspend", "--checkpoint", str(jid))
    assert p.returncode == 0, p.stderr
    job = d.wait_state(jid, "stopped", timeout=30)
    assert job["suspended"] == "checkpoint"
    assert job["checkpoint_bytes"] > 100, job
    mine = os.path.join(state, "user-checkpoints", "uid-%d" % alice.pw_uid)
    st = os.stat(mine)
    assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (alice.pw_uid, 0o700)
    ck = os.stat(os.path.join(mine, "job-%d.ckpt" % jid))
    assert ck.st_uid == alice.pw_uid
    # Others may pass through to their own directories, list nothing;
    # slaqd's own jobs' checkpoints stay private.
    assert stat.S_IMODE(os.stat(os.path.dirname(mine)).st_mode) == 0o711
    d.wait_state(d.submit("true"), "done")  # a job of slaqd's own user
    assert stat.S_IMODE(os.stat(os.path.join(state, "checkpoints"))
                        .st_mode) == 0o700
    p = slaq("bob", "resume", str(jid))
    assert p.returncode != 0 and "permission denied" in p.stderr, p.stderr
    p = slaq("alice", "resume", str(jid))
    assert p.returncode == 0, p.stderr
    new = d.job(jid)["continued_by"]
    nj = wait_for(lambda: (lambda j: j if j["reports"] >= 1 else None)(
        d.job(new)), timeout=60, what="the resumed job's reports")
    assert nj["user"] == alice.pw_name and nj["resumed_from"] == jid
    assert nj["history"][0][0] == job["iter"] + 1  # it went on from there
    assert proc_status(nj["pid"])["Uid"] == [str(alice.pw_uid)] * 4
