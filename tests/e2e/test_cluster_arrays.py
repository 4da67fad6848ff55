"""Task arrays on a controller (docs/arrays.md, "Node queues"): the
controller places tasks into its agents' bounded queues, each agent starts
its next queued task the moment a core frees (no round trip), and tells the
controller what started and what ended; a node lost gives its queued tasks
back to their arrays."""

import os
import time

import pytest

from agentlink import AgentLink, node_key_args
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


def test_an_agent_starts_its_queue_without_the_controller(daemon_factory,
                                                          tmp_path):
    """A fake controller (agentlink.ControllerLink) queues tasks at a real
    agent of one core, then says nothing more: the agent starts each
    queued task as the one before ends, and reports every start and exit.
    Bad tasks and oversized batches are refused, each with a start_failed
    naming what is wrong."""
    import socket
    from agentlink import ControllerLink
    from conftest import free_port
    token = tmp_path / "agent.token"
    token.write_text("agent-secret-token-1\n")
    port = free_port()
    lsn = socket.socket()
    lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsn.bind(("127.0.0.1", port))
    lsn.listen(1)
    daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                   *node_key_args(tmp_path, token, "n1"),
                   "--cores", "1", "--enforce", "signal",
                   state=tmp_path / "agent")
    conn, _ = lsn.accept()
    conn.settimeout(30)
    link = ControllerLink(conn, "agent-secret-token-1")
    try:
        assert link.recv()["type"] == "register"
        link.send({"type": "welcome", "node": "n1", "epoch_s": 0.2,
                   "grace_s": 1, "jobs": {}})

        def task(job, idx, **kw):
            t = {"job": job, "secret": "%064x" % job, "gen": 1, "array": 9,
                 "index": idx, "name": "t[%d]" % idx,
                 "cmd": ["sleep", "0.3"], "cwd": str(tmp_path)}
            t.update(kw)
            return t

        def until(kinds):
            while True:
                m = link.recv()
                assert m is not None
                if m["type"] in kinds:
                    return m

        link.send({"type": "enqueue", "tasks": [
            task(1, 0, secret="short"), task(2, 1, index=-1),
            task(3, 2, cmd=[])]})
        why = {}
        for _ in range(3):
            m = until(("start_failed",))
            why[m["job"]] = m["message"]
        assert '"secret" must be 64 hex digits' in why[1]
        assert '"index" must be a task index' in why[2]
        assert '"cmd" must be a non-empty array' in why[3]
        big = [task(100 + i, i) for i in range(257)]
        link.send({"type": "enqueue", "tasks": big})
        refused = [until(("start_failed",)) for _ in range(257)]
        assert all("at most 256 tasks" in m["message"] for m in refused)
        # three good tasks on one core: one runs, two wait in the queue
        t0 = time.monotonic()
        link.send({"type": "enqueue", "tasks": [task(10, 0), task(11, 1),
                                                task(12, 2)]})
        seen = []
        while len([m for m in seen if m["type"] == "exit"]) < 3:
            m = until(("started", "exit", "start_failed"))
            assert m["type"] != "start_failed", m
            seen.append(m)
        order = [(m["type"], m["job"]) for m in seen]
        assert order == [("started", 10), ("exit", 10), ("started", 11),
                         ("exit", 11), ("started", 12), ("exit", 12)], order
        assert all(m.get("status") == 0 for m in seen if m["type"] == "exit")
        assert time.monotonic() - t0 >= 0.9  # one at a time on one core
    finally:
        conn.close()
        lsn.close()


def node_queue_order_run(cluster, tmp_path, order):
    """One node of 2 cores and a queue of 4, under --queue-order order:
    array A (8 tasks of 1 s) fills the cores and the queue; array B (2
    tasks of 0.1 s) is submitted behind it and reaches the node's queue
    behind A's queued tasks. Returns {(array, index): (job id, start)}."""
    ctl, agents = cluster(nodes=("n1",), extra=("--queue-bound", "4",
                                                "--queue-order", order))
    outa, outb = tmp_path / "a", tmp_path / "b"
    outa.mkdir()
    outb.mkdir()
    aid = submit_array(ctl, "1-8", task_cmd(outa, "1"), "--task-estimate",
                       "1")
    wait_for(lambda: array(ctl, aid)["counts"]["running"] == 2 and len(
        ctl.request({"type": "queue"})["nodes"][0]["queue"]) == 4,
        timeout=10, what="two of A running and four in n1's queue")
    bid = submit_array(ctl, "1-2", task_cmd(outb, "0.1"), "--task-estimate",
                       "0.1")
    for x in (aid, bid):
        wait_for(lambda: array(ctl, x)["state"] not in ("running",
                                                        "pending"),
                 timeout=60, what="array %d to end" % x)
    runs = {}
    for name, x, out in (("A", aid, outa), ("B", bid, outb)):
        a = array(ctl, x)
        assert a["counts"]["done"] == len(a["task_list"]), a
        rec = records(out)
        for t in a["task_list"]:
            runs[(name, t["index"])] = (t["id"], rec[t["index"]][0][0])
    return runs


def test_an_agent_starts_its_queue_in_placement_order_under_fifo(cluster,
                                                                 tmp_path):
    runs = node_queue_order_run(cluster, tmp_path, "fifo")
    # job ids are given as the controller places tasks into n1's queue:
    # under fifo they start in that order. Two tasks that take the node's
    # two cores at the same moment (the first two; two whose cores freed
    # together) start within a few milliseconds in either order, as their
    # processes come up; out of order by the queue is a whole task (1 s)
    # later. So each task starts no earlier than 0.1 s before the one
    # placed before it.
    by_id = sorted(runs, key=lambda k: runs[k][0])
    for before, after in zip(by_id, by_id[1:]):
        assert runs[after][1] >= runs[before][1] - 0.1, (before, after, runs)
    by_start = sorted(runs, key=lambda k: runs[k][1])
    assert set(by_start[-2:]) == {("B", 1), ("B", 2)}, by_start


def test_an_agent_orders_its_queue_by_the_controllers_srjf(cluster,
                                                          tmp_path):
    """--queue-order srjf on the controller reaches the agent on the link:
    B's tasks, placed into n1's queue behind A's 5 and 6, start before
    them (B's remaining work, 0.2 s, is the least), although they joined
    the queue after them."""
    runs = node_queue_order_run(cluster, tmp_path, "srjf")
    for b in (("B", 1), ("B", 2)):
        for a in (("A", 5), ("A", 6)):
            assert runs[b][0] > runs[a][0], (b, a, runs)  # placed after
            assert runs[b][1] < runs[a][1], (b, a, runs)  # started before


@pytest.mark.parametrize("order,starvation,expect", [
    ("fifo", "off", ["L", "A", "B"]),
    ("srjf", "off", ["B", "A", "L"]),
    ("srjf", "inf,5", ["L", "B", "A"]),
])
def test_an_agent_picks_its_next_task_by_the_welcomes_order(
        daemon_factory, tmp_path, order, starvation, expect):
    """A fake controller gives a real agent of one core its queue order in
    the welcome, then queues X (1.5 s, runs at once), L and A behind it,
    and B 1 s later. Each task carries its array's order item: L's array
    has the most remaining work (1,000 s) but a 0.2 s estimate, A's 50 s,
    B's 10 s (both estimated at 100 s). When X ends, fifo starts them as
    they came (L, A, B); srjf by remaining work (B, A, L); srjf with a
    relative starvation threshold of 5 x the estimate lets L, which has
    waited 1.5 s > 5 x 0.2 s, go first, then B before A."""
    import socket
    from agentlink import ControllerLink
    from conftest import free_port
    token = tmp_path / "agent.token"
    token.write_text("agent-secret-token-1\n")
    port = free_port()
    lsn = socket.socket()
    lsn.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    lsn.bind(("127.0.0.1", port))
    lsn.listen(1)
    daemon_factory("--agent", "--join", "127.0.0.1:%d" % port,
                   *node_key_args(tmp_path, token, "n1"),
                   "--cores", "1", "--enforce", "signal",
                   state=tmp_path / "agent")
    conn, _ = lsn.accept()
    conn.settimeout(30)
    link = ControllerLink(conn, "agent-secret-token-1")
    now = time.time()
    names = {1: "X", 2: "L", 3: "A", 4: "B"}

    def task(job, sleep, work, estimate):
        return {"job": job, "secret": "%064x" % job, "gen": 1,
                "array": job, "index": 0, "name": names[job],
                "cmd": ["sleep", str(sleep)], "cwd": str(tmp_path),
                "order": {"arrival": now - 10 + job, "estimate": estimate,
                          "work": work, "tasks": 1}}
    try:
        assert link.recv()["type"] == "register"
        link.send({"type": "welcome", "node": "n1", "epoch_s": 0.2,
                   "grace_s": 1, "jobs": {}, "queue_order": order,
                   "starvation": starvation})
        link.send({"type": "enqueue", "tasks": [
            task(1, 1.5, 1.5, 1.5), task(2, 0.1, 1000, 0.2),
            task(3, 0.1, 50, 100)]})
        started = []
        while len(started) < 4:
            m = link.recv()
            assert m is not None
            assert m["type"] != "start_failed", m
            if m["type"] != "started":
                continue
            started.append(names[m["job"]])
            if started == ["X"]:  # B joins the queue while X runs
                time.sleep(0.8)
                link.send({"type": "enqueue", "tasks": [
                    task(4, 0.1, 10, 100)]})
        assert started[0] == "X"
        assert started[1:] == expect, (order, starvation, started)
    finally:
        conn.close()
        lsn.close()


def test_an_agent_cannot_start_or_end_tasks_it_was_not_given(cluster):
    """A fake agent (it holds the agent token) registers as its own node
    and names the real node's tasks, a task id that does not exist and
    the array's id in started, start_failed and exit messages, and sends
    an enqueue as if it were the controller: each is refused with a line
    in the controller's log, and no task is started, failed or marked
    done by it."""
    ctl, agents = cluster(nodes=("n1",), extra=("--queue-bound", "2"))
    m = cluster.made
    aid = submit_array(ctl, "1-4", ["sleep", "60"])
    wait_for(lambda: array(ctl, aid)["counts"]["running"] == 2, timeout=10,
             what="two tasks running on n1")
    (n1, _) = ctl.request({"type": "queue"})["nodes"]
    tasks = {t["index"]: t for t in array(ctl, aid)["task_list"]}
    queued = [tasks[t["index"]]["id"] for t in n1["queue"]]
    running = [t["id"] for t in tasks.values() if t["state"] == "running"]
    assert len(running) == 2 and len(queued) == 2, (tasks, n1)
    before = {t["id"]: (t["state"], t["pid"]) for t in tasks.values()}

    evil = AgentLink(m["port"], m["token"].read_text().strip(),
                     node="evil")
    evil.send({"type": "register", "node": "evil", "cores": 8,
               "enforce": "signal", "jobs": []})
    assert evil.recv()["type"] == "welcome"
    sent = []
    for jid in running:
        sent.append(("exit", jid))
        evil.send({"type": "exit", "job": jid, "status": 0,
                   "state": "done"})
    for jid in queued:
        sent.append(("started", jid))
        evil.send({"type": "started", "job": jid, "pid": os.getpid()})
    sent.append(("start_failed", queued[0]))
    evil.send({"type": "start_failed", "job": queued[0],
               "message": "taken over"})
    for jid in (aid, 999999):
        sent.append(("exit", jid))
        evil.send({"type": "exit", "job": jid, "status": 0,
                   "state": "done"})
    evil.send({"type": "enqueue", "tasks": [
        {"job": queued[1], "cmd": ["sh", "-c", "touch /tmp/slaq-evil"]}]})
    errs = []
    while True:
        msg = evil.recv()
        if msg is None or msg.get("type") == "error":
            errs.append(msg)
            break
    assert errs[-1] and errs[-1]["code"] == "unknown_type", errs
    log = wait_for(lambda: (lambda t: t if all(
        'node evil: a "%s" naming job %d refused' % s in t for s in sent)
        else None)(ctl.read_log()), timeout=5, what="the refusals logged")
    for jid in running + queued:
        assert ('naming job %d refused: it is node n1\'s' % jid) in log
    assert 'naming job 999999 refused: no such job' in log
    # Nothing changed: the running tasks run on n1 with their pids, the
    # queued ones wait in n1's queue, none is done or failed.
    a = array(ctl, aid)
    assert a["counts"]["done"] == 0 and a["counts"]["failed"] == 0, a
    for t in a["task_list"]:
        assert (t["state"], t["pid"]) == before[t["id"]], (t, before)
        assert ctl.job(t["id"])["node"] == "n1"
    (n1, evil_row, _) = ctl.request({"type": "queue"})["nodes"]
    assert [tasks[t["index"]]["id"] for t in n1["queue"]] == queued
    assert evil_row["running"] == 0 and not evil_row["queue"], evil_row
    assert not os.path.exists("/tmp/slaq-evil")
    evil.close()
