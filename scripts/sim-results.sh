#!/usr/bin/env bash
# sim-results.sh — regenerate docs/results/ (the SLAQ paper's evaluation
# reproduced with `slaq sim`) and print the issue's target numbers.
#
# Usage: scripts/sim-results.sh [BUILD_DIR]      (or: make results)
#
# The standard workload: curves from tests/data/curves-dev.jsonl, 160 jobs,
# 640 cores, epoch 2 s, unit 1 core, --work 2000:20000 --max-cores 64
# --iters 100, seeds 1-5, mean inter-arrival 4 s and 10 s. Writes
#   docs/results/standard/     full report of seed 1 at 4 s (fair, slaq,
#                              oracle, plus the inter-arrival sweep: Fig. 9)
#   docs/results/runs/ia{4,10}-seed{1..5}.json   summary.json of each run
#   docs/results/scale/        4,000 jobs on 16,000 cores (Fig. 10c): the
#                              summary, fig10c-sched.svg, the wall time
#   docs/results/targets.txt   the table printed at the end
# Environment: CURVES (curve file), SEEDS, SCALE=0 to skip the scale run.
set -euo pipefail

build=${1:-build}
slaq="$build/bin/slaq"
curves=${CURVES:-tests/data/curves-dev.jsonl}
seeds=${SEEDS:-1 2 3 4 5}
out=docs/results
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() { # gen SEED MEAN_IA JOBS -> workload on stdout
  "$slaq" workload gen --curves "$curves" --jobs "$3" \
    --mean-interarrival "$2" --work 2000:20000 --max-cores 64 --iters 100 \
    --seed "$1"
}

mkdir -p "$out/runs"
for ia in 4 10; do
  for seed in $seeds; do
    gen "$seed" "$ia" 160 >"$tmp/wl.jsonl"
    echo "== mean inter-arrival $ia s, seed $seed" >&2
    "$slaq" sim --workload "$tmp/wl.jsonl" --cores 640 --epoch 2 --unit 1 \
      --compare fair,slaq,oracle --out "$tmp/run" --no-plots --quiet
    cp "$tmp/run/summary.json" "$out/runs/ia$ia-seed$seed.json"
  done
done

echo "== standard report (seed 1, 4 s, sweep)" >&2
first=${seeds%% *}
gen "$first" 4 160 >"$tmp/standard.jsonl"
"$slaq" sim --workload "$tmp/standard.jsonl" --cores 640 --epoch 2 --unit 1 \
  --compare fair,slaq,oracle --sweep-interarrival 2,4,6,8,10,15 \
  --out "$out/standard" --quiet

if [[ ${SCALE:-1} != 0 ]]; then
  echo "== scale: 4,000 jobs on 16,000 cores" >&2
  gen 1 0.25 4000 >"$tmp/scale.jsonl"
  start=$(date +%s.%N)
  "$slaq" sim --workload "$tmp/scale.jsonl" --cores 16000 --epoch 2 \
    --policy slaq --out "$tmp/scale" --quiet
  end=$(date +%s.%N)
  mkdir -p "$out/scale"
  cp "$tmp/scale/summary.json" "$tmp/scale/fig10c-sched.svg" "$out/scale/"
  python3 -c 'import sys; print("%.1f" % (float(sys.argv[2]) - float(sys.argv[1])))' \
    "$start" "$end" >"$out/scale/wall_s.txt"
fi

python3 - "$out" "$seeds" <<'EOF' | tee "$out/targets.txt"
import json, os, sys
out, seeds = sys.argv[1], sys.argv[2].split()
print("slaq sim: target numbers (scripts/sim-results.sh)")
print("standard workload: curves-dev, 160 jobs, 640 cores, epoch 2 s, "
      "unit 1, --work 2000:20000 --max-cores 64 --iters 100\n")
for ia, goal in ((4, 44), (10, 23)):
    print(f"mean inter-arrival {ia} s (target: slaq cuts t90 by >= {goal}% "
          f"vs fair" + (", avg loss by >= 1.73x" if ia == 4 else "") +
          "; slaq >= 80% of oracle's t90 gain)")
    print(f"{'seed':>5} {'t90 fair':>9} {'t90 slaq':>9} {'t90 orac':>9} "
          f"{'slaq cut':>9} {'orac cut':>9} {'slaq/orac':>9} "
          f"{'loss fair':>9} {'loss slaq':>9} {'factor':>7}")
    cols = []
    for seed in seeds:
        runs = {r["policy"]: r for r in
                json.load(open(f"{out}/runs/ia{ia}-seed{seed}.json"))}
        f, s, o = runs["fair"], runs["slaq"], runs["oracle"]
        cut = 100 * (1 - s["t90_mean_s"] / f["t90_mean_s"])
        ocut = 100 * (1 - o["t90_mean_s"] / f["t90_mean_s"])
        share = cut / ocut if ocut > 0 else float("nan")
        factor = f["avg_norm_loss"] / s["avg_norm_loss"]
        row = (f["t90_mean_s"], s["t90_mean_s"], o["t90_mean_s"], cut, ocut,
               share, f["avg_norm_loss"], s["avg_norm_loss"], factor)
        cols.append(row)
        print(f"{seed:>5} {row[0]:9.1f} {row[1]:9.1f} {row[2]:9.1f} "
              f"{row[3]:8.1f}% {row[4]:8.1f}% {row[5]:9.2f} {row[6]:9.4f} "
              f"{row[7]:9.4f} {row[8]:6.2f}x")
    m = [sum(c[i] for c in cols) / len(cols) for i in range(9)]
    print(f"{'mean':>5} {m[0]:9.1f} {m[1]:9.1f} {m[2]:9.1f} {m[3]:8.1f}% "
          f"{m[4]:8.1f}% {m[5]:9.2f} {m[6]:9.4f} {m[7]:9.4f} {m[8]:6.2f}x")
    print()
if os.path.exists(f"{out}/scale/summary.json"):
    s = json.load(open(f"{out}/scale/summary.json"))[0]
    wall = open(f"{out}/scale/wall_s.txt").read().strip()
    print(f"scale: {s['jobs']} jobs, 16000 cores, policy slaq: {wall} s wall "
          f"(target <= 60 s), {s['epochs']} epochs, sched_ms mean "
          f"{s['sched_ms']['mean']:.2f} p99 {s['sched_ms']['p99']:.2f} "
          f"max {s['sched_ms']['max']:.2f}")
EOF
