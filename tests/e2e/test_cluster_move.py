"""Moving a running job between nodes (`slaq move ID --node N`,
docs/cluster.md "Moving a job"): the job's agent stops it with its
checkpoint saved, the controller fences the old instance (a new
generation) and starts it on the other node from that checkpoint. The job
keeps its id, its history and its reports: no reported iteration is lost,
none is counted twice, and it repeats at most the iterations since its
last checkpoint. The old instance can report nothing after the move."""

import json
import os
import time

from agentlink import AgentLink
from conftest import BUILD, http_get, wait_for
from test_arrays import array, submit_array, task_cmd
from test_cluster_agents import (CKPT_JOB, CKPT_QUERY, EPOCH,  # noqa: F401
                                 cluster, nodes_of)
from test_cluster_faults import FENCE_JOB

ITERS = 400
TRAIN = os.path.join(BUILD, "bin", "slaq-train")


def starts_of(path):
    """The iterations each start of ckpt_job.py resumed from."""
    with open(path) as f:
        return [int(line.split()[1]) for line in f if line.startswith("start")]


def history_iters(ctl, jid):
    doc = json.loads(ctl.cli("history", str(jid), "--json").stdout)
    return [r[0] for r in doc["rows"]], [r[1] for r in doc["rows"]]


def test_move_loses_no_iteration_and_repeats_none(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1", "n2"))
    ck = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB,
                     str(ITERS)).stdout)
    home = ctl.wait_state(ck, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    wait_for(lambda: ctl.job(ck)["iter"] >= 30, timeout=30,
             what="30 reports")
    old_pid = agents[home].job(ck)["pid"]
    out = ctl.cli("move", str(ck), "--node", other).stdout
    assert "moving from node %s to node %s" % (home, other) in out, out
    moved = wait_for(lambda: (lambda j: j if j.get("moves") == 1 else None)(
        ctl.job(ck)), timeout=20, what="the move's first report on %s" % other)
    assert moved["node"] == other and moved["state"] == "running"
    assert moved["moving_to"] is None
    assert 0 < moved["move_s"] < 15
    # The first instance saved its checkpoint and stopped on its agent.
    on_home = agents[home].job(ck)
    assert on_home["state"] == "stopped" and on_home["reason"] == "move"
    assert not os.path.exists("/proc/%d/cmdline" % old_pid) or \
        open("/proc/%d/stat" % old_pid).read().rsplit(")", 1)[1].split()[0] \
        == "Z"
    ctl.wait_state(ck, "done", timeout=60)
    # No reported iteration lost, none twice: 1 .. ITERS, the losses the
    # job computes (1/i), whichever instance ran them.
    iters, losses = history_iters(ctl, ck)
    assert iters == list(range(1, ITERS + 1)), (iters[:3], iters[-3:])
    assert all(abs(l - 1.0 / i) < 1e-12 for i, l in zip(iters, losses))
    # The second instance resumed from the last iteration the first one
    # reported (it saves a checkpoint after every iteration): it repeated
    # none.
    ckdir = os.path.join(str(tmp_path), "controller", "checkpoints", str(ck))
    assert sorted(os.listdir(ckdir)) == ["gen-2"]
    last_old = on_home["iter"]
    assert starts_of(os.path.join(ckdir, "gen-2", "starts")) == [0, last_old]
    assert last_old >= 30
    j = ctl.job(ck)
    assert j["restarts"] == 1 and j["moves"] == 1
    # what the first instance left: its last iteration and its one start
    assert j["checkpoint_bytes"] == len(str(last_old)) + len("start 0\n")
    # The move in the job's events, in slaq show, and in the counters.
    kinds = [e[1] for e in j["events"]]
    assert "move_asked" in kinds and "move" in kinds and "fence" in kinds
    detail = [e[2] for e in j["events"] if e[1] == "move"][0]
    assert detail.startswith("from %s to %s, " % (home, other)), detail
    assert "%d checkpoint bytes" % j["checkpoint_bytes"] in detail
    shown = ctl.cli("show", str(ck)).stdout
    assert "move " in shown and "from %s to %s" % (home, other) in shown
    assert "moves       1 (the last stopped it" in shown
    st = ctl.request({"type": "status"})
    assert st["moves_total"] == 1
    assert abs(st["move_seconds_total"] - j["move_s"]) < 1e-6
    assert st["move_checkpoint_bytes_total"] == j["checkpoint_bytes"]
    metrics = http_get(ctl, "/metrics")[1]
    assert "slaq_moves_total 1" in metrics
    # The job's moves are kept in state.db across a restart.
    ctl.kill9()
    ctl.killed = False
    ctl.start()
    again = ctl.job(ck)
    assert again["moves"] == 1 and again["move_s"] == j["move_s"]


def test_old_instance_cannot_report_after_the_move(cluster, daemon_factory,
                                                  tmp_path):
    """Node n1 is played by the test (the agent link, tests/e2e/agentlink.py):
    it runs the job as far as iteration 10, stops it for the move as asked
    and says so; n2 is a real agent and runs it on. Whatever n1 sends about
    the job afterwards, of the old generation or claiming the new one,
    counts for nothing, and the old generation's checkpoint directory is
    gone (renamed to the new one's)."""
    ctl, agents = cluster(nodes=())
    m = cluster.made
    link = AgentLink(m["port"], m["token"].read_text().strip())
    link.send({"type": "register", "node": "n1", "cores": 2,
               "enforce": "signal", "jobs": []})

    def next_of(kind):
        while True:
            msg = link.recv()
            assert msg is not None and not msg.get("plain"), msg
            if msg["type"] == kind:
                return msg

    assert next_of("welcome")["node"] == "n1"
    ck = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB).stdout)
    start = next_of("start")
    assert start["job"] == ck and start["gen"] == 1
    gen1 = start["checkpoint_dir"]
    link.send({"type": "started", "job": ck, "gen": 1, "pid": os.getpid()})
    for i in range(1, 11):
        link.send({"type": "report", "job": ck, "gen": 1, "iter": i,
                   "loss": 1.0 / i, "cpu_s": 0.01, "samples": 100})
    wait_for(lambda: ctl.job(ck)["iter"] == 10, what="n1's 10 reports")
    with open(os.path.join(gen1, "ckpt"), "w") as f:
        f.write("10")
    agents["n2"] = m["start_agent"]("n2")
    wait_for(lambda: "n2" in [n["name"] for n in nodes_of(ctl)
                              if n["state"] == "up"], what="n2 to join")
    r = ctl.request({"type": "move", "job": ck, "node": "n2"})
    assert r["ok"], r
    assert r["job"]["moving_to"] == "n2"
    stop = next_of("stop")
    assert stop["job"] == ck and stop["reason"] == "move" and not stop["now"]
    # Still running on n1 until it has stopped: its reports count.
    link.send({"type": "report", "job": ck, "gen": 1, "iter": 11,
               "loss": 1.0 / 11, "cpu_s": 0.01, "samples": 100})
    with open(os.path.join(gen1, "ckpt"), "w") as f:
        f.write("11")
    wait_for(lambda: ctl.job(ck)["iter"] == 11, what="n1's last report")
    link.send({"type": "exit", "job": ck, "gen": 1, "state": "stopped",
               "reason": "move", "status": 0})
    j = wait_for(lambda: (lambda j: j if j["node"] == "n2" and
                          j.get("moves") == 1 else None)(ctl.job(ck)),
                 timeout=15, what="the job's first report on n2")
    assert j["state"] == "running"
    assert not os.path.exists(gen1)  # fenced: renamed to gen-2
    gen2 = os.path.join(os.path.dirname(gen1), "gen-2")
    assert starts_of(os.path.join(gen2, "starts")) == [11]
    # The old instance speaks again: as generation 1, and as the new one.
    for gen, it, loss in ((1, 12, 100.0), (2, 13, 200.0), (1, 10000, 300.0)):
        link.send({"type": "report", "job": ck, "gen": gen, "iter": it,
                   "loss": loss, "cpu_s": 0.01, "samples": 100})
    link.send({"type": "exit", "job": ck, "gen": 1, "state": "failed",
               "status": 256, "reason": "exit status 1"})
    reached = ctl.job(ck)["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] >= reached + 20, timeout=20,
             what="n2's reports")
    assert ctl.job(ck)["state"] == "running" and ctl.job(ck)["node"] == "n2"
    iters, losses = history_iters(ctl, ck)
    assert iters == list(range(1, len(iters) + 1))
    assert all(abs(l - 1.0 / i) < 1e-12 for i, l in zip(iters, losses))
    assert ctl.job(ck)["restarts"] == 1
    link.close()


def test_moves_refused_with_their_reasons(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1", "n2", "n3"))

    def refused(jid, node):
        p = ctl.cli("move", str(jid), "--node", node, check=False)
        assert p.returncode == 1, (p.stdout, p.stderr)
        return p.stderr

    # A task first: it takes a core of its own.
    aid = submit_array(ctl, "1-1", task_cmd(tmp_path, "30"))
    task = wait_for(lambda: [t["id"] for t in array(ctl, aid)["task_list"]
                             if t["state"] == "running"], timeout=15,
                    what="the array's task")[0]
    plain = ctl.submit(*CKPT_JOB, node="n1")
    ck = int(ctl.cli("submit", "--restartable", "--node", "n1", "--",
                     *CKPT_JOB).stdout)
    free = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB).stdout)
    q = int(ctl.cli("submit", "--restartable", "--", *CKPT_QUERY).stdout)
    for jid in (plain, ck, free, q):
        ctl.wait_state(jid, "running")
        wait_for(lambda: agents[ctl.job(jid)["node"]].job(jid)["pid"],
                 what="job %d's process" % jid)
    wait_for(lambda: ctl.job(q).get("kind") == "query", timeout=15,
             what="the query's first mini-batch")
    assert "not restartable" in refused(plain, "n2")
    assert "no node n9 has joined" in refused(free, "n9")
    assert "already runs on node" in refused(
        free, ctl.job(free)["node"])
    assert "pinned to node n1" in refused(ck, "n2")
    assert "approximate query" in refused(q, "n2")
    assert "task 1 of task array" in refused(task, "n2")
    agents["n3"].kill9()
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)
                      if n["name"] == "n3"] == ["down"], timeout=10,
             what="n3 to be down")
    assert "node n3 is down" in refused(free, "n3")
    p = ctl.cli("move", str(free), check=False)
    assert p.returncode == 2 and "--node N is required" in p.stderr
    # None of them moved anything.
    assert ctl.request({"type": "status"})["moves_total"] == 0
    assert all(ctl.job(j).get("moves") is None for j in (plain, ck, free))
    # A finished job does not move either.
    ctl.cli("cancel", "--now", str(free))
    ctl.wait_state(free, ("cancelled", "stopped"), timeout=15)
    time.sleep(EPOCH)
    assert "only a running job moves" in refused(free, "n2")


def policy_setup(cluster, *extra):
    """Under mlfs, two restartable one-core jobs on n1 (2 cores: 100%
    demand, overloaded above 90%), then n2 joins, empty. Each takes 1 s to
    exit after its checkpoint: a job on its way to n2 counts there, and
    the policy does not move the other one too meanwhile."""
    ctl, agents = cluster(nodes=("n1",), extra=("--policy", "mlfs") + extra)
    m = cluster.made
    jobs = [int(ctl.cli("submit", "--restartable", "--max-cores", "1", "--",
                        *FENCE_JOB, "--linger", "1").stdout)
            for _ in range(2)]
    for jid in jobs:
        ctl.wait_state(jid, "running")
        wait_for(lambda: ctl.job(jid)["iter"] >= 5, timeout=20,
                 what="job %d's reports" % jid)
    assert [ctl.job(j)["node"] for j in jobs] == ["n1", "n1"]
    assert ctl.request({"type": "status"})["moves_total"] == 0
    agents["n2"] = m["start_agent"]("n2")
    wait_for(lambda: "n2" in [n["name"] for n in nodes_of(ctl)
                              if n["state"] == "up"], what="n2 to join")
    return ctl, agents, jobs


def test_mlfs_moves_a_job_off_an_overloaded_node(cluster):
    """MLF-H's move under slaqd: the lowest-priority of n1's jobs (p_s =
    10% of 2: one) goes to the empty n2 through slaq move's path; then
    neither node is overloaded and nothing more moves."""
    ctl, agents, jobs = policy_setup(cluster)
    moved = wait_for(lambda: [j for j in jobs
                              if ctl.job(j).get("moves") == 1], timeout=20,
                     what="the policy's move")
    assert len(moved) == 1
    j = ctl.job(moved[0])
    assert j["node"] == "n2" and j["state"] == "running"
    asked = [e[2] for e in j["events"] if e[1] == "move_asked"]
    assert asked == ["from n1 to n2 (the policy's move off an overloaded "
                     "node)"], asked
    stay = [x for x in jobs if x != moved[0]][0]
    time.sleep(10 * EPOCH)
    assert ctl.job(stay)["node"] == "n1" and ctl.job(stay).get("moves") is None
    assert ctl.job(moved[0])["moves"] == 1
    assert ctl.request({"type": "status"})["moves_total"] == 1
    # It goes on from its checkpoint: nothing lost, nothing counted twice.
    reached = ctl.job(moved[0])["iter"]
    wait_for(lambda: ctl.job(moved[0])["iter"] > reached + 10, timeout=20,
             what="its reports on n2")
    iters, _ = history_iters(ctl, moved[0])
    assert iters == list(range(1, len(iters) + 1))


def test_a_move_that_costs_more_than_it_gains_is_not_made(cluster):
    """slaq_mlfs_move_gain under slaqd: the first move is made (no cost is
    known yet) and measured; then a third job makes its node overloaded
    (100% demand, above h_r) and an empty n3 joins. The planned move to n3
    would gain the job nothing (on both nodes it has its max_cores: its
    node is asked for no more than it has) and cost the measured stop: it
    is not made, and counted once in moves_skipped_total."""
    ctl, agents, jobs = policy_setup(cluster)
    wait_for(lambda: ctl.request({"type": "status"})["moves_total"] == 1,
             timeout=20, what="the first move")
    st = ctl.request({"type": "status"})
    assert st["move_seconds_total"] > 0
    assert st.get("moves_skipped_total", 0) == 0
    third = int(ctl.cli("submit", "--restartable", "--max-cores", "1", "--",
                        *FENCE_JOB, "--linger", "1").stdout)
    home = ctl.wait_state(third, "running")["node"]
    wait_for(lambda: ctl.job(third)["iter"] >= 5, timeout=20,
             what="the third job's reports")
    agents["n3"] = cluster.made["start_agent"]("n3")
    wait_for(lambda: "n3" in [n["name"] for n in nodes_of(ctl)
                              if n["state"] == "up"], what="n3 to join")
    def weighed():
        st = ctl.request({"type": "status"})
        return st["moves_total"] > 1 or st.get("moves_skipped_total", 0) >= 1
    wait_for(weighed, timeout=20, what="the move to n3 weighed")
    time.sleep(10 * EPOCH)
    st = ctl.request({"type": "status"})
    assert st["moves_total"] == 1, st
    assert st["moves_skipped_total"] == 1, st
    assert ctl.job(third)["node"] == home
    assert "n3" not in [ctl.job(j)["node"] for j in jobs + [third]]


def test_policy_moves_off_moves_nothing(cluster):
    ctl, agents, jobs = policy_setup(cluster, "--policy-moves", "off")
    time.sleep(15 * EPOCH)
    assert [ctl.job(j)["node"] for j in jobs] == ["n1", "n1"]
    assert ctl.request({"type": "status"})["moves_total"] == 0



def test_move_asked_before_a_controller_restart_does_not_end_the_job(
        cluster):
    """The controller dies while a job stops for its move (it takes 2 s
    to exit after its checkpoint): the controller that comes back does not
    know of the move, and the job's exit (stopped, reason move) places it
    again from its checkpoint rather than ending it."""
    ctl, agents = cluster(nodes=("n1",))
    ck = int(ctl.cli("submit", "--restartable", "--", *FENCE_JOB,
                     "--linger", "2").stdout)
    ctl.wait_state(ck, "running")
    agents["n2"] = cluster.made["start_agent"]("n2")
    wait_for(lambda: ctl.job(ck)["iter"] >= 10 and
             agents["n1"].job(ck)["pid"] and
             "n2" in [n["name"] for n in nodes_of(ctl) if n["state"] == "up"],
             timeout=20, what="10 reports and n2")
    r = ctl.request({"type": "move", "job": ck, "node": "n2"})
    assert r["ok"], r
    ctl.kill9()
    ctl.killed = False
    ctl.start()
    j = wait_for(lambda: (lambda j: j if j.get("restarts") == 1 and
                          j["state"] == "running" else None)(ctl.job(ck)),
                 timeout=20, what="the job started again")
    assert j.get("moves") is None  # not counted as a move: placed again
    kinds = [e[1] for e in j["events"]]
    assert "fence" in kinds and "move" not in kinds
    reached = j["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 5, timeout=20,
             what="its reports after the restart")
    iters, _ = history_iters(ctl, ck)
    assert iters == list(range(1, len(iters) + 1))


def test_slaq_train_moves_and_goes_on_from_its_checkpoint(cluster):
    """The issue's target with slaq-train (logreg, a checkpoint every 5
    iterations and one at its stop): no reported iteration is lost, and
    the second instance repeats at most the iterations since the first
    one's last checkpoint (none: slaq-train saves one when told to
    stop)."""
    ctl, agents = cluster(nodes=("n1", "n2"))
    ck = int(ctl.cli("submit", "--restartable", "--", TRAIN, "logreg",
                     "--subsample", "0.05", "--iters", "100000",
                     "--eval-every", "0", "--checkpoint-every", "5").stdout)
    home = ctl.wait_state(ck, "running")["node"]
    other = "n2" if home == "n1" else "n1"
    wait_for(lambda: ctl.job(ck)["iter"] >= 12, timeout=60,
             what="12 iterations")
    assert ctl.cli("move", str(ck), "--node", other).returncode == 0
    j = wait_for(lambda: (lambda j: j if j.get("moves") == 1 else None)(
        ctl.job(ck)), timeout=60, what="its first report on %s" % other)
    assert j["node"] == other
    assert j["checkpoint_bytes"] > 1000  # logreg's weights
    last_old = agents[home].job(ck)["iter"]
    first_new = wait_for(lambda: agents[other].job(ck)["history"],
                         timeout=30, what="n2's reports")[0][0]
    repeated = last_old - (first_new - 1)
    assert 0 <= repeated <= 4, (last_old, first_new)
    reached = ctl.job(ck)["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 5, timeout=60,
             what="its reports after the move")
    iters, _ = history_iters(ctl, ck)
    assert iters == list(range(iters[0], iters[0] + len(iters)))
    ctl.cli("cancel", "--now", str(ck))
