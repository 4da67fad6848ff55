"""One key per node (docs/security.md, "The cluster"): a node whose key
leaks is that node and no other. Each agent holds only its own node's key
(`slaq cluster node-key`), which the controller derives from the cluster
secret it alone holds; so the holder of n1's key cannot register as n2,
cannot take n1 over from the live n1, and cannot pose as the controller to
n2's agent. Each attack is run against real slaqds and must leave the
attacked node's registration and jobs as they were."""

import hashlib
import json
import os
import re
import socket
import subprocess
import time

import pytest

from agentlink import AgentLink, ControllerLink, kdf, seal
from conftest import SLAQ, TOY, free_port, wait_for

SECRET = "cluster-secret-for-node-keys-1"


def issue(tmp_path, node, secret_file):
    """node's key file, as an administrator issues it: `slaq cluster
    node-key --out`. Returns (path, key bytes)."""
    path = tmp_path / ("%s.key" % node)
    subprocess.run([SLAQ, "cluster", "node-key", "--secret-file",
                    str(secret_file), "--out", str(path), node], check=True,
                   capture_output=True, timeout=30)
    assert os.stat(path).st_mode & 0o777 == 0o600
    name, hexkey = path.read_text().strip().split(":")
    assert name == node
    return path, bytes.fromhex(hexkey)


@pytest.fixture
def secret_file(tmp_path):
    p = tmp_path / "agent.token"
    p.write_text(SECRET + "\n")
    os.chmod(p, 0o600)
    return p


def start_agent(daemon_factory, tmp_path, join_port, key_file, state):
    return daemon_factory("--agent", "--join", "127.0.0.1:%d" % join_port,
                          "--node-key-file", str(key_file), "--cores", "2",
                          "--enforce", "signal", state=tmp_path / state)


def nodes_of(d):
    return {n["name"]: n for n in d.request({"type": "nodes"})["nodes"]}


@pytest.fixture
def cluster(daemon_factory, tmp_path, secret_file):
    """A controller and real agents n1 and n2, each with its own key, each
    running one job pinned to it and reporting. Returns a dict: ctl,
    agents, jobs (node -> job id), keys (node -> (file, bytes)), port."""
    port = free_port()
    ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                         "--agent-token-file", str(secret_file),
                         state=tmp_path / "controller")
    keys = {n: issue(tmp_path, n, secret_file) for n in ("n1", "n2")}
    agents = {n: start_agent(daemon_factory, tmp_path, port, keys[n][0],
                             "agent-" + n) for n in ("n1", "n2")}
    wait_for(lambda: all(nodes_of(ctl).get(n, {}).get("state") == "up"
                         for n in agents), timeout=15, what="n1 and n2 up")
    jobs = {n: ctl.submit(TOY, "--forever", "--iter-cpu", "0.005", node=n)
            for n in agents}
    for n, j in jobs.items():
        wait_for(lambda: ctl.job(j)["state"] == "running" and
                 ctl.job(j)["iter"] >= 3, timeout=20,
                 what="job %d reporting on %s" % (j, n))
    return {"ctl": ctl, "agents": agents, "jobs": jobs, "keys": keys,
            "port": port}


def untouched(c, node, since_iter):
    """node is up on its first connection, its job runs there with no
    restart and no loss, and goes on reporting; the controller never said
    it registered again."""
    ctl, j = c["ctl"], c["jobs"][node]
    n = nodes_of(ctl)[node]
    assert n["state"] == "up" and n["connected"], n
    job = ctl.job(j)
    assert job["state"] == "running" and job["node"] == node, job
    assert job.get("restarts", 0) == 0, job
    kinds = [e[1] for e in job["events"]]
    assert "lost" not in kinds and "restart" not in kinds, job["events"]
    wait_for(lambda: ctl.job(j)["iter"] > since_iter + 3, timeout=10,
             what="job %d to report on" % j)
    assert c["agents"][node].job(j)["state"] == "running"
    assert "registered again" not in ctl.read_log()
    assert "stop" not in [e[1] for e in c["agents"][node].job(j)["events"]]


def refusal_lines(log):
    return len(re.findall(r"register refused|authentication failed", log))


def test_a_node_key_cannot_register_another_node(cluster):
    """n1's key holder claims n2: naming n2 in its hello it cannot prove
    n2's key (unauthorized, a failed authentication), and over a link
    opened as n1 its register of n2 is refused (wrong_node) and counted;
    for 4 s of tries, twice the rate of the reported takeover, n2 and its
    job go on as they were."""
    c = cluster
    ctl, port = c["ctl"], c["port"]
    k1 = c["keys"]["n1"][1]
    before = ctl.job(c["jobs"]["n2"])["iter"]
    st0 = ctl.request({"type": "status"})
    tries = {"unauthorized": 0, "wrong_node": 0}
    until = time.monotonic() + 4
    k = 0
    while time.monotonic() < until:
        k += 1
        if k % 5 == 1:
            # n2 named in the hello, n1's key used for the proof: twice a
            # second, under the agent port's limit on failed checks (5 a
            # second, which would refuse the honest links below too), each
            # from an address of its own (the lock-out is per address).
            link = AgentLink(port, None, node="n2", key=k1,
                             check_controller=False,
                             source=("127.0.1.%d" % (1 + k % 250), 0))
            m = link.recv()
            assert m["plain"] and m["code"] == "unauthorized", m
            assert "node n2's key" in m["message"], m
            tries["unauthorized"] += 1
            link.close()
        # A link opened honestly as n1 (a second connection of n1's key),
        # then a register of n2.
        link = AgentLink(port, None, node="n1", key=k1)
        link.send({"type": "register", "node": "n2", "capacity": 64,
                   "enforce": "none", "jobs": []})
        m = link.recv()
        assert m["type"] == "error" and m["code"] == "wrong_node", m
        assert "node n1's key" in m["message"], m
        assert link.closed_by_peer()
        tries["wrong_node"] += 1
        link.close()
        time.sleep(0.1)
    assert tries["unauthorized"] >= 1 and tries["wrong_node"] >= 10, tries
    st = ctl.request({"type": "status"})
    assert (st["agent_register_refused_total"] -
            st0["agent_register_refused_total"]) == tries["wrong_node"]
    assert st["auth_failures_total"] - st0["auth_failures_total"] >= \
        tries["unauthorized"]
    untouched(c, "n2", before)
    untouched(c, "n1", ctl.job(c["jobs"]["n1"])["iter"])
    # Rate-limited in the log: at most 10 lines in 10 s, more tried.
    assert refusal_lines(ctl.read_log()) <= 11
    assert tries["wrong_node"] + tries["unauthorized"] > 11


def test_a_second_holder_of_a_nodes_key_cannot_take_it_over(
        cluster, daemon_factory, tmp_path):
    """While n1's agent is connected and heard from, another agent with
    n1's own key (a copied key file, a second agent started by mistake)
    is refused (node_connected) however often it tries; n1 and its job go
    on. The rule: a node's connection is replaced only once it is closed
    or has been silent for two epochs (at least 1 s), as when a restarted
    agent comes back: after n1's agent is killed the other one may
    register n1."""
    c = cluster
    ctl, port = c["ctl"], c["port"]
    k1file, k1 = c["keys"]["n1"]
    before = ctl.job(c["jobs"]["n1"])["iter"]
    st0 = ctl.request({"type": "status"})
    refused = 0
    until = time.monotonic() + 3
    while time.monotonic() < until:
        link = AgentLink(port, None, node="n1", key=k1)
        link.send({"type": "register", "node": "n1", "capacity": 2,
                   "enforce": "signal", "jobs": []})
        m = link.recv()
        assert m["type"] == "error" and m["code"] == "node_connected", m
        assert link.closed_by_peer()
        link.close()
        refused += 1
        time.sleep(0.1)
    # A second real agent with a copy of n1's key file keeps retrying.
    twin = start_agent(daemon_factory, tmp_path, port, k1file, "twin-n1")
    wait_for(lambda: "node_connected" in twin.read_log(), timeout=10,
             what="the twin's refusal in its log")
    time.sleep(3)
    untouched(c, "n1", before)
    st = ctl.request({"type": "status"})
    assert st["agent_register_refused_total"] - \
        st0["agent_register_refused_total"] >= refused + 3
    assert "registered again" not in ctl.read_log()
    # The twin's log: limited too, and saying what to do.
    twin_log = twin.read_log()
    assert len(re.findall("node_connected", twin_log)) <= 11, twin_log
    assert "stop one" in twin_log
    # n1's agent dies: the twin, holding n1's key, may be n1 now.
    c["agents"]["n1"].kill9()
    wait_for(lambda: "registered" in ctl.read_log().split(
        "connection closed")[-1] and nodes_of(ctl)["n1"]["connected"],
        timeout=15, what="the twin registering n1")
    assert nodes_of(ctl)["n1"]["state"] == "up"


def forge_controller(conn, key, start):
    """Plays the controller to the agent on conn with key (not the node's):
    answers its hello with a challenge proved under key, then sends start
    sealed under the link key key would give. Returns (the hello, what the
    agent sent after the hello)."""
    f = conn.makefile("rb")
    hello = json.loads(f.readline())
    na, nc = bytes.fromhex(hello["nonce"]), os.urandom(32)
    conn.sendall(json.dumps({"type": "link_challenge", "nonce": nc.hex(),
                             "proof": kdf(key, "proof of the controller",
                                          na, nc).hex()}).encode() + b"\n")
    tx = kdf(key, "key controller to agent", na, nc)
    said = b""
    try:
        conn.sendall(seal(tx, 0, json.dumps(start).encode()) + b"\n")
        while True:
            more = conn.recv(65536)
            if not more:
                break
            said += more
    except OSError:
        pass
    return hello, said


def test_a_node_key_cannot_pose_as_the_controller_to_another_node(
        daemon_factory, tmp_path, secret_file):
    """The controller is down and n1's key holder has taken its port: n2's
    agent, which pins its own key, hangs up on the challenge (proved under
    n1's key, or under a key made from n1's as if it were the cluster
    key), sends no proof and no register, and does not run the start it
    is sent. The controller, proving n2's key, gets n2's register."""
    port = free_port()
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(8)
    srv.settimeout(15)
    _, k1 = issue(tmp_path, "n1", secret_file)
    k2file, k2 = issue(tmp_path, "n2", secret_file)
    marker = tmp_path / "marker"
    agent = start_agent(daemon_factory, tmp_path, port, k2file, "agent-n2")
    as_cluster = hashlib.blake2b(b"slaq node key 1: n2", digest_size=32,
                                 key=k1).digest()
    start = {"type": "start", "job": 7, "gen": 1, "secret": "ab" * 32,
             "name": "evil", "cmd": ["sh", "-c", "id > %s" % marker],
             "cwd": "/", "env": ["PATH=/usr/bin:/bin"]}
    for key in (k1, as_cluster):
        conn, _ = srv.accept()
        conn.settimeout(5)
        hello, said = forge_controller(conn, key, start)
        conn.close()
        assert hello["node"] == "n2", hello
        assert said == b"", said  # no proof, no register: it hung up
    time.sleep(1.0)  # a start, had it been taken, would have run by now
    assert not marker.exists(), marker.read_text()
    assert agent.jobs() == []
    log = agent.read_log()
    assert "not trusted" in log and "node n2's key" in log, log
    # The same forgery under n2's key is the controller's: taken.
    conn, _ = srv.accept()
    conn.settimeout(10)
    link = ControllerLink(conn, None, key=k2)
    assert link.node == "n2"
    reg = link.recv()
    assert reg["type"] == "register" and reg["node"] == "n2", reg
    conn.close()
    srv.close()
