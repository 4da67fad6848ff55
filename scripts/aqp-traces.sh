#!/usr/bin/env bash
# aqp-traces.sh — record every slaq-aqp query's mini-batch trace.
#
# Usage: scripts/aqp-traces.sh SLAQ_AQP OUT_DIR
#
# Generates TPC-H databases at scale factors 0.1, 0.3 and 1 (seed 1) under
# $TMPDIR, runs Q1, Q6, Q14, Q17 and Q19 on each in 40 mini-batches at one
# thread, and writes OUT_DIR/traces.jsonl (docs/aqp.md "Trace format"),
# one line per run, 15 runs. The databases are removed afterwards.
# SCALE_FACTORS="0.1 0.3" and BATCHES=N override the defaults.
set -euo pipefail

if [[ $# -ne 2 || $1 == --help || $1 == -h ]]; then
  sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -eq 2 ]] && exit 0 || exit 2
fi
aqp=$1 out=$2
sfs=${SCALE_FACTORS:-0.1 0.3 1}
batches=${BATCHES:-40}
queries="q1 q6 q14 q17 q19"

mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/aqp-traces.XXXXXX")
trap 'rm -rf "$work"' EXIT
trace="$work/traces.jsonl"
start=$SECONDS
for sf in $sfs; do
  data="$work/sf$sf.tpch"
  "$aqp" gen --scale-factor "$sf" --seed 1 --out "$data"
  for q in $queries; do
    t0=$SECONDS
    "$aqp" run --quiet --data "$data" --query "$q" --batches "$batches" \
      --threads 1 --trace "$trace" --name "$q-sf$sf" >/dev/null
    echo "aqp-traces: $q at scale factor $sf: $batches mini-batches ($((SECONDS - t0)) s)"
  done
  rm -f "$data"
done
mv "$trace" "$out/traces.jsonl"
echo "aqp-traces: $(wc -l <"$out/traces.jsonl") traces in $out/traces.jsonl ($((SECONDS - start)) s)"
