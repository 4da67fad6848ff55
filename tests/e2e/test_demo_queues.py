"""make demo-queues at a small size: a task array and one slaq-train job on
a controller and three agents, with node queues and without; every task
ends, and the numbers it reports hold together. The agents started
directly here (--direct); test_demo_queues_slurm runs them through the
local Slurm cluster."""

import json
import os
import subprocess
import sys

from conftest import BUILD, ROOT


def test_demo_queues_small(tmp_path):
    out = tmp_path / "dq.json"
    p = subprocess.run([sys.executable,
                        os.path.join(ROOT, "scripts", "demo-queues.py"),
                        "--tasks", "20", "--jobs", "1", "--scale", "0.1",
                        "--cores", "2", "--direct", "--out", str(out),
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
