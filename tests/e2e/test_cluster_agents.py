"""slaqd as a controller with node agents on this machine (no Slurm):
agents register their nodes, run the jobs placed on them with slaqd's own
launcher and relay reports and exits; the agent token grants agent rights
only; a killed agent's node goes down within 3 epochs (its jobs lost,
restartable ones resumed elsewhere from their checkpoint); a killed and
restarted controller loses nothing."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from agentlink import AgentLink, Refused, Session, node_key_args
from conftest import BUILD, TOY, free_port, old_state_db, wait_for
from slaq.control import request

HERE = os.path.dirname(os.path.abspath(__file__))
CKPT_JOB = [sys.executable, os.path.join(HERE, "ckpt_job.py")]
CKPT_QUERY = [sys.executable, os.path.join(HERE, "ckpt_job.py"), "--query", "1000"]
# Under valgrind agents answer slowly: 3 epochs of 0.2 s is too short a
# silence to call a node down.
EPOCH = 1.0 if os.environ.get("SLAQ_VALGRIND") else 0.2


def job_procs(root):
    """Live processes whose SLAQ_SOCKET lies under root: every job an agent
    of this test started, wherever its agent is."""
    out = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = f.read().split(b"\0")
            with open("/proc/%s/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    continue
        except OSError:
            continue
        if any(e.startswith(b"SLAQ_SOCKET=" + str(root).encode())
               for e in env):
            out.append(int(pid))
    return out


@pytest.fixture
def cluster(daemon_factory, tmp_path):
    """start(nodes) -> (controller, {name: agent})."""
    token = tmp_path / "agent.token"
    token.write_text("agent-secret-token-1\n")
    port = free_port()
    made = {}

    def start_agent(name, cores=2):
        return daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                              *node_key_args(tmp_path, token, name),
                              "--cores", str(cores),
                              "--enforce", "signal",
                              state=tmp_path / ("agent-" + name))

    def start(nodes=("n1", "n2"), extra=()):
        ctl = daemon_factory("--agents", "127.0.0.1:%d" % port,
                             "--agent-token-file", str(token),
                             "--epoch", str(EPOCH), *extra,
                             state=tmp_path / "controller")
        agents = {n: start_agent(n) for n in nodes}
        wait_for(lambda: sum(x["state"] == "up" for x in nodes_of(ctl))
                 == len(nodes), timeout=10, what="agents to join")
        made.update(ctl=ctl, agents=agents, port=port, token=token,
                    start_agent=start_agent)
        return ctl, agents

    start.made = made
    yield start
    # Jobs of agents killed with -9 are nobody's children: end them here.
    for pid in job_procs(tmp_path):
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass


def nodes_of(d):
    r = d.request({"type": "nodes"})
    assert r["ok"], r
    return r["nodes"]


def test_agents_run_jobs_and_relay(cluster):
    ctl, agents = cluster()
    nodes = {n["name"]: n for n in nodes_of(ctl)}
    assert set(nodes) == {"n1", "n2"}
    assert all(n["cores"] == 2 and n["enforce"] == "signal"
               for n in nodes.values())

    a = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01")
    b = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01", node="n2")
    ja = ctl.wait_state(a, "running")
    assert ja["node"] in ("n1", "n2")
    assert ctl.job(b)["node"] == "n2"
    # The job runs under the agent: its process, its socket, its logs ...
    on_agent = agents["n2"].job(b)
    assert on_agent["state"] == "running" and on_agent["pid"] > 0
    with open("/proc/%d/environ" % on_agent["pid"], "rb") as f:
        env = f.read().split(b"\0")
    assert ("SLAQ_SOCKET=" + os.path.realpath(agents["n2"].sock)).encode() \
        in env
    # ... and its reports reach the controller through the agent.
    wait_for(lambda: ctl.job(b)["iter"] >= 5, timeout=30,
             what="relayed reports")
    # The controller's allocation is what the agent applies (one of the
    # controller's latest: an epoch may fall between the two reads).
    def applied():
        mine = agents["n2"].job(b)["cores"]
        recent = ctl.job(b)["recent_cores"][-3:]
        return mine > 0 and any(abs(mine - r) < 1e-4 for r in recent)
    wait_for(applied, timeout=30, what="the allocation on the agent")
    p = ctl.cli("nodes")
    assert "NAME" in p.stdout and "n1" in p.stdout and "n2" in p.stdout
    js = json.loads(ctl.cli("nodes", "--json").stdout)
    n2 = [n for n in js["nodes"] if n["name"] == "n2"][0]
    assert n2["jobs"] >= 1 and n2["state"] == "up"
    assert n2["heartbeat_age_s"] < 3 * EPOCH
    ls = ctl.cli("ls").stdout
    assert "NODE" in ls.splitlines()[0]
    # The dashboard's API carries the node too.
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/api/jobs" % ctl.port,
                                timeout=10) as r:
        api = json.load(r)
    rows = api["jobs"] if isinstance(api, dict) else api
    assert [j["node"] for j in rows if j["id"] == b] == ["n2"]
    assert "node        n2" in ctl.cli("show", str(b)).stdout

    bad = ctl.cli("submit", "--node", "n9", "--", TOY, check=False)
    assert bad.returncode != 0 and "no node n9 has joined" in bad.stderr

    # A cancel goes through the agent; the process ends.
    pid = on_agent["pid"]
    ctl.cli("cancel", str(b))
    ctl.wait_state(b, "cancelled")
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
             open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
             == "Z", what="the cancelled job's process to end")

    # A job that ends by itself: its exit status is relayed.
    c = ctl.submit(TOY, "--iters", "5", node="n1")
    done = ctl.wait_state(c, ("done", "failed"))
    assert done["state"] == "done" and done["exit_code"] == 0
    assert done["iter"] == 5


METRIC_JOB = """
import sys, time
sys.path.insert(0, %r)
import slaq
job = slaq.Client(iters=40, convergence="linear", metric_name="val_accuracy")
for it in range(1, 41):
    job.report(it, 1.0 / it, cpu_s=0.01, metric=0.5 + it / 100.0)
    time.sleep(0.05)
job.close()
"""


def test_what_a_job_declares_and_its_metric_reach_the_controller(cluster,
                                                                  tmp_path):
    # A job under an agent is the same job to the controller as to a plain
    # slaqd: its declared class, length and metric name (hello) and each
    # report's metric are relayed (before, only the loss and the length).
    ctl, agents = cluster()
    script = tmp_path / "metric_job.py"
    script.write_text(METRIC_JOB % os.path.join(
        os.path.dirname(os.path.dirname(os.path.dirname(
            os.path.abspath(__file__)))), "python"))
    j = ctl.submit(sys.executable, str(script), node="n1")
    done = ctl.wait_state(j, "done", timeout=60)
    on_agent = agents["n1"].job(j)
    assert on_agent["metric_name"] == "val_accuracy"
    assert done["metric_name"] == "val_accuracy", done
    assert abs(done["metric"] - 0.9) < 1e-9 and done["metric_iter"] == 40
    assert done["convergence"] == "linear", done
    assert done["iter"] == 40
    assert "val_accuracy" in ctl.cli("show", str(j)).stdout


def test_placement_capacity_and_pending_queue(cluster):
    """The core places (least-loaded), never gives a node more than its
    cores, and queues what fits nowhere, in order."""
    ctl, agents = cluster(nodes=("n1", "n2"), extra=("--unit", "0.5"))
    # Two 2-core nodes in units of 0.5: four jobs' minimum shares each.
    ids = [ctl.submit(TOY, "--forever", "--iter-cpu", "0.002")
           for _ in range(10)]
    wait_for(lambda: sum(ctl.job(i)["state"] == "running" for i in ids)
             == 8, what="8 jobs running")
    jobs = [ctl.job(i) for i in ids]
    on = [j["node"] for j in jobs if j["state"] == "running"]
    assert on.count("n1") == 4 and on.count("n2") == 4
    pending = [j for j in jobs if j["state"] == "pending"]
    assert [j["id"] for j in pending] == ids[8:]
    assert all(j["node"] is None for j in pending)
    for _ in range(10):
        for n in nodes_of(ctl):
            assert n["allocated"] <= n["cores"] + 1e-9, n
        time.sleep(EPOCH)
    # A job ends: the first pending one starts, the second keeps waiting.
    ctl.cli("cancel", "--now", str(ids[0]))
    ctl.wait_state(ids[8], "running")
    assert ctl.job(ids[9])["state"] == "pending"
    # A pending job is cancelled without ever running.
    ctl.cli("cancel", str(ids[9]))
    assert ctl.wait_state(ids[9], "cancelled")["pid"] == 0


def test_plain_slaqd_is_one_node(slaqd):
    nodes = slaqd.request({"type": "nodes"})["nodes"]
    assert len(nodes) == 1 and nodes[0]["name"] == "local"
    j = slaqd.submit(TOY, "--iters", "3")
    assert slaqd.wait_state(j, "done")["node"] == "local"
    assert "NODE" not in slaqd.cli("ls").stdout.splitlines()[0]
    bad = slaqd.cli("submit", "--node", "n1", "--", TOY, check=False)
    assert bad.returncode != 0 and "no --agents" in bad.stderr


def test_agent_token_grants_agent_rights_only(cluster, tmp_path):
    ctl_token = tmp_path / "control.token"
    ctl_token.write_text("control-token-99\n")
    tcp = free_port()
    ctl, _ = cluster(nodes=("n1",), extra=("--tcp", "127.0.0.1:%d" % tcp,
                                           "--token-file", str(ctl_token)))
    port = cluster.made["port"]
    # A clear-text register, or anything but the link's handshake: refused
    # on the agent port (test_agent_link.py tries the wrong tokens).
    agent_port = ("127.0.0.1", port)
    r = request(agent_port, {"type": "register", "token": "wrong-token-000",
                             "node": "evil", "cores": 64, "jobs": []})
    assert r["type"] == "error" and r["code"] == "bad_handshake"
    r = request(agent_port, {"type": "submit",
                             "token": "agent-secret-token-1", "cmd": ["true"]})
    assert r["code"] == "bad_handshake"
    assert "evil" not in [n["name"] for n in nodes_of(ctl)]
    # The agent token does not open the control port.
    r = request(("127.0.0.1", tcp), {"type": "submit",
                                     "token": "agent-secret-token-1",
                                     "cmd": ["true"]})
    assert r.get("ok") is not True and r["code"] == "unauthorized"
    # ... not even as the key of a sealed session's "admin" (the control
    # token's); the control token is.
    with pytest.raises(Refused):
        Session("127.0.0.1:%d" % tcp, "admin:agent-secret-token-1")
    r = Session("127.0.0.1:%d" % tcp, "admin:control-token-99").request(
        {"type": "status"})
    assert r["ok"] is True, r
    # ... nor does a control request ride on an agent's connection.
    link = AgentLink(port, "agent-secret-token-1", node="n7")
    link.send({"type": "register", "node": "n7", "cores": 1, "jobs": []})
    assert link.recv()["type"] == "welcome"
    link.send({"type": "submit", "cmd": ["true"]})
    m = link.recv()
    while m["type"] == "allocs":
        m = link.recv()
    assert m["code"] == "unknown_type"
    link.close()
    assert [j for j in ctl.jobs()] == []


def test_killed_agent_node_down_jobs_lost_or_resumed(cluster):
    ctl, agents = cluster(nodes=("n1", "n2"))
    # Not pinned: a pinned job waits for its own node to come back.
    ck = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB).stdout)
    assert ctl.job(ck)["restartable"] is True
    home = ctl.wait_state(ck, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    plain = ctl.submit(TOY, "--forever", "--iter-cpu", "0.005", node=home)
    wait_for(lambda: ctl.job(ck)["iter"] >= 20 and ctl.job(plain)["iter"]
             >= 3, timeout=20, what="both jobs to report")
    reached = ctl.job(ck)["iter"]
    agents[home].kill9()
    t0 = time.monotonic()
    wait_for(lambda: [n for n in nodes_of(ctl) if n["name"] == home][0]
             ["state"] == "down", timeout=10, what="the node to go down")
    # 3 silent epochs, plus the heartbeat interval and scheduling slack.
    assert time.monotonic() - t0 < 3 * EPOCH + 2.0
    lost = ctl.wait_state(plain, "lost", timeout=5)
    assert "node " + home in lost["reason"]
    moved = wait_for(lambda: (lambda j: j if j["node"] == other and
                              j["state"] == "running" else None)(
                                  ctl.job(ck)), timeout=5,
                     what="the restartable job on the other node")
    assert moved["restarts"] == 1
    # It resumed from its checkpoint, not from the start (the first
    # generation's directory became the second's) ...
    ckdir = os.path.join(ctl.state, "checkpoints", str(ck), "gen-2")
    wait_for(lambda: len(open(os.path.join(ckdir, "starts")).read()
                         .split("\n")) >= 3, what="a second start")
    starts = open(os.path.join(ckdir, "starts")).read().split()
    assert starts[0:2] == ["start", "0"]
    assert int(starts[3]) >= reached - 5
    # ... and reports on from there.
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 5, what="more reports")
    assert agents[other].job(ck)["state"] == "running"


def estimates_of(d, job):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    r = opener.open("http://127.0.0.1:%d/api/jobs/%d/estimates"
                    % (d.port, job), timeout=10)
    return json.loads(r.read().decode())


class FakeAgent:
    """A node agent played by the test: registers a node, answers every
    message with a heartbeat (from a thread, so the node stays up), and
    relays the reports it is told to, as the generation of the job it was
    started as (docs/protocol.md, "start")."""

    def __init__(self, port, name):
        self.link = AgentLink(port, "agent-secret-token-1", node=name)
        self.starts = []
        self.gens = {}
        self.lock = threading.Lock()
        self.send({"type": "register", "node": name, "cores": 4,
                   "enforce": "none", "jobs": []})
        self.t = threading.Thread(target=self._read, daemon=True)
        self.t.start()

    def send(self, msg):
        if "job" in msg and "gen" not in msg:
            msg = dict(msg, gen=self.gens.get(msg["job"], 1))
        with self.lock:
            self.link.send(msg)

    def _read(self):
        try:
            while True:
                m = self.link.recv()
                if m is None:
                    break
                if m["type"] == "start":
                    self.gens[m["job"]] = m.get("gen", 1)
                    self.starts.append(m["job"])
                self.send({"type": "heartbeat"})
        except (OSError, ValueError):
            pass

    def report(self, job, it):
        x = 10.0 + (-1) ** it / it  # a running estimate that settles
        self.send({"type": "report", "job": job, "iter": it, "loss": 0.5,
                   "cpu_s": 0.01, "samples": 100, "estimates": [x],
                   "lower": [x - 1.0 / it], "upper": [x + 1.0 / it]})

    def close(self):
        self.link.close()


def test_lost_node_query_is_replayed_as_a_query(cluster):
    # A restartable query whose node is lost is placed again with its
    # mini-batches replayed through the query path, as after a restart of
    # slaqd. Before, they went to the core as plain reports: the query's
    # model stayed empty, and every mini-batch after the move was refused
    # as out of order.
    ctl, _ = cluster(nodes=())
    port = cluster.made["port"]
    a, b = FakeAgent(port, "fa"), FakeAgent(port, "fb")
    wait_for(lambda: sum(n["state"] == "up" for n in nodes_of(ctl)) == 2,
             what="two fake nodes")
    q = int(ctl.cli("submit", "--restartable", "--", *TOY).stdout)
    home = wait_for(lambda: a if q in a.starts else b if q in b.starts
                    else None, what="the query's start")
    other = b if home is a else a
    home.send({"type": "started", "job": q, "pid": 999999})
    for it in range(1, 11):
        home.report(q, it)
    wait_for(lambda: ctl.job(q)["iter"] == 10, what="10 mini-batches")
    assert ctl.job(q)["kind"] == "query"
    before = estimates_of(ctl, q)
    home.close()
    wait_for(lambda: q in other.starts, timeout=10,
             what="the query started again on the other node")
    other.send({"type": "started", "job": q, "pid": 999998})
    job = ctl.job(q)
    assert job["restarts"] == 1 and job["kind"] == "query"
    # from its checkpoint: mini-batches 9 and 10 again, then 11 ... 14
    for it in range(9, 15):
        other.report(q, it)
    wait_for(lambda: ctl.job(q)["iter"] == 14, timeout=10,
             what="mini-batch 14 taken after the move")
    e = estimates_of(ctl, q)
    assert [p["iter"] for p in e["points"]] == list(range(1, 15))
    # a checkpoint ahead of the reports that arrived (15 and 16 lost with
    # a node): the query goes on from the mini-batch that comes
    home_again = FakeAgent(port, "fc")
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)
                      if n["name"] == "fc"] == ["up"], what="node fc")
    other.close()
    wait_for(lambda: q in home_again.starts, timeout=10,
             what="the query started again on a third node")
    home_again.send({"type": "started", "job": q, "pid": 999997})
    for it in (17, 18):
        home_again.report(q, it)
    wait_for(lambda: ctl.job(q)["iter"] == 18, timeout=10,
             what="mini-batch 18 taken after a gap")
    e = estimates_of(ctl, q)
    assert [p["iter"] for p in e["points"]] == list(range(1, 15)) + [17, 18]
    assert e["points"][:10] == before["points"]
    assert e["progress"] is not None and 0 <= e["progress"] < 1
    # and a controller started again replays all of it, gap included
    home_again.close()
    ctl.kill9()
    ctl.start()
    e2 = estimates_of(ctl, q)
    assert e2["points"] == e["points"]
    assert e2["progress"] == pytest.approx(e["progress"])


def test_query_resumed_on_another_node(cluster):
    # The same with real agents: the agent that runs the query again
    # takes it from its checkpoint on (before, it refused every
    # mini-batch: its own model of the query expected mini-batch 1).
    ctl, agents = cluster(nodes=("n1", "n2"))
    q = int(ctl.cli("submit", "--restartable", "--", *CKPT_QUERY).stdout)
    home = ctl.wait_state(q, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    wait_for(lambda: ctl.job(q)["iter"] >= 10, timeout=20,
             what="10 mini-batches")
    assert ctl.job(q)["kind"] == "query"
    agents[home].kill9()
    moved = wait_for(lambda: (lambda j: j if j["node"] == other and
                              j["state"] == "running" else None)(
                                  ctl.job(q)), timeout=10,
                     what="the query on the other node")
    assert moved["restarts"] == 1 and moved["kind"] == "query"
    reached = moved["iter"]
    wait_for(lambda: ctl.job(q)["iter"] >= reached + 10, timeout=20,
             what="mini-batches after the move")
    on_agent = agents[other].job(q)
    assert on_agent["kind"] == "query" and on_agent["state"] == "running"
    e = estimates_of(ctl, q)
    iters = [p["iter"] for p in e["points"]]
    assert iters == sorted(set(iters)) and iters[-1] >= reached + 9
    assert e["progress"] is not None and 0 <= e["progress"] < 1
    ctl.request({"type": "cancel", "job": q, "now": True})


def test_controller_restart_loses_nothing(cluster):
    ctl, agents = cluster(nodes=("n1", "n2"))
    ids = [ctl.submit(TOY, "--forever", "--iter-cpu", "0.005")
           for _ in range(2)]
    ids.append(ctl.submit(TOY, "--forever", "--iter-cpu", "0.005",
                          node="n2"))
    wait_for(lambda: all(ctl.job(i)["iter"] >= 3 for i in ids),
             what="reports")
    before = {i: ctl.job(i) for i in ids}
    ctl.kill9()
    time.sleep(3 * EPOCH)
    ctl.killed = False
    ctl.start()
    wait_for(lambda: sum(n["state"] == "up" and n["connected"]
                         for n in nodes_of(ctl)) == 2, timeout=10,
             what="agents to reconnect")
    for i in ids:
        j = ctl.job(i)
        assert j["state"] == "running", j
        assert j["node"] == before[i]["node"]
        assert j["pid"] == before[i]["pid"]
    wait_for(lambda: all(ctl.job(i)["iter"] > before[i]["iter"] + 3
                         for i in ids), what="reports after the restart")
    # The agents were never down: their jobs kept running throughout.
    for name, a in agents.items():
        for j in a.jobs():
            assert j["state"] == "running"


def test_database_before_nodes_opens_and_gains_columns(daemon_factory,
                                                       tmp_path):
    """A state.db written before the cluster columns (node, restartable,
    pin, launch) opens; its jobs are kept and the columns are added."""
    import sqlite3
    state = tmp_path / "old"
    state.mkdir()
    old_state_db(state, before="jobs.node")
    d = daemon_factory(state=state)
    j = d.job(1)
    assert j["name"] == "old" and j["state"] == "done"
    assert j["node"] == "local" and j["restartable"] is False
    d.stop()
    cols = [r[1] for r in sqlite3.connect(str(state / "state.db"))
            .execute("PRAGMA table_info(jobs)")]
    for c in ("node", "restartable", "pin", "launch"):
        assert c in cols


def test_attaching_is_refused_on_controller_and_agent(cluster):
    ctl, agents = cluster(nodes=("n1",))
    for d in (ctl, agents["n1"]):
        import socket as so
        s = so.socket(so.AF_UNIX)
        s.settimeout(10)
        s.connect(d.sock)
        s.sendall(b'{"type":"hello","name":"stray","pid":1}\n')
        r = json.loads(s.makefile("rb").readline())
        s.close()
        assert r["type"] == "error" and r["code"] == "no_attach", r
    assert ctl.jobs() == [] and agents["n1"].jobs() == []


def test_allocs_carry_changes_only_and_epochs_are_timed(cluster):
    """The controller sends an agent the allocations that changed (all of
    them after a registration and every 16th epoch), and one message an
    epoch in any case; status times every recent epoch in wall and CPU
    ms."""
    ctl, _ = cluster(nodes=("n1",))
    port = cluster.made["port"]
    conn = {}

    def register(jobs):
        if conn:
            conn["l"].close()
        conn["l"] = AgentLink(port, "agent-secret-token-1", node="fake")
        conn["l"].send({"type": "register", "node": "fake", "cores": 4,
                        "enforce": "none", "jobs": jobs})

    def next_msg(kind):
        while True:
            m = conn["l"].recv()
            # A heartbeat for every message (allocs come every epoch).
            conn["l"].send({"type": "heartbeat"})
            if m["type"] == kind:
                return m

    register([])
    assert next_msg("welcome")["node"] == "fake"
    job = ctl.submit(TOY, "--forever", node="fake")
    start = next_msg("start")
    assert start["job"] == job
    conn["l"].send({"type": "started", "job": job, "pid": 999999})
    first = next_msg("allocs")
    while not first["jobs"]:  # an epoch before the start went out
        first = next_msg("allocs")
    assert first["jobs"][0][0] == job and first["jobs"][0][1] > 0
    # No reports, one job: its cores stay, and it is not sent again until
    # the next full message; the node still hears every epoch.
    later = [next_msg("allocs") for _ in range(4)]
    epochs = [m["epoch"] for m in later]
    assert epochs == list(range(first["epoch"] + 1, first["epoch"] + 5))
    for m in later:
        assert m["jobs"] == ([[job, first["jobs"][0][1]]]
                             if m["epoch"] % 16 == 0 else []), m
    # A registration again (the agent restarted) gets every job at once.
    register([{"job": job, "pid": 999999}])
    assert next_msg("welcome")["jobs"] == {str(job): -1}
    m = next_msg("allocs")
    assert m["jobs"] == [[job, first["jobs"][0][1]]], m
    conn["l"].close()

    st = ctl.request({"type": "status"})
    recent = st["recent_epochs"]
    assert recent and len(recent) <= 64
    assert [e[0] for e in recent] == list(range(recent[0][0],
                                                recent[-1][0] + 1))
    assert recent[-1][0] == st["epoch"]
    for e in recent:
        ep, ms, cpu, core, core_cpu, jobs, reports, t, parts = e
        assert ms >= 0 and 0 <= cpu and 0 <= core_cpu <= cpu + 0.01
        assert len(parts) == 5 and abs(sum(parts) - cpu) < 0.05
        assert jobs in (0, 1) and t > 0
    assert any(e[5] == 1 for e in recent)
    assert st["epoch_cpu_ms_mean"] >= st["core_cpu_ms_mean"] >= 0


def test_a_query_survives_a_controller_killed_with_9(cluster, tmp_path):
    """A query runs on an agent while its controller is killed with -9 and
    started again: the agent resends the mini-batches the controller had
    not stored with their estimates and bounds (issue: they went without,
    and the controller refused every mini-batch after them), so the
    controller's query goes on to its last mini-batch and its exact
    answer."""
    aqp = os.path.join(BUILD, "bin", "slaq-aqp")
    db = str(tmp_path / "db.tpch")
    subprocess.run([aqp, "gen", "--scale-factor", "0.3", "--seed", "2",
                    "--out", db], check=True, capture_output=True)
    ctl, agents = cluster(nodes=("n1",))
    # About 30 ms of CPU a mini-batch (bootstrap bounds): some 6 s in all.
    jid = ctl.submit(aqp, "run", "--data", db, "--query", "q6",
                     "--batches", "200", "--bootstrap", "--threads", "1")
    wait_for(lambda: ctl.job(jid)["reports"] >= 5, timeout=30,
             what="the query's first mini-batches")
    before = ctl.job(jid)
    assert before["state"] == "running" and before["reports"] < 150, before
    ctl.kill9()
    time.sleep(1.5)  # the query goes on on the agent meanwhile
    assert agents["n1"].job(jid)["reports"] > before["reports"]
    ctl.killed = False
    ctl.start()
    job = ctl.wait_state(jid, ("done", "failed", "lost"), timeout=120)
    assert job["state"] == "done", job
    assert job["reports"] == 200 and job["iter"] == 200, job
    q = job["query"]
    assert q["batch"] == 200 and q["cells"] >= 1, q
