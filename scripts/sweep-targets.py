#!/usr/bin/python3
"""sweep-targets.py: POP against the issue's targets, from the results that
scripts/sweep-results.sh wrote (NAME-sim[-nostart].json and
NAME-optuna[-nostart].json in a results directory).

Targets (docs/sweeps.md, "Against the targets"): POP's median time to
target <= 0.62x Bandit's and <= 0.46x EarlyTerm's, its spread over the
orders (max - min) <= 0.5x Bandit's, and its median <= 0.8x the best
Optuna pruner's. An order that never reached the target counts as
infinitely late, as in the simulator's own table. When the results
have the policies pop-keep (POP keeping a rising configuration's slot)
and pop-early (pop-keep with an early kill check), their ratios follow
POP's; and when they have POLICY+oracle rows (the policy with its curve
model replaced by the traces' truth), theirs follow: what the policy's
rules would give with a perfect model.

Each median target is also checked against the simulator's bound: in
each order, the earliest time a policy that starts configurations in that
order (every slaq policy, and Optuna's trials) could reach the target. A
target that asks POP for a median below the median of those bounds cannot
be met by any such policy, and is marked so.
"""
import argparse
import glob
import json
import math
import os
import sys

# The thesis's POP, and its two variants (docs/sweeps.md, "pop-keep" and
# "pop-early") when the results have them.
POPS = ("pop", "pop-keep", "pop-early")
# The same policies with a perfect curve model (slaq sim's POLICY+oracle
# rows): what a better model could give them, reported beside, not instead.
ORACLE = "+oracle"
POPS = POPS + tuple(p + ORACLE for p in POPS)
TARGETS = (("median", "bandit", 0.62), ("median", "earlyterm", 0.46),
           ("spread", "bandit", 0.5), ("median", "optuna", 0.8))


def times(runs):
    t = []
    for r in runs:
        v = r["time_to_target"]
        t.append(math.inf if isinstance(v, str) else float(v))
    return sorted(t)


def median(t):
    n = len(t)
    if n == 0:
        return math.nan
    pos = 0.5 * (n - 1)
    i = int(pos)
    if i + 1 >= n or pos == i:
        return t[i]
    if math.isinf(t[i]) or math.isinf(t[i + 1]):
        return math.inf
    return t[i] + (pos - i) * (t[i + 1] - t[i])


def spread(t):
    return math.inf if math.isinf(t[-1]) else t[-1] - t[0]


def ratio(a, b):
    if math.isinf(a) and math.isinf(b):
        return math.nan
    if math.isinf(b):
        return 0.0
    return a / b if b > 0 else math.inf


def one(sim_path, opt_path):
    doc = json.load(open(sim_path))
    sim = doc["policies"]
    b = doc.get("bound") or {}
    bound = median(sorted(b["orders"])) if b.get("orders") else math.nan
    stat = {p: (median(times(r)), spread(times(r))) for p, r in sim.items()}
    best = None
    if opt_path and os.path.exists(opt_path):
        opt = json.load(open(opt_path))["pruners"]
        for name, runs in opt.items():
            m = median(times(runs))
            if best is None or m < best[1]:
                best = (name, m)
    out = []
    for pol, what, other, limit in ((p, *t) for p in POPS if p in stat for t in TARGETS):
        mine = stat[pol][0 if what == "median" else 1]
        if other == "optuna":
            if best is None:
                continue
            theirs, label = best[1], "best Optuna pruner (%s)" % best[0]
        else:
            if other not in stat:
                continue
            theirs = stat[other][0 if what == "median" else 1]
            label = other
        r = ratio(mine, theirs)
        row = {"target": "%s %s <= %.2fx %s's" % (
                   "POP" if pol == "pop" else pol, what, limit, label),
               "policy": pol, "pop": mine, "other": theirs, "ratio": r, "met": bool(r <= limit)}
        if what == "median" and math.isfinite(bound):
            # The median POP would need, and whether any policy can have it.
            row["needs"] = limit * theirs
            row["possible"] = bool(limit * theirs >= bound)
        out.append(row)
    return stat, bound, out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir", help="results directory (docs/results/sweeps)")
    ap.add_argument("names", nargs="*", help="sweeps (default: every NAME-sim.json)")
    ap.add_argument("--json", help="also write the ratios as JSON")
    a = ap.parse_args()
    names = a.names or sorted(os.path.basename(p)[:-len("-sim.json")]
                              for p in glob.glob(os.path.join(a.dir, "*-sim.json")))
    if not names:
        sys.exit("sweep-targets: no NAME-sim.json in %s" % a.dir)
    report = {}
    for name in names:
        for sfx, label in (("", "as recorded"), ("-nostart", "no start-up")):
            sim = os.path.join(a.dir, "%s-sim%s.json" % (name, sfx))
            if not os.path.exists(sim):
                continue
            stat, bound, rows = one(sim, os.path.join(a.dir, "%s-optuna%s.json" % (name, sfx)))
            print("%s, %s: medians %s" % (name, label, ", ".join(
                "%s %.2f" % (p, m) for p, (m, _) in stat.items())))
            if math.isfinite(bound):
                print("  bound (median over the orders; no in-order policy is faster): "
                      "%.2f s; %s" % (bound, ", ".join(
                          "%s's median is %.2fx it" % (p, stat[p][0] / bound)
                          for p in POPS if p in stat)))
            for r in rows:
                impossible = "possible" in r and not r["possible"]
                print("  %-48s %8.2f vs %8.2f = %5.2fx  %s%s" % (
                    r["target"], r["pop"], r["other"], r["ratio"],
                    "met" if r["met"] else "missed",
                    "; needs %.2f s, below the bound: no policy can" % r["needs"]
                    if impossible else ""))
            report["%s%s" % (name, sfx)] = {"bound": bound, "targets": rows}
    if a.json:
        with open(a.json, "w") as f:
            json.dump(report, f, indent=1, default=str)


if __name__ == "__main__":
    main()
