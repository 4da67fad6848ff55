#!/usr/bin/env bash
# test_first_iters.sh — every slaq-train algorithm learns from its first
# iterations at its default settings. slaq can only give cores to a job whose
# loss moves: a trainer whose loss sits flat at the start (as svm and svmpoly
# did, their first sub-gradient steps overshooting) looks converged and is
# starved. For each algorithm, eight iterations on its real data: the loss
# at iteration 8 is strictly below the loss at iteration 0, and for the
# convex objectives no three consecutive losses are equal.
#
# Only the data size is reduced (--subsample, --rows, --docs) where loading
# and eight iterations of the full set would take long; svm and svmpoly run
# on their full default data. About 20 CPU-seconds in all.
set -uo pipefail
source "$(dirname "$0")/../cli/lib.sh"
TRAIN="$SLAQ_BUILD/bin/slaq-train"

declare -A size=(
  [kmeans]="--subsample 0.1"
  [logreg]="--subsample 0.1"
  [svm]=""
  [svmpoly]=""
  [linreg]="--rows 20000"
  [mlpc]="--subsample 0.1"
  [gbt]="--subsample 0.02"
  [gbtreg]="--rows 20000"
  [lda]="--docs 3000"
)
# As in test_cli.sh: without apt package lists lda reads dpkg's status file.
if ! apt-cache dumpavail 2>/dev/null | grep -q '^Description:'; then
  size[lda]="--data /var/lib/dpkg/status"
fi
convex=" logreg svm svmpoly linreg gbt gbtreg "

losses() { sed -n 's/^iter=[0-9]* loss=\([^ ]*\).*/\1/p' "$1"; }

for a in kmeans logreg svm svmpoly linreg mlpc gbt gbtreg lda; do
  # shellcheck disable=SC2086
  check_exit "$a: eight iterations at its defaults" 0 "$TRAIN" "$a" ${size[$a]} --iters 8
  losses "$TMP/out" >"$TMP/$a.loss"
  check "$a: nine losses (iterations 0 to 8)" test "$(wc -l <"$TMP/$a.loss")" -eq 9
  check "$a: loss at iteration 8 below iteration 0 ($(head -n1 "$TMP/$a.loss") -> $(tail -n1 "$TMP/$a.loss"))" \
    awk 'NR == 1 { first = $1 } { last = $1 } END { exit !(NR == 9 && last < first) }' "$TMP/$a.loss"
  if [[ $convex == *" $a "* ]]; then
    check "$a: no three equal losses in a row" \
      awk 'NR > 2 && $1 == p1 && $1 == p2 { bad = 1 } { p2 = p1; p1 = $1 } END { exit bad }' "$TMP/$a.loss"
  fi
done

finish
