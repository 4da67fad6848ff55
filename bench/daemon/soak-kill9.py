#!/usr/bin/env python3
"""soak-kill9.py — kill -9 slaqd again and again under load; count what is lost.

Starts a slaqd on a temporary state directory and slaq-loadgen with
CLIENTS attached jobs reporting RATE reports per second in all (through
libslaq-client, which keeps every report until slaqd acknowledges it and
resends after reconnecting). Then, KILLS times: waits a random time
(uniformly between --up-min and --up-max seconds), kills slaqd with
SIGKILL and starts it again on the same state directory. Finally it stops
the load generator, which waits for slaqd to acknowledge every report,
and compares the reports the clients made with the database's rows:

  lost        reports a client made (report() returned 0) with no row
  extra       rows no client made, or whose values differ from the report
  unacked     reports still unacknowledged when the load generator ended
  integrity   SQLite's PRAGMA integrity_check

Prints one JSON object; exits 1 if anything was lost, extra, unacknowledged
or the database is not intact, 2 on a usage or setup error. A row cannot
appear twice (reports' primary key is (job, iter)); a report delivered
twice would show as an `extra` row only if its values differed, so slaqd's
own count of resent reports it dropped is printed too (duplicates_dropped,
summed over each slaqd just before it was killed, and the last one).

  bench/daemon/soak-kill9.py --kills 100 --clients 1000 --rate 5000
"""

import argparse
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


sys.path.insert(0, os.path.join(ROOT, "python"))
from slaq.control import request  # noqa: E402


def status(sock_path):
    try:
        return request(sock_path, {"type": "status"})
    except (OSError, ValueError):
        return None


class Slaqd:
    def __init__(self, build, state, log):
        self.cmd = [os.path.join(build, "bin", "slaqd"), "--state-dir", state,
                    "--http", "off", "--enforce", "none", "--epoch", "1"]
        self.sock = os.path.join(state, "slaq.sock")
        self.log = log
        self.proc = None

    def start(self, timeout=120.0):
        t0 = time.monotonic()
        self.proc = subprocess.Popen(self.cmd, stdout=self.log,
                                     stderr=self.log)
        while time.monotonic() - t0 < timeout:
            if self.proc.poll() is not None:
                raise RuntimeError("slaqd exited with %s" % self.proc.returncode)
            st = status(self.sock)
            if st and st.get("ok"):
                return time.monotonic() - t0
            time.sleep(0.02)
        raise RuntimeError("slaqd did not answer within %g s" % timeout)

    def kill9(self):
        self.proc.kill()
        self.proc.wait()

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                return self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                return -9
        return self.proc.returncode if self.proc else 0


def expected_loss(client, k):
    """The loss slaq-loadgen reports for client number `client`, iteration k."""
    return 1.0 / (0.01 * k + 1.0) + client / 1e6


def check(db_path, made):
    """made: [(job_id, n_made)] in client order. Returns (rows, lost, extra)."""
    db = sqlite3.connect(db_path)
    rows = lost = extra = 0
    by_job = {}
    for client, (job, n) in enumerate(made):
        by_job[job] = (client, n)
    for job, it, loss in db.execute("SELECT job, iter, loss FROM reports "
                                    "ORDER BY job, iter"):
        rows += 1
        if job not in by_job:
            extra += 1
            continue
        client, n = by_job[job]
        if it >= n or abs(loss - expected_loss(client, it)) > 1e-12:
            extra += 1
    for job, n in made:
        have = db.execute("SELECT count(*) FROM reports WHERE job = ? AND "
                          "iter < ?", (job, n)).fetchone()[0]
        lost += n - have
    integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
    db.close()
    return rows, lost, extra, integrity


def main():
    ap = argparse.ArgumentParser(
        description="kill -9 slaqd repeatedly under load; count lost and "
                    "extra reports (one JSON line; exit 1 on any loss)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"),
                    help="build directory (default: build/)")
    ap.add_argument("--kills", type=int, default=100,
                    help="times slaqd is killed (default 100)")
    ap.add_argument("--clients", type=int, default=1000,
                    help="attached jobs reporting (default 1000)")
    ap.add_argument("--rate", type=float, default=5000,
                    help="reports per second, all clients together "
                         "(default 5000)")
    ap.add_argument("--up-min", type=float, default=0.5,
                    help="shortest time slaqd runs before a kill, s "
                         "(default 0.5)")
    ap.add_argument("--up-max", type=float, default=3.0,
                    help="longest time, s (default 3)")
    ap.add_argument("--ack-wait", type=float, default=60,
                    help="at the end, how long the clients may take to get "
                         "every report acknowledged, s (default 60)")
    ap.add_argument("--seed", type=int, default=None,
                    help="random seed for the kill times")
    ap.add_argument("--no-ack", action="store_true",
                    help="clients do not ask for acknowledgements "
                         "(SLAQ_CLIENT_ACK=0): what is lost without them")
    ap.add_argument("--keep", action="store_true",
                    help="keep the state directory (printed)")
    a = ap.parse_args()
    if a.kills < 0 or a.clients < 1 or a.rate < 0 or \
            not 0 <= a.up_min <= a.up_max:
        ap.error("need kills >= 0, clients >= 1, rate >= 0, "
                 "0 <= up-min <= up-max")
    rng = random.Random(a.seed)
    work = tempfile.mkdtemp(prefix="slaq-soak-")
    state = os.path.join(work, "state")
    os.mkdir(state)
    log = open(os.path.join(work, "slaqd.log"), "a")
    daemon = Slaqd(a.build, state, log)
    loadgen = None
    result = {"kills": a.kills, "clients": a.clients, "rate": a.rate,
              "up_min_s": a.up_min, "up_max_s": a.up_max, "seed": a.seed,
              "acks": not a.no_ack}
    try:
        daemon.start()
        out = os.path.join(work, "made.txt")
        loadgen = subprocess.Popen(
            [os.path.join(a.build, "bin", "slaq-loadgen"), "--socket",
             daemon.sock, "--clients", str(a.clients), "--seconds", "0",
             "--rate", str(a.rate), "--ack-wait", str(a.ack_wait), "--out",
             out], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=dict(os.environ, SLAQ_CLIENT_ACK="0" if a.no_ack else "1"))
        # Every client attached before the first kill.
        t0 = time.monotonic()
        while True:
            st = status(daemon.sock)
            if st and st.get("jobs_active", 0) >= a.clients:
                break
            if loadgen.poll() is not None or time.monotonic() - t0 > 60:
                raise RuntimeError("the load generator did not attach its "
                                   "clients: %s" % loadgen.stderr.read())
            time.sleep(0.05)
        restart_s, dups = [], 0
        t_start = time.monotonic()
        for _ in range(a.kills):
            time.sleep(rng.uniform(a.up_min, a.up_max))
            st = status(daemon.sock)
            dups += st.get("reports_duplicate_total", 0) if st else 0
            daemon.kill9()
            restart_s.append(daemon.start())
            if loadgen.poll() is not None:
                raise RuntimeError("the load generator ended early: %s"
                                   % loadgen.stderr.read())
        time.sleep(a.up_max)  # the last restart sees load too
        loadgen.send_signal(signal.SIGTERM)
        lg_out, lg_err = loadgen.communicate(timeout=a.ack_wait + 300)
        if loadgen.returncode != 0:
            raise RuntimeError("slaq-loadgen exited %d: %s"
                               % (loadgen.returncode, lg_err))
        lg = json.loads(lg_out)
        st = status(daemon.sock) or {}
        dups += st.get("reports_duplicate_total", 0)
        if daemon.stop() != 0:
            raise RuntimeError("slaqd did not exit cleanly")
        made = []
        with open(out) as f:
            for line in f:
                job, n, _ = line.split()
                made.append((int(job), int(n)))
        rows, lost, extra, integrity = check(os.path.join(state, "state.db"),
                                             made)
        result.update({
            "seconds": round(time.monotonic() - t_start, 1),
            "reports_made": sum(n for _, n in made),
            "reports_dropped_by_clients": lg["dropped"],
            "rows": rows,
            "lost": lost,
            "extra": extra,
            "unacked": lg["unacked"],
            "duplicates_dropped": dups,
            "integrity": integrity,
            "restart_s_mean": round(sum(restart_s) / len(restart_s), 3)
            if restart_s else None,
            "restart_s_max": round(max(restart_s), 3) if restart_s else None,
        })
        ok = lost == 0 and extra == 0 and lg["unacked"] == 0 and \
            integrity == "ok" and rows == result["reports_made"]
        result["ok"] = ok
        print(json.dumps(result), flush=True)
        return 0 if ok else 1
    except (RuntimeError, OSError, ValueError, subprocess.TimeoutExpired) as e:
        result["error"] = str(e)
        print(json.dumps(result), flush=True)
        return 2
    finally:
        if loadgen and loadgen.poll() is None:
            loadgen.kill()
            loadgen.wait()
        daemon.stop()
        log.close()
        if a.keep:
            print("state kept in %s" % work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
