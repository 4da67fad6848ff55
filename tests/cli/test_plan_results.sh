# test_plan_results.sh — scripts/plan-results.py (make plan-results) on a
# small run: every allocator in its tables, the targets judged, the raw
# figures kept, bad arguments refused.
. "$(dirname "$0")/lib.sh"

PR=scripts/plan-results.py
check_exit "plan-results --help" 0 python3 "$PR" --help
check_exit "plan-results: one seed of two sets at 10 s" 0 python3 "$PR" \
  --build "$SLAQ_BUILD" --seeds 1 --sets tuning,users --ias 10 \
  --out "$TMP/plan"
check "plan-results: the tables name every allocator and both sets" \
  python3 -c '
import sys
t = open(sys.argv[1]).read()
for p in ("fair", "slaq", "slaq:strawman", "slaq-plan", "slaq-index",
          "slaq-trend", "queue", "shortest-first", "oracle-greedy", "oracle-plan",
          "oracle-index"):
    assert "\n" + p + " " in t, p
assert "## tuning (tuning)" in t and "## users (held-out)" in t
# the targets are judged on the held-out set only
lines = [l for l in t.splitlines() if l.strip().startswith(("users ",
                                                            "tuning "))]
assert lines and all(l.split()[0] == "users" for l in lines), lines
assert all(l.rstrip().endswith(("met", "MISSED")) for l in lines), lines
' "$TMP/plan/targets.txt"
check "plan-results: summary.json keeps every run's figures" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
run = s["users"]["10.0"][0]
assert run["fair"]["t90_mean_s"] > 0
# the queue, each job to its end at 64 cores, is slower than fair here
assert run["queue"]["t90_mean_s"] > run["fair"]["t90_mean_s"], run
assert "torch-warmup" in run["slaq-index"]["t90_by_algorithm"], run
' "$TMP/plan/summary.json"
check_exit "plan-results: an unknown set is refused" 2 python3 "$PR" \
  --sets tuning,nope --out "$TMP/none"
check "plan-results: ... and nothing is written" test ! -e "$TMP/none"
finish
