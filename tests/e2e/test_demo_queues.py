"""make demo-queues at a small size: a task array and one slaq-train job on
a controller and three agents, with node queues and without; every task
ends, and the numbers it reports hold together. The agents started
directly here (--direct); test_demo_queues_slurm runs them through the
local Slurm cluster."""

import json
import os
import subprocess
import sys

import pytest

from conftest import BUILD, ROOT


def test_demo_queues_small(tmp_path):
    out = tmp_path / "dq.json"
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "demo-queues.py"),
                        "--tasks", "20", "--jobs", "1", "--scale", "0.1",
                        "--cores", "2", "--bound", "4", "--direct", "--out", str(out),
                        BUILD],
                       capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, p.stderr
    assert "node queues (bound 4)" in p.stdout and "no node queues" in p.stdout
    r = json.loads(out.read_text())
    assert [x["bound"] for x in r["runs"]] == [4, 0]
    # task i sleeps (1 + 7i mod 5) x 0.1 s: 6 s of work for 20 tasks
    work = sum((1 + (7 * i) % 5) * 0.1 for i in range(1, 21))
    for run in r["runs"]:
        assert run["done"] == 20, run
        # 3 nodes of 2 cores, one core taken by the ML job's max_cores
        assert run["task_cores"] == 5, run
        assert run["busy_s"] >= work * 0.95, run
        assert run["makespan_s"] >= work / 5, run
        assert 0 < run["utilisation"] <= 1, run
        assert run["mean_idle_gap_ms"] is not None
        # slaq report's t90, if the job's loss fell before it was cancelled
        for j in run["ml_jobs"]:
            assert j["t90_s"] is None or j["t90_s"] > 0, j


def test_demo_queues_slurm_tasks_once_on_slurm_agents_queues_cut_gap(tmp_path):
    """The same through the local Slurm cluster: `slaq cluster up --slurm`
    starts the agents as Slurm steps on n1..n3. Every task runs exactly
    once, says its own index, and was started by its node's agent, a
    process of that run's Slurm job on that node; the ML job runs and
    makes progress; and the node queues (slaqd's default bound, auto)
    shorten the idle gap between tasks."""
    out = tmp_path / "dq.json"
    tasks = 40
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "demo-queues.py"),
                        "--tasks", str(tasks), "--jobs", "1", "--scale",
                        "0.2", "--cores", "2", "--slurm", "--out", str(out),
                        BUILD],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0 and "Slurm cannot start here" in p.stderr:
        pytest.skip(p.stderr.strip().splitlines()[-1])
    assert p.returncode == 0, p.stdout + p.stderr
    assert "Slurm job steps" in p.stdout, p.stdout
    r = json.loads(out.read_text())
    assert r["backend"] == "slurm" and r["slurm_unavailable"] is None
    assert [x["bound"] for x in r["runs"]] == ["auto", 0]
    jobs = set()
    for run in r["runs"]:
        assert run["done"] == tasks, run["done"]
        # exactly once each
        assert sorted(t["index"] for t in run["task_runs"]) == \
            list(range(1, tasks + 1))
        # on an agent Slurm started: a step of this run's job, on its node
        assert run["slurm_job"], run
        jobs.add(run["slurm_job"])
        for n, a in run["agents"].items():
            assert a["slurm_job"] == run["slurm_job"], (n, a)
            assert a["slurm_node"] == n, (n, a)
        assert {t["node"] for t in run["task_runs"]} == {"n1", "n2", "n3"}
        # each task printed its index and its parent, its node's agent
        assert run["wrong_output"] == [], run["wrong_output"]
        ml = run["ml_jobs"][0]
        assert ml["state"] == "running" and ml["iter"] > 0, ml
        assert ml["t90_s"] is not None, ml
        assert 0 < run["utilisation"] <= 1, run["utilisation"]
    assert len(jobs) == 2  # one allocation per run
    queued, plain = r["runs"]
    assert queued["mean_idle_gap_ms"] < plain["mean_idle_gap_ms"], \
        (queued["mean_idle_gap_ms"], plain["mean_idle_gap_ms"])
