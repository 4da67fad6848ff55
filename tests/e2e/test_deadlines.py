"""test_deadlines.py — a job's goal under slaqd (docs/deadlines.md):
`slaq submit --deadline/--accuracy/--direction/--urgency` reach the core,
whose priority policies order jobs by them (`slaqd --policy edf`, mlfs-h,
...); under mlfs each job's --stop rule decides whether MLF-C ends it
early (iters, accuracy, optstop); slaqd keeps the goal in state.db (columns an older database gains
when opened) and shows it in `slaq show` and `slaq ls` (slack, accuracy
met); a bad goal is refused with the field named."""

import os
import sqlite3
import sys
import textwrap
import time

from conftest import BUILD, TOY, old_state_db, wait_for

PYDIR = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def cores(d, job):
    return d.job(job)["cores"]


def test_edf_gives_the_nearer_deadline_the_cores(daemon_factory):
    # Two jobs that can each use both cores: EDF gives them to the one due
    # sooner, whichever came first; fair would split them.
    d = daemon_factory("--policy", "edf", "--cores", "2")
    later = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="later",
                     max_cores=2, deadline="+2h")
    sooner = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="sooner",
                      max_cores=2, deadline="+10m")
    wait_for(lambda: cores(d, sooner) > 1.99 and cores(d, later) < 0.01,
             timeout=15, what="edf to give the sooner job both cores")
    # The policy changes at the next epoch: fair splits them.
    assert d.request({"type": "policy", "name": "fair"})["ok"]
    wait_for(lambda: abs(cores(d, sooner) - 1) < 0.01 and
             abs(cores(d, later) - 1) < 0.01, timeout=15,
             what="fair shares after the policy change")


def test_mlfs_policies_run_jobs_end_to_end(daemon_factory):
    # mlfs-h and mlfs: a running job keeps its core (MLF-H preempts only by
    # moving a job); when it leaves, the waiting job of the highest
    # priority gets it: the more urgent, though it came second. tiresias:
    # both waiting jobs are in its first queue, so the earlier gets it.
    for policy in ("mlfs-h", "mlfs", "tiresias"):
        d = daemon_factory("--policy", policy, "--cores", "1")
        first = d.submit(TOY, "--forever", "--iter-cpu", "0.002",
                         name="first", max_cores=1, urgency=1)
        wait_for(lambda: cores(d, first) > 0.99, timeout=15,
                 what="the first job to get the core")
        # Iterations of 30 CPU-seconds: both are still at their first
        # iteration when the core frees, so that MLF-H's progress factors
        # (1/I, the recent loss reduction) are equal and urgency decides.
        mid = d.submit(TOY, "--forever", "--iter-cpu", "30", name="mid",
                       max_cores=1, urgency=5)
        top = d.submit(TOY, "--forever", "--iter-cpu", "30", name="top",
                       max_cores=1, urgency=10)
        time.sleep(1)
        if policy != "tiresias":
            assert cores(d, first) > 0.99, policy
        assert d.request({"type": "cancel", "job": first, "now": True})["ok"]
        d.wait_state(first, ("cancelled", "done", "failed"), timeout=15)
        want, other = (mid, top) if policy == "tiresias" else (top, mid)
        wait_for(lambda: cores(d, want) > 0.99 and cores(d, other) < 0.01,
                 timeout=15, what="%s to give the core to %s" % (policy, want))
        short = d.submit(TOY, "--iters", "5", "--iter-cpu", "0.002",
                         name="short", urgency=10, max_cores=1)
        assert d.job(short)["urgency"] == 10
        d.stop()


def test_goal_is_shown_and_kept(daemon_factory, tmp_path):
    d = daemon_factory(state=tmp_path / "st")
    script = tmp_path / "acc.py"
    script.write_text(textwrap.dedent("""
        import sys, time
        sys.path.insert(0, %r)
        import slaq
        c = slaq.Client(metric_name="val_accuracy")
        while not (c.poll(), c.connected and c.job_id)[1]:
            time.sleep(0.05)
        for k, (loss, acc) in enumerate([(2.0, 0.5), (1.0, 0.8), (0.5, 0.92)]):
            c.report(k, loss, cpu_s=0.01, metric=acc)
        time.sleep(60)
    """ % os.path.abspath(PYDIR)))
    j = d.submit(sys.executable, str(script), name="acc", deadline="+2h",
                 accuracy=0.9, urgency=7)
    job = wait_for(lambda: (lambda x: x if x["reports"] == 3 else None)(
        d.job(j)), timeout=20, what="3 reports")
    assert job["urgency"] == 7 and job["accuracy"] == 0.9
    assert job["direction"] == "max" and job["accuracy_met"] is True
    assert 7000 < job["slack"] <= 7200
    assert abs(job["deadline"] - (time.time() + job["slack"])) < 5
    out = d.cli("show", str(j)).stdout
    assert "deadline" in out and "due in 1h59m" in out, out
    assert "accuracy    >= 0.9 required: met" in out
    assert "urgency     7 of 10" in out
    ls = d.cli("ls").stdout
    assert "due in 1h59m, accuracy met" in ls, ls
    # A loss to be at most 0.3 is not met by the toy job's 1/(0.1k+1)+0.1
    # before it reports a metric at all: "no metric yet".
    k = d.submit(TOY, "--forever", "--iter-cpu", "0.002", name="loss",
                 accuracy=0.3, direction="min", deadline="+30m")
    assert d.job(k)["accuracy_met"] is None
    assert "no metric yet" in d.cli("show", str(k)).stdout
    # Kept across a restart of slaqd.
    d.stop()
    d2 = daemon_factory(state=tmp_path / "st")
    job = d2.job(j)
    assert job["urgency"] == 7 and job["accuracy"] == 0.9
    assert abs(job["deadline"] - (time.time() + 7200)) < 60
    assert d2.job(k)["direction"] == "min"


ACC_JOB = '''
import sys, time
sys.path.insert(0, %r)
import slaq
c = slaq.Client(metric_name="val_accuracy")
while not (c.poll(), c.connected and c.job_id)[1]:
    time.sleep(0.05)
for k, (loss, acc) in enumerate([(2.0, 0.5), (1.0, 0.8), (0.5, 0.92)]):
    c.report(k, loss, cpu_s=0.01, metric=acc)
while not c.should_stop():
    c.poll()
    time.sleep(0.05)
'''


def test_mlfs_stops_a_job_whose_accuracy_is_met_under_load(daemon_factory,
                                                            tmp_path):
    # On two cores, a job that wants one is half the demand: not
    # overloaded (MLFS: above 90%). A second that wants both makes it
    # 150%: under mlfs the first, whose metric (0.92) meets its required
    # accuracy (0.9), is stopped with reason accuracy_met; under mlfs-h it
    # runs on.
    script = tmp_path / "acc.py"
    script.write_text(ACC_JOB % os.path.abspath(PYDIR))
    for policy in ("mlfs", "mlfs-h"):
        d = daemon_factory("--policy", policy, "--cores", "2")
        acc = d.submit(sys.executable, str(script), name="acc",
                       max_cores=1, accuracy=0.9)
        wait_for(lambda: d.job(acc)["reports"] == 3, timeout=20,
                 what="the accuracy job's 3 reports")
        # Alone on its core the cluster is not overloaded: it runs on.
        time.sleep(1)
        assert d.job(acc)["state"] == "running"
        busy = d.submit(TOY, "--forever", "--iter-cpu", "0.002",
                        name="busy", max_cores=2)
        if policy == "mlfs":
            job = d.wait_state(acc, ("done", "stopped"), timeout=20)
            assert job["reason"] == "accuracy_met", job
            assert job["accuracy_met"] is True
        else:
            time.sleep(2)
            assert d.job(acc)["state"] == "running"
        assert d.job(busy)["state"] == "running"
        d.stop()


# A job whose loss falls for four reports and then stays flat, its metric
# rising to 0.92 and staying there; it reports every 0.1 s until asked to
# stop.
FLAT_JOB = '''
import sys, time
sys.path.insert(0, %r)
import slaq
c = slaq.Client(metric_name="val_accuracy")
while not (c.poll(), c.connected and c.job_id)[1]:
    time.sleep(0.05)
curve = [(2.0, 0.5), (1.4, 0.7), (1.1, 0.85), (1.0, 0.92)]
k = 0
while not c.should_stop():
    loss, acc = curve[min(k, len(curve) - 1)]
    c.report(k, loss, cpu_s=0.01, metric=acc)
    k += 1
    c.poll()
    time.sleep(0.1)
'''


def test_mlfs_applies_each_jobs_own_stopping_rule(daemon_factory, tmp_path):
    # Three jobs of one core each on two cores (150%: overloaded), the
    # same curve, flat from the fourth report on. Under mlfs: the optstop
    # job is stopped once its last 10 losses are flat (reason optstop);
    # the accuracy job (the default with --accuracy) is stopped with
    # accuracy_met; the iters job, whose metric meets the same accuracy
    # on the same flat curve, runs on.
    script = tmp_path / "flat.py"
    script.write_text(FLAT_JOB % os.path.abspath(PYDIR))
    d = daemon_factory("--policy", "mlfs", "--cores", "2")
    iters = d.submit(sys.executable, str(script), name="iters", max_cores=1,
                     accuracy=0.9, stop="iters")
    opt = d.submit(sys.executable, str(script), name="opt", max_cores=1,
                   stop="optstop")
    acc = d.submit(sys.executable, str(script), name="acc", max_cores=1,
                   accuracy=0.9)
    assert [d.job(j)["stop"] for j in (iters, opt, acc)] == \
        ["iters", "optstop", "accuracy"]
    job = d.wait_state(opt, ("done", "stopped"), timeout=30)
    assert job["reason"] == "optstop", job
    # stopped on a plateau: 4 falling reports, then 10 flat at least
    assert job["reports"] >= 13, job
    job = d.wait_state(acc, ("done", "stopped"), timeout=30)
    assert job["reason"] == "accuracy_met", job
    assert job["accuracy_met"] is True and job["metric"] >= 0.9
    # The iters job has had as long on the same flat curve, its accuracy
    # met, the cluster overloaded until the others left.
    time.sleep(2)
    job = d.job(iters)
    assert job["state"] == "running", job
    assert job["reports"] >= 13 and job["accuracy_met"] is True
    out = d.cli("show", str(opt)).stdout
    assert "stop        optstop" in out, out
    assert "state       stopped \u2014 optstop" in out, out
    assert "stop        iters" in d.cli("show", str(iters)).stdout
    # A job without --accuracy runs its iterations; --stop accuracy then
    # has nothing to stop at and is refused.
    plain = d.submit(TOY, "--iters", "3", "--iter-cpu", "0.002")
    assert d.job(plain)["stop"] == "iters"
    p = d.cli("submit", "--stop", "accuracy", "--", TOY, check=False)
    assert p.returncode != 0 and "--accuracy" in p.stderr, p.stderr
    d.stop()


def test_bad_goal_is_refused(daemon_factory):
    d = daemon_factory()
    for opt, val, word in (("--urgency", "11", "--urgency"),
                           ("--urgency", "2.5", "--urgency"),
                           ("--deadline", "tomorrow", "--deadline"),
                           ("--deadline", "+-5m", "--deadline"),
                           ("--direction", "up", "--direction"),
                           ("--accuracy", "high", "--accuracy")):
        p = d.cli("submit", opt, val, "--", TOY, check=False)
        assert p.returncode == 2, (opt, val, p.stderr)
        assert word in p.stderr, p.stderr
    for field, val in (("urgency", 0), ("urgency", "high"),
                       ("deadline", -5), ("direction", "up"),
                       ("accuracy", "x")):
        r = d.request({"type": "submit", "cmd": [TOY], field: val})
        assert not r["ok"] and ('"%s"' % field) in r["message"], r
    # A stopping rule slaq does not have: refused, naming the three.
    for val in ("plateau", "OPTSTOP", ""):
        p = d.cli("submit", "--stop", val, "--", TOY, check=False)
        assert p.returncode == 2, (val, p.stderr)
        assert "--stop" in p.stderr, p.stderr
        assert "iters, accuracy or optstop" in p.stderr, p.stderr
    r = d.request({"type": "submit", "cmd": [TOY], "stop": 3})
    assert not r["ok"] and "iters, accuracy or optstop" in r["message"], r
    assert d.jobs() == []


def test_an_older_state_db_gains_the_goal_columns(daemon_factory, tmp_path):
    state = tmp_path / "old"
    state.mkdir(mode=0o700)
    old_state_db(state, before="jobs.deadline")
    d = daemon_factory(state=state)
    job = d.job(1)
    assert job["deadline"] is None and job["slack"] is None
    assert job["urgency"] == 1 and job["accuracy"] is None
    assert job["stop"] == "iters"
    j = d.submit(TOY, "--iters", "3", deadline="+1h", urgency=3)
    assert d.job(j)["urgency"] == 3


def test_a_job_recorded_before_stopping_rules_keeps_mlfc_s_old_rule(
        daemon_factory, tmp_path):
    # A row without a stop column: a job with a required accuracy was
    # stopped by MLF-C at it, so it reads "accuracy"; one without reads
    # "iters".
    state = tmp_path / "old"
    state.mkdir(mode=0o700)
    path = old_state_db(state, before="jobs.stop")
    db = sqlite3.connect(path)
    db.execute("INSERT INTO jobs(id, name, cmd, cwd, weight, target, "
               "max_iters, max_time, managed, state, pid, pstart, submitted, "
               "started, ended, accuracy) SELECT 2, 'acc', cmd, cwd, weight, "
               "target, max_iters, max_time, managed, state, pid, pstart, "
               "submitted, started, ended, 0.9 FROM jobs WHERE id = 1")
    db.commit()
    db.close()
    d = daemon_factory(state=state)
    assert d.job(1)["stop"] == "iters"
    assert d.job(2)["stop"] == "accuracy" and d.job(2)["accuracy"] == 0.9


def test_ls_and_show_say_why_a_job_is_where_it_is(daemon_factory):
    # Under mlfs-h each job's place in the order and the terms of its
    # key (the job's "priority"): the urgent job first, its urgency term
    # 1 (7 of 7), the other's 1/7; the key is MLF-H's P, the sum of its
    # two halves. Under mlfs-rl the key is the network's score. Under
    # fair there is no order of priority.
    d = daemon_factory("--policy", "mlfs-h", "--cores", "1")
    low = d.submit(TOY, "--forever", "--iter-cpu", "30", name="low",
                   max_cores=1, urgency=1)
    high = d.submit(TOY, "--forever", "--iter-cpu", "30", name="high",
                    max_cores=1, urgency=7, deadline="+3h")
    both = wait_for(lambda: (lambda a, b: (a, b) if a["priority"] and
                             b["priority"] else None)(d.job(low),
                                                      d.job(high)),
                    timeout=15, what="both jobs ranked")
    lo, hi = both[0]["priority"], both[1]["priority"]
    assert lo["policy"] == hi["policy"] == "mlfs-h"
    assert lo["of"] == hi["of"] == 2
    assert hi["urgency"] == 1 and abs(lo["urgency"] - 1 / 7) < 1e-12
    assert hi["score"] is None
    assert abs(hi["key"] - (hi["ml"] + hi["computation"])) < 1e-12
    assert hi["key"] > lo["key"] and (hi["rank"], lo["rank"]) == (1, 2)
    ls = d.cli("ls").stdout
    row = [x for x in ls.splitlines() if x.startswith("%d " % high)][0]
    assert "due in 2h59m" in row and row.endswith("mlfs-h #1 of 2"), ls
    row = [x for x in ls.splitlines() if x.startswith("%d " % low)][0]
    assert row.endswith("  mlfs-h #2 of 2"), ls
    out = d.cli("show", str(high)).stdout
    assert "priority    mlfs-h #1 of 2, key %.3f = ML %.3f + computation " \
           "%.3f" % (hi["key"], hi["ml"], hi["computation"]) in out, out
    assert "terms       urgency 1.00, 1/I 1.00," in out, out
    out = d.cli("show", str(low)).stdout
    assert "terms       urgency 0.14," in out, out
    assert d.cli("policy", "mlfs-rl").stdout.strip() == "mlfs-rl"
    hi = wait_for(lambda: (lambda p: p if p and p["policy"] == "mlfs-rl"
                           else None)(d.job(high)["priority"]),
                  timeout=15, what="the mlfs-rl terms")
    assert hi["score"] is not None and hi["key"] == hi["score"]
    assert "(the network's score; MLF-H's P" in d.cli("show",
                                                      str(high)).stdout
    d.cli("policy", "fair")
    wait_for(lambda: d.job(high)["priority"] is None, timeout=15,
             what="no priority under fair")
    assert "mlfs" not in d.cli("ls").stdout
    assert "priority" not in d.cli("show", str(high)).stdout
