"""Attacks by one user on what all users of slaqd share (docs/security.md,
"Limits per user"): the history slaqd keeps, the job table, the report
stream and the state file system. Each once worked:
  - 400 finished jobs of alice's, with --keep-jobs 300, removed bob's one
    finished job, its record and its logs;
  - nothing capped the jobs, array tasks or reports one user could hold
    or send (three 100,000-task arrays were taken; 912,000 reports in 20 s);
  - a 100 MB stdout on a 64 MB state file system made every other user's
    submit fail ("database or disk is full").
"""

import json
import os
import subprocess
import time

import pytest

from conftest import wait_for
from test_root_safety import (PY, people, raw_as, run_as,  # noqa: F401
                              shared, slaq_as, start)
from test_multiuser import needs_root


def held_ok(r):
    assert r["ok"], r
    return r["job"]


@needs_root
def test_one_users_finished_jobs_never_expire_anothers(people, shared,
                                                       daemon_factory):
    d = start(daemon_factory, people, shared, "--keep-jobs", "3")
    bob = held_ok(raw_as(people, "bob", d.sock, {
        "type": "submit", "cmd": ["true"], "cwd": "/"}))
    d.wait_state(bob, "done")
    mine = []
    for _ in range(8):
        mine.append(held_ok(raw_as(people, "alice", d.sock, {
            "type": "submit", "cmd": ["true"], "cwd": "/"})))
    for j in mine:
        d.wait_state(j, "done")
    # The expiry sweep runs every 5 s: alice keeps her newest 3.
    wait_for(lambda: [j["id"] for j in d.jobs()
                      if j["user"] == people.users["alice"]] == mine[-3:],
             timeout=20, what="alice's oldest jobs to expire")
    assert d.job(bob)["state"] == "done"
    assert os.path.isdir(os.path.join(d.state, "jobs", str(bob)))


@needs_root
def test_the_jobs_and_tasks_one_user_holds_are_capped(people, shared,
                                                      daemon_factory):
    d = start(daemon_factory, people, shared, "--user-jobs", "3",
              "--user-tasks", "100")
    for _ in range(3):
        held_ok(raw_as(people, "alice", d.sock, {
            "type": "submit", "cmd": ["sleep", "60"], "cwd": "/"}))
    r = raw_as(people, "alice", d.sock, {"type": "submit",
                                         "cmd": ["sleep", "60"], "cwd": "/"})
    assert not r["ok"] and r["code"] == "limit_reached", r
    assert "--user-jobs" in r["message"] and "holds 3 jobs" in r["message"]
    # Bob is not held back by alice, nor is root.
    held_ok(raw_as(people, "bob", d.sock, {"type": "submit",
                                           "cmd": ["sleep", "60"],
                                           "cwd": "/"}))
    assert d.request({"type": "submit", "cmd": ["true"]})["ok"]
    r = raw_as(people, "alice", d.sock, {"type": "submit", "cmd": [
        "true"], "cwd": "/", "array": "1-200"})
    assert not r["ok"] and "--user-tasks" in r["message"], r
    r = raw_as(people, "bob", d.sock, {"type": "submit", "cmd": ["true"],
                                       "cwd": "/", "array": "1-60"})
    assert r["ok"], r
    r = raw_as(people, "bob", d.sock, {"type": "submit", "cmd": ["true"],
                                       "cwd": "/", "array": "1-60"})
    assert not r["ok"] and "holds" in r["message"], r
    st = d.request({"type": "status"})
    assert st["submits_limited_total"] >= 3
    assert st["limits"]["user_jobs"] == 3
    p = slaq_as(people, "bob", shared, d.sock, "status")
    assert "per user     3 jobs, 100 array tasks" in p.stdout, p.stdout


FLOOD = r"""
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
f = s.makefile("rb")
s.sendall(b'{"type":"hello","name":"flood"}\n')
job = json.loads(f.readline())["job"]
s.sendall(b"".join(b'{"type":"report","iter":%d,"loss":%f,"cpu_s":0.001}\n'
                   % (i, 1.0 / i) for i in range(1, int(sys.argv[2]) + 1)))
time.sleep(1.5)
print(job)
"""


@needs_root
def test_a_users_report_rate_is_capped(people, shared, daemon_factory):
    d = start(daemon_factory, people, shared, "--user-reports", "50")
    p = run_as(people, "alice", PY, "-c", FLOOD, d.sock, "3000")
    assert p.returncode == 0, p.stderr
    job = int(p.stdout)
    got = d.job(job)["reports"]
    # A bucket of two seconds' worth, refilled for the ~2 s the flood
    # took, not 3,000.
    assert 50 <= got <= 400, got
    st = d.request({"type": "status"})
    assert st["reports_limited_total"] >= 2500
    # Another user's reports are taken meanwhile.
    p = run_as(people, "bob", PY, "-c", FLOOD, d.sock, "20")
    assert p.returncode == 0, p.stderr
    assert d.job(int(p.stdout))["reports"] == 20


@pytest.fixture
def disk64(tmp_path):
    mnt = tmp_path / "disk"
    mnt.mkdir()
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m,mode=0755",
                        "tmpfs", str(mnt)], capture_output=True, text=True)
    if p.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (%s)" % p.stderr.strip())
    yield str(mnt)
    subprocess.run(["umount", "-l", str(mnt)])


@needs_root
def test_a_jobs_output_never_fills_the_disk_for_others(people, shared,
                                                       daemon_factory,
                                                       disk64):
    """Alice's job writes without end to stdout on a 64 MB state file
    system; bob's submits all succeed meanwhile, and her log ends with a
    line saying why it was cut."""
    sock = os.path.join(shared, "slaq.sock")
    d = daemon_factory("--socket", sock, "--socket-group",
                       people.groups["sock"],
                       state=os.path.join(disk64, "state"))
    flood = held_ok(raw_as(people, "alice", sock, {
        "type": "submit", "cmd": ["sh", "-c", "while :; do yes alice-output "
                                  "| head -c 20000000; done"],
        "cwd": "/"}))
    log = os.path.join(d.state, "jobs", str(flood), "stdout.log")
    wait_for(lambda: os.path.getsize(log) > 0, what="alice's output")
    time.sleep(1.0)  # long enough to have filled the disk many times
    for _ in range(5):
        r = raw_as(people, "bob", sock, {"type": "submit",
                                         "cmd": ["echo", "bob"], "cwd": "/"})
        assert r["ok"], r
        # (its own echo may meet a full disk between two cuts: what is
        # guaranteed is that slaqd takes and records it)
        d.wait_state(r["job"], ("done", "failed"))
        time.sleep(0.2)
    assert d.request({"type": "status"})["store_error"] is None
    assert d.job(flood)["state"] == "running"
    d.request({"type": "cancel", "job": flood, "now": True})
    d.wait_state(flood, "cancelled")
    # (where the cut was: what the job wrote after it follows the line)
    with open(log, "rb") as f:
        data = f.read()
    assert b"[slaq: output dropped here: the state file system has less" \
        in data, data[-200:]
    assert len(data) < 64 << 20
    assert d.request({"type": "status"})["logs_cut_total"] > 0


@needs_root
def test_a_jobs_log_is_cut_at_its_cap(people, shared, daemon_factory):
    d = start(daemon_factory, people, shared, "--log-bytes", "100000")
    job = held_ok(raw_as(people, "alice", d.sock, {
        "type": "submit", "cmd": ["sh", "-c", "head -c 3000000 /dev/zero | "
                                  "tr '\\0' x; sleep 1"], "cwd": "/"}))
    d.wait_state(job, "done", timeout=30)
    log = os.path.join(d.state, "jobs", str(job), "stdout.log")
    assert os.path.getsize(log) == 100000
    with open(log, "rb") as f:
        data = f.read()
    assert data.startswith(b"xxxx")
    assert data.endswith(b"(slaqd --log-bytes)]\n"), data[-120:]
    assert data.count(b"[slaq:") == 1
