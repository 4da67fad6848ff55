"""test_sweep.py — `slaq sweep` under slaqd.

A spec with a mistake is refused before anything runs, with the field
named; a small real sweep (slaq-train logreg, its validation accuracy)
runs its configurations on its slots under libslaq's policy, ends when one
reaches the target, and leaves no job running; a sweep survives a restart
of slaqd (its policy rebuilt from the log) and can be cancelled; the HTTP
API serves it for the dashboard. A configuration the policy kills holds
its slot until its process has exited, on slaqd and on a node agent.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from conftest import BUILD, SLAQ, api, wait_for
from test_cluster_agents import cluster  # noqa: F401

TRAIN = os.path.join(BUILD, "bin", "slaq-train")
LINGER_JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "linger_job.py")


def spec(**kw):
    s = {"name": "t", "command": TRAIN + " logreg --subsample 0.05 "
         "--validation 0.2 --lr {lr} --iters {epochs} --quiet",
         "space": {"lr": {"type": "log-uniform", "low": 0.0001, "high": 3}},
         "generator": {"type": "random", "seed": 3}, "configs": 4,
         "metric": "val_accuracy", "direction": "max", "y_target": 0.75,
         "t_max": 60, "epochs": 12, "b": 3, "slots": 2, "policy": "pop"}
    s.update(kw)
    return s


def run_cli(tmp_path, d, s, *args):
    path = tmp_path / "spec.json"
    path.write_text(json.dumps(s) if not isinstance(s, str) else s)
    return subprocess.run([SLAQ, "sweep", "--socket", d.sock] + list(args) +
                          [str(path)], capture_output=True, text=True,
                          timeout=120)


def test_bad_specs_name_the_field(tmp_path, slaqd):
    cases = [
        ('{"command": ', "line 1"),
        (dict(spec(), space={"lr": {"type": "log-uniform", "low": 0,
                                    "high": 1}}), "space.lr.low"),
        (dict(spec(), space={"lr": {"type": "normal"}}), "space.lr.type"),
        (dict(spec(), command="x --lr {lr} --h {hidden}"),
         "placeholder {hidden}"),
        (dict(spec(), policy="best"), "unknown sweep policy 'best'"),
        (dict(spec(), slots=0), "slots: expected an integer"),
        (dict(spec(), y_target=None), "y_target: missing"),
        (dict(spec(), generator={"type": "sobol"}), "generator.type"),
        (dict(spec(), direction="up"), "direction"),
        (dict(spec(), colour=1), "colour: unknown field"),
        (dict(spec(), generator="grid", configs=50), "grid has only"),
    ]
    for s, want in cases:
        p = run_cli(tmp_path, slaqd, s)
        assert p.returncode == 2, (s, p.stdout, p.stderr)
        assert want in p.stderr, (want, p.stderr)
    assert slaqd.request({"type": "sweep_ls"})["sweeps"] == []
    r = slaqd.request({"type": "sweep_submit", "spec": {"command": "x"}})
    assert not r["ok"] and r["code"] == "bad_spec"


def test_dry_run_fills_placeholders(tmp_path, slaqd):
    s = spec(generator={"type": "grid", "points": 3}, configs=None,
             space={"lr": {"type": "log-uniform", "low": 0.01, "high": 1},
                    "l2": {"type": "choice", "values": [0, 0.5]}},
             command="train --lr {lr} --l2 {l2} --n {epochs} --c {config}")
    p = run_cli(tmp_path, slaqd, s, "--dry-run", "--json")
    assert p.returncode == 0, p.stderr
    cfgs = json.loads(p.stdout)
    assert len(cfgs) == 6
    assert cfgs[0]["cmd"] == ["train", "--lr", "0.01", "--l2", "0", "--n",
                              "12", "--c", "0"]
    assert sorted({c["params"]["lr"] for c in cfgs}) == [0.01, 0.1, 1.0]


def test_sweep_reaches_target_and_cleans_up(tmp_path, slaqd):
    p = run_cli(tmp_path, slaqd, spec(), "--wait")
    assert p.returncode == 0, p.stderr
    assert "reached" in p.stdout
    w = slaqd.request({"type": "sweep_show", "sweep": 1})["sweep"]
    assert w["state"] == "reached"
    assert 0 < w["time_to_target_s"] <= w["elapsed_s"]
    cfg = w["config_list"][w["reached_config"]]
    assert max(pt[1] for pt in cfg["curve"]) >= 0.75
    assert w["best"] >= 0.75
    jobs = [j for c in w["config_list"] for j in c["jobs"]]
    assert jobs and all(slaqd.job(j)["sweep"] == 1 for j in jobs)
    wait_for(lambda: not slaqd.request({"type": "ls", "active": True})
             ["jobs"], timeout=30, what="the sweep's jobs to end")
    ls = slaqd.cli("sweep", "ls").stdout
    assert "reached" in ls and "pop" in ls
    # The sweep is over: no configuration is left running or suspended.
    w = slaqd.request({"type": "sweep_show", "sweep": 1})["sweep"]
    assert w["counts"]["running"] == w["counts"]["suspended"] == 0, w["counts"]
    assert w["config_list"][w["reached_config"]]["state"] == "ended"
    assert {c["state"] for c in w["config_list"]} <= {"new", "killed", "ended"}
    http = api(slaqd, "/api/sweeps/1")
    assert http["sweep"]["state"] == "reached"
    assert len(http["sweep"]["config_list"]) == 4


def test_sweep_survives_restart_and_cancels(tmp_path, daemon_factory):
    state = tmp_path / "st"
    d = daemon_factory(state=state)
    s = spec(policy="default", slots=1, configs=3, epochs=400,
             stop_at_target=False, y_target=0.99,
             command=TRAIN + " logreg --subsample 0.05 --validation 0.2 "
             "--lr {lr} --iters {epochs} --quiet")
    p = run_cli(tmp_path, d, s)
    assert p.returncode == 0, p.stderr
    sid = int(p.stdout)
    show = lambda dd: dd.request({"type": "sweep_show", "sweep": sid})["sweep"]
    wait_for(lambda: show(d)["config_list"][0]["epochs"] >= 3, timeout=60,
             what="three epochs")
    d.proc.send_signal(signal.SIGTERM)  # jobs keep running over a restart
    d.proc.wait(timeout=30)
    d2 = daemon_factory(state=state)
    w = show(d2)
    assert w["state"] == "running"
    e0 = w["config_list"][0]["epochs"]
    assert e0 >= 3  # the policy knows what it saw before
    wait_for(lambda: show(d2)["config_list"][0]["epochs"] > e0 + 2,
             timeout=60, what="epochs after the restart")
    assert show(d2)["counts"]["running"] == 1
    out = d2.cli("sweep", "cancel", str(sid)).stdout
    assert "cancelled" in out
    wait_for(lambda: not d2.request({"type": "ls", "active": True})["jobs"],
             timeout=30, what="jobs to end")
    assert show(d2)["counts"]["running"] == 0  # ended with the sweep
    again = d2.request({"type": "sweep_cancel", "sweep": sid})
    assert not again["ok"] and again["code"] == "not_active"


def running_job_ids(root):
    """The SLAQ_JOB_IDs of the live processes, not stopped, whose
    SLAQ_SOCKET lies under root."""
    ids = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % pid, "rb") as f:
                env = dict(x.split(b"=", 1) for x in f.read().split(b"\0")
                           if b"=" in x)
            with open("/proc/%s/stat" % pid, "rb") as f:
                st = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if st in (b"Z", b"X", b"T", b"t") or b"SLAQ_JOB_ID" not in env or \
                not env.get(b"SLAQ_SOCKET", b"").startswith(
                    os.fsencode(root)):
            continue
        ids.add(int(env[b"SLAQ_JOB_ID"]))
    return ids


@pytest.mark.parametrize("where", ["local", "agent"])
def test_killed_configuration_holds_its_slot_until_it_exits(
        where, tmp_path, daemon_factory, cluster):  # noqa: F811
    # Each configuration is killed at its third epoch (a flat 0.5 against
    # a target of 0.999) and takes 1.5 s to exit after that: the next one
    # must wait for it, not start beside it on the sweep's one slot.
    if where == "local":
        d = daemon_factory()
    else:
        d, _ = cluster(nodes=("n1",))
    s = spec(slots=1, configs=3, y_target=0.999, stop_at_target=False,
             command=[sys.executable, LINGER_JOB, "{epochs}", "1.5",
                      "{lr}"])
    seen, done = [], threading.Event()

    def watch():
        while not done.is_set():
            seen.append(running_job_ids(tmp_path))
            time.sleep(0.01)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    try:
        p = run_cli(tmp_path, d, s)
        assert p.returncode == 0, p.stderr
        sid = int(p.stdout)
        w = wait_for(lambda: (lambda w: w if w["state"] != "running" else
                              None)(d.request({"type": "sweep_show",
                                               "sweep": sid})["sweep"]),
                     timeout=90, what="the sweep to end")
    finally:
        done.set()
        t.join(timeout=10)
    assert [c["state"] for c in w["config_list"]] == ["killed"] * 3, w
    jobs = [d.job(c["jobs"][-1]) for c in w["config_list"]]
    assert max(len(x) for x in seen) == 1, \
        [sorted(x) for x in seen if len(x) > 1][:5]
    assert set().union(*seen) == {j["id"] for j in jobs}
    # By slaqd's own clock too: each started after the one before ended.
    for a, b in zip(jobs, jobs[1:]):
        assert b["started"] >= a["ended"], (a, b)
