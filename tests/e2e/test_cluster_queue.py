"""A controller's pending queue has no head-of-line blocking: a job that
cannot start (pinned to a node that is down) holds up no job behind it
that can run elsewhere, and fails with its reason once its node has been
down for --pin-wait seconds."""

import time

from conftest import TOY, wait_for
from test_cluster_agents import cluster, nodes_of  # noqa: F401 (fixture)


def test_job_pinned_to_down_node_blocks_nobody_then_fails(cluster):
    ctl, agents = cluster(nodes=("n1", "n2"), extra=("--pin-wait", "3"))
    agents["n2"].kill9()
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)
                      if n["name"] == "n2"] == ["down"], timeout=10,
             what="n2 to be down")
    t_down = time.monotonic()
    a = ctl.submit(TOY, "--forever", node="n2")
    assert ctl.job(a)["state"] == "pending"
    b = ctl.submit(TOY, "--forever", "--iter-cpu", "0.01")
    # b starts on n1 while a, ahead of it, waits for n2.
    jb = ctl.wait_state(b, "running", timeout=5)
    assert jb["node"] == "n1"
    assert ctl.job(a)["state"] == "pending"
    wait_for(lambda: ctl.job(b)["iter"] >= 2, timeout=30,
             what="b's reports")
    # a fails once n2 has been down 3 s, saying why.
    ja = ctl.wait_state(a, "failed", timeout=15)
    assert time.monotonic() - t_down >= 2.0
    assert "pinned to node n2" in ja["reason"], ja
    assert "--pin-wait 3" in ja["reason"]
    show = ctl.cli("show", str(a)).stdout
    assert "pinned to node n2 (--node), which has been down for" in show
    # Submitted now, a job pinned to it is refused at once.
    late = ctl.cli("submit", "--node", "n2", "--", TOY, check=False)
    assert late.returncode != 0 and "has been down for" in late.stderr
    assert ctl.job(b)["state"] == "running"
