#!/usr/bin/env bash
# test_diverged.sh — a loss or metric that is not finite ends a slaq-train
# run with stop=diverged, exit status 1 and the reason on stderr, whether it
# is so from the start (features of ±1e308), only in the metric (a test set
# of such features) or only in the final evaluation; never "converged".
set -uo pipefail
source "$(dirname "$0")/../cli/lib.sh"
TRAIN="$SLAQ_BUILD/bin/slaq-train"

python3 - "$TMP" <<'PY'
import random, sys
d = sys.argv[1]
r = random.Random(2)
with open(d + "/huge.csv", "w") as f:
    for _ in range(200):
        f.write("%g,%g,%g\n" % (r.uniform(-1, 1), r.choice([1e308, -1e308]),
                                r.choice([1e308, -1e308])))
with open(d + "/ok.csv", "w") as f:
    for _ in range(200):
        a, b = r.uniform(-1, 1), r.uniform(-1, 1)
        f.write("%g,%g,%g\n" % (3 * a - b + r.gauss(0, 0.1), a, b))
PY

for std in "" --no-standardize; do
  check_exit "linreg on features of 1e308 ${std:-standardized}: exit 1" 1 \
    "$TRAIN" linreg --data "$TMP/huge.csv" --format csv --label-col 1 \
    --iters 5 $std
  check_grep "... stop=diverged" "^done iters=0 stop=diverged loss=-?nan" \
    "$TMP/out"
  check "... never converged" bash -c "! grep -q converged '$TMP/out'"
  check_grep "... says why" \
    "slaq-train: .*: diverged: the loss is -?nan at iteration 0" "$TMP/err"
done

check_exit "linreg, a test set of 1e308: exit 1" 1 "$TRAIN" linreg \
  --data "$TMP/ok.csv" --test "$TMP/huge.csv" --format csv --label-col 1 \
  --iters 5
check_grep "... says the metric" \
  "diverged: the metric test_rmse is -?nan at iteration 0" "$TMP/err"
check_exit "linreg, the metric only at the end: exit 1" 1 "$TRAIN" linreg \
  --data "$TMP/ok.csv" --test "$TMP/huge.csv" --format csv --label-col 1 \
  --iters 5 --eval-every 0
check_grep "... stop=diverged after training" \
  "^done iters=5 stop=diverged .*test_rmse=-?nan" "$TMP/out"
check_grep "... says the metric at the end" \
  "diverged: the metric test_rmse is -?nan at the end" "$TMP/err"
check_exit "svm with --lr 1e6 diverges on the way: exit 1" 1 "$TRAIN" svm \
  --data "$TMP/ok.csv" --format csv --label-col 1 --lr 1e6 --iters 200
check_grep "... at the iteration it did" \
  "diverged: the loss is inf at iteration [0-9]+" "$TMP/err"
check_exit "linreg on finite data still ends 0" 0 "$TRAIN" linreg \
  --data "$TMP/ok.csv" --format csv --label-col 1 --iters 5
check_grep "... with stop=iters" "^done iters=5 stop=iters" "$TMP/out"

finish
