"""The cluster's kill -9 soak (tests/soak/soak.py, `make soak` for the
full run) at a size that fits in make test: a controller and two agents
killed with -9 three times each at seeded random moments under ML jobs of
both clients, a query and a sweep. Every report a client logged as
acknowledged is in the controller's state.db or counted in
reports_lost_total, the query ends with its exact answer and the sweep
never runs more configurations than its slots."""

import json
import os
import subprocess
import sys

from conftest import BUILD, ROOT


def test_small_cluster_soak_loses_nothing_acknowledged(tmp_path):
    p = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tests", "soak", "soak.py"),
         "--build", BUILD, "--kills", "3", "--seed", "7", "--jobs", "3",
         "--iters", "150", "--batches", "60", "--scale-factor", "0.05",
         "--configs", "4", "--sweep-epochs", "12", "--submit-every", "4",
         # a node is down after 3 silent epochs: on a loaded machine an
         # agent's restart (its key derivation) has taken 8 s
         "--epoch", "4", "--tmp", str(tmp_path)],
        capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stdout + p.stderr[-3000:]
    r = json.loads(p.stdout)
    assert sum(r["kills"].values()) == 9, r
    assert r["acked"] > 500 and r["unaccounted"] == 0, r
    assert r["queries_exact"] == r["queries"] == 1, r
    assert 1 <= r["sweep_max_running"] <= r["sweep_slots"], r
