"""test_bounds.py — slaqd against the largest inputs: a grid sweep larger
than the configuration cap is refused by slaqd itself (not only by the
slaq command) before any configuration is made, with slaqd's memory
bounded and its other requests answered; and SIGTERM is honoured within a
second while slaqd takes in the largest sweep it accepts.
"""

import json
import os
import signal
import sqlite3
import subprocess
import time

from conftest import SLAQ, session, wait_for


def grid(nparams, points, epochs=10):
    names = ["p%d" % i for i in range(nparams)]
    return {"name": "g", "command": "true " + " ".join("{%s}" % p
                                                       for p in names),
            "space": {p: {"type": "uniform", "low": 0, "high": 1}
                      for p in names},
            "generator": {"type": "grid", "points": points},
            "metric": "loss", "y_target": 0.1, "epochs": epochs, "slots": 2}


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_grid_over_the_cap_is_refused_by_slaqd(slaqd):
    for nparams in (2, 4, 8):
        t0 = time.monotonic()
        r = slaqd.request({"type": "sweep_submit", "spec": grid(nparams, 1000),
                           "cwd": "/"})
        took = time.monotonic() - t0
        assert not r["ok"], r
        assert "more than the cap of 10000 configurations" in r["message"], r
        assert took < 1.0, took
    r = slaqd.request({"type": "sweep_submit", "spec": grid(2, 100, 1001),
                       "cwd": "/"})
    assert not r["ok"] and "configuration-epochs" in r["message"], r
    assert rss_kb(slaqd.proc.pid) < 100 * 1024
    assert slaqd.request({"type": "sweep_ls"})["sweeps"] == []
    assert slaqd.cli("ls").returncode == 0


def test_sigterm_after_a_grid_over_the_cap(tmp_path, daemon_factory):
    """The issue's case: a 2 x 1000 grid sent straight to slaqd (no check
    by the slaq command) and SIGTERM 0.2 s later. slaqd refuses the grid
    at once and so exits within a second (it used to expand 1,000,000
    configurations, grow past a gigabyte and not see the signal)."""
    d = daemon_factory(state=tmp_path / "s")
    s, f = session(d.sock)
    s.sendall(json.dumps({"type": "sweep_submit", "spec": grid(2, 1000),
                          "cwd": "/"}).encode() + b"\n")
    time.sleep(0.2)
    t0 = time.monotonic()
    d.proc.send_signal(signal.SIGTERM)
    try:
        rc = d.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
        d.kill9()
    took = time.monotonic() - t0
    s.close()
    assert rc == 0 and took < 1.0, (rc, took)


def test_sigterm_while_taking_in_the_largest_sweep(tmp_path, daemon_factory):
    """The largest sweep slaqd accepts (10,000 configurations), SIGTERM sent
    at moments from the submission on: slaqd exits, cleanly, within a
    second each time."""
    spec_path = tmp_path / "grid.json"
    spec_path.write_text(json.dumps(grid(2, 100)))
    for i, delay in enumerate((0.0, 0.03, 0.08, 0.15, 0.3, 0.6)):
        d = daemon_factory(state=tmp_path / ("s%d" % i))
        cli = subprocess.Popen([SLAQ, "sweep", "--socket", d.sock,
                                str(spec_path)], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
        time.sleep(delay)
        t0 = time.monotonic()
        d.proc.send_signal(signal.SIGTERM)
        try:
            rc = d.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            rc = None
        took = time.monotonic() - t0
        cli.communicate(timeout=30)
        assert rc == 0, (delay, rc, d.read_log()[-2000:])
        assert took < 1.0, "SIGTERM %.2f s after the submission: slaqd " \
            "took %.3f s to exit" % (delay, took)
        assert "shutting down" in d.read_log()
        # All of the sweep, or none of it (the submission undone).
        db = sqlite3.connect(os.path.join(d.state, "state.db"))
        nsweeps = db.execute("SELECT COUNT(*) FROM sweeps").fetchone()[0]
        ncfg = db.execute("SELECT COUNT(*) FROM sweep_configs").fetchone()[0]
        db.close()
        assert (nsweeps, ncfg) in ((0, 0), (1, 10000)), (nsweeps, ncfg)
    # And once taken in, the sweep is there with every configuration.
    d = daemon_factory(state=tmp_path / "last")
    p = subprocess.run([SLAQ, "sweep", "--socket", d.sock, str(spec_path)],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    sweeps = wait_for(lambda: d.request({"type": "sweep_ls"})["sweeps"],
                      what="the sweep")
    assert sweeps[0]["configs"] == 10000, sweeps[0]
