#!/usr/bin/env bash
# test_eval_every.sh — slaq-train --eval-every N appends the held-out metric
# to every N-th iteration line (and to iteration 0's, the untrained
# model, the start of a sweep's learning curve), for a gradient-descent trainer (logreg) and
# an L-BFGS one (mlpc, whose model must be copied out of the optimiser to be
# evaluated mid-run: a stale copy would show the same accuracy every time).
set -uo pipefail
source "$(dirname "$0")/../cli/lib.sh"
TRAIN="$SLAQ_BUILD/bin/slaq-train"

"$TRAIN" logreg --subsample 0.02 --iters 4 --threads 1 --eval-every 2 >"$TMP/lr.txt"
check "logreg: accuracy on iterations 0, 2 and 4 only" \
  test "$(grep -c 'accuracy=' "$TMP/lr.txt")" -eq 4   # 0, 2, 4 and the done line
check_grep "logreg: iteration 2 has it" '^iter=2 .* accuracy=0\.[0-9]+$' "$TMP/lr.txt"
check "logreg: iteration 3 has not" bash -c "! grep -q '^iter=3 .*accuracy' '$TMP/lr.txt'"

"$TRAIN" mlpc --subsample 0.02 --iters 6 --threads 1 --hidden 16 --eval-every 1 >"$TMP/mlp.txt"
check "mlpc: seven per-iteration accuracies (0 to 6) that change as it learns" bash -c "
  grep -oE '^iter=[0-9]+ .*accuracy=[0-9.]+' '$TMP/mlp.txt' | grep -oE 'accuracy=[0-9.]+' |
  sort -u | wc -l | grep -qE '^[4-7]$'"
last=$(grep '^iter=6 ' "$TMP/mlp.txt" | grep -oE 'accuracy=[0-9.]+' | cut -d= -f2)
done_acc=$(grep '^done ' "$TMP/mlp.txt" | grep -oE 'accuracy=[0-9.]+' | cut -d= -f2)
check "mlpc: the last iteration's accuracy is the done line's" \
  /usr/bin/python3 -c "import sys; assert abs(float('$last') - float('$done_acc')) < 1e-4"
check_exit "bad --eval-every" 2 "$TRAIN" logreg --eval-every -1
finish
