#!/usr/bin/env bash
# sim-outputs.sh — every simulator's outputs on small fixed inputs, written
# to one directory, so that a change meant to leave results alone (a
# refactoring of the core) can be checked bit for bit: run it before and
# after the change and compare the two directories with diff -r.
#
# Usage: scripts/sim-outputs.sh OUT_DIR [BUILD_DIR]
#
# It covers each allocator of the core on one node and on several, the
# hold, shares between users, the deadline simulator's priority policies
# with MLFS's moves, the task simulator's queues, the query simulator's
# relaqs and the sweep simulator (well under a minute). What the runs
# measure of the scheduler's own speed (sched_ms, us/round, the task
# simulator's cpu and wall, the HTML report that plots them) is removed
# at the end: the rest is a pure function of the inputs and the code.
set -euo pipefail
out=${1:?usage: scripts/sim-outputs.sh OUT_DIR [BUILD_DIR]}
build=${2:-build}
slaq="$build/bin/slaq"
rm -rf "$out"
mkdir -p "$out"

gen() {
  "$slaq" workload gen --curves tests/data/curves-dev.jsonl --jobs 160 \
    --mean-interarrival 4 --work 2000:20000 --max-cores 64 --iters 100 "$@"
}
gen --seed 1 >"$out/wl.jsonl"
gen --seed 2 --scaling real --users 4 --skew 1 --accounts 2 >"$out/wl-users.jsonl"

sim() { "$slaq" sim --no-plots --quiet "$@" >/dev/null; }
all=fair,slaq,slaq-maxmin,slaq-plan,slaq-index,queue,shortest-first,oracle-greedy,oracle-plan,oracle-index
sim --workload "$out/wl.jsonl" --cores 640 --compare "$all" --out "$out/one-node"
sim --workload "$out/wl.jsonl" --nodes 8 --cores-per-node 48 --compare "$all" \
  --out "$out/nodes"
sim --workload "$out/wl.jsonl" --cores 32 --compare fair,slaq --hold 0.5 \
  --out "$out/hold"
sim --workload "$out/wl-users.jsonl" --cores 128 \
  --compare slaq,slaq+shares,fair+shares,queue+shares,slaq-index+shares \
  --out "$out/shares"

"$slaq" sim --deadlines --curves data/curves/slaq-train.jsonl --generate 300 \
  --nodes 6 --out "$out/deadlines" >/dev/null
"$slaq" sim --deadlines --curves data/curves/slaq-train.jsonl --generate 300 \
  --nodes 6 --policies mlfs-h,mlfs --weigh-moves --no-load-control \
  --out "$out/deadlines-weigh" >/dev/null

"$slaq" sim --tasks-workload mixed-5-50 --span 300 --nodes 20 --format tsv \
  --scheduler yarn,sparrow,fifo,yaq-c,yaq-c:srjf,yaq-d \
  --jobs-out "$out/tasks-jobs.csv" >"$out/tasks.tsv"

"$slaq" sim --aqp tests/data/aqp-traces.jsonl --seeds 1-2 \
  --policies relaqs,fair,slaq --out "$out/aqp" >"$out/aqp.txt"

"$slaq" sim --sweep tests/data/sweep-small.jsonl --slots 2 --orders 4 \
  --kill-threshold 0.15 --target 0.83 \
  --policy pop,bandit,earlyterm,default,sh,hyperband \
  --json "$out/sweep.json" >"$out/sweep.txt"

python3 - "$out" <<'PY'
import csv, json, os, sys
TIMING = {"sched_ms", "sched_us_per_round", "median_ms", "p90_ms", "cpu",
          "wall"}

def drop_keys(x):
    if isinstance(x, dict):
        return {k: drop_keys(v) for k, v in x.items() if k not in TIMING}
    if isinstance(x, list):
        return [drop_keys(v) for v in x]
    return x

def drop_columns(path, sep):
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    head = [l for l in lines if l.startswith("#")]
    rows = list(csv.reader([l for l in lines if not l.startswith("#")],
                           delimiter=sep))
    if not rows:
        return
    keep = [i for i, name in enumerate(rows[0]) if name not in TIMING]
    with open(path, "w", newline="") as f:
        f.writelines(l + "\n" for l in head)
        w = csv.writer(f, delimiter=sep, lineterminator="\n")
        w.writerows([r[i] for i in keep] for r in rows)

for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        path = os.path.join(root, name)
        if name == "report.html":
            os.remove(path)
        elif name.endswith(".json") and name != "sweep.json":
            with open(path) as f:
                x = json.load(f)
            with open(path, "w") as f:
                json.dump(drop_keys(x), f, indent=1)
        elif name.endswith((".csv", ".tsv")):
            drop_columns(path, "\t" if name.endswith(".tsv") else ",")
PY
