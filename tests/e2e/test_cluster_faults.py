"""Faults of a node's agent, seen from the controller: an agent that dies
and comes back (as the Slurm batch script now starts it again) with its
jobs gone (--end-jobs-at-exit: the kernel ended them) has its restartable
jobs started again, not recorded as lost."""

import os
import sys

from conftest import wait_for
from test_cluster_agents import CKPT_JOB, EPOCH, cluster, nodes_of  # noqa: F401


def test_agent_back_without_its_jobs_restarts_restartable_ones(
        cluster, daemon_factory, tmp_path):
    ctl, _ = cluster(nodes=())
    m = cluster.made

    def agent():
        return daemon_factory("--agent", "--join", "127.0.0.1:%d" % m["port"],
                              "--agent-token-file", str(m["token"]),
                              "--node-name", "n1", "--cores", "2",
                              "--enforce", "signal", "--end-jobs-at-exit",
                              state=tmp_path / "agent-n1")

    a = agent()
    wait_for(lambda: [n["state"] for n in nodes_of(ctl)] == ["up"],
             what="n1 to join")
    ck = int(ctl.cli("submit", "--restartable", "--", *CKPT_JOB).stdout)
    wait_for(lambda: ctl.job(ck)["iter"] >= 10, timeout=20,
             what="10 reports")
    pid = a.job(ck)["pid"]
    a.kill9()
    # The kernel ends its job with it (PR_SET_PDEATHSIG).
    wait_for(lambda: not os.path.exists("/proc/%d" % pid) or
             open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
             == "Z", what="the job to end with its agent")
    agent()  # back before its node is called down
    j = wait_for(lambda: (lambda j: j if j.get("restarts") == 1 and
                          j["state"] == "running" else None)(ctl.job(ck)),
                 timeout=10, what="the job started again")
    assert j["node"] == "n1"
    assert "lost" not in [x["state"] for x in ctl.jobs()]
    reached = j["iter"]
    wait_for(lambda: ctl.job(ck)["iter"] > reached + 3, timeout=20,
             what="its reports after the restart")
    assert [n["state"] for n in nodes_of(ctl)] == ["up"]
