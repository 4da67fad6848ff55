#!/usr/bin/env python3
"""demo_aqp_report.py — the summary of `make demo-aqp`.

usage: scripts/demo_aqp_report.py [--slaq PATH] OUT_DIR POLICY...

For each policy, joins OUT_DIR/POLICY/state.db (slaqd's jobs and the time
of every report) with OUT_DIR/POLICY/traces.jsonl (each query's estimates
after every mini-batch and its exact answer, written by slaq-aqp --trace)
and prints the mean time from submission until a query's true error
reduction first reached 50% ... 99%, and until its exact answer, side by
side; then, against fair, the times to 70% and 90% with the change, and
the crossing point (the error reduction from which fair is faster). The
true error is slaq's one definition (slaq_query_error_curve,
docs/relaqs.md), computed by `slaq predict-eval --aqp TRACES --errors`
(PATH: default build/bin/slaq next to this script, or $SLAQ_BIN).
"""
import json
import os
import sqlite3
import subprocess
import sys

XS = (0.5, 0.7, 0.8, 0.9, 0.95, 0.99)
TARGETS = ((0.7, 40.0), (0.9, 15.0))  # reduction, % shorter wanted
SLAQ = os.environ.get("SLAQ_BIN") or os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "build", "bin", "slaq")


def reductions(path):
    """name -> [1 - E_i], from the core (exact at the last mini-batch)."""
    p = subprocess.run([SLAQ, "predict-eval", "--aqp", path, "--errors"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("demo_aqp_report.py: %s" % p.stderr.strip())
    out = {}
    for line in p.stdout.splitlines():
        r = json.loads(line)
        red = [1 - e for e in r["error"]]
        red[-1] = 1.0
        out[r["name"]] = red
    return out


def time_to(red, times, sub, x):
    i = next(k for k, r in enumerate(red) if r >= x)
    return times[i + 1] - sub


def policy_rows(d):
    path = os.path.join(d, "traces.jsonl")
    reds = reductions(path) if os.path.exists(path) else {}
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d, "state.db"),
                         uri=True)
    rows = []
    for jid, name, sub, state in db.execute(
            "SELECT id, name, submitted, state FROM jobs ORDER BY id"):
        red = reds.get(name)
        times = dict(db.execute("SELECT iter, t FROM reports WHERE job = ?",
                                (jid,)))
        if not red or len(times) < len(red):
            rows.append((name, state, None, None))
            continue
        tx = [time_to(red, times, sub, x) for x in XS + (1.0,)]
        rows.append((name, state, tx, (red, times, sub)))
    return rows


def mean_time(rows, x):
    done = [r[3] for r in rows if r[3]]
    return sum(time_to(*c[:3], x) for c in done) / len(done) if done \
        else float("nan")


def crossing(rows, base):
    """The crossing point, as `slaq sim --aqp` reports it: the smallest
    error reduction (in 0.1% steps, from 50%) from which on the policy is
    slower than fair on average at every level up to the exact answer;
    None if it is not slower at the exact answer."""
    c = None
    for k in range(1000, 499, -1):
        x = k / 1000
        if not mean_time(rows, x) > mean_time(base, x):
            break
        c = x
    return c


def main():
    global SLAQ
    args = sys.argv[1:]
    if args[:1] in (["-h"], ["--help"]):
        print(__doc__.strip())
        return 0
    if args[:1] == ["--slaq"] and len(args) > 1:
        SLAQ, args = args[1], args[2:]
    if len(args) < 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, pols = args[0], args[1:]
    res = {p: policy_rows(os.path.join(out, p)) for p in pols}
    hdr = "".join("%10s" % ("t%d%%" % round(100 * x)) for x in XS) + \
        "%10s" % "exact"
    print("\nmean seconds from submission to X% true error reduction "
          "(first reached; slaq's true error, docs/relaqs.md):")
    print("%-10s%8s%s" % ("policy", "queries", hdr))
    means = {}
    for p in pols:
        done = [r[2] for r in res[p] if r[2]]
        means[p] = [sum(v[k] for v in done) / len(done) if done else
                    float("nan") for k in range(len(XS) + 1)]
        print("%-10s%8d%s" % (p, len(done),
                              "".join("%10.2f" % m for m in means[p])))
    if len(pols) >= 2 and pols[-1] == "fair":
        base = means["fair"]
        for p in pols[:-1]:
            print("%-10s%8s%s" % (p + " vs fair", "", "".join(
                "%+9.1f%%" % (100 * (a - b) / b) if b else "%10s" % "-"
                for a, b in zip(means[p], base))))
        for p in pols[:-1]:
            print("\n%s against fair (issue targets: 70%% >= 40%% shorter, "
                  "90%% >= 15%% shorter):" % p)
            for x, want in TARGETS:
                a, b = means[p][XS.index(x)], base[XS.index(x)]
                ch = 100 * (b - a) / b if b else float("nan")
                print("  time to %d%% error reduction: %s %.2f s, fair "
                      "%.2f s: %s %.1f%% %s (target >= %.0f%% shorter: "
                      "%s)" % (round(100 * x), p, a, b, p, abs(ch),
                               "shorter" if ch >= 0 else "LONGER", want,
                               "met" if ch >= want else "NOT met"))
            c = crossing(res[p], res["fair"])
            print("  crossing point: %s" % (
                "fair is faster from %.1f%% error reduction on" % (100 * c)
                if c is not None else "none (%s is faster up to the exact "
                "answer)" % p))
    print("\nper query (seconds to 70% / 90% / exact):")
    names = [r[0] for r in res[pols[0]]]
    print("%-10s" % "query" + "".join("%24s" % p for p in pols))
    for i, n in enumerate(names):
        cells = []
        for p in pols:
            r = res[p][i] if i < len(res[p]) else None
            cells.append("%24s" % ("%.2f / %.2f / %.2f" % (r[2][1], r[2][3],
                                                           r[2][-1])
                                   if r and r[2] else (r[1] if r else "-")))
        print("%-10s" % n + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
