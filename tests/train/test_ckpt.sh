#!/usr/bin/env bash
# test_ckpt.sh — slaq-train's per-iteration metric on a validation split,
# and checkpoints: a run stopped at iteration k and resumed from its
# checkpoint continues from k (the same losses as an uninterrupted run for
# the gradient-descent algorithms; falling on from the saved loss for the
# L-BFGS ones), and a mismatched or damaged checkpoint is refused with an
# error naming what differs.
set -uo pipefail
source "$(dirname "$0")/../cli/lib.sh"
TRAIN="$SLAQ_BUILD/bin/slaq-train"

losses() { sed -n 's/^iter=\([0-9]*\) loss=\([^ ]*\).*/\1 \2/p' "$1"; }

# The metric: every iteration carries val_accuracy, a fraction of the
# held-out rows that rises as logreg learns.
check_exit "logreg with a validation split" 0 "$TRAIN" logreg --subsample 0.1 --iters 6 --validation 0.2
check "every iteration reports val_accuracy" \
  test "$(grep -c '^iter=[0-9]* .*val_accuracy=0\.[0-9]' "$TMP/out")" -eq 7
check "val_accuracy rises from iteration 0 to 6" awk '
  /^iter=0 / { sub(/.*val_accuracy=/, ""); a = $1 }
  /^iter=6 / { sub(/.*val_accuracy=/, ""); b = $1 }
  END { exit !(b > a + 0.1) }' "$TMP/out"
check_exit "--validation 0.95 is refused" 2 "$TRAIN" logreg --validation 0.95
check_grep "the error names --validation" "validation" "$TMP/err"
check_exit "--eval-every 0 measures only at the end" 0 "$TRAIN" logreg --subsample 0.05 --iters 3 --eval-every 0
check "no per-iteration metric with --eval-every 0" \
  test "$(grep -c 'accuracy=' "$TMP/out")" -eq 1

# Checkpoint at 5, resume to 10: the same curve as 10 straight.
for alg in logreg kmeans; do
  "$TRAIN" $alg --subsample 0.1 --iters 10 >"$TMP/full" 2>&1
  check_exit "$alg: 5 iterations with --checkpoint" 0 "$TRAIN" $alg --subsample 0.1 --iters 5 --checkpoint "$TMP/$alg.ckpt"
  check "$alg: the checkpoint exists" test -s "$TMP/$alg.ckpt"
  check_exit "$alg: --resume to 10 iterations" 0 "$TRAIN" $alg --subsample 0.1 --iters 10 --resume "$TMP/$alg.ckpt"
  check_grep "$alg: resumed at iteration 5" "^# resumed at iter=5 " "$TMP/out"
  check "$alg: the resumed run reports iterations 6 to 10 only" \
    test "$(losses "$TMP/out" | cut -d' ' -f1 | tr '\n' ' ')" = "6 7 8 9 10 "
  check "$alg: resumed losses equal the uninterrupted run's" awk '
    NR == FNR { a[$1] = $2; next }
    { d = $2 - a[$1]; if (d < 0) d = -d; if (d > 1e-9 * (a[$1] < 0 ? -a[$1] : a[$1]) + 1e-12) exit 1; n++ }
    END { exit n != 5 }' <(losses "$TMP/full") <(losses "$TMP/out")
done

# mlpc (L-BFGS): the loss goes on falling from the saved one, far below the
# loss of a fresh start.
"$TRAIN" mlpc --subsample 0.05 --hidden 16 --iters 8 --checkpoint "$TMP/m.ckpt" >"$TMP/m1" 2>&1
check_exit "mlpc: --resume" 0 "$TRAIN" mlpc --subsample 0.05 --hidden 16 --iters 12 --resume "$TMP/m.ckpt"
l0=$(losses "$TMP/m1" | awk '$1 == 0 { print $2 }')
l8=$(losses "$TMP/m1" | awk '$1 == 8 { print $2 }')
l9=$(losses "$TMP/out" | awk '$1 == 9 { print $2 }')
check "mlpc: iteration 9 ($l9) continues from 8 ($l8), not from 0 ($l0)" \
  awk -v a="$l0" -v b="$l8" -v c="$l9" 'BEGIN { exit !(c < b + 0.05 * (a - b) && c < a - 0.5 * (a - b)) }'
check_grep "done line says where it resumed" "^done iters=12 .*resumed_from=8" "$TMP/out"

# Refusals.
check_exit "resume with another model size is refused" 2 "$TRAIN" mlpc --subsample 0.05 --hidden 17 --resume "$TMP/m.ckpt"
check_grep "the error names the model options" "state values.*--hidden" "$TMP/err"
check_exit "resume with another algorithm is refused" 2 "$TRAIN" logreg --subsample 0.05 --resume "$TMP/m.ckpt"
check_grep "the error names both algorithms" "algorithm mlpc, this run is logreg" "$TMP/err"
head -c 1000 "$TMP/m.ckpt" >"$TMP/cut.ckpt"
check_exit "a truncated checkpoint is refused" 2 "$TRAIN" mlpc --subsample 0.05 --hidden 16 --resume "$TMP/cut.ckpt"
check_grep "the error says it is cut short" "cut short" "$TMP/err"
check_exit "gbt has no checkpoints" 2 "$TRAIN" gbt --checkpoint "$TMP/g.ckpt"
check_grep "the error says so" "not supported" "$TMP/err"

# SLAQ_CHECKPOINT_DIR: the file is named by the job id, written, and
# resumed from by the same command.
mkdir -p "$TMP/ckd"
SLAQ_CHECKPOINT_DIR="$TMP/ckd" SLAQ_JOB_ID=42 "$TRAIN" logreg --subsample 0.05 --iters 3 >"$TMP/o1" 2>&1
check "SLAQ_CHECKPOINT_DIR: job-42.ckpt written" test -s "$TMP/ckd/job-42.ckpt"
SLAQ_CHECKPOINT_DIR="$TMP/ckd" SLAQ_JOB_ID=42 "$TRAIN" logreg --subsample 0.05 --iters 5 >"$TMP/o2" 2>&1
check_grep "SLAQ_CHECKPOINT_DIR: the same command resumes at 3" "^# resumed at iter=3 " "$TMP/o2"
check_grep "... and runs on to 5" "^iter=5 " "$TMP/o2"

finish
