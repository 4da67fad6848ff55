#!/usr/bin/env python3
"""demo_aqp_report.py — the summary of `make demo-aqp`.

usage: scripts/demo_aqp_report.py OUT_DIR POLICY...

For each policy, joins OUT_DIR/POLICY/state.db (slaqd's jobs and the time
of every report) with OUT_DIR/POLICY/traces.jsonl (each query's estimates
after every mini-batch and its exact answer, written by slaq-aqp --trace)
and prints the mean time from submission until a query's true error
reduction first reached 70%, 90% and 99%, and until its exact answer,
side by side. The true error is docs/relaqs.md's (slaq_query_true_error):
the mean relative error of the estimates after a mini-batch divided by
the same after the first.
"""
import json
import os
import sqlite3
import sys

XS = (0.7, 0.9, 0.99)


def mean_rel(row, truth):
    s = 0.0
    for x, t in zip(row, truth):
        scale = abs(t) if t else 1.0
        s += 1.0 if x is None else abs(x - t) / scale
    return s / len(truth)


def reductions(tr):
    e1 = mean_rel(tr["estimates"][0], tr["truth"])
    out = []
    for i, row in enumerate(tr["estimates"]):
        last = i == len(tr["estimates"]) - 1
        out.append(1.0 if last or not e1 > 0
                   else 1 - mean_rel(row, tr["truth"]) / e1)
    return out


def policy_rows(d):
    traces = {}
    path = os.path.join(d, "traces.jsonl")
    if os.path.exists(path):
        for line in open(path):
            if line.strip():
                t = json.loads(line)
                traces[t["name"]] = t
    db = sqlite3.connect("file:%s?mode=ro" % os.path.join(d, "state.db"),
                         uri=True)
    rows = []
    for jid, name, sub, state in db.execute(
            "SELECT id, name, submitted, state FROM jobs ORDER BY id"):
        tr = traces.get(name)
        times = dict(db.execute("SELECT iter, t FROM reports WHERE job = ?",
                                (jid,)))
        if not tr or len(times) < len(tr["estimates"]):
            rows.append((name, state, None))
            continue
        red = reductions(tr)
        tx = []
        for x in XS + (1.0,):
            i = next(k for k, r in enumerate(red) if r >= x)
            tx.append(times[i + 1] - sub)
        rows.append((name, state, tx))
    return rows


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, pols = sys.argv[1], sys.argv[2:]
    res = {p: policy_rows(os.path.join(out, p)) for p in pols}
    hdr = "".join("%10s" % ("t%d%%" % round(100 * x)) for x in XS) + \
        "%10s" % "exact"
    print("\nmean seconds from submission to X% true error reduction "
          "(first reached):")
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
    print("\nper query (seconds to 70% / 90% / exact):")
    names = [r[0] for r in res[pols[0]]]
    print("%-10s" % "query" + "".join("%24s" % p for p in pols))
    for i, n in enumerate(names):
        cells = []
        for p in pols:
            r = res[p][i] if i < len(res[p]) else None
            cells.append("%24s" % ("%.2f / %.2f / %.2f" % (r[2][0], r[2][1],
                                                           r[2][3])
                                   if r and r[2] else (r[1] if r else "-")))
        print("%-10s" % n + "".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
