#!/usr/bin/env bash
# scaling.sh — per-iteration speed-up of slaq-train from 1 to 2 worker
# threads, for each algorithm named: wall time of an iteration with one
# thread divided by that with two. Two estimates: the medians, and the
# fastest iterations (the least disturbed when other processes share the
# machine; compare ratios of one kind only).
#
# Usage: tests/train/scaling.sh SLAQ_TRAIN [ALGO...] (default: logreg svm kmeans)
# Options for every run can be given in SCALING_OPTS (default --iters 21).
set -euo pipefail
bin=${1:?usage: scaling.sh SLAQ_TRAIN [ALGO...]}
shift
algos=("$@")
[[ ${#algos[@]} -gt 0 ]] || algos=(logreg svm kmeans)
opts=${SCALING_OPTS:---iters 21}

# "median min" of the wall times of iterations 2.. (the first warms caches).
walls() {
  # shellcheck disable=SC2086
  "$bin" "$1" $opts --threads "$2" |
    sed -n 's/^iter=\([0-9]*\) .*wall_s=\([0-9.]*\) .*/\1 \2/p' |
    awk '$1 >= 2 { print $2 }' | sort -g |
    awk '{ v[NR] = $1 } END {
      m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
      print m, v[1] }'
}

for a in "${algos[@]}"; do
  read -r m1 f1 < <(walls "$a" 1)
  read -r m2 f2 < <(walls "$a" 2)
  awk -v a="$a" -v m1="$m1" -v m2="$m2" -v f1="$f1" -v f2="$f2" 'BEGIN {
    printf "%s median_wall_s_1=%.4f median_wall_s_2=%.4f speedup_median=%.2f", a, m1, m2, m1 / m2
    printf " min_wall_s_1=%.4f min_wall_s_2=%.4f speedup_min=%.2f\n", f1, f2, f1 / f2 }'
done
