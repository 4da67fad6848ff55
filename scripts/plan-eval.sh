#!/usr/bin/env bash
# plan-eval.sh — the planner (slaq-plan) beside Algorithm 1 (slaq), fair,
# Tiresias and the two oracles (each policy handed the true curves) on the
# standard workload (scripts/sim-results.sh: 160 jobs, 640 cores, epoch
# 2 s, unit 1, --work 2000:20000 --max-cores 64 --iters 100), on the
# tuning curves and the held-out ones, at several mean inter-arrivals.
#
# Usage: scripts/plan-eval.sh [BUILD_DIR]
# Environment: SEEDS (default 1 2 3 4 5), IAS (default 2 4 10 20),
# CURVES, HELDOUT (as sim-results.sh). Prints, per curve set and mean
# inter-arrival, each run's mean t90 (s) and average normalised loss,
# averaged over the seeds (both from slaq sim's summary.json), and each
# as a ratio to fair's.
set -euo pipefail
build=${1:-build}
slaq="$build/bin/slaq"
seeds=${SEEDS:-1 2 3 4 5}
ias=${IAS:-2 4 10 20}
runs=fair,tiresias,slaq:auto,slaq-plan:auto,oracle-greedy,oracle-plan
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for set in "tuning:${CURVES:-tests/data/curves-dev.jsonl}" \
           "held-out:${HELDOUT:-data/curves/slaq-train.jsonl}"; do
  name=${set%%:*} curves=${set#*:}
  for ia in $ias; do
    for seed in $seeds; do
      "$slaq" workload gen --curves "$curves" --jobs 160 \
        --mean-interarrival "$ia" --work 2000:20000 --max-cores 64 \
        --iters 100 --seed "$seed" >"$tmp/wl.jsonl"
      "$slaq" sim --workload "$tmp/wl.jsonl" --cores 640 --epoch 2 --unit 1 \
        --compare "$runs" --out "$tmp/run-$seed" --no-plots --quiet
    done
    echo "$name curves, mean inter-arrival $ia s (seeds: $seeds)"
    python3 - "$tmp" $seeds <<'PY'
import json, sys
tmp, seeds = sys.argv[1], sys.argv[2:]
rows = {}
for s in seeds:
    for r in json.load(open("%s/run-%s/summary.json" % (tmp, s))):
        rows.setdefault(r["policy"], []).append(
            (r["t90_mean_s"], r["avg_norm_loss"]))
mean = lambda v, i: sum(x[i] for x in v) / len(v)
ft, fl = mean(rows["fair"], 0), mean(rows["fair"], 1)
print("  %-16s %9s %8s %10s %9s" % ("run", "t90 (s)", "/ fair", "avg loss",
                                    "fair / it"))
for k, v in rows.items():
    t, l = mean(v, 0), mean(v, 1)
    print("  %-16s %9.1f %8.2f %10.4f %9.2f" % (k, t, t / ft, l, fl / l))
PY
  done
done
