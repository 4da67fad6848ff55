# test_tenants_results.sh — scripts/tenants-results.py (make
# tenants-results) on a small run: every run in its table, the targets
# judged on the held-out set, the shares giving every user its part.
. "$(dirname "$0")/lib.sh"

TR=scripts/tenants-results.py
check_exit "tenants-results --help" 0 python3 "$TR" --help
check_exit "tenants-results: one seed of one set at 4 s" 0 python3 "$TR" \
  --build "$SLAQ_BUILD" --seeds 1 --sets slaq-train --ias 4 \
  --out "$TMP/ten"
check "tenants-results: every run, the targets judged" python3 -c '
import sys
t = open(sys.argv[1]).read()
for r in ("slaq", "fair", "slaq+shares", "fair+shares", "queue+shares"):
    assert "\n" + r + " " in t, r
assert "slaq-train ia 4 s: Jain" in t, t
' "$TMP/ten/results.txt"
check "tenants-results: shares serve the light users better" python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))["slaq-train"]["4.0"]["agg"]
assert s["slaq+shares"]["jain"] > s["slaq"]["jain"], s
assert s["slaq+shares"]["jain"] > 0.95, s
' "$TMP/ten/summary.json"
check_exit "tenants-results: an unknown set is refused" 2 python3 "$TR" \
  --sets nope --out "$TMP/none"
check "tenants-results: ... and nothing is written" test ! -e "$TMP/none"
finish
