#!/usr/bin/env bash
# aqp.sh — slaq-aqp's speed: wall and CPU seconds of each query at 1 and
# 2 threads (data-parallel mini-batches), with its default bounds and with
# --bootstrap, on one generated TPC-H database. Prints a table.
#
# Usage: bench/aqp.sh SLAQ_AQP [SCALE_FACTOR (0.3)] [BATCHES (40)]
# Wants an otherwise idle machine: on a loaded one, wall times say little.
set -euo pipefail
if [[ $# -lt 1 || $1 == --help || $1 == -h ]]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -ge 1 ]] && exit 0 || exit 2
fi
aqp=$1 sf=${2:-0.3} batches=${3:-40}
work=$(mktemp -d "${TMPDIR:-/tmp}/aqp-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
"$aqp" gen --scale-factor "$sf" --out "$work/db.tpch" 2>/dev/null
printf '%-5s %-12s %7s %9s %9s %9s\n' query bounds threads wall_s cpu_s speedup
for q in q1 q3 q5 q6 q11 q14 q16 q17 q19; do
  for mode in default bootstrap; do
    flag=(); [[ $mode == bootstrap ]] && flag=(--bootstrap)
    w1=
    for t in 1 2; do
      t0=$(date +%s.%N)
      "$aqp" run --data "$work/db.tpch" --query $q --batches "$batches" \
        --threads $t "${flag[@]}" >/dev/null 2>"$work/err"
      t1=$(date +%s.%N)
      wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
      cpu=$(awk '/^mini-batch/ { for (i = 1; i < NF; i++) if ($i == "cpu") s += $(i + 1) } END { printf "%.3f", s }' "$work/err")
      [[ $t == 1 ]] && w1=$wall
      printf '%-5s %-12s %7d %9.3f %9s %9.2f\n' $q $mode $t "$wall" "$cpu" \
        "$(awk -v a="$w1" -v b="$wall" 'BEGIN { printf "%.2f", a / b }')"
    done
  done
done
