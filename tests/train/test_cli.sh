#!/usr/bin/env bash
# test_cli.sh — slaq-train end to end on real data: Fashion-MNIST from
# Debian's dataset-fashion-mnist, Debian's package descriptions, Friedman #1.
# Checks exit codes and error messages, that every algorithm's loss falls
# and is recorded in the curve format, and the accuracy targets of logreg
# (>= 0.80) and mlpc (>= 0.83) on the Fashion-MNIST test set.
set -uo pipefail
source "$(dirname "$0")/../cli/lib.sh"
TRAIN="$SLAQ_BUILD/bin/slaq-train"

# The loss column of a run's progress lines, one per line.
losses() { sed -n 's/^iter=[0-9]* loss=\([^ ]*\).*/\1/p' "$1"; }

# falls FILE TOL: every loss is at most the previous one plus TOL times the
# first, and the last is below the first.
falls() {
  losses "$1" | awk -v tol="$2" '
    NR == 1 { first = $1 }
    NR > 1 && $1 > prev + tol * (first < 0 ? -first : first) { bad = 1 }
    { prev = $1 } END { exit (bad || NR < 2 || prev >= first) }'
}

# metric FILE NAME: the value of NAME= on the "done" line.
metric() { sed -n "s/^done .*$2=\([0-9.]*\).*/\1/p" "$1"; }

check_exit "--list names nine algorithms" 0 "$TRAIN" --list
check "--list output has nine lines" test "$(wc -l <"$TMP/out")" -eq 9
check_exit "unknown algorithm is a usage error" 2 "$TRAIN" nosuch
check_exit "bad --iters value is a usage error" 2 "$TRAIN" logreg --iters x
check_exit "missing data file is an input error" 2 "$TRAIN" logreg --data "$TMP/none.csv"
check_grep "missing file is named" "none.csv: cannot open" "$TMP/err"

printf '1,2,0\n2,1,1\n3\n' >"$TMP/ragged.csv"
check_exit "ragged CSV is an input error" 2 "$TRAIN" logreg --data "$TMP/ragged.csv"
check_grep "ragged CSV error names the line" "ragged.csv: line 3" "$TMP/err"

# A user's CSV and LIBSVM files: two separable classes.
awk 'BEGIN { srand(3); for (i = 0; i < 400; i++) { c = i % 2;
  printf "%.4f,%.4f,%.4f,%d\n", c + rand(), rand(), 2 * c - rand(), c } }' \
  >"$TMP/user.csv"
check_exit "logreg trains on a CSV file" 0 "$TRAIN" logreg --data "$TMP/user.csv" --iters 20
check "logreg on CSV: loss falls" falls "$TMP/out" 0
awk -F, '{ printf "%s 1:%s 2:%s 3:%s\n", $4 ? "+1" : "-1", $1, $2, $3 }' "$TMP/user.csv" >"$TMP/user.svm"
check_exit "svm trains on a LIBSVM file" 0 "$TRAIN" svm --data "$TMP/user.svm" --iters 20
check "svm on LIBSVM: loss falls (momentum: rises below 2% of the first)" falls "$TMP/out" 0.02

# Out of memory while loading is the loader's error, naming what it was
# making, not a crash: 10^8 Friedman rows (8 GB) under a 1 GB address-space
# limit. (AddressSanitizer builds reserve far more than that: skipped.)
if ldd "$TRAIN" 2>/dev/null | grep -q libasan; then
  ok "out of memory while loading is an input error naming the rows # SKIP ASan build"
else
  check_exit "out of memory while loading is an input error" 2 \
    env OPENBLAS_NUM_THREADS=1 bash -c 'ulimit -v 1000000 && exec "$@"' - \
    "$TRAIN" linreg --rows 100000000 --iters 2
  check_grep "out of memory names the rows being made" \
    "^slaq-train: friedman1: out of memory for 100000000 rows of 10 features$" "$TMP/err"
fi

# Every algorithm, small and quick, recorded into one curve file.
rec="$TMP/curves.jsonl"
declare -A small=(
  [kmeans]="--subsample 0.1 --iters 10"
  [logreg]="--subsample 0.1 --iters 10"
  [svm]="--subsample 0.1 --iters 10"
  [svmpoly]="--subsample 0.05 --basis 200 --iters 10"
  [linreg]="--rows 20000 --iters 15"
  [mlpc]="--subsample 0.05 --hidden 32 --iters 15"
  [gbt]="--subsample 0.02 --iters 8 --depth 4"
  [gbtreg]="--rows 20000 --iters 15"
  [lda]="--docs 3000 --iters 8"
)
# Without package lists (a machine that never ran apt-get update) there is
# no dumpavail corpus; dpkg's status file has the same format and the long
# descriptions of the installed packages.
if ! apt-cache dumpavail 2>/dev/null | grep -q '^Description:'; then
  echo "# no apt package lists: lda reads /var/lib/dpkg/status"
  small[lda]="--data /var/lib/dpkg/status --iters 8"
fi
for a in kmeans logreg svm svmpoly linreg mlpc gbt gbtreg lda; do
  # shellcheck disable=SC2086
  check_exit "$a runs on its real data" 0 "$TRAIN" "$a" ${small[$a]} --threads 2 --record "$rec"
  # Rounding may move the last digits once an algorithm has converged; the
  # SVMs' momentum may lift the objective a little (docs/train.md).
  tol=1e-12; [[ $a == lda ]] && tol=1e-4; [[ $a == svm* ]] && tol=0.02
  check "$a: loss falls (rises at most $tol of the first)" falls "$TMP/out" "$tol"
done
check "the record has one line per run" test "$(wc -l <"$rec")" -eq 9
check_grep "records carry the curve fields" \
  '^{"name": *"kmeans-fmnist-k10-s0", *"algorithm": *"kmeans", *"convergence": *"sublinear"' "$rec"
check "every record has loss, iter_cpu_s and data_size" \
  test "$(grep -c '"loss": *\[.*"iter_cpu_s": *\[' "$rec")" -eq 9 -a "$(grep -c '"data_size": *[0-9]' "$rec")" -eq 9

# slaq's side: without slaqd (SLAQ_SOCKET set or not) the allocation is
# --threads and the run is the same.
"$TRAIN" kmeans --subsample 0.05 --iters 5 >"$TMP/a" 2>/dev/null
SLAQ_SOCKET="$TMP/no.sock" "$TRAIN" kmeans --subsample 0.05 --iters 5 >"$TMP/b" 2>/dev/null
check "SLAQ_SOCKET without slaqd trains the same curve" cmp -s <(losses "$TMP/a") <(losses "$TMP/b")

check_exit "--target-reduction stops kmeans early" 0 "$TRAIN" kmeans --subsample 0.1 --iters 200 --target-reduction 0.99
check_grep "the stop reason is the target" "^done .*stop=target-reduction" "$TMP/out"

# --scale 2: virtual copies, so twice the samples and the same loss curve.
"$TRAIN" logreg --subsample 0.05 --iters 3 >"$TMP/s1"
"$TRAIN" logreg --subsample 0.05 --iters 3 --scale 2 >"$TMP/s2"
check "--scale 2 doubles the samples per iteration" \
  test "$(sed -n 's/^iter=1 .*samples=\([0-9]*\).*/\1/p' "$TMP/s2")" -eq \
       $((2 * $(sed -n 's/^iter=1 .*samples=\([0-9]*\).*/\1/p' "$TMP/s1")))
check "--scale 2 keeps the loss curve" awk 'NR == FNR { a[FNR] = $1; next }
  { d = $1 - a[FNR]; if (d < 0) d = -d; if (d > 1e-9) exit 1 }' <(losses "$TMP/s1") <(losses "$TMP/s2")

# The accuracy targets on the Fashion-MNIST test set.
check_exit "logreg on half of Fashion-MNIST" 0 "$TRAIN" logreg --subsample 0.5 --iters 100 --threads 2
acc=$(metric "$TMP/out" accuracy)
check "logreg test accuracy $acc >= 0.80" awk -v a="$acc" 'BEGIN { exit !(a >= 0.80) }'
check_exit "mlpc on a quarter of Fashion-MNIST" 0 "$TRAIN" mlpc --subsample 0.25 --iters 100 --threads 2
acc=$(metric "$TMP/out" accuracy)
check "mlpc test accuracy $acc >= 0.83" awk -v a="$acc" 'BEGIN { exit !(a >= 0.83) }'
check "mlpc loss falls monotonically" falls "$TMP/out" 0

finish
