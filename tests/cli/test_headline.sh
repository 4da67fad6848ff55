# test_headline.sh — the headline result holds: on the standard workload
# (docs/sim.md, "Reproducing the paper"), slaq with the default predictor
# cuts the mean time to 90% loss reduction and the average normalised loss
# against fair by at least the targets of docs/results/targets.txt. One
# seed at mean inter-arrival 4 s (the full table is `make results`); a
# change that makes slaq no better than fair fails here. The same workload
# built from the held-out curves (data/curves/slaq-train.jsonl, never used
# to choose a default) must keep slaq's mean t90 below fair's, the guard
# targets.txt states for them.
. "$(dirname "$0")/lib.sh"

TARGETS=docs/results/targets.txt
# The targets' own line: "... slaq cuts t90 by >= 44% vs fair, avg loss by
# >= 1.73x ...".
line=$(grep -m1 '^mean inter-arrival 4 s (target:' "$TARGETS")
cut=$(sed -nE 's/.*cuts t90 by >= ([0-9.]+)%.*/\1/p' <<<"$line")
factor=$(sed -nE 's/.*avg loss by >= ([0-9.]+)x.*/\1/p' <<<"$line")
check "targets.txt states the t90 cut and loss factor" \
  test -n "$cut" -a -n "$factor"

"$SLAQ" workload gen --curves tests/data/curves-dev.jsonl --jobs 160 \
  --mean-interarrival 4 --work 2000:20000 --max-cores 64 --iters 100 \
  --seed 1 >"$TMP/wl.jsonl"
check_exit "standard workload, seed 1, under fair and slaq" 0 "$SLAQ" sim \
  --workload "$TMP/wl.jsonl" --cores 640 --epoch 2 --unit 1 \
  --compare fair,slaq --out "$TMP/run" --no-plots --quiet
check "slaq cuts t90 by >= ${cut}% and avg loss by >= ${factor}x vs fair" \
  python3 - "$TMP/run/summary.json" "$cut" "$factor" <<'PY'
import json, sys
runs = {r["policy"]: r for r in json.load(open(sys.argv[1]))}
want_cut, want_factor = float(sys.argv[2]), float(sys.argv[3])
f, s = runs["fair"], runs["slaq"]
cut = 100 * (1 - s["t90_mean_s"] / f["t90_mean_s"])
factor = f["avg_norm_loss"] / s["avg_norm_loss"]
print("# t90 fair %.1f s, slaq %.1f s: cut %.1f%% (target >= %g%%); "
      "avg loss fair %.4f, slaq %.4f: %.2fx (target >= %gx)"
      % (f["t90_mean_s"], s["t90_mean_s"], cut, want_cut,
         f["avg_norm_loss"], s["avg_norm_loss"], factor, want_factor))
sys.exit(0 if cut >= want_cut and factor >= want_factor else 1)
PY

check "targets.txt states the held-out guard" \
  grep -q "^held out, mean inter-arrival 4 s (guard: slaq's mean t90 below fair's)" "$TARGETS"
"$SLAQ" workload gen --curves data/curves/slaq-train.jsonl --jobs 160 \
  --mean-interarrival 4 --work 2000:20000 --max-cores 64 --iters 100 \
  --seed 1 >"$TMP/held.jsonl"
check_exit "held-out workload, seed 1, under fair and slaq" 0 "$SLAQ" sim \
  --workload "$TMP/held.jsonl" --cores 640 --epoch 2 --unit 1 \
  --compare fair,slaq --out "$TMP/held" --no-plots --quiet
check "held out: slaq's mean t90 is below fair's" \
  python3 - "$TMP/held/summary.json" <<'PY'
import json, sys
runs = {r["policy"]: r for r in json.load(open(sys.argv[1]))}
f, s = runs["fair"]["t90_mean_s"], runs["slaq"]["t90_mean_s"]
print("# held out: t90 fair %.1f s, slaq %.1f s" % (f, s))
sys.exit(0 if s < f else 1)
PY
finish
