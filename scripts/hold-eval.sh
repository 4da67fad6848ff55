#!/bin/sh
# hold-eval.sh — when holding plateaued jobs pays (docs/libslaq.md,
# "Holding a plateaued job"): 160 jobs arriving 4 s apart on 32 cores, so
# that the minimum shares hold every core, under fair and under slaq at
# each hold H; slaq's mean t90, mean JCT and average normalised loss
# against fair's. Tuning curves (tests/data/curves-dev.jsonl, seeds 1-3)
# and held-out curves (data/curves/slaq-train.jsonl, seeds 11-13).
#
# usage: scripts/hold-eval.sh [BUILD] [H ...]     (default: build; 0 0.05 0.5)
set -e
build=${1:-build}
[ $# -gt 0 ] && shift
holds=${*:-0 0.05 0.5}
slaq=$build/bin/slaq
[ -x "$slaq" ] || { echo "hold-eval: $slaq not found: run make first" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '%-10s %-5s %5s %10s %10s %12s\n' curves seed H 't90/fair' 'JCT/fair' 'loss fair/slaq'
for set in dev:tests/data/curves-dev.jsonl:1,2,3 \
           held-out:data/curves/slaq-train.jsonl:11,12,13; do
  name=${set%%:*}; rest=${set#*:}; curves=${rest%%:*}; seeds=${rest#*:}
  for seed in $(echo "$seeds" | tr , ' '); do
    "$slaq" workload gen --curves "$curves" --jobs 160 --mean-interarrival 4 \
      --work 2000:20000 --max-cores 64 --iters 100 --seed "$seed" \
      >"$tmp/wl.jsonl"
    for h in $holds; do
      "$slaq" sim --workload "$tmp/wl.jsonl" --cores 32 --epoch 2 --unit 1 \
        --compare fair,slaq --hold "$h" --out "$tmp/run" --no-plots --quiet
      python3 - "$tmp/run/summary.json" "$name" "$seed" "$h" <<'PY'
import json, sys
r = {x["policy"]: x for x in json.load(open(sys.argv[1]))}
f, s = r["fair"], r["slaq"]
print("%-10s %-5s %5s %10.3f %10.3f %12.3f" % (
    sys.argv[2], sys.argv[3], sys.argv[4], s["t90_mean_s"] / f["t90_mean_s"],
    s["jct_mean_s"] / f["jct_mean_s"], f["avg_norm_loss"] / s["avg_norm_loss"]))
PY
      rm -rf "$tmp/run"
    done
  done
done
