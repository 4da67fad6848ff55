"""`slaq replay`: a recorded slaqd run (its state.db) run again through the
same scheduling core gives the allocations slaqd recorded, epoch by epoch;
wrong settings show up as differences."""

import re
import subprocess
import time

from conftest import SLAQ, TOY, wait_for


def replay(state, *args):
    p = subprocess.run([SLAQ, "replay", "--state-dir", str(state)]
                       + list(args), capture_output=True, text=True,
                       timeout=120)
    m = re.search(r"allocations compared: (\d+), equal: (\d+), different: "
                  r"(\d+) \((\d+) at recorded epochs", p.stdout)
    counts = tuple(int(x) for x in m.groups()) if m else None
    return p, counts


def record_a_run(daemon_factory, state):
    d = daemon_factory("--cores", "2", "--epoch", "0.2", "--enforce", "none",
                       state=state)
    ids = [d.submit(TOY, "--forever", "--iter-cpu", "0.004", "--rate", r,
                    name="r" + r) for r in ("0.08", "0.03", "0.01")]
    wait_for(lambda: all(d.job(i)["reports"] > 20 for i in ids), timeout=20,
             what="reports of every job")
    d.cli("cancel", str(ids[0]))            # a job ends mid-run
    d.wait_state(ids[0], "cancelled")
    d.cli("policy", "fair")                 # a policy change ...
    time.sleep(0.8)
    d.cli("policy", "slaq")                 # ... and back
    time.sleep(1.0)
    for i in ids[1:]:
        d.cli("cancel", str(i))
    for i in ids[1:]:
        d.wait_state(i, "cancelled")
    assert d.stop() == 0
    return ids


def test_replay_gives_the_recorded_allocations(daemon_factory, tmp_path):
    state = tmp_path / "st"
    record_a_run(daemon_factory, state)
    p, counts = replay(state, "--cores", "2", "--epoch", "0.2")
    assert counts, p.stdout + p.stderr
    compared, equal, different, at_recorded = counts
    assert "3 jobs" in p.stdout
    assert compared >= 20, p.stdout
    # The same inputs in the same order through the same core: every
    # allocation slaqd recorded comes out again, up to the first epoch
    # whose time state.db does not hold (nothing changed in it). On a slow
    # machine a report or the policy change can land close to such an
    # epoch; then the replay says so, and never before such an epoch.
    if p.returncode == 0:
        assert (equal, different) == (compared, 0), p.stdout
    else:
        assert p.returncode == 1 and different > 0, p.stdout + p.stderr
        m = re.search(r"first difference: epoch (\d+), whose time was "
                      r"interpolated", p.stdout)
        assert m, p.stdout
        first = int(m.group(1))
        listed = [int(k) for k in re.findall(r"^  epoch (\d+) ", p.stdout,
                                             re.M)]
        assert listed and min(listed) == first, p.stdout


def test_replay_with_other_settings_differs(daemon_factory, tmp_path):
    state = tmp_path / "st"
    record_a_run(daemon_factory, state)
    p, counts = replay(state, "--cores", "4", "--epoch", "0.2", "--show",
                       "3")
    assert p.returncode == 1 and counts and counts[2] > 0, p.stdout
    assert len(re.findall(r"^  epoch \d+ .*recorded [0-9.]+ cores, replay",
                          p.stdout, re.M)) == 3


def test_replay_usage_errors(tmp_path):
    p = subprocess.run([SLAQ, "replay", "--state-dir", str(tmp_path)],
                       capture_output=True, text=True)
    assert p.returncode == 2 and "--cores" in p.stderr
    p = subprocess.run([SLAQ, "replay", "--state-dir", str(tmp_path / "no"),
                        "--cores", "2"], capture_output=True, text=True)
    assert p.returncode == 2 and "state.db" in p.stderr
    p = subprocess.run([SLAQ, "replay", "--help"], capture_output=True,
                       text=True)
    assert p.returncode == 0 and "--state-dir" in p.stdout
