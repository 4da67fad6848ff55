#!/usr/bin/env bash
# curves.sh — record slaq's own library of real loss curves with slaq-train
# (`make curves`): every algorithm, a few seeds and settings, each run
# appended to one curve-format file (see docs/train.md and docs/formats.md).
#
# Usage: src/train/curves.sh SLAQ_TRAIN OUTDIR
# Writes OUTDIR/slaq-train.jsonl (OUTDIR/$CURVES_NAME when set) only when
# every run succeeded.
set -euo pipefail
bin=${1:?usage: curves.sh SLAQ_TRAIN OUTDIR}
out=${2:?usage: curves.sh SLAQ_TRAIN OUTDIR}
threads=${CURVES_THREADS:-2}
name=${CURVES_NAME:-slaq-train.jsonl}
case $name in */*|'') echo "curves.sh: CURVES_NAME is a file name, got '$name'" >&2; exit 2 ;; esac
mkdir -p "$out"
# mktemp(1) replaces the six X's of its template with a unique suffix.
tmp=$(mktemp "$out/.curves.XXXXXX")
trap 'rm -f "$tmp"' EXIT

runs=(
  "kmeans"
  "kmeans --k 20"
  "logreg"
  "logreg --lr 0.05"
  "logreg --classes 0,6 --lr 0.05"
  "svm"
  "svm --classes 7,9 --lr 0.1"
  "svmpoly"
  "svmpoly --degree 3 --basis 300"
  "linreg"
  "linreg --degree 1 --iters 30"
  "mlpc"
  "mlpc --hidden 32,16 --subsample 0.25"
  "gbt --lr 0.1 --depth 3"
  "gbt --classes 0,6"
  "gbtreg --lr 0.1 --depth 3"
  "gbtreg"
  "lda"
  "lda --k 20"
)
for seed in 1 2; do
  for r in "${runs[@]}"; do
    echo "curves: slaq-train $r --seed $seed" >&2
    # shellcheck disable=SC2086
    "$bin" $r --seed "$seed" --threads "$threads" --quiet --record "$tmp" >&2
  done
done
mv "$tmp" "$out/$name"
trap - EXIT
echo "curves: $(wc -l <"$out/$name") curves in $out/$name" >&2
