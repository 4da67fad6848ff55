"""make demo-deadlines at a small size (scripts/demo-deadlines.py): four
slaq-train jobs with deadlines, required accuracies and urgencies on the
local three-node Slurm cluster's agents (`slaq cluster up --slurm`), the
same submissions under mlfs, slaq and edf, one job moved in each run when
the policy moves none. What the demo prints is checked against what the
controllers and agents recorded in their state.db files, read here
directly: every job ended; each job's deadline_met is its recorded end
against its deadline and accuracy_met its last recorded metric against its
requirement; a move lost no reported iteration and repeated at most the
iterations since the job's last checkpoint; the three policies ran the same
submissions. Skipped, with the reason, where Slurm cannot start."""

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile

import pytest

from conftest import BUILD, ROOT

SCRIPT = os.path.join(ROOT, "scripts", "demo-deadlines.py")
POLICIES = ("mlfs", "slaq", "edf")
JOBS = 4
CKPT_EVERY = 10


@pytest.fixture
def work():
    # A short path: the clusters' Unix sockets live below it.
    d = tempfile.mkdtemp(prefix="slaq-dl-", dir="/tmp")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def rows(db, sql, *args):
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return c.execute(sql, args).fetchall()
    finally:
        c.close()


def test_demo_deadlines_through_slurm(work):
    out = os.path.join(work, "demo.json")
    p = subprocess.run(
        [sys.executable, SCRIPT, "--size", "small", "--jobs", str(JOBS),
         "--arrival-window", "3", "--epoch", "0.5", "--checkpoint-every",
         str(CKPT_EVERY), "--force-move", "--slurm-only", "--timeout", "150",
         "--policies", ",".join(POLICIES), "--work", work, "--out", out,
         BUILD], capture_output=True, text=True, timeout=600)
    if p.returncode == 3:
        pytest.skip(p.stdout.strip().splitlines()[-1])
    assert p.returncode == 0, p.stdout + p.stderr
    doc = json.load(open(out))
    assert doc["cluster"] == "slurm"
    res = {r["policy"]: r for r in doc["results"]}
    assert tuple(res) == POLICIES
    # The table names every policy and its deadline-met ratio.
    head = [l for l in p.stdout.splitlines() if l.split()[:1] == ["mlfs"]]
    assert head and head[0].split() == list(POLICIES), p.stdout
    planned = {j["name"]: j for j in doc["jobs"]}
    assert len(planned) == JOBS

    for pol, r in res.items():
        cdir = os.path.join(work, "cluster-" + pol)
        db = os.path.join(cdir, "controller", "state.db")
        by_name = {x["name"]: x for x in r["job_rows"]}
        assert sorted(by_name) == sorted(planned)
        # The same submissions: each job's command, deadline (relative to
        # its submission, to the second slaq submit rounds it to),
        # requirement, urgency and size, as planned.
        recorded = {n: (json.loads(cmd)[1:], dl - sub, acc, d, u, mc)
                    for n, cmd, dl, sub, acc, d, u, mc in rows(
                        db, "SELECT name, cmd, deadline, submitted, accuracy,"
                        " direction, urgency, max_cores FROM jobs")}
        assert sorted(recorded) == sorted(planned)
        for n, j in planned.items():
            argv, rel, acc, d, u, mc = recorded[n]
            assert argv == j["argv"], (pol, n, argv)
            assert abs(rel - j["deadline_rel_s"]) <= 1.5, (pol, n, rel)
            assert (acc, d, u) == (j["accuracy"], j["direction"],
                                   j["urgency"]), (pol, n)
            assert abs(mc - j["max_cores"]) < 1e-9
        for jid, name, state, reason, ended, deadline in rows(
                db, "SELECT id, name, state, reason, ended, deadline "
                "FROM jobs"):
            x = by_name[name]
            j = planned[name]
            assert x["id"] == jid
            # Every job ended: ran its iterations, or stopped by mlfs's
            # load control once its accuracy was met.
            assert state == "done" or (state == "stopped" and reason ==
                                       "accuracy_met"), (pol, name, state,
                                                         reason)
            assert ended > 0 and x["deadline_met"] == (ended <= deadline), \
                (pol, name, ended, deadline, x["deadline_met"])
            metrics = [m for (m,) in rows(
                db, "SELECT metric FROM reports WHERE job = ? AND metric "
                "IS NOT NULL ORDER BY iter", jid)]
            assert metrics, (pol, name)
            last = metrics[-1]
            met = last >= j["accuracy"] if j["direction"] == "max" \
                else last <= j["accuracy"]
            assert x["accuracy_met"] == met and x["last_metric"] == last, \
                (pol, name, last, j["accuracy"], x["accuracy_met"])
            assert x["slaqd_accuracy_met"] == met
        n = len(by_name)
        assert r["deadline_met"] == round(
            sum(x["deadline_met"] for x in by_name.values()) / n, 3)
        assert r["accuracy_met"] == round(
            sum(x["accuracy_met"] for x in by_name.values()) / n, 3)

        # The moves: at least one (the policy's or the forced one), each
        # counted with its cost, and none lost or repeated more than the
        # iterations since the last checkpoint. Checked here from the
        # controller's and the agents' databases.
        moved = rows(db, "SELECT id, moves FROM jobs WHERE moves > 0")
        assert moved, (pol, "no move")
        assert r["moves_total"] == sum(m for _, m in moved) >= 1
        assert r["move_seconds_total"] > 0
        assert r["move_checkpoint_bytes_total"] > 0 or \
            r["forced_move"] is None
        checked = {m["job"]: m for m in r["moves_checked"]}
        assert sorted(checked) == sorted(i for i, _ in moved)
        for jid, moves in moved:
            ctl = [i for (i,) in rows(db, "SELECT iter FROM reports WHERE "
                                      "job = ? AND iter > 0 ORDER BY iter",
                                      jid)]
            ran, hosts = [], 0
            for node in ("n1", "n2", "n3"):
                adb = os.path.join(cdir, "agent-" + node, "state.db")
                mine = [i for (i,) in rows(adb, "SELECT iter FROM reports "
                                           "WHERE job = ? AND iter > 0",
                                           jid)]
                ran += mine
                hosts += bool(mine)
            if jid == r["forced_move"]:
                # moved halfway: both instances reported iterations
                assert hosts >= 2, (pol, jid)
            # every iteration an instance reported is the controller's,
            # and the controller's are 1 .. its last, without a gap
            assert ctl == list(range(1, len(ctl) + 1)), (pol, jid, ctl)
            assert set(ran) <= set(ctl), (pol, jid)
            repeated = len(ran) - len(set(ran))
            assert repeated <= moves * (CKPT_EVERY - 1), (pol, jid, repeated)
            m = checked[jid]
            assert m["ok"] and m["lost"] == 0 and m["repeated"] == repeated
            assert m["iterations"] == len(ctl)
        events = [d for (d,) in rows(db, "SELECT detail FROM events WHERE "
                                     "kind = 'move'")]
        assert len(events) == r["moves_total"], events
