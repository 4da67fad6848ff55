#!/usr/bin/env bash
# mlfs-results.sh — regenerate docs/results/mlfs/: jobs with deadlines,
# required accuracy and urgency (MLFS's setting, docs/deadlines.md) under
# fair, slaq, edf, tiresias, mlfs-h, mlfs-rl and mlfs (MLF-RL + MLF-C,
# the paper's MLFS; both with the network of data/models/mlfs-rl.model),
# with `slaq sim --deadlines`.
#
# Usage: scripts/mlfs-results.sh [BUILD_DIR]      (or: make mlfs-results)
#
# Writes (summary.csv and jct_cdf.csv of each run)
#   docs/results/mlfs/generated/seed{1..5}/   the generated Philly-style
#       workload, 2,000 jobs on 20 nodes x 32 cores, seeds 1-5
#   docs/results/mlfs/components/NAME/seed{1..5}/   the component studies
#       on the same workloads: urgency and deadline terms off, moves off,
#       load control off, and mlfs with required accuracies nearer the
#       final ones (U[0.9, 0.99] of the loss reduction)
#   docs/results/mlfs/traces/cluster02-w{0..4}/   the real trace
#       (cluster02 of microsoft/elasticflow-traces, read from ../shared,
#       never copied), five windows of 1,000 jobs, reported once with the
#       parameters chosen on the generated workload
#   docs/results/mlfs/README.md   the tables, each with the command that
#       made it, and the targets
# Environment: SEEDS, TRACE (the trace file; the traces part is skipped
# when it is absent).
set -euo pipefail

build=${1:-build}
slaq="$build/bin/slaq"
curves=data/curves/slaq-train.jsonl
seeds=${SEEDS:-1 2 3 4 5}
trace=${TRACE:-../shared/data/traces/dl-deadlines/cluster02.csv}
out=docs/results/mlfs
rm -rf "$out"
mkdir -p "$out"

model=data/models/mlfs-rl.model
gen_cmd="$slaq sim --deadlines --curves $curves --generate 2000 --nodes 20 --cores-per-node 32 --load 3 --deadline-scale 0.5 --model $model"
for s in $seeds; do
  echo "generated, seed $s" >&2
  mkdir -p "$out/generated"
  $gen_cmd --seed "$s" --out "$out/generated/seed$s" >"$out/generated-seed$s.txt"
done

components=("no-urgency:--no-urgency:mlfs-h"
            "no-deadline-term:--no-deadline-term:mlfs-h"
            "no-moves:--no-moves:mlfs-h"
            "no-load-control:--no-load-control:mlfs"
            "accuracy-0.9-0.99:--accuracy-range 0.9\\:0.99:mlfs")
for c in "${components[@]}"; do
  IFS=: read -r name flag pol <<<"${c//\\:/;}"
  flag=${flag//;/:}
  for s in $seeds; do
    echo "component $name, seed $s" >&2
    mkdir -p "$out/components/$name"
    $gen_cmd --seed "$s" --policies "$pol" $flag \
      --out "$out/components/$name/seed$s" >/dev/null
  done
done

trace_cmd="$slaq sim --deadlines --curves $curves --trace $trace --nodes 20 --cores-per-node 32 --load 3 --model $model"
if [[ -r $trace ]]; then
  for w in 0 1 2 3 4; do
    echo "trace window $w" >&2
    mkdir -p "$out/traces"
    $trace_cmd --window "$((w * 1000)):1000" --seed 1 \
      --out "$out/traces/cluster02-w$w" >"$out/trace-w$w.txt"
  done
else
  echo "mlfs-results: $trace is absent; the traces part is skipped" >&2
fi

# Every job's row (jobs.csv) is for a reader's own runs: megabytes here,
# and derived line by line from the trace, which stays where it is.
find "$out" -name jobs.csv -delete
train_cmd=$(sed -n 's/^# made by: //p' "$model")
python3 scripts/mlfs_report.py "$out" "$gen_cmd --seed S" "$trace_cmd --window W:1000 --seed 1" "$train_cmd" \
  >"$out/README.md"
cat "$out/README.md"
