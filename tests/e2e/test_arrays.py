"""Task arrays (docs/arrays.md): `slaq submit --array A-B[%K]` runs every
index once as a one-core process, at most K at once, on the cores no ML
job may use; slaq ls shows the array as one row, slaq show its tasks;
cancel of one task or of the array; the array survives a kill -9 of
slaqd; --wait waits for every task."""

import os
import subprocess
import time

import json

from conftest import SLAQ, TOY, old_state_db, session, wait_for

# A task that records its start and end, its argument and its
# environment's index, then exits with the status it is given.
TASK = ("echo start $(date +%s.%N) >> {dir}/$SLAQ_ARRAY_INDEX; "
        "sleep {sleep}; echo arg {{index}} env $SLAQ_ARRAY_INDEX "
        ">> {dir}/$SLAQ_ARRAY_INDEX; echo end $(date +%s.%N) "
        ">> {dir}/$SLAQ_ARRAY_INDEX; exit {status}")


def task_cmd(tmp_path, sleep, status="0"):
    return ["sh", "-c", TASK.format(dir=tmp_path, sleep=sleep,
                                    status=status)]


def array(d, aid):
    r = d.request({"type": "show", "job": aid})
    assert r["ok"], r
    return r["array"]


def submit_array(d, rng, cmd, *extra):
    p = d.cli("submit", "--array", rng, *extra, "--", *cmd)
    return int(p.stdout.strip())


def records(tmp_path):
    """index -> (start, end, the line with its argument and env)"""
    out = {}
    for name in os.listdir(tmp_path):
        if not name.isdigit():
            continue
        lines = open(os.path.join(tmp_path, name)).read().split("\n")
        starts = [float(x.split()[1]) for x in lines if x.startswith("start")]
        ends = [float(x.split()[1]) for x in lines if x.startswith("end")]
        args = [x for x in lines if x.startswith("arg")]
        out[int(name)] = (starts, ends, args)
    return out


def test_each_index_runs_once_at_most_k_at_once(daemon_factory, tmp_path):
    d = daemon_factory("--cores", "4")
    out = tmp_path / "out"
    out.mkdir()
    # index 5 exits 3; the rest 0
    cmd = task_cmd(out, "0.3", "$(( {index} == 5 ? 3 : 0 ))")
    aid = submit_array(d, "1-12%2", cmd, "--name", "sq")
    wait_for(lambda: array(d, aid)["state"] not in ("running", "pending"),
             timeout=30, what="the array to end")
    a = array(d, aid)
    assert a["counts"]["done"] == 11 and a["counts"]["failed"] == 1, a
    assert a["state"] == "failed"
    rec = records(out)
    assert sorted(rec) == list(range(1, 13))
    for i, (starts, ends, args) in rec.items():
        assert len(starts) == 1 and len(ends) == 1, (i, rec[i])
        # {index} in the argument and $SLAQ_ARRAY_INDEX are the index
        assert args == ["arg %d env %d" % (i, i)], args
    # never more than K = 2 at once (on 4 free cores)
    events = sorted([(s[0], 1) for s, _, _ in rec.values()] +
                    [(e[0], -1) for _, e, _ in rec.values()],
                    key=lambda x: (x[0], x[1]))
    running = peak = 0
    for _, step in events:
        running += step
        peak = max(peak, running)
    assert peak == 2, peak
    # each task's exit status is recorded, by task and in the list
    by_index = {t["index"]: t for t in a["task_list"]}
    assert by_index[5]["exit_code"] == 3 and by_index[5]["state"] == "failed"
    assert by_index[4]["exit_code"] == 0
    t5 = d.request({"type": "show", "job": "%d_5" % aid})["job"]
    assert t5["array"] == aid and t5["index"] == 5 and t5["exit_code"] == 3
    # the task's own job id names the same task
    assert d.job(by_index[5]["id"])["index"] == 5
    show = d.cli("show", str(aid)).stdout
    assert "11 done, 1 failed" in show and "1-12%2" in show
    assert "task        %d_5: index 5 of array %d, exit status 3" % (
        aid, aid) in d.cli("show", "%d_5" % aid).stdout


def test_ls_lists_an_array_as_one_row(daemon_factory, tmp_path):
    d = daemon_factory("--cores", "2")
    aid = submit_array(d, "0-19%2", ["sleep", "5"])
    wait_for(lambda: array(d, aid)["counts"]["running"] == 2, timeout=10,
             what="two tasks running")
    rows = d.request({"type": "ls", "active": True})["jobs"]
    assert [r["id"] for r in rows] == [aid], rows
    assert rows[0]["kind"] == "array"
    assert rows[0]["counts"]["pending"] == 18
    out = d.cli("ls").stdout.strip().split("\n")
    assert len(out) == 2, out  # the header and the array's row
    assert "array 0-19%2: 18 pending, 2 running, 0 done" in out[1]
    d.cli("cancel", "--now", str(aid))


def test_cancel_one_task_then_the_array(daemon_factory, tmp_path):
    d = daemon_factory("--cores", "2")
    out = tmp_path / "out"
    out.mkdir()
    aid = submit_array(d, "1-10%1", task_cmd(out, "0.5"))
    # a pending task: cancelled, it never runs
    r = d.cli("cancel", "%d_6" % aid).stdout
    assert "cancelled" in r
    assert d.request({"type": "show", "job": "%d_6" % aid})["job"][
        "state"] == "cancelled"
    again = d.cli("cancel", "%d_6" % aid, check=False)
    assert again.returncode != 0 and "already cancelled" in again.stderr
    wait_for(lambda: array(d, aid)["counts"]["done"] >= 6, timeout=30,
             what="tasks 1-5 and 7 to end")
    assert 6 not in records(out)
    # the array: its running task is cancelled, its pending ones never run
    d.cli("cancel", "--now", str(aid))
    wait_for(lambda: array(d, aid)["counts"]["running"] == 0, timeout=10,
             what="the running task to end")
    a = array(d, aid)
    assert a["counts"]["pending"] == 0
    ran = set(records(out))
    time.sleep(1.0)
    assert set(records(out)) == ran  # nothing started after the cancel
    assert a["counts"]["cancelled"] == 10 - a["counts"]["done"]
    bad = d.cli("show", "%d_11" % aid, check=False)
    assert bad.returncode != 0 and "no task %d_11" % aid in bad.stderr


def test_bad_array_values_are_refused_with_the_field(slaqd):
    for rng, want in [("5-2", "the first no larger than the last"),
                      ("1-x", "must be A-B or A-B%K"),
                      ("1-5%0", "must be A-B or A-B%K"),
                      ("0-200000", "at most 100000"),
                      ("-3", "must be A-B or A-B%K")]:
        p = slaqd.cli("submit", "--array", rng, "--", "true", check=False)
        assert p.returncode != 0, rng
        assert 'field "array"' in p.stderr and want in p.stderr, (rng,
                                                                 p.stderr)
    p = slaqd.cli("submit", "--array", "1-2", "--max-cores", "2", "--",
                  "true", check=False)
    assert p.returncode != 0 and '"max_cores" is an ML job' in p.stderr
    p = slaqd.cli("submit", "--task-estimate", "2", "--", "true",
                  check=False)
    assert p.returncode != 0 and "--array" in p.stderr


def test_wait_returns_when_every_task_has_ended(slaqd, tmp_path):
    t0 = time.monotonic()
    p = subprocess.run([SLAQ, "submit", "--socket", slaqd.sock, "--array",
                        "1-4", "--wait", "--", "sh", "-c",
                        "sleep 0.3; exit $(( {index} == 3 ))"],
                       capture_output=True, text=True, timeout=60)
    aid = int(p.stdout.strip())
    assert p.returncode == 1, p  # task 3 exited 1
    assert "3 done, 1 failed" in p.stderr
    assert time.monotonic() - t0 >= 0.3
    a = array(slaqd, aid)
    assert a["counts"]["done"] == 3 and a["counts"]["running"] == 0
    ok = slaqd.cli("submit", "--array", "1-2", "--wait", "--", "true")
    assert ok.returncode == 0


def test_tasks_take_only_the_cores_ml_jobs_leave(daemon_factory, tmp_path):
    d = daemon_factory("--cores", "2")
    out = tmp_path / "out"
    out.mkdir()
    ml = d.submit(TOY, "--forever", "--iter-cpu", "0.01")
    aid = submit_array(d, "1-6", task_cmd(out, "0.3"))
    # an ML job that may use every core leaves tasks none
    time.sleep(1.0)
    assert array(d, aid)["counts"]["running"] == 0
    assert not records(out)
    # one with --max-cores 1 leaves one core: one task at a time
    d.cli("cancel", "--now", str(ml))
    ml2 = d.submit(TOY, "--forever", "--iter-cpu", "0.01", max_cores=1)
    wait_for(lambda: array(d, aid)["state"] == "done", timeout=30,
             what="the tasks to run on the core left")
    rec = records(out)
    assert sorted(rec) == list(range(1, 7))
    assert d.job(ml2)["state"] == "running"


def test_ml_job_waits_for_no_more_than_one_task(daemon_factory, tmp_path):
    d = daemon_factory("--cores", "2")
    out = tmp_path / "out"
    out.mkdir()
    aid = submit_array(d, "1-20", task_cmd(out, "1"))
    wait_for(lambda: array(d, aid)["counts"]["running"] == 2, timeout=10,
             what="tasks on both cores")
    t_ml = time.time()
    ml = d.submit(TOY, "--forever", "--iter-cpu", "0.01")
    # no task starts once the ML job is there; the ones running end
    # within one task's time and the ML job gets the machine's cores
    wait_for(lambda: array(d, aid)["counts"]["running"] == 0, timeout=5,
             what="the running tasks to end")
    wait_for(lambda: d.job(ml)["cores"] > 1.9, timeout=5,
             what="the ML job to get both cores")
    late = [i for i, (s, _, _) in records(out).items() if s[0] > t_ml + 0.1]
    assert not late, late
    assert array(d, aid)["counts"]["pending"] > 0
    d.cli("cancel", "--now", str(ml))
    wait_for(lambda: array(d, aid)["counts"]["running"] == 2, timeout=10,
             what="tasks to take the cores back")


def test_array_survives_kill9_of_slaqd(daemon_factory, tmp_path):
    state = tmp_path / "st"
    d = daemon_factory("--cores", "2", state=state)
    out = tmp_path / "out"
    out.mkdir()
    aid = submit_array(d, "1-8%2", task_cmd(out, "0.4"))
    wait_for(lambda: array(d, aid)["counts"]["done"] >= 2, timeout=20,
             what="two tasks done")
    d.kill9()
    d2 = daemon_factory("--cores", "2", state=state)
    wait_for(lambda: array(d2, aid)["state"] not in ("running", "pending"),
             timeout=30, what="the array to end after the restart")
    a = array(d2, aid)
    rec = records(out)
    # every index ran, none twice: what had started was adopted again
    assert sorted(rec) == list(range(1, 9)), rec
    assert all(len(s) == 1 for s, _, _ in rec.values()), rec
    assert a["counts"]["done"] + a["counts"]["lost"] == 8, a
    assert a["array"] == "1-8%2"


def test_queue_shows_positions_waits_and_reasons(daemon_factory):
    d = daemon_factory("--cores", "2", "--queue-bound", "3")
    ml = d.submit(TOY, "--forever", "--iter-cpu", "0.01")
    aid = submit_array(d, "1-5", ["sleep", "5"], "--task-estimate", "2")
    (node,) = d.request({"type": "queue"})["nodes"]
    assert node["task_cores"] == 0 and node["running"] == 0
    assert [(t["position"], t["index"]) for t in node["queue"]] == [
        (1, 1), (2, 2), (3, 3)]
    assert node["beyond"] == 2 and node["wait"] is None
    assert "ML jobs may use all 2 cores" in node["queue"][0]["reason"]
    d.cli("cancel", "--now", str(ml))
    wait_for(lambda: d.request({"type": "queue"})["nodes"][0]["running"]
             == 2, timeout=10, what="two tasks running")
    (node,) = d.request({"type": "queue"})["nodes"]
    # 3, 4 and 5 queued, 2 s each (as given) on 2 task cores
    assert [t["index"] for t in node["queue"]] == [3, 4, 5]
    assert node["wait"] == 3.0
    assert [t["wait"] for t in node["queue"]] == [0.0, 1.0, 2.0]
    assert node["queue"][1]["reason"] == ("1 queued ahead of it, 2 running, "
                                          "on 2 task cores")
    out = d.cli("queue").stdout
    assert "estimated wait 3.0s" in out and "%d_4" % aid in out
    d.cli("cancel", "--now", str(aid))


def test_an_older_state_db_takes_arrays(daemon_factory, tmp_path):
    state = tmp_path / "st"
    state.mkdir()
    old_state_db(state, before="jobs.array_id")
    d = daemon_factory("--cores", "2", "--init", state=state)
    aid = submit_array(d, "1-3", ["true"])
    assert aid == 2  # after the old database's job 1
    wait_for(lambda: array(d, aid)["state"] == "done", timeout=15,
             what="the array to end")
    assert d.job(1)["name"] == "old"
    assert [r["id"] for r in d.request({"type": "ls"})["jobs"]] == [1, 2]


def test_a_task_cannot_report(slaqd, tmp_path):
    # the task leaves its job id and secret where the test can read them
    out = tmp_path / "ids"
    aid = submit_array(slaqd, "1-1", ["sh", "-c", "echo $SLAQ_JOB_ID "
                                      "$SLAQ_JOB_SECRET > %s; sleep 30"
                                      % out])
    wait_for(lambda: out.exists() and out.read_text().strip(), timeout=10,
             what="the task to start")
    jid, secret = out.read_text().split()
    s, f = session(slaqd.sock)
    s.sendall((json.dumps({"type": "hello", "job": int(jid),
                           "secret": secret}) + "\n").encode())
    reply = json.loads(f.readline())
    assert reply["code"] == "not_a_job", reply
    assert "task 1 of array %d" % aid in reply["message"]
    assert f.readline() == b""  # closed
    s.close()
    assert array(slaqd, aid)["counts"]["running"] == 1
    slaqd.cli("cancel", "--now", "%d_1" % aid)
    wait_for(lambda: array(slaqd, aid)["state"] == "cancelled", timeout=10,
             what="the task to be cancelled")


def test_queue_order_decides_which_array_starts_first(daemon_factory):
    """--queue-order (docs/queues.md) orders the arrays' pending tasks as it
    orders slaqd's pending queue: under stf the array of short tasks goes
    before an older array of long ones; under fifo the older goes first."""
    for order, first in (("stf", "short"), ("fifo", "long")):
        d = daemon_factory("--cores", "2", "--queue-bound", "8",
                           "--queue-order", order, "--starvation", "off")
        ml = d.submit(TOY, "--forever", "--iter-cpu", "0.01")
        long_ = submit_array(d, "1-3", ["sleep", "30"], "--task-estimate",
                             "30")
        short = submit_array(d, "1-3", ["sleep", "0.5"], "--task-estimate",
                             "0.5")
        (node,) = d.request({"type": "queue"})["nodes"]
        arrays = [t["array"] for t in node["queue"]]
        want = {"short": short, "long": long_}
        assert arrays[:3] == [want[first]] * 3, (order, arrays)
        d.cli("cancel", "--now", str(ml))
        wait_for(lambda: d.request({"type": "queue"})["nodes"][0]["running"]
                 >= 1, timeout=10, what="a task running")
        started = array(d, want[first])["counts"]
        assert started["running"] + started["done"] >= 1, (order, started)
        d.cli("cancel", "--now", str(long_))
        d.cli("cancel", "--now", str(short))
