#!/usr/bin/env bash
# aqp-traces.sh — record every slaq-aqp query's mini-batch trace.
#
# Usage: scripts/aqp-traces.sh SLAQ_AQP OUT_DIR
#
# Generates TPC-H databases at scale factors 0.1, 0.3 and 1 (seed 1) under
# $TMPDIR and runs Q1, Q6, Q14, Q17 and Q19 (by default) on each at one
# thread, twice:
# in 40 mini-batches into OUT_DIR/traces.jsonl (names like q6-sf0.3) and
# in 100 into OUT_DIR/traces-b100.jsonl (q6-sf0.3-b100); 15 runs per file,
# format in docs/aqp.md "Trace format". The databases are removed
# afterwards. SCALE_FACTORS="0.1 0.3", BATCH_COUNTS="40" and QUERIES="q1
# q3 q5 q6 q11 q16 q19" (the thesis's seven, make aqp-thesis-traces)
# override the defaults.
set -euo pipefail

if [[ $# -ne 2 || $1 == --help || $1 == -h ]]; then
  sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
  [[ $# -eq 2 ]] && exit 0 || exit 2
fi
aqp=$1 out=$2
sfs=${SCALE_FACTORS:-0.1 0.3 1}
counts=${BATCH_COUNTS:-40 100}
queries=${QUERIES:-q1 q6 q14 q17 q19}

mkdir -p "$out"
work=$(mktemp -d "${TMPDIR:-/tmp}/aqp-traces.XXXXXX")
trap 'rm -rf "$work"' EXIT
start=$SECONDS
for sf in $sfs; do
  data="$work/sf$sf.tpch"
  "$aqp" gen --scale-factor "$sf" --seed 1 --out "$data"
  for b in $counts; do
    file=traces.jsonl suffix=
    [[ $b == 40 ]] || { file=traces-b$b.jsonl suffix=-b$b; }
    for q in $queries; do
      t0=$SECONDS
      "$aqp" run --quiet --data "$data" --query "$q" --batches "$b" \
        --threads 1 --trace "$work/$file" --name "$q-sf$sf$suffix" >/dev/null
      echo "aqp-traces: $q at scale factor $sf: $b mini-batches ($((SECONDS - t0)) s)"
    done
  done
  rm -f "$data"
done
for f in "$work"/*.jsonl; do
  mv "$f" "$out/"
  echo "aqp-traces: $(wc -l <"$out/${f##*/}") traces in $out/${f##*/}"
done
echo "aqp-traces: done in $((SECONDS - start)) s"
