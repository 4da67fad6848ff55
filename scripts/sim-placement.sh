#!/usr/bin/env bash
# sim-placement.sh — how splitting the cores into nodes, and where new jobs
# are placed, change the standard simulated workload's results (seeds 1-5,
# 4 s and 10 s mean inter-arrival; docs/cluster.md, "Simulated placement").
#
# Usage: scripts/sim-placement.sh [BUILD_DIR]
#
# Every layout has 640 cores: one node of 640 (the single machine), 10
# nodes of 64 and 40 nodes of 16, each under least-loaded and gain
# placement. Prints, per layout and inter-arrival time, the mean over seeds
# of fair's and slaq's t90, average normalised loss and job completion time.
set -euo pipefail
build=${1:-build}
slaq="$build/bin/slaq"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
layouts=("1 640 least-loaded" "10 64 least-loaded" "10 64 gain"
         "40 16 least-loaded" "40 16 gain")
for ia in 4 10; do
  for seed in 1 2 3 4 5; do
    "$slaq" workload gen --curves tests/data/curves-dev.jsonl --jobs 160 \
      --mean-interarrival "$ia" --work 2000:20000 --max-cores 64 --iters 100 \
      --seed "$seed" >"$tmp/wl.jsonl"
    for l in "${layouts[@]}"; do
      read -r n c p <<<"$l"
      "$slaq" sim --workload "$tmp/wl.jsonl" --nodes "$n" --cores-per-node "$c" \
        --placement "$p" --epoch 2 --unit 1 --compare fair,slaq \
        --out "$tmp/$n-$c-$p-$ia-$seed" --no-plots --quiet >/dev/null
    done
  done
done
python3 - "$tmp" "${layouts[@]}" <<'PY'
import json, sys, os
tmp, layouts = sys.argv[1], sys.argv[2:]
print("| nodes x cores | placement | ia (s) | fair t90 | slaq t90 | "
      "fair loss | slaq loss | fair jct | slaq jct |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
for ia in (4, 10):
    for l in layouts:
        n, c, p = l.split()
        runs = [json.load(open(os.path.join(tmp, "%s-%s-%s-%d-%d" %
                (n, c, p, ia, s), "summary.json"))) for s in range(1, 6)]
        def mean(pol, key):
            v = [r[key] for run in runs for r in run if r["policy"] == pol]
            return sum(v) / len(v)
        print("| %s x %s | %s | %d | %.1f | %.1f | %.4f | %.4f | %.0f | %.0f |"
              % (n, c, p if n != "1" else "(one node)", ia,
                 mean("fair", "t90_mean_s"), mean("slaq", "t90_mean_s"),
                 mean("fair", "avg_norm_loss"), mean("slaq", "avg_norm_loss"),
                 mean("fair", "jct_mean_s"), mean("slaq", "jct_mean_s")))
PY
