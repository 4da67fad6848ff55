"""The agent link under attack (docs/security.md, "The cluster"): a fake
controller on an agent's --join address gets no token and runs nothing; an
agent without the token, or one replaying a recorded connection, is
refused; a line altered or replayed on the wire closes the link; token
guesses from many source addresses stay under the per-port rate; a job
on an agent gets its submitter's environment, nothing of the
controller's; and an agent starts only with its own node's key
(tests/security/test_node_keys.py attacks the keys)."""

import json
import os
import socket
import subprocess
import threading
import time

import pytest

from agentlink import AgentLink, Refused, node_key, node_key_args
from conftest import SLAQD, TOY, free_port, wait_for

TOKEN = "agent-secret-token-1"


@pytest.fixture
def token_file(tmp_path):
    p = tmp_path / "agent.token"
    p.write_text(TOKEN + "\n")
    return p


def start_agent(daemon_factory, tmp_path, token_file, join_port, name="n1"):
    return daemon_factory("--agent", "--join", "127.0.0.1:%d" % join_port,
                          *node_key_args(tmp_path, token_file, name),
                          "--cores", "2",
                          "--enforce", "signal",
                          state=tmp_path / ("agent-" + name))


def start_controller(daemon_factory, tmp_path, token_file, port, *extra):
    return daemon_factory("--agents", "127.0.0.1:%d" % port,
                          "--agent-token-file", str(token_file), *extra,
                          state=tmp_path / "controller")


def nodes_of(d):
    return {n["name"]: n for n in d.request({"type": "nodes"})["nodes"]}


def marker_start(job, marker):
    """A start as the old protocol had it: it would touch marker."""
    return {"type": "start", "job": job, "secret": "ab" * 32,
            "name": "evil", "cmd": ["sh", "-c", "id > %s" % marker],
            "cwd": "/", "env": ["PATH=/usr/bin:/bin"]}


def test_fake_controller_gets_no_token_and_its_start_is_not_run(
        daemon_factory, tmp_path, token_file):
    """Anyone who binds the --join address while the controller is down:
    speaking the old protocol (welcome, start) or the new handshake without
    the key, it hears no token and its start runs nothing."""
    port = free_port()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)
    srv.settimeout(15)
    heard = []
    markers = [tmp_path / "marker-old", tmp_path / "marker-new"]
    agent = start_agent(daemon_factory, tmp_path, token_file, port)

    def fake(mode, marker):
        c, _ = srv.accept()
        c.settimeout(5)
        f = c.makefile("rb")
        first = f.readline()
        heard.append(first)
        if mode == "old":
            c.sendall(json.dumps({"type": "welcome", "epoch_s": 1,
                                  "jobs": {}}).encode() + b"\n")
        else:  # the handshake, with a made-up proof
            c.sendall(json.dumps({"type": "link_challenge",
                                  "nonce": os.urandom(32).hex(),
                                  "proof": os.urandom(32).hex()}).encode()
                      + b"\n")
        try:
            c.sendall(json.dumps(marker_start(7, marker)).encode() + b"\n")
            # Whatever else the agent says before it hangs up (or for 2 s).
            c.settimeout(0.5)
            until = time.monotonic() + 2
            while time.monotonic() < until:
                try:
                    more = c.recv(65536)
                except (socket.timeout, TimeoutError):
                    continue
                if not more:
                    break
                heard.append(more)
        except OSError:
            pass
        c.close()

    fake("old", markers[0])
    fake("new", markers[1])
    srv.close()
    time.sleep(1.0)  # a start, had it been taken, would have run by now
    said = b"".join(heard)
    assert TOKEN.encode() not in said, said
    assert b"register" not in said, said
    for m in markers:
        assert not m.exists(), "the fake controller's start ran: %s" % \
            m.read_text()
    assert agent.jobs() == []
    assert "not trusted" in agent.read_log()
    # Each connection said only the hello.
    assert all(json.loads(h)["type"] == "link_hello"
               for h in heard if h.startswith(b"{"))


def test_agent_without_the_key_is_refused(daemon_factory, tmp_path,
                                          token_file):
    port = free_port()
    ctl = start_controller(daemon_factory, tmp_path, token_file, port)
    # It cannot check the controller's proof, so it goes on with its own.
    link = AgentLink(port, "a-guessed-token", check_controller=False)
    m = link.recv()
    assert m["plain"] and m["code"] == "unauthorized", m
    assert link.closed_by_peer()
    # An agent that checks sees that this controller is not its own.
    with pytest.raises(Refused):
        AgentLink(port, "a-guessed-token")
    st = ctl.request({"type": "status"})
    assert st["auth_failures_total"] >= 1
    assert nodes_of(ctl) == {}


class Proxy:
    """A TCP relay on a port of its own to the controller's agent port,
    line by line; tamper(direction, n, line) returns the lines to pass on
    for the n-th line (0-based) of that direction ("up": agent to
    controller, "down": controller to agent). Records what passed and who
    closed."""

    def __init__(self, target, tamper):
        self.port = free_port()
        self.srv = socket.socket()
        self.srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.srv.bind(("127.0.0.1", self.port))
        self.srv.listen(8)
        self.target, self.tamper = target, tamper
        self.up, self.down, self.closed_by = [], [], []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                a, _ = self.srv.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.target))
            for src, dst, d, log, who in ((a, b, "up", self.up, "agent"),
                                          (b, a, "down", self.down,
                                           "controller")):
                threading.Thread(target=self._pump,
                                 args=(src, dst, d, log, who),
                                 daemon=True).start()
            return  # one connection is the test's; later ones are refused

    def _pump(self, src, dst, direction, log, who):
        f = src.makefile("rb")
        try:
            for line in f:
                n = len(log)
                log.append(line)
                for out in self.tamper(direction, n, line):
                    dst.sendall(out)
        except OSError:
            pass
        self.closed_by.append(who)
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def close(self):
        self.srv.close()


def altered(line):
    """The line with one bit flipped, or for a clear-text start (the
    protocol before the link), its command replaced."""
    if line.startswith(b"{"):
        m = json.loads(line)
        if m.get("type") == "start":
            m["cmd"] = ["sh", "-c", "id > %s" % ALTERED_MARKER[0]]
            return json.dumps(m).encode() + b"\n"
        return line
    b = bytearray(line)
    b[len(b) // 2] ^= 0x04
    return bytes(b)


ALTERED_MARKER = [None]


def test_altered_start_is_refused_and_not_run(daemon_factory, tmp_path,
                                              token_file):
    """A start altered on the wire (its command replaced, or any bit of the
    sealed line flipped) is not run: the agent drops the link."""
    ALTERED_MARKER[0] = tmp_path / "altered-marker"
    port = free_port()
    ctl = start_controller(daemon_factory, tmp_path, token_file, port,
                           "--epoch", "0.5")
    state = {"armed": False}

    def tamper(direction, n, line):
        if direction == "down" and state["armed"]:
            return [altered(line)]
        return [line]

    proxy = Proxy(port, tamper)
    agent = start_agent(daemon_factory, tmp_path, token_file, proxy.port)
    wait_for(lambda: nodes_of(ctl).get("n1", {}).get("state") == "up",
             timeout=10, what="the agent through the relay")
    state["armed"] = True
    job = ctl.submit(TOY, "--forever", node="n1")
    wait_for(lambda: proxy.closed_by or ALTERED_MARKER[0].exists(),
             timeout=10, what="the link to be dropped")
    time.sleep(0.5)
    assert not ALTERED_MARKER[0].exists(), \
        "the altered start ran: " + ALTERED_MARKER[0].read_text()
    assert agent.jobs() == [], agent.jobs()
    assert "does not open" in agent.read_log()
    st = agent.request({"type": "status"})
    assert st["agent_link_refused_total"] >= 1
    assert ctl.job(job)["pid"] in (0, None)  # no start was answered
    proxy.close()


def test_replayed_line_closes_the_link(daemon_factory, tmp_path,
                                       token_file):
    """A line of the agent's sent again (a replay) is refused by the
    controller, which closes the connection."""
    port = free_port()
    ctl = start_controller(daemon_factory, tmp_path, token_file, port)
    replay = {"armed": False, "done": False}

    def tamper(direction, n, line):
        if direction == "up" and replay["armed"] and not replay["done"]:
            replay["done"] = True
            return [line, line]
        return [line]

    proxy = Proxy(port, tamper)
    start_agent(daemon_factory, tmp_path, token_file, proxy.port)
    wait_for(lambda: nodes_of(ctl).get("n1", {}).get("state") == "up",
             timeout=10, what="the agent through the relay")
    replay["armed"] = True  # the next heartbeat goes twice
    wait_for(lambda: "controller" in proxy.closed_by or
             "agent" in proxy.closed_by, timeout=10,
             what="the controller to close the link")
    st = ctl.request({"type": "status"})
    assert st["agent_link_refused_total"] == 1, st
    assert "does not open" in ctl.read_log()
    proxy.close()


def test_recorded_connection_replayed_does_not_join(
        daemon_factory, tmp_path, token_file):
    """An eavesdropper who recorded an agent's whole connection and plays
    it again to the controller does not join: the controller's nonce is
    new, so the recorded proof is wrong."""
    port = free_port()
    ctl = start_controller(daemon_factory, tmp_path, token_file, port)
    proxy = Proxy(port, lambda direction, n, line: [line])
    start_agent(daemon_factory, tmp_path, token_file, proxy.port)
    wait_for(lambda: len(proxy.up) >= 3, timeout=10,
             what="the agent's hello, proof and register")
    recorded = b"".join(proxy.up[:3])
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(recorded)
    f = s.makefile("rb")
    replies = [json.loads(f.readline()) for _ in range(2)]
    s.close()
    assert replies[0]["type"] == "link_challenge"
    assert replies[1]["type"] == "error" and \
        replies[1]["code"] == "unauthorized", replies
    assert ctl.request({"type": "status"})["auth_failures_total"] == 1
    wait_for(lambda: list(nodes_of(ctl)) == ["n1"],
             what="the real agent only")
    proxy.close()


def guess_agent_port(port, source):
    """One token guess on the agent port from source: True if it was
    checked (a wrong proof), False if refused unchecked (rate limit)."""
    link = AgentLink(port, "a-guessed-token", check_controller=False,
                     timeout=5, source=(source, 0))
    m = link.recv()
    link.close()
    assert m["plain"], m
    assert m["code"] in ("unauthorized", "rate_limited"), m
    return m["code"] == "unauthorized"


def guess_tcp_port(port, source):
    s = socket.create_connection(("127.0.0.1", port), timeout=5,
                                 source_address=(source, 0))
    s.sendall(json.dumps({"type": "status",
                          "token": "guess-%s" % source}).encode() + b"\n")
    m = json.loads(s.makefile("rb").readline())
    s.close()
    assert m.get("code") in ("unauthorized", "rate_limited"), m
    return m["code"] == "unauthorized"


def measure(guess, port, seconds, threads=4):
    """Guesses from rotating 127.x.y.z source addresses for seconds;
    returns (times of the checked ones, refused, elapsed)."""
    counts = {"checked": [], "refused": 0}
    lock = threading.Lock()
    t0 = time.monotonic()

    def run(k):
        i = 0
        while time.monotonic() - t0 < seconds:
            i += 1
            src = "127.%d.%d.%d" % (k + 1, (i // 250) % 250, i % 250 + 1)
            ok = guess(port, src)
            with lock:
                if ok:
                    counts["checked"].append(time.monotonic())
                else:
                    counts["refused"] += 1

    ts = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    return counts["checked"], counts["refused"], time.monotonic() - t0


def most_in_a_second(times):
    """The most of times that fall in any one-second window."""
    times = sorted(times)
    best, lo = 0, 0
    for hi, t in enumerate(times):
        while t - times[lo] > 1.0:
            lo += 1
        best = max(best, hi - lo + 1)
    return best


def test_guesses_from_many_addresses_stay_under_the_port_rate(
        daemon_factory, tmp_path, token_file):
    """Rotating through 127.0.0.0/8 gets no more checked guesses than the
    per-port bucket allows: 5 a second after a burst of 4 (so at most 9
    in any second: the target is 10) on each port, and all ports together 8 a second after a
    burst of 8."""
    port, tcp = free_port(), free_port()
    ctl_token = tmp_path / "control.token"
    ctl_token.write_text("control-token-99\n")
    ctl = start_controller(daemon_factory, tmp_path, token_file, port,
                           "--tcp", "127.0.0.1:%d" % tcp,
                           "--token-file", str(ctl_token))
    seconds = 4.0
    results = {}
    for name, guess, p in (("control port", guess_tcp_port, tcp),
                           ("agent port", guess_agent_port, port)):
        times, refused, took = measure(guess, p, seconds)
        checked = len(times)
        peak = most_in_a_second(times)
        results[name] = (checked, refused, took, peak)
        print("%s: %d guesses checked, %d refused unchecked in %.1f s "
              "(%.1f checked/s, at most %d in any second) from %d source "
              "addresses" % (name, checked, refused, took, checked / took,
                             peak, checked + refused))
        assert refused > checked, "the limit was never reached: %s" % results
        assert checked <= 4 + 5 * took + 1, results
        assert peak <= 10, results
        # The buckets refill before the next part: a port's 4 at 5 a
        # second, all ports' 8 at 8 a second (their arithmetic is checked
        # exactly, without waiting, in tests/daemon/test_conn.c).
        time.sleep(1)
    # Both ports at once: the overall bucket.
    both = {}

    def run(name, guess, p):
        both[name] = measure(guess, p, seconds, threads=2)

    ts = [threading.Thread(target=run, args=a) for a in (
        ("agent port", guess_agent_port, port),
        ("control port", guess_tcp_port, tcp))]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    total = sum(len(c) for c, _, _ in both.values())
    took = max(t for _, _, t in both.values())
    print("both ports at once: %d checked in %.1f s (%.1f/s)" %
          (total, took, total / took))
    assert total <= 8 + 8 * took + 1, both
    st = ctl.request({"type": "status"})
    assert st["auth_limited_total"] > 0
    assert nodes_of(ctl) == {}


def environ_of(pid):
    with open("/proc/%d/environ" % pid, "rb") as f:
        return [e.decode() for e in f.read().split(b"\0") if e]


def test_a_job_gets_its_submitters_environment_and_nothing_more(
        daemon_factory, tmp_path, token_file, monkeypatch):
    """What reaches a job on an agent is the environment its submitter
    sent (with slaqd's SLAQ_* and thread variables), never the
    controller's own; the agent token given in SLAQ_AGENT_TOKEN reaches no
    job."""
    port = free_port()
    monkeypatch.setenv("CONTROLLER_ONLY", "the controller's own")
    monkeypatch.setenv("SLAQ_AGENT_TOKEN", TOKEN)
    ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                         state=tmp_path / "controller")
    monkeypatch.delenv("CONTROLLER_ONLY")
    # The agent has its key; the token in its environment too (as where
    # one environment starts both) is dropped, not taken.
    agent = daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                           *node_key_args(tmp_path, TOKEN, "n1"),
                           "--cores", "2", "--enforce", "signal",
                           state=tmp_path / "agent-n1")
    monkeypatch.delenv("SLAQ_AGENT_TOKEN")
    wait_for(lambda: nodes_of(ctl).get("n1", {}).get("state") == "up",
             timeout=10, what="the agent")
    sleep = ["sleep", "60"]
    submitted = ["PATH=/usr/bin:/bin", "ONLY_THIS=1"]
    jobs = {}
    # With an environment, restartable and not: exactly it, plus slaqd's.
    for restartable in (False, True):
        r = ctl.request({"type": "submit", "cmd": sleep, "cwd": "/",
                         "name": "env", "env": submitted,
                         "restartable": restartable})
        assert r["ok"], r
        jobs[restartable] = r["job"]
    # Without one: the agent's environment, not the controller's.
    r = ctl.request({"type": "submit", "cmd": sleep, "cwd": "/",
                     "name": "noenv", "restartable": True})
    assert r["ok"], r
    bare = r["job"]
    for j in list(jobs.values()) + [bare]:
        wait_for(lambda: agent.request({"type": "show", "job": j})
                 .get("job", {}).get("pid"), timeout=10,
                 what="job %d on the agent" % j)
    for restartable, j in jobs.items():
        env = environ_of(agent.job(j)["pid"])
        names = sorted(e.split("=", 1)[0] for e in env)
        # slaqd's own: its SLAQ_* and the math libraries' thread
        # variables at --job-threads (docs/slaqd.md)
        want = sorted(["ONLY_THIS", "PATH", "SLAQ_CHECKPOINT_DIR",
                       "SLAQ_JOB_ID", "SLAQ_JOB_SECRET", "SLAQ_SOCKET",
                       "SLAQ_DEFAULT_CORES", "OMP_NUM_THREADS",
                       "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                       "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
                       "NUMEXPR_NUM_THREADS", "OMP_WAIT_POLICY"])
        assert names == want, env
        ck = [e for e in env if e.startswith("SLAQ_CHECKPOINT_DIR=")][0]
        if restartable:  # the controller's shared directory, generation 1
            assert ck.endswith("controller/checkpoints/%d/gen-1" % j), ck
        else:
            assert "agent-n1" in ck, ck
    env = environ_of(agent.job(bare)["pid"])
    assert not [e for e in env if e.startswith("CONTROLLER_ONLY=")], env
    assert not [e for e in env if e.startswith("SLAQ_AGENT_TOKEN=")], env
    assert not [e for e in env if TOKEN in e], env
    key = node_key(TOKEN, "n1").hex()
    assert not [e for e in env if key in e], env
    assert [e for e in env if e.startswith("SLAQ_CHECKPOINT_DIR=") and
            e.endswith("controller/checkpoints/%d/gen-1" % bare)], env


def test_an_agent_takes_its_nodes_key_and_nothing_else(
        daemon_factory, tmp_path, token_file):
    """slaqd --agent starts only with its node's own key, saying what is
    wrong otherwise: the cluster's token (the controller's alone), a key
    file others may read, a key issued for another name than
    --node-name. A controller tells an agent of link version 1 (which
    held the token) what it needs."""
    def agent(*args):
        return subprocess.run([SLAQD, "--agent", "--join", "127.0.0.1:1",
                               "--state-dir", str(tmp_path / "a"), *args],
                              capture_output=True, text=True, timeout=30)
    r = agent("--agent-token-file", str(token_file))
    assert r.returncode == 2 and "--node-key-file" in r.stderr, r.stderr
    assert "slaq cluster node-key" in r.stderr, r.stderr
    r = agent()
    assert r.returncode == 2 and "--node-key-file" in r.stderr, r.stderr
    key = node_key_args(tmp_path, TOKEN, "n1")[1]
    os.chmod(key, 0o644)
    r = agent("--node-key-file", key)
    assert r.returncode == 2 and "chmod 600" in r.stderr, r.stderr
    os.chmod(key, 0o600)
    r = agent("--node-key-file", key, "--node-name", "n2")
    assert r.returncode == 2 and "node n1's key, not n2's" in r.stderr, \
        r.stderr
    with open(key, "w") as f:
        f.write("n1:0011\n")
    r = agent("--node-key-file", key)
    assert r.returncode == 2 and "NODE:KEY" in r.stderr, r.stderr
    # An agent of version 1: refused with the advice, as a plain line.
    port = free_port()
    ctl = start_controller(daemon_factory, tmp_path, token_file, port)
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(json.dumps({"type": "link_hello", "version": 1,
                              "nonce": os.urandom(32).hex()}).encode()
                  + b"\n")
        m = json.loads(s.makefile("rb").readline())
    assert m["code"] == "bad_handshake", m
    assert "version 1" in m["message"] and \
        "slaq cluster node-key" in m["message"], m
    # A real agent with n1's key of another cluster secret: it does not
    # take the controller's proof, and both logs say what to do.
    node_key_args(tmp_path, "another-cluster-secret", "n1")
    wrong = daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                           "--node-key-file", key, "--cores", "1",
                           "--enforce", "signal", state=tmp_path / "wrong")
    wait_for(lambda: "not trusted" in wrong.read_log(), timeout=10,
             what="the agent's refusal")
    assert "node n1's key" in wrong.read_log()
    ctl_log = tmp_path / "controller.log"
    wait_for(lambda: "hung up on this controller's proof" in
             ctl_log.read_text(), timeout=10, what="the controller's line")
    assert "slaq cluster node-key n1" in ctl_log.read_text()
    assert nodes_of(ctl) == {}
