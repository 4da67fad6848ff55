#!/usr/bin/env bash
# scaling.sh — per-iteration speed-up of slaq-train from 1 to 2 worker
# threads: the median wall time of an iteration with one thread divided by
# the median with two, for each algorithm named.
#
# Usage: tests/train/scaling.sh SLAQ_TRAIN [ALGO...] (default: logreg svm kmeans)
# Extra options for every run can be given in SCALING_OPTS.
set -euo pipefail
bin=${1:?usage: scaling.sh SLAQ_TRAIN [ALGO...]}
shift
algos=("$@")
[[ ${#algos[@]} -gt 0 ]] || algos=(logreg svm kmeans)
opts=${SCALING_OPTS:---iters 21}

median_wall() {  # median wall_s of iterations 2.. (the first warms caches)
  "$bin" "$1" $opts --threads "$2" |
    sed -n 's/^iter=\([0-9]*\) .*wall_s=\([0-9.]*\) .*/\1 \2/p' |
    awk '$1 >= 2 { print $2 }' | sort -g |
    awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

for a in "${algos[@]}"; do
  t1=$(median_wall "$a" 1)
  t2=$(median_wall "$a" 2)
  awk -v a="$a" -v t1="$t1" -v t2="$t2" \
    'BEGIN { printf "%s wall_s_1=%.4f wall_s_2=%.4f speedup=%.2f\n", a, t1, t2, t1 / t2 }'
done
