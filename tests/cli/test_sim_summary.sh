# test_sim_summary.sh — `slaq sim` ends with the headline numbers of each
# policy and the report's path, agreeing with summary.json; --quiet
# prints nothing.
. "$(dirname "$0")/lib.sh"

"$SLAQ" workload gen --curves tests/data/sim-curves.jsonl --jobs 8 \
  --mean-interarrival 3 --work 100:400 --iters 20 --seed 3 >"$TMP/wl.jsonl"
"$SLAQ" sim --workload "$TMP/wl.jsonl" --cores 8 --compare fair,slaq \
  --out "$TMP/rep" --no-plots >"$TMP/out" 2>"$TMP/err"
check "slaq sim exits 0" test $? -eq 0
check_grep "a header names the columns" "^policy +jobs +avg loss +t90 \(s\) +t95 \(s\)" "$TMP/out"
check_grep "one line for fair" "^fair +8 " "$TMP/out"
check_grep "one line for slaq" "^slaq +8 " "$TMP/out"
check_grep "the last line is the report's path" "^report: $TMP/rep/report.html$" "$TMP/out"
check "the report exists where it says" test -s "$TMP/rep/report.html"
check "the printed numbers are summary.json's" python3 - "$TMP/out" "$TMP/rep/summary.json" <<'PY'
import json, sys
lines = {l.split()[0]: l.split() for l in open(sys.argv[1]) if l[:4] in ("fair", "slaq")}
for s in json.load(open(sys.argv[2])):
    row = lines[s["policy"]]
    assert abs(float(row[2]) - s["avg_norm_loss"]) < 6e-4, (row, s)
    assert abs(float(row[3]) - s["t90_mean_s"]) < 0.06, (row, s)
    assert abs(float(row[4]) - s["t95_mean_s"]) < 0.06, (row, s)
PY
"$SLAQ" sim --workload "$TMP/wl.jsonl" --cores 8 --out "$TMP/q" --no-plots \
  --quiet >"$TMP/qout" 2>&1
check "slaq sim --quiet exits 0" test $? -eq 0
check "slaq sim --quiet prints nothing" test ! -s "$TMP/qout"
finish
