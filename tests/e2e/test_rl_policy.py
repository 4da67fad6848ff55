"""test_rl_policy.py — MLF-RL under slaqd (docs/deadlines.md, "Under
slaqd"): `slaqd --rl-model FILE` loads a network at start, refusing a
malformed file with its line, and `--policy mlfs-rl` orders the waiting
jobs by its scores, through the same core function as the simulator
(slaq_rl_keys): a network that inverts MLF-H's order of urgency inverts
the order in which the jobs get the core."""

import os
import subprocess
import time

import pytest

from conftest import ROOT, SLAQD, TOY, wait_for


def model_text(urgency_weight):
    """A network whose score is tanh(urgency_weight × f0), f0 being the
    job's urgency over the largest among the jobs (slaq_rl_features):
    +1 ranks the more urgent job first, as MLF-H does; -1 the less."""
    lines = ["slaq-rl-model 1", "features 8 hidden 16",
             "# test: the score follows the urgency feature alone"]
    for k in range(16):
        w = [0.0] * 8
        w2 = 0.0
        if k == 0:
            w[0] = urgency_weight
            w2 = 1.0
        lines.append("unit %d %s 0 %r" % (k, " ".join(repr(x) for x in w),
                                           w2))
    lines.append("output 0")
    return "\n".join(lines) + "\n"


def cores(d, job):
    return d.job(job)["cores"]


def first_served(d):
    """Three jobs on one core: `first` holds it; `mid` (urgency 5) and
    `top` (urgency 10) wait at their first iteration (30 CPU-seconds
    each), so every feature but urgency is alike (the waiting time aside,
    which the test models weigh at 0). When `first` leaves, returns the
    name of the waiting job that got the core."""
    first = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="first",
                     max_cores=1, urgency=1)
    wait_for(lambda: cores(d, first) > 0.99, timeout=15,
             what="the first job to get the core")
    mid = d.submit(TOY, "--forever", "--iter-cpu", "30", name="mid",
                   max_cores=1, urgency=5)
    top = d.submit(TOY, "--forever", "--iter-cpu", "30", name="top",
                   max_cores=1, urgency=10)
    time.sleep(1)
    assert cores(d, first) > 0.99
    assert d.request({"type": "cancel", "job": first, "now": True})["ok"]
    d.wait_state(first, ("cancelled", "done", "failed"), timeout=15)
    got = wait_for(lambda: ("mid" if cores(d, mid) > 0.99 and
                            cores(d, top) < 0.01 else
                            "top" if cores(d, top) > 0.99 and
                            cores(d, mid) < 0.01 else None),
                   timeout=15, what="one waiting job to get the core")
    # It keeps it: mlfs-rl preempts only by moves, as mlfs-h.
    time.sleep(1)
    assert cores(d, {"mid": mid, "top": top}[got]) > 0.99
    return got


def test_mlfs_rl_orders_jobs_as_the_model_says(daemon_factory, tmp_path):
    like_h = tmp_path / "like-h.model"
    like_h.write_text(model_text(1.0))
    inverse = tmp_path / "inverse.model"
    inverse.write_text(model_text(-1.0))
    d = daemon_factory("--policy", "mlfs-rl", "--cores", "1",
                       "--rl-model", str(like_h))
    assert d.request({"type": "status"})["policy"] == "mlfs-rl"
    assert first_served(d) == "top"
    d.stop()
    d = daemon_factory("--policy", "mlfs-rl", "--cores", "1",
                       "--rl-model", str(inverse))
    assert first_served(d) == "mid"


def test_mlfs_rl_with_the_committed_model_by_default(daemon_factory):
    # No --rl-model: the source tree's data/models/mlfs-rl.model, which
    # (trained to imitate MLF-H) serves the more urgent job first.
    assert os.path.exists(os.path.join(ROOT, "data", "models",
                                       "mlfs-rl.model"))
    d = daemon_factory("--policy", "mlfs-rl", "--cores", "1")
    assert first_served(d) == "top"


def test_mlfs_rl_can_be_set_at_run_time(daemon_factory, tmp_path):
    inverse = tmp_path / "inverse.model"
    inverse.write_text(model_text(-1.0))
    d = daemon_factory("--cores", "1", "--rl-model", str(inverse))
    assert d.cli("policy", "mlfs-rl").stdout.strip() == "mlfs-rl"
    assert first_served(d) == "mid"


def run_slaqd(tmp_path, *args):
    return subprocess.run([SLAQD, "--state-dir", str(tmp_path / "st"),
                           "--http", "off"] + list(args),
                          capture_output=True, text=True, timeout=30)


@pytest.mark.parametrize("bad,where,what", [
    ("slaq-rl-model 1\nfeatures 8 hidden 16\nunit 0 1 2\n", " line 3",
     "unit 0 needs 10 finite numbers"),
    ("slaq-rl-model 2\n", " line 1", "version 2"),
    ("slaq-rl-model 1\nfeatures 8 hidden 16\n", ":",
     "ends before a \"unit\" line"),
])
def test_malformed_model_is_refused_with_its_line(tmp_path, bad, where, what):
    path = tmp_path / "bad.model"
    path.write_text(bad)
    p = run_slaqd(tmp_path, "--policy", "mlfs-rl", "--rl-model", str(path))
    assert p.returncode == 2, p.stderr
    assert "slaqd: --rl-model: %s%s" % (path, where) in p.stderr, p.stderr
    assert what in p.stderr, p.stderr
    # Whatever the policy: a model given is a model read.
    p = run_slaqd(tmp_path, "--policy", "fair", "--rl-model", str(path))
    assert p.returncode == 2 and what in p.stderr, p.stderr


def test_model_in_the_config_file_is_refused_with_both_places(tmp_path):
    bad = tmp_path / "bad.model"
    bad.write_text("slaq-rl-model 1\nfeatures 8 hidden 15\n")
    conf = tmp_path / "slaqd.conf"
    conf.write_text("policy = mlfs-rl\nrl-model = %s\n" % bad)
    p = run_slaqd(tmp_path, "--config", str(conf))
    assert p.returncode == 2, p.stderr
    assert "%s:2: rl-model" % conf in p.stderr, p.stderr
    assert "%s line 2" % bad in p.stderr, p.stderr


def test_missing_model_is_refused(tmp_path):
    p = run_slaqd(tmp_path, "--policy", "mlfs-rl", "--rl-model",
                  str(tmp_path / "none.model"))
    assert p.returncode == 2
    assert "none.model" in p.stderr, p.stderr
