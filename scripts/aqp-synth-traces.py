#!/usr/bin/env python3
"""Synthetic approximate-query traces in slaq-aqp's trace format
(docs/aqp.md): online aggregation over a shuffled synthetic table, read in
equal mini-batches without replacement, so the last mini-batch gives the
exact answer. For tests and for a simulator run without the TPC-H traces.

usage: scripts/aqp-synth-traces.py [--seed S] [--batches B] > FILE
"""
import argparse
import json
import random


def run(name, kind, rows, groups, sel, batches, cost_per_row, nested, rng):
    # the table: (group, value, passes filter), in a random order
    table = []
    for _ in range(rows):
        g = rng.randrange(groups)
        v = rng.lognormvariate(3 + 0.3 * g, 0.8)
        table.append((g, v, rng.random() < sel))
    rng.shuffle(table)
    per = rows // batches
    sums = [0.0] * groups
    cnts = [0] * groups
    allsum = [0.0] * groups
    allcnt = [0] * groups
    for g, v, ok in table:
        if ok:
            allsum[g] += v
            allcnt[g] += 1

    def answer(s, c, seen, total):
        out = []
        for g in range(groups):
            if kind == "avg":
                out.append(s[g] / c[g] if c[g] else None)
            else:  # scaled sum
                out.append(s[g] * total / seen if seen else None)
        return out

    truth = answer(allsum, allcnt, rows, rows)
    est, cpu, nrows = [], [], []
    seen = 0
    for b in range(batches):
        lo, hi = b * per, (rows if b == batches - 1 else (b + 1) * per)
        for g, v, ok in table[lo:hi]:
            if ok:
                sums[g] += v
                cnts[g] += 1
        seen = hi
        est.append(answer(sums, cnts, seen, rows))
        extra = int(nested * b * per)  # re-evaluated tuples (nested)
        nrows.append(hi - lo + extra)
        cpu.append(round((hi - lo + extra) * cost_per_row *
                         (1 + 0.05 * (rng.random() - 0.5)), 6))
    est[-1] = truth
    return {"name": name, "query": kind, "batches": batches,
            "rows_total": rows, "keys": ["g%d/%s" % (g, kind)
                                         for g in range(groups)],
            "truth": truth, "estimates": est, "rows": nrows,
            "batch_cpu_s": cpu}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--batches", type=int, default=40)
    a = ap.parse_args()
    rng = random.Random(a.seed)
    specs = [
        # name, kind, rows, groups, selectivity, cost/row, nested
        ("avg4", "avg", 40000, 4, 1.0, 2.5e-4, 0),
        ("sum1-sel", "sum", 40000, 1, 0.02, 2.0e-4, 0),
        ("avg1", "avg", 20000, 1, 1.0, 3.0e-4, 0),
        ("sum3-narrow", "sum", 60000, 3, 0.005, 1.5e-4, 0),
        ("avg2-nested", "avg", 20000, 2, 0.3, 3.0e-4, 0.05),
        ("sum2", "sum", 80000, 2, 0.5, 1.2e-4, 0),
    ]
    for s in specs:
        print(json.dumps(run(s[0], s[1], s[2], s[3], s[4], a.batches, s[5],
                             s[6], rng)))


if __name__ == "__main__":
    main()
