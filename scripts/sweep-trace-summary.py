#!/usr/bin/python3
"""sweep-trace-summary.py: where a policy's time to target goes, from a
decision trace of `slaq sim --sweep ... --trace FILE` and the sweep's
traces.

For every policy and order that reached the target, the time splits in
two: until the configuration that reached it (the winner) was started,
and from then on. The second part is the winner's own time alone (its
start-up, times the --start-scale the replay used, and its epochs up to
the target) plus the time it waited while suspended. Prints, per policy,
the medians over the orders of the three parts, the winner's
suspensions, and the waiting's share of the policy's summed time.

  slaq sim --sweep data/sweeps/mlpc.jsonl --policy pop,earlyterm \\
      --trace mlpc.trace --json mlpc.json
  scripts/sweep-trace-summary.py data/sweeps/mlpc.jsonl mlpc.trace
"""
import argparse
import json
import statistics
import sys


def load_sweep(path):
    cfg = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if n == 1 or not line.strip():
                continue
            c = json.loads(line)
            cfg[c["id"]] = c
    return cfg


def summarise(cfg, events, start_scale):
    """Per policy: a list of (time, started, alone, waited, suspends)."""
    runs = {}
    for e in events:
        runs.setdefault((e["policy"], e["order"]), []).append(e)
    out = {}
    for (pol, _), ev in sorted(runs.items()):
        target = [e for e in ev if e["ev"] == "target"]
        if not target:
            continue
        w, t, epoch = target[0]["id"], target[0]["t"], target[0]["epoch"]
        started = min(e["t"] for e in ev if e["id"] == w and e["ev"] == "start")
        c = cfg[w]
        alone = start_scale * c.get("start_s", 0) + sum(c["epoch_s"][:epoch])
        susp = sum(1 for e in ev if e["id"] == w and e.get("action") == "suspend")
        waited = t - started - alone
        if abs(waited) < 1e-3:  # the trace's times have six decimals
            waited = 0.0
        out.setdefault(pol, []).append((t, started, alone, waited, susp))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep", help="the sweep's traces (data/sweeps/NAME.jsonl)")
    ap.add_argument("trace", help="the decision trace (slaq sim --sweep --trace)")
    ap.add_argument("--start-scale", type=float, default=1.0,
                    help="the --start-scale of the replay (default 1)")
    a = ap.parse_args()
    try:
        cfg = load_sweep(a.sweep)
        with open(a.trace) as f:
            events = [json.loads(line) for line in f if line.strip()]
    except (OSError, ValueError, KeyError) as e:
        sys.exit("sweep-trace-summary: %s" % e)
    try:
        res = summarise(cfg, events, a.start_scale)
    except KeyError as e:
        sys.exit("sweep-trace-summary: the trace names configuration %s, "
                 "which is not in %s" % (e, a.sweep))
    if not res:
        sys.exit("sweep-trace-summary: no order in %s reached the target" % a.trace)
    print("%-10s %6s %9s %10s %9s %9s %6s %7s" % (
        "policy", "orders", "median_s", "started_s", "alone_s", "waited_s",
        "susp", "waited"))
    for pol, rows in res.items():
        med = lambda i: statistics.median(r[i] for r in rows)
        share = sum(r[3] for r in rows) / sum(r[0] for r in rows)
        print("%-10s %6d %9.2f %10.2f %9.2f %9.2f %6.1f %6.0f%%" % (
            pol, len(rows), med(0), med(1), med(2), med(3), med(4), 100 * share))


if __name__ == "__main__":
    main()
