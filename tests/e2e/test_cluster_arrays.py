"""Task arrays on a controller (docs/arrays.md, "Node queues"): the
controller places tasks into its agents' bounded queues, each agent starts
its next queued task the moment a core frees (no round trip), and tells the
controller what started and what ended; a node lost gives its queued tasks
back to their arrays."""

import os
import time

from conftest import TOY, wait_for
from test_arrays import array, records, submit_array, task_cmd
from test_cluster_agents import cluster, nodes_of  # noqa: F401 (fixture)


def test_agents_run_an_arrays_tasks_from_their_queues(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1", "n2"), extra=("--queue-bound", "2"))
    out = tmp_path / "out"
    out.mkdir()
    aid = submit_array(ctl, "1-16", task_cmd(out, "0.4"),
                       "--task-estimate", "0.4")
    # 2 nodes of 2 cores: each holds 2 running and 2 queued, no more
    def placed():
        (n1, n2, ctlrow) = ctl.request({"type": "queue"})["nodes"]
        return n1, n2, ctlrow
    wait_for(lambda: all(n["running"] == 2 for n in placed()[:2]),
             timeout=10, what="both nodes running two tasks")
    n1, n2, rest = placed()
    for n in (n1, n2):
        assert n["running"] + len(n["queue"]) <= 4, n
        assert n["task_cores"] == 2
    assert rest["beyond"] >= 16 - 8 - array(ctl, aid)["counts"]["done"]
    wait_for(lambda: array(ctl, aid)["state"] not in ("running", "pending"),
             timeout=60, what="the array to end")
    a = array(ctl, aid)
    assert a["counts"]["done"] == 16, a
    rec = records(out)
    assert sorted(rec) == list(range(1, 17))
    assert all(len(s) == 1 for s, _, _ in rec.values())
    # every task ran on one of the agents, and both took some
    nodes = {ctl.job(t["id"])["node"] for t in a["task_list"]}
    assert nodes == {"n1", "n2"}, nodes
    # an agent's next task starts when a core frees, not an epoch later:
    # on each node, the gap between one task's end and the next one's
    # start is far below the controller's epoch (1 s here)
    by_node = {}
    for t in a["task_list"]:
        by_node.setdefault(ctl.job(t["id"])["node"], []).append(
            rec[t["index"]])
    for node, runs in by_node.items():
        ends = sorted(e[0] for _, e, _ in runs)
        starts = sorted(s[0] for s, _, _ in runs)
        # the third task on a node starts right after the first ends
        gap = starts[2] - ends[0]
        assert gap < 0.3, (node, gap)


def test_a_lost_node_gives_its_queued_tasks_back(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1", "n2"), extra=("--queue-bound", "3"))
    out = tmp_path / "out"
    out.mkdir()
    aid = submit_array(ctl, "1-10", task_cmd(out, "2"))
    wait_for(lambda: array(ctl, aid)["counts"]["running"] == 4, timeout=10,
             what="four tasks running")
    agents["n2"].kill9()
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)
                      if n["name"] == "n2"] == ["down"], timeout=15,
             what="n2 to be down")
    wait_for(lambda: array(ctl, aid)["state"] not in ("running", "pending"),
             timeout=60, what="the array to end on n1")
    a = array(ctl, aid)
    # n2's two running tasks were lost with it; its queued ones ran on n1
    assert a["counts"]["lost"] == 2, a
    assert a["counts"]["done"] == 8, a
    for t in a["task_list"]:
        if t["state"] == "done":
            assert ctl.job(t["id"])["node"] == "n1"


def test_cancel_reaches_tasks_in_an_agents_queue(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1",), extra=("--queue-bound", "4"))
    aid = submit_array(ctl, "1-8", ["sleep", "30"])
    wait_for(lambda: array(ctl, aid)["counts"]["running"] == 2, timeout=10,
             what="two tasks running")
    (n1, _) = ctl.request({"type": "queue"})["nodes"]
    assert [t["index"] for t in n1["queue"]] == [3, 4, 5, 6]
    ctl.cli("cancel", "%d_4" % aid)
    wait_for(lambda: ctl.request({"type": "show", "job": "%d_4" % aid})[
        "job"]["state"] == "cancelled", timeout=10, what="4 cancelled")
    ctl.cli("cancel", "--now", str(aid))
    wait_for(lambda: array(ctl, aid)["counts"]["running"] == 0 and
             array(ctl, aid)["counts"]["pending"] == 0, timeout=15,
             what="every task to end")
    assert array(ctl, aid)["counts"]["cancelled"] == 8
    assert not agents["n1"].request({"type": "ls", "active": True})["jobs"]


def test_tasks_go_to_the_nodes_ml_jobs_leave(cluster, tmp_path):
    ctl, agents = cluster(nodes=("n1", "n2"), extra=("--queue-bound", "1"))
    ml = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01", node="n1")
    ctl.wait_state(ml, "running")
    aid = submit_array(ctl, "1-6%3", ["sleep", "0.3"])
    wait_for(lambda: array(ctl, aid)["state"] == "done", timeout=30,
             what="the array to end")
    a = array(ctl, aid)
    assert {ctl.job(t["id"])["node"] for t in a["task_list"]} == {"n2"}
    (n1, n2, _) = ctl.request({"type": "queue"})["nodes"]
    assert n1["task_cores"] == 0 and n2["task_cores"] == 2
    assert ctl.job(ml)["state"] == "running"
