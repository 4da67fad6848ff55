#!/usr/bin/env python3
"""mlfs_report.py — the tables of docs/results/mlfs/README.md from the
summary.csv files scripts/mlfs-results.sh wrote (means over seeds or trace
windows), each with the command that made it, and the issue's targets."""
import csv
import glob
import os
import re
import sys

out, gen_cmd, trace_cmd = sys.argv[1], sys.argv[2], sys.argv[3]
train_cmd = sys.argv[4] if len(sys.argv) > 4 else None
# The command as a reader types it: the build directory's slaq is slaq.
gen_cmd = re.sub(r"\S*/bin/slaq ", "slaq ", gen_cmd)
trace_cmd = re.sub(r"\S*/bin/slaq ", "slaq ", trace_cmd)
POLICIES = ["fair", "slaq", "edf", "tiresias", "mlfs-h", "mlfs-rl", "mlfs"]
COLS = [("deadline_met", "deadline met", "{:.3f}"),
        ("acc_met", "accuracy met", "{:.3f}"),
        ("urgent_met", "urgent on time", "{:.3f}"),
        ("acc_at_deadline", "accuracy at deadline", "{:.3f}"),
        ("avg_jct_s", "mean JCT (h)", "{:.2f}"),
        ("avg_wait_s", "mean wait (h)", "{:.2f}"),
        ("p50_jct_s", "p50 JCT (h)", "{:.2f}"),
        ("p90_jct_s", "p90 JCT (h)", "{:.2f}"),
        ("makespan_s", "makespan (h)", "{:.1f}"),
        ("moves", "moves", "{:.0f}"),
        ("move_s", "moves' cost (s)", "{:.0f}"),
        ("stopped", "stopped", "{:.0f}"),
        ("sched_us_per_round", "µs / round", "{:.0f}"),
        ("util", "cores used", "{:.2f}"),
        ("util_arrivals", "cores used while jobs arrive", "{:.2f}")]
HOURS = {"avg_jct_s", "avg_wait_s", "p50_jct_s", "p90_jct_s", "makespan_s"}


def runs(pattern):
    rows = {}
    for path in sorted(glob.glob(pattern)):
        for r in csv.DictReader(open(path)):
            rows.setdefault(r["policy"], []).append(r)
    return rows


def mean(rows, col):
    v = [float(r[col]) for r in rows]
    v = [x / 3600 if col in HOURS else x for x in v]
    return sum(v) / len(v)


def table(rows, policies):
    lines = ["| policy | " + " | ".join(c[1] for c in COLS) + " |",
             "|---" * (len(COLS) + 1) + "|"]
    for p in policies:
        if p not in rows:
            continue
        cells = [fmt.format(mean(rows[p], c)) for c, _, fmt in COLS]
        lines.append(f"| {p} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def spread(rows, p, col="deadline_met"):
    v = [float(r[col]) for r in rows[p]]
    return min(v), max(v)


def targets(rows, name):
    m = {p: mean(rows[p], "deadline_met") for p in rows}
    j = {p: mean(rows[p], "avg_jct_s") for p in rows}
    res = []

    def row(what, ok, value):
        res.append(f"| {name} | {what} | {value} | {'met' if ok else 'missed'} |")
    ratio = m["mlfs"] / m["slaq"] if m["slaq"] > 0 else float("inf")
    row("mlfs deadline-met >= 1.5 x slaq's", ratio >= 1.5,
        f"{m['mlfs']:.3f} / {m['slaq']:.3f} = {ratio:.2f}x")
    row("mlfs deadline-met >= edf's", m["mlfs"] >= m["edf"],
        f"{m['mlfs']:.3f} vs {m['edf']:.3f}")
    row("mlfs deadline-met >= tiresias'", m["mlfs"] >= m["tiresias"],
        f"{m['mlfs']:.3f} vs {m['tiresias']:.3f}")
    cut = 1 - j["mlfs"] / j["slaq"]
    row("mlfs mean JCT >= 30% below slaq's", cut >= 0.3,
        f"{j['mlfs']:.2f} h vs {j['slaq']:.2f} h: {100 * cut:.0f}% below")
    row("deadline-met: mlfs >= mlfs-rl >= mlfs-h > slaq",
        m["mlfs"] >= m["mlfs-rl"] >= m["mlfs-h"] > m["slaq"],
        f"{m['mlfs']:.3f} >= {m['mlfs-rl']:.3f} >= {m['mlfs-h']:.3f} > "
        f"{m['slaq']:.3f}")
    row("mean JCT: mlfs <= mlfs-rl <= mlfs-h < slaq",
        j["mlfs"] <= j["mlfs-rl"] <= j["mlfs-h"] < j["slaq"],
        f"{j['mlfs']:.2f} <= {j['mlfs-rl']:.2f} <= {j['mlfs-h']:.2f} < "
        f"{j['slaq']:.2f} h")
    return res


print("# MLFS: deadlines, required accuracy and urgency\n")
print("Made by `make mlfs-results` (scripts/mlfs-results.sh); "
      "docs/deadlines.md explains the setting, the workloads and what each "
      "column means. Means over the seeds or trace windows.\n")

gen = runs(os.path.join(out, "generated", "seed*", "summary.csv"))
nseed = len(gen.get("mlfs", []))
print("## The generated workload\n")
print(f"{nseed} seeds (S = 1..{nseed}) of\n\n    {gen_cmd}\n")
print(table(gen, POLICIES) + "\n")
print("Deadline-met ratio, lowest and highest over the seeds: " + ", ".join(
    "{} {:.3f}-{:.3f}".format(p, *spread(gen, p)) for p in POLICIES if p in gen) + ".\n")

cdf = os.path.join(out, "generated", "seed1", "jct_cdf.csv")
if os.path.exists(cdf):
    rows = list(csv.DictReader(open(cdf)))
    print("JCT distribution of seed 1 (hours; DIR/jct_cdf.csv has every "
          "percentile):\n")
    present = [p for p in POLICIES if p in rows[0]]
    print("| fraction | " + " | ".join(present) + " |")
    print("|---" * (len(present) + 1) + "|")
    for r in rows:
        if r["fraction"] in ("0.10", "0.25", "0.50", "0.75", "0.90", "0.95", "0.99"):
            print(f"| {r['fraction']} | " + " | ".join(
                f"{float(r[p]) / 3600:.2f}" for p in POLICIES if p in r) + " |")
    print()

if train_cmd:
    print("The network of mlfs-rl and mlfs (MLF-RL; mlfs adds MLF-C, the "
          "paper's MLFS) is data/models/mlfs-rl.model, trained on the "
          "tuning workloads (seeds 1001 and 1002, never the seeds above) "
          "by\n\n    " + train_cmd + "\n")

print("## Component studies (generated workload, the same seeds)\n")
print("Each row turns one part off, or draws nearer accuracies (the command above with "
      "`--policies POLICY FLAG`); the row above it is the policy with it on.\n")
print("| policy | change | deadline met | urgent on time | accuracy met | accuracy at deadline | mean JCT (h) | moves | stopped |")
print("|---|---|---|---|---|---|---|---|---|")
for name, flag, pol in [("no-urgency", "--no-urgency", "mlfs-h"),
                        ("no-deadline-term", "--no-deadline-term", "mlfs-h"),
                        ("no-moves", "--no-moves", "mlfs-h"),
                        ("no-load-control", "--no-load-control", "mlfs"),
                        ("accuracy-0.9-0.99", "--accuracy-range 0.9:0.99",
                         "mlfs")]:
    comp = runs(os.path.join(out, "components", name, "seed*", "summary.csv"))
    if pol not in comp:
        continue
    for label, rows in (("(none)", gen[pol]), (flag, comp[pol])):
        print(f"| {pol} | {label} | {mean(rows, 'deadline_met'):.3f} | "
              f"{mean(rows, 'urgent_met'):.3f} | {mean(rows, 'acc_met'):.3f} | "
              f"{mean(rows, 'acc_at_deadline'):.3f} | "
              f"{mean(rows, 'avg_jct_s'):.2f} | {mean(rows, 'moves'):.0f} | "
              f"{mean(rows, 'stopped'):.0f} |")
print()

tr = runs(os.path.join(out, "traces", "cluster02-w*", "summary.csv"))
if tr:
    nw = len(tr.get("mlfs", []))
    print("## The real trace (cluster02, reported once)\n")
    print(f"{nw} windows of 1,000 jobs (W = 0, 1000, ...; the parameters "
          f"chosen on the generated workload):\n\n    {trace_cmd}\n")
    print(table(tr, POLICIES) + "\n")
    print("Deadline-met ratio per window: " + "; ".join(
        p + " " + ", ".join(f"{float(r['deadline_met']):.3f}" for r in tr[p])
        for p in POLICIES if p in tr) + ".\n")

print("## Targets (issue 27)\n")
print("| workload | target | measured | |")
print("|---|---|---|---|")
for line in targets(gen, "generated"):
    print(line)
if tr:
    for line in targets(tr, "cluster02"):
        print(line)
