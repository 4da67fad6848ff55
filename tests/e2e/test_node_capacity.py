"""A node's capacity (docs/glossary.md: the cores a node has to divide) is
`capacity` in every node object: the `nodes` and `queue` replies,
STATE/nodes.json and an agent's register. `cores`, its name before, stays
beside it as a deprecated alias until the next release: slaqd sends both,
a controller takes a register that has only `cores` (an older agent), and
`slaq nodes` and `slaq queue` read an older slaqd's `cores`."""

import json
import os
import socket
import subprocess
import threading

from agentlink import AgentLink, node_key_args
from conftest import SLAQ, free_port, wait_for

TOKEN = "agent-secret-token-1"


def nodes_of(d):
    r = d.request({"type": "nodes"})
    assert r["ok"], r
    return {n["name"]: n for n in r["nodes"]}


def test_one_machine_names_its_capacity(daemon_factory):
    d = daemon_factory("--cores", "3")
    (n,) = nodes_of(d).values()
    assert n["name"] == "local" and n["capacity"] == 3
    assert n["cores"] == 3  # the deprecated alias, same value
    (q,) = d.request({"type": "queue"})["nodes"]
    assert q["capacity"] == 3 and q["cores"] == 3
    out = d.cli("nodes").stdout.splitlines()
    assert out[0].split()[:3] == ["NAME", "CAPACITY", "ALLOCATED"]
    assert out[1].split()[:2] == ["local", "3"]
    assert "task cores of 3," in d.cli("queue").stdout


def register(port, node, **capacity):
    link = AgentLink(port, TOKEN, node=node)
    link.send(dict({"type": "register", "node": node, "enforce": "none",
                    "jobs": []}, **capacity))
    return link, link.recv()


def test_controller_takes_capacity_and_an_older_agents_cores(
        daemon_factory, tmp_path):
    token = tmp_path / "agent.token"
    token.write_text(TOKEN + "\n")
    port = free_port()
    ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                         "--agent-token-file", str(token),
                         state=tmp_path / "controller")
    new, m = register(port, "new", capacity=3)
    assert m["type"] == "welcome", m
    old, m = register(port, "old", cores=1.5)
    assert m["type"] == "welcome", m
    nodes = nodes_of(ctl)
    assert nodes["new"]["capacity"] == 3 and nodes["new"]["cores"] == 3
    assert nodes["old"]["capacity"] == 1.5 and nodes["old"]["cores"] == 1.5
    # STATE/nodes.json, which slaq cluster up reads, says the same.
    path = os.path.join(ctl.state, "nodes.json")
    wait_for(lambda: os.path.exists(path) and
             len(json.load(open(path))["nodes"]) == 2, what="nodes.json")
    assert {n["name"]: n["capacity"]
            for n in json.load(open(path))["nodes"]} == {"new": 3, "old": 1.5}
    # Neither name, or no capacity to divide: refused, naming the field.
    for bad in ({}, {"capacity": 0}, {"capacity": "4"}):
        link, m = register(port, "bad", **bad)
        assert m["type"] == "error" and m["code"] == "bad_register", m
        assert '"capacity" (> 0)' in m["message"], m
        link.close()
    assert "bad" not in nodes_of(ctl)
    new.close()
    old.close()
    # A real agent registers its --cores as its capacity.
    daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                   *node_key_args(tmp_path, token, "n1"),
                   "--cores", "2", "--enforce", "signal",
                   state=tmp_path / "agent-n1")
    wait_for(lambda: nodes_of(ctl).get("n1", {}).get("state") == "up",
             what="the agent to join")
    assert nodes_of(ctl)["n1"]["capacity"] == 2


def old_slaqd(sock_path, reply):
    """A slaqd from before `capacity`: answers one request with reply."""
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(sock_path)
    srv.listen(1)

    def serve():
        conn, _ = srv.accept()
        with conn:
            conn.makefile("rb").readline()
            conn.sendall(json.dumps(reply).encode() + b"\n")
        srv.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return t


def test_cli_reads_an_older_slaqds_cores(tmp_path):
    sock = str(tmp_path / "old.sock")
    node = {"name": "old1", "cores": 6, "allocated": 1.25, "jobs": 1,
            "state": "up", "last_heartbeat": None, "heartbeat_age_s": 0}
    t = old_slaqd(sock, {"ok": True, "nodes": [node]})
    p = subprocess.run([SLAQ, "nodes", "--socket", sock],
                       capture_output=True, text=True, timeout=30)
    t.join(10)
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines()[1].split()[:3] == ["old1", "6", "1.25"]
    queue = {"name": "old1", "cores": 6, "task_cores": 2, "running": 0,
             "bound": 4, "beyond": 0, "wait": 0, "queue": []}
    t = old_slaqd(sock + "2", {"ok": True, "nodes": [queue]})
    p = subprocess.run([SLAQ, "queue", "--socket", sock + "2"],
                       capture_output=True, text=True, timeout=30)
    t.join(10)
    assert p.returncode == 0, p.stderr
    assert "2 task cores of 6," in p.stdout, p.stdout
