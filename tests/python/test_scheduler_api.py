"""slaq.Scheduler, the Python control API, and `python3 -m slaq` against a
real slaqd (docs/client.md, "Control API (slaq.Scheduler)").

Checked: a notebook's use of it (three real training jobs submitted,
waited for, their histories read into DataFrames, each job's t90 computed
and compared with what `slaq show` says of the same job); slaqd's refusals
as exceptions carrying its message (PermissionDenied for another user's
job, NotFound, BadRequest, Unavailable); `python3 -m slaq` printing what
the C command prints; and the socket-trust rule of the slaq command: a
socket found (not named) in a directory another user controls, or served
by another user, is refused before anything is sent to it.
"""

import json
import math
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

import pytest

import slaq
from conftest import BUILD, ROOT, SLAQ, wait_for
from test_multiuser import People, as_user, needs_root  # noqa: F401
from test_multiuser import open_dir, people  # noqa: F401 (fixtures)

TRAIN = os.path.join(BUILD, "bin", "slaq-train")
PY = sys.executable
TRAIN_ARGS = ["logreg", "--subsample", "0.05", "--iters", "40"]


def t90(frame):
    """Seconds from a job's first report until its loss has covered 90%
    of its total drop: docs/metrics.md, "Time to X%" with X = 90, on the
    normalised loss of its "Normalised loss" section, ℓ(k) = (L(k) −
    L_end) / (L(0) − L_end), L(0) the first report's loss and L_end the
    last one the job reported (the demo summary's choice there). The time
    is that of the first report whose 1 − ℓ is at least 0.9, measured on
    slaqd's clock (the `t` column) from the first report rather than from
    the submission, so that it does not count the job's start-up. Returns
    (that report's iteration, the seconds), None when the loss did not
    drop."""
    first, last = frame["loss"].iloc[0], frame["loss"].iloc[-1]
    if not first > last:
        return None
    reduction = 1 - (frame["loss"] - last) / (first - last)
    reached = frame[reduction >= 0.9 - 1e-12]
    return (int(reached["iter"].iloc[0]),
            float(reached["t"].iloc[0] - frame["t"].iloc[0]))


def same_json(a, b):
    """a and b are the same JSON value, numbers within 10 significant
    digits."""
    if isinstance(a, dict):
        return (isinstance(b, dict) and a.keys() == b.keys() and
                all(same_json(a[k], b[k]) for k in a))
    if isinstance(a, list):
        return (isinstance(b, list) and len(a) == len(b) and
                all(same_json(x, y) for x, y in zip(a, b)))
    if isinstance(a, float) or isinstance(b, float):
        return (isinstance(b, (int, float)) and not isinstance(b, bool) and
                math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))
    return a == b


def python_m_slaq(*args, cwd=None, env=None):
    """Runs `python3 -m slaq ARGS` with this tree's python/ on the path."""
    e = dict(os.environ)
    e.pop("SLAQ_SOCKET", None)
    e.pop("SLAQ_HOST", None)
    e["PYTHONPATH"] = os.path.join(ROOT, "python")
    e.update(env or {})
    return subprocess.run([PY, "-m", "slaq"] + list(args), cwd=cwd, env=e,
                          capture_output=True, text=True, timeout=120)


def test_a_notebook_submits_three_jobs_and_reads_their_t90(daemon_factory,
                                                          tmp_path):
    pd = pytest.importorskip("pandas")
    d = daemon_factory()
    s = slaq.Scheduler(socket=d.sock)
    ids = [s.submit([TRAIN] + TRAIN_ARGS + ["--seed", str(k + 1)],
                    name="lr-%d" % k, cwd=str(tmp_path)) for k in range(3)]
    assert len(set(ids)) == 3 and all(isinstance(i, int) for i in ids)
    assert {j.id for j in s.jobs(all=True)} >= set(ids)

    finals = [s.wait(i, timeout=180) for i in ids]
    for j in finals:
        assert isinstance(j, slaq.Job)
        assert j.state == "done", (j.state, j.reason)
        assert j.iter == 40 and j.exit_code == 0
    assert not any(j.active for j in finals)

    frames = {i: s.history(i, as_frame=True) for i in ids}
    for i, f in frames.items():
        assert isinstance(f, pd.DataFrame)
        assert list(f.columns) == ["iter", "loss", "cpu_s", "samples", "t",
                                   "metric"]
        assert list(f["iter"]) == list(range(41))  # iteration 0 to 40
        assert (f["loss"].iloc[-1] < f["loss"].iloc[0])
    # The list form is the same reports.
    reports = s.history(ids[0])
    assert isinstance(reports[0], slaq.Report)
    assert [r.loss for r in reports] == list(frames[ids[0]]["loss"])

    for i in ids:
        mine = t90(frames[i])
        assert mine is not None and mine[1] > 0, frames[i]
        # What slaqd's `show` says of the same job: its history (at most
        # 500 rows, evenly thinned: these 41 are all of them) gives the
        # same t90, the same report within 1 ms (the same reports).
        cols = list(frames[i].columns)
        raw = t90(pd.DataFrame(d.job(i)["history"], columns=cols))
        assert raw[0] == mine[0] and abs(raw[1] - mine[1]) <= 1e-3, (
            i, mine, raw)
        # `slaq show --json` prints numbers with 10 significant digits, so
        # its t (Unix seconds, 10 digits before the point) is rounded to
        # the second: the same report, its time within 1 s.
        shown = json.loads(d.cli("show", "--json", str(i)).stdout)
        assert shown["reports"] == len(frames[i])
        theirs = t90(pd.DataFrame(shown["history"], columns=cols))
        assert theirs[0] == mine[0], (i, mine, theirs)
        assert abs(mine[1] - theirs[1]) <= 1.0, (i, mine, theirs)
        # ... and its plain text prints the first and last loss the t90 is
        # measured between (printed with 6 significant digits).
        text = d.cli("show", str(i)).stdout
        m = re.search(r"loss +first (\S+), last (\S+)", text)
        assert m, text
        assert math.isclose(float(m.group(1)), frames[i]["loss"].iloc[0],
                            rel_tol=1e-5)
        assert math.isclose(float(m.group(2)), frames[i]["loss"].iloc[-1],
                            rel_tol=1e-5)
        # The Job of the API is show's object, field for field.
        job = s.job(i)
        assert job.to_dict().keys() == shown.keys()
        assert job.id == shown["id"] and job.state == shown["state"]
        assert job.history == d.job(i)["history"]


def test_history_as_frame_without_pandas_says_what_it_needs(slaqd,
                                                           monkeypatch):
    jid = slaqd.submit("true")
    slaqd.wait_state(jid, "done")
    monkeypatch.setitem(sys.modules, "pandas", None)  # import fails
    s = slaq.Scheduler(socket=slaqd.sock)
    with pytest.raises(ImportError, match="needs pandas"):
        s.history(jid, as_frame=True)
    assert s.history(jid) == []  # a job that never reported


def test_unknown_fields_of_a_newer_slaqd_are_kept():
    j = slaq.Job.from_dict({"id": 3, "state": "running", "new_thing": 7})
    assert j.id == 3 and j.extra == {"new_thing": 7}
    assert j["new_thing"] == 7 and j["state"] == "running"
    assert j.to_dict()["new_thing"] == 7 and j.active


def test_errors_carry_slaqds_code_and_message(slaqd, tmp_path):
    s = slaq.Scheduler(socket=slaqd.sock)
    with pytest.raises(slaq.NotFound) as e:
        s.job(987654)
    assert e.value.code == "unknown_job"
    assert str(e.value) == "no job with id 987654"
    with pytest.raises(slaq.NotFound):
        s.cancel(987654)
    with pytest.raises(slaq.BadRequest) as e:
        s.policy("no-such-policy")
    assert e.value.code == "bad_policy"
    assert "unknown policy" in str(e.value) and "fair" in str(e.value)
    assert s.policy() == "slaq"  # nothing changed
    with pytest.raises(slaq.BadRequest) as e:
        s.job("not-an-id")
    assert e.value.code == "bad_request", e.value.reply
    assert "must be a job id" in str(e.value)
    with pytest.raises(slaq.BadRequest) as e:
        s.submit([TRAIN], target_reduction=7)
    assert "target_reduction" in str(e.value), e.value.reply
    missing = str(tmp_path / "no" / "slaq.sock")
    with pytest.raises(slaq.Unavailable) as e:
        slaq.Scheduler(socket=missing).status()
    assert "cannot connect to %s" % missing in str(e.value)
    assert e.value.code is None
    for cls in (slaq.NotFound, slaq.BadRequest, slaq.Unavailable,
                slaq.PermissionDenied):
        assert issubclass(cls, slaq.SlaqError)


def test_status_cancel_suspend_resume_policy(slaqd):
    s = slaq.Scheduler(state_dir=slaqd.state)
    st = s.status()
    assert isinstance(st, slaq.Status)
    assert st.pid == slaqd.proc.pid and st.policy == "slaq"
    assert "jobs_total" in st.extra and st["jobs_total"] == st.extra[
        "jobs_total"]
    jid = s.submit(["sleep", "300"], name="sl")
    slaqd.wait_state(jid, "running")
    s.suspend(jid)
    assert slaqd.job(jid)["suspended"]
    s.resume(jid)
    assert not slaqd.job(jid)["suspended"]
    assert s.cancel(jid, now=True).state == "stopping"
    assert s.wait(jid, timeout=30).state == "cancelled"
    with pytest.raises(TimeoutError):
        s.wait(s.submit(["sleep", "300"]), timeout=0.3, poll=0.1)
    assert s.policy("fair") == "fair" and slaqd.request(
        {"type": "policy"})["policy"] == "fair"


def test_submit_sends_this_processs_environment_and_directory(slaqd,
                                                              tmp_path,
                                                              monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("SLAQ_API_MARK", "from-the-api")
    out = tmp_path / "env.txt"
    jid = slaq.Scheduler(socket=slaqd.sock).submit(
        ["sh", "-c", "echo $SLAQ_API_MARK; pwd"], name="env")
    slaqd.wait_state(jid, "done")
    log = os.path.join(slaqd.job(jid)["log_dir"], "stdout.log")
    lines = open(log).read().split()
    assert lines == ["from-the-api", str(tmp_path)], (lines, out)


def test_python_m_slaq_prints_what_slaq_prints(slaqd, tmp_path):
    sub = python_m_slaq("submit", "--socket", slaqd.sock, "--name", "pm",
                        "--", TRAIN, *TRAIN_ARGS, cwd=str(tmp_path))
    assert sub.returncode == 0, sub.stderr
    jid = int(sub.stdout)
    assert slaqd.job(jid)["name"] == "pm"
    slaqd.wait_state(jid, ("done", "failed"), timeout=180)
    for verb in (["ls", "-a"], ["show", str(jid)], ["history", str(jid)],
                 ["history", str(jid), "--csv"], ["policy"]):
        mine = python_m_slaq(verb[0], "--socket", slaqd.sock, *verb[1:])
        theirs = slaqd.cli(*verb)
        assert mine.returncode == 0, (verb, mine.stderr)
        assert mine.stdout == theirs.stdout, verb
    js = json.loads(python_m_slaq("ls", "-a", "--json", "--socket",
                                  slaqd.sock).stdout)
    assert [j["id"] for j in js["jobs"]] == [jid] and js["next"] is None
    shown = json.loads(python_m_slaq("show", str(jid), "--json", "--state-dir",
                                     slaqd.state).stdout)
    # The same object; `slaq show --json` prints 10 significant digits,
    # python3 -m slaq all of them.
    assert same_json(shown, json.loads(slaqd.cli("show", "--json",
                                                 str(jid)).stdout))
    bad = python_m_slaq("show", "424242", "--socket", slaqd.sock)
    assert bad.returncode == 2 and "no job with id 424242" in bad.stderr
    for verb in ("submit", "ls", "show", "history", "cancel", "suspend",
                 "resume", "policy", "status", "wait"):
        h = python_m_slaq(verb, "--help")
        assert h.returncode == 0 and "--socket" in h.stdout, verb
    st = python_m_slaq("status", "--socket", slaqd.sock)
    assert "policy       slaq" in st.stdout, st.stdout


# --- the socket-trust rule --------------------------------------------

class FakeSlaqd:
    """A server on a Unix socket that answers every line with an "ok"
    status and counts the bytes it received: what a request to it sent."""

    def __init__(self, path):
        self.path = path
        self.received = 0
        self.srv = socket.socket(socket.AF_UNIX)
        self.srv.bind(path)
        self.srv.listen(8)
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self):
        while True:
            try:
                c, _ = self.srv.accept()
            except OSError:
                return
            c.settimeout(2)
            try:
                data = c.recv(65536)
                self.received += len(data)
                if data:
                    c.sendall(b'{"type":"result","ok":true,"pid":1,'
                              b'"policy":"fake"}\n')
            except OSError:
                pass
            c.close()

    def close(self):
        self.srv.close()


def test_a_found_socket_in_a_directory_others_may_change_is_refused(
        tmp_path, monkeypatch):
    monkeypatch.delenv("SLAQ_SOCKET", raising=False)
    monkeypatch.delenv("SLAQ_HOST", raising=False)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "var").mkdir()
    os.chmod(tmp_path / "var", 0o777)
    fake = FakeSlaqd("var/slaq.sock")
    try:
        with pytest.raises(slaq.Unavailable) as e:
            slaq.Scheduler().status()
        assert "refusing ./var/slaq.sock: it is in a directory another " \
               "user may change" in str(e.value)
        time.sleep(0.2)
        assert fake.received == 0
        # Named, the same socket is the user's choice: the request goes.
        assert slaq.Scheduler(socket="var/slaq.sock").status().policy == \
            "fake"
        assert fake.received > 0
        # Found in a directory only its owner may change: trusted.
        os.chmod(tmp_path / "var", 0o755)
        before = fake.received
        assert slaq.Scheduler().status().policy == "fake"
        assert fake.received > before
    finally:
        fake.close()


FAKE_SERVER = r"""
import socket, sys, os
path, log = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path)
os.chmod(path, 0o777)  # anyone may connect: a trap for others
s.listen(8)
print("ready", flush=True)
while True:
    c, _ = s.accept()
    c.settimeout(2)
    try:
        data = c.recv(65536)
    except OSError:
        data = b""
    with open(log, "a") as f:
        f.write("%d\n" % len(data))
    if data:
        c.sendall(b'{"type":"result","ok":true,"pid":1,"policy":"bobs"}\n')
    c.close()
"""

CLIENT = r"""
import json, sys
import slaq
try:
    print(json.dumps({"ok": slaq.Scheduler().status().policy}))
except slaq.SlaqError as e:
    print(json.dumps({"error": type(e).__name__, "message": str(e)}))
"""


def _popen_as(people, who, argv, cwd):
    pw = people.pw(who)
    return subprocess.Popen(
        ["setpriv", "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid,
         "--init-groups", "--"] + argv, cwd=cwd, stdout=subprocess.PIPE,
        text=True)


def _bytes_received(log):
    try:
        with open(log) as f:
            return [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return []


@needs_root
def test_a_socket_of_another_user_is_refused_and_nothing_is_sent(
        people, open_dir):
    py = os.path.join(open_dir, "py")
    shutil.copytree(os.path.join(ROOT, "python", "slaq"),
                    os.path.join(py, "slaq"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = os.path.join(open_dir, "fake.py")
    with open(script, "w") as f:
        f.write(FAKE_SERVER)
    bob = people.pw("bob")
    # A shared directory (as /tmp: everyone may create in it) where bob
    # made ./var and serves var/slaq.sock.
    shared = tempfile.mkdtemp(prefix="slaq-shared-", dir="/tmp")
    os.chmod(shared, 0o1777)
    os.mkdir(os.path.join(shared, "var"))
    os.chown(os.path.join(shared, "var"), bob.pw_uid, bob.pw_gid)
    log = os.path.join(bob.pw_dir, "received.log")
    servers = []
    try:
        srv = _popen_as(people, "bob", [PY, script, "var/slaq.sock", log],
                        cwd=shared)
        servers.append(srv)
        assert srv.stdout.readline().strip() == "ready"

        def alice(cwd):
            p = as_user(people, "alice", PY, "-c", CLIENT, cwd=cwd,
                        env={"PYTHONPATH": py})
            assert p.returncode == 0, p.stderr
            return json.loads(p.stdout)

        r = alice(shared)
        assert r["error"] == "Unavailable", r
        assert "refusing ./var/slaq.sock: it belongs to uid %d, not you or " \
               "root" % bob.pw_uid in r["message"], r
        # In alice's own ./var, her socket file, but bob's server behind it
        # (his listening socket moved there by root): refused by SO_PEERCRED.
        mine = os.path.join(people.pw("alice").pw_dir, "work")
        os.makedirs(os.path.join(mine, "var"))
        alice_pw = people.pw("alice")
        for p in (mine, os.path.join(mine, "var")):
            os.chown(p, alice_pw.pw_uid, alice_pw.pw_gid)
        os.rename(os.path.join(shared, "var", "slaq.sock"),
                  os.path.join(mine, "var", "slaq.sock"))
        os.chown(os.path.join(mine, "var", "slaq.sock"), alice_pw.pw_uid,
                 alice_pw.pw_gid)
        r = alice(mine)
        assert r["error"] == "Unavailable", r
        assert "refusing ./var/slaq.sock: it is served by uid %d" \
               % bob.pw_uid in r["message"], r
        # Nothing reached bob's server (it saw connections, no bytes) ...
        wait_for(lambda: len(_bytes_received(log)) >= 2, timeout=5,
                 what="the fake server to log both connections")
        assert _bytes_received(log) == [0, 0]
        # ... while a socket alice names is hers to trust: it receives.
        p = as_user(people, "alice", PY, "-c", CLIENT, cwd=mine,
                    env={"PYTHONPATH": py,
                         "SLAQ_SOCKET": os.path.join(mine, "var",
                                                     "slaq.sock")})
        assert json.loads(p.stdout) == {"ok": "bobs"}, p.stdout
        wait_for(lambda: len(_bytes_received(log)) >= 3, timeout=5,
                 what="the named request")
        assert _bytes_received(log)[2] > 0
    finally:
        for srv in servers:
            srv.kill()
            srv.wait()
        shutil.rmtree(shared, ignore_errors=True)


# --- two users ----------------------------------------------------------

USER_SCRIPT = r"""
import json, sys
import slaq
s = slaq.Scheduler(socket=sys.argv[1])
try:
    if sys.argv[2] == "submit":
        out = {"job": s.submit(["sleep", "300"], name="mine", cwd="/tmp")}
    elif sys.argv[2] == "cancel":
        out = {"job": s.cancel(int(sys.argv[3])).state}
    elif sys.argv[2] == "policy":
        out = {"policy": s.policy(sys.argv[3])}
except slaq.SlaqError as e:
    out = {"error": type(e).__name__, "code": e.code, "message": str(e)}
print(json.dumps(out))
"""


@needs_root
def test_bob_may_not_cancel_alices_job(people, open_dir, daemon_factory):
    sock = os.path.join(open_dir, "slaq.sock")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"], "--admin-group",
                       people.groups["adm"],
                       state=os.path.join(open_dir, "state"))
    py = os.path.join(open_dir, "py")
    shutil.copytree(os.path.join(ROOT, "python", "slaq"),
                    os.path.join(py, "slaq"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    script = os.path.join(open_dir, "user.py")
    with open(script, "w") as f:
        f.write(USER_SCRIPT)

    def api(who, *args):
        p = as_user(people, who, PY, script, sock, *args,
                    env={"PYTHONPATH": py})
        assert p.returncode == 0, p.stderr
        return json.loads(p.stdout)

    jid = api("alice", "submit")["job"]
    j = d.wait_state(jid, "running")
    assert j["user"] == people.users["alice"]
    r = api("bob", "cancel", str(jid))
    assert r["error"] == "PermissionDenied" and \
        r["code"] == "permission_denied", r
    assert r["message"].startswith("permission denied: job %d belongs to %s"
                                   % (jid, people.users["alice"])), r
    assert d.job(jid)["state"] == "running"
    r = api("bob", "policy", "fair")
    assert r["error"] == "PermissionDenied", r
    assert d.request({"type": "policy"})["policy"] == "slaq"
    assert api("alice", "cancel", str(jid)) == {"job": "stopping"}
    assert api("carol", "policy", "fair") == {"policy": "fair"}


# --- TCP: sealed sessions -------------------------------------------------

def test_over_tcp_a_sealed_session_with_a_users_credential(daemon_factory,
                                                          tmp_path,
                                                          monkeypatch):
    from conftest import free_port
    port = free_port()
    (tmp_path / "control").write_text("control-token-1234\n")
    d = daemon_factory("--tcp", "127.0.0.1:%d" % port, "--token-file",
                       str(tmp_path / "control"))
    addr = "127.0.0.1:%d" % port
    cred = d.request({"type": "user_token"})["user_token"]
    s = slaq.Scheduler(host=addr, credential=cred)
    assert s.status().pid == d.proc.pid
    jid = s.submit(["sleep", "300"], name="over-tcp", cwd=str(tmp_path))
    assert d.job(jid)["name"] == "over-tcp"
    assert s.job(jid).id == jid
    with pytest.raises(slaq.NotFound):
        s.job(jid + 100)
    assert s.cancel(jid, now=True).state == "stopping"
    # $SLAQ_HOST and $SLAQ_USER_TOKEN, as the slaq command reads them.
    monkeypatch.setenv("SLAQ_HOST", addr)
    monkeypatch.setenv("SLAQ_USER_TOKEN", cred)
    assert slaq.Scheduler().policy() == "slaq"
    # The control token's identity: an administrator.
    admin = slaq.Scheduler(host=addr, credential="admin:control-token-1234")
    assert admin.policy("fair") == "fair"
    # A secret that is not the credential's: slaqd's proof does not match
    # it, and the session stops there.
    bad = cred[:-4] + ("0000" if not cred.endswith("0000") else "1111")
    with pytest.raises(slaq.Unavailable, match="not the slaqd of your"):
        slaq.Scheduler(host=addr, credential=bad).status()
    # An expired claim: slaqd refuses it, and says why.
    uid, _, gen, hexkey = cred.split(":")
    with pytest.raises(slaq.PermissionDenied) as e:
        slaq.Scheduler(host=addr, credential=":".join(
            [uid, "1", gen, hexkey])).status()
    assert e.value.code == "unauthorized", e.value.reply
    assert "refused the session" in str(e.value)
    assert "expired" in str(e.value)
    with pytest.raises(ValueError):
        slaq.Scheduler(host=addr, socket=d.sock)


def test_over_tcp_a_server_that_cannot_prove_the_key_gets_only_the_hello(
        tmp_path):
    got = []
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)

    def serve():
        c, _ = srv.accept()
        f = c.makefile("rb")
        got.append(f.readline())
        c.sendall(json.dumps({"type": "link_challenge", "nonce": "11" * 32,
                              "proof": "22" * 32}).encode() + b"\n")
        c.settimeout(1)
        try:
            got.append(c.recv(65536))
        except OSError:
            got.append(b"")
        c.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    cred = "0:4102444800:1:" + "ab" * 32
    with pytest.raises(slaq.Unavailable) as e:
        slaq.Scheduler(host="127.0.0.1:%d" % srv.getsockname()[1],
                       credential=cred).status()
    t.join(5)
    srv.close()
    assert "is not the slaqd of your credential" in str(e.value)
    hello = json.loads(got[0])
    assert hello["type"] == "link_hello" and hello["as"] == "0:4102444800:1"
    assert "ab" * 32 not in got[0].decode()
    assert got[1] == b""  # no proof, no request


def test_a_sweep_from_a_dict_or_a_file(slaqd, tmp_path):
    s = slaq.Scheduler(socket=slaqd.sock)
    spec = {"name": "api-sweep", "command": "sleep {x}",
            "space": {"x": {"type": "choice", "values": [100, 200]}},
            "configs": 2, "metric": "m", "direction": "max", "y_target": 1,
            "t_max": 10, "epochs": 3, "slots": 1, "policy": "pop"}
    w = s.sweep(spec, cwd=str(tmp_path))
    assert w["name"] == "api-sweep" and w["state"] == "running", w
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(dict(spec, name="from-file")))
    w2 = s.sweep(str(path))
    assert w2["name"] == "from-file" and w2["id"] != w["id"]
    with pytest.raises(slaq.BadRequest) as e:
        s.sweep({"name": "no-space"})
    assert e.value.code == "bad_spec" and "space" in str(e.value)
    for sw in (w, w2):
        s.request({"type": "sweep_cancel", "sweep": sw["id"]})


def test_history_follows_every_page(slaqd, tmp_path):
    s = slaq.Scheduler(socket=slaqd.sock)
    jid = s.submit([TRAIN] + TRAIN_ARGS, cwd=str(tmp_path))
    s.wait(jid, timeout=180)
    whole = s.history(jid)
    assert [r.iter for r in whole] == list(range(41))
    sent = []
    real = s.request
    s.request = lambda msg: (sent.append(msg), real(msg))[1]
    assert s.history(jid, page=7) == whole  # 41 reports, 6 pages of 7
    assert [m["after"] for m in sent] == [None, 6, 13, 20, 27, 34]
    assert all(m["limit"] == 7 for m in sent)


def test_over_tcp_without_libsodium_says_what_it_needs(monkeypatch):
    import slaq.sealed

    def no_library(name):
        raise OSError("%s: cannot open shared object file" % name)

    monkeypatch.setattr(slaq.sealed, "_sodium", None)
    monkeypatch.setattr(slaq.sealed.ctypes, "CDLL", no_library)
    with pytest.raises(slaq.Unavailable, match="TCP needs libsodium"):
        slaq.Scheduler(host="127.0.0.1:9",
                       credential="admin:whatever-token").status()
