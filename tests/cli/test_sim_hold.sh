# test_sim_hold.sh — holding plateaued jobs (docs/libslaq.md, "Holding a
# plateaued job"): with more jobs than cores the minimum shares hold every
# core, and slaq without the hold allocates as fair; with it, slaq's mean
# t90 falls well below fair's on the tuning curves. Also: the setting is
# refused outside [0, 1] with the range named.
. "$(dirname "$0")/lib.sh"

"$SLAQ" workload gen --curves tests/data/curves-dev.jsonl --jobs 160 \
  --mean-interarrival 4 --work 2000:20000 --max-cores 64 --iters 100 \
  --seed 1 >"$TMP/wl.jsonl"
for h in 0 0.5; do
  check_exit "160 jobs on 32 cores, fair and slaq, hold $h" 0 "$SLAQ" sim \
    --workload "$TMP/wl.jsonl" --cores 32 --epoch 2 --unit 1 \
    --compare fair,slaq --hold "$h" --out "$TMP/h$h" --no-plots --quiet
done
ratio() {
  python3 -c '
import json, sys
r = {x["policy"]: x for x in json.load(open(sys.argv[1]))}
print("%.4f" % (r["slaq"]["t90_mean_s"] / r["fair"]["t90_mean_s"]))' "$1"
}
r0=$(ratio "$TMP/h0/summary.json")
r5=$(ratio "$TMP/h0.5/summary.json")
echo "# slaq/fair mean t90: hold 0 $r0, hold 0.5 $r5"
check "without the hold slaq allocates as fair here (t90 ratio $r0 in 0.98..1.02)" \
  python3 -c "import sys; sys.exit(not 0.98 <= $r0 <= 1.02)"
check "with hold 0.5 slaq's mean t90 is below 0.75x fair's ($r5)" \
  python3 -c "import sys; sys.exit(not $r5 < 0.75)"

check_exit "--hold 1.5 is refused" 2 "$SLAQ" sim --workload "$TMP/wl.jsonl" \
  --cores 32 --hold 1.5 --out "$TMP/bad" --quiet
check_grep "the refusal names the setting and its range" "hold.*(0 to 1|\[0, 1\])" "$TMP/err"
finish
