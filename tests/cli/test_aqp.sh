# test_aqp.sh — slaq-aqp from the command line: --help and errors, gen,
# run's per-mini-batch lines, its trace line (docs/aqp.md), and its exact
# answer against SQLite (Python's sqlite3) running `slaq-aqp sql` on the
# `slaq-aqp export` of the same data.
. "$(dirname "$0")/lib.sh"
AQP="$SLAQ_BUILD/bin/slaq-aqp"
PY=/usr/bin/python3

check_exit "slaq-aqp --help exits 0" 0 "$AQP" --help
check_grep "--help names the commands" "gen --scale-factor" "$TMP/out"
check_exit "slaq-aqp --version exits 0" 0 "$AQP" --version
check_grep "--version prints the version" "^slaq-aqp [0-9]" "$TMP/out"
check_exit "no command is a usage error" 2 "$AQP"
check_exit "an unknown command is a usage error" 2 "$AQP" frobnicate
check_grep "... that names it" "unknown command 'frobnicate'" "$TMP/err"
check_exit "gen without --out is a usage error" 2 "$AQP" gen --scale-factor 0.01
check_exit "gen with a bad scale factor" 2 "$AQP" gen --scale-factor abc --out x
check_grep "... says what was expected" "expected a number in \(0, 10\]" "$TMP/err"

D="$TMP/db.tpch"
check_exit "gen writes a database" 0 "$AQP" gen --scale-factor 0.01 --seed 3 --out "$D"
check_grep "gen says how many rows" "lineitem rows" "$TMP/err"
"$AQP" gen --scale-factor 0.01 --seed 3 --out "$TMP/again.tpch" 2>/dev/null
check "the same seed gives the same file" cmp -s "$D" "$TMP/again.tpch"

check_exit "run without --query is a usage error" 2 "$AQP" run --data "$D"
check_exit "run of an unknown query" 2 "$AQP" run --data "$D" --query q99
check_grep "... names it and the choices" "unknown query 'q99' \(expected q1" "$TMP/err"
check_exit "run on a missing file fails" 1 "$AQP" run --data "$TMP/none" --query q6
check_grep "... saying why" "cannot open" "$TMP/err"
printf 'not a database' >"$TMP/bad.tpch"
check_exit "run on a file that is not a database fails" 1 "$AQP" run --data "$TMP/bad.tpch" --query q6
check_grep "... saying so" "not a slaq-aqp data file" "$TMP/err"
check_exit "an unknown progress column" 2 "$AQP" run --data "$D" --query q1 --progress-columns nope
check_grep "... is named" "no key or column 'nope'" "$TMP/err"
check_exit "too many mini-batches" 2 "$AQP" run --data "$D" --query q6 --batches 100000000
check_exit "too few replicates" 2 "$AQP" run --data "$D" --query q6 --replicates 3
check_grep "... says the range" "expected 10..2000" "$TMP/err"
check_exit "run q6 with bootstrap bounds" 0 "$AQP" run --data "$D" --query q6 \
  --bootstrap --replicates 50 --batches 4
check_grep "... says so" "bootstrap bounds" "$TMP/err"

check_exit "run q1 in 8 mini-batches on 2 threads" 0 "$AQP" run --data "$D" --query q1 \
  --batches 8 --threads 2 --progress-columns avg_qty,N\|O/count_order \
  --trace "$TMP/t.jsonl" --name q1-test
check_grep "a line per mini-batch" "^mini-batch 8/8  threads 2  rows [0-9]+" "$TMP/err"
check_grep "reports the chosen columns" "5 reported" "$TMP/err"
check_grep "prints the answer" "^N\|O/count_order	[0-9]+" "$TMP/out"
cp "$TMP/out" "$TMP/q1.out"
for q in q6 q14 q17 q19; do
  "$AQP" run --quiet --data "$D" --query $q --batches 5 --trace "$TMP/t.jsonl" \
    >"$TMP/$q.out" 2>"$TMP/$q.err" || not_ok "run $q"
done

check_exit "export copies the tables into SQLite" 0 "$AQP" export --data "$D" --out "$TMP/db.sqlite"

cat >"$TMP/check.py" <<'PYEOF'
import json, math, sqlite3, subprocess, sys
aqp, tmp = sys.argv[1], sys.argv[2]
conn = sqlite3.connect(tmp + "/db.sqlite")
bad = []
for q in ["q1", "q6", "q14", "q17", "q19"]:
    sql = subprocess.run([aqp, "sql", q], capture_output=True, text=True,
                         check=True).stdout
    rows = conn.execute(sql).fetchall()
    want = {}
    for r in rows:
        if q == "q1":
            names = ["sum_qty", "sum_base_price", "sum_disc_price", "sum_charge",
                     "avg_qty", "avg_price", "avg_disc", "count_order"]
            for n, v in zip(names, r[2:]):
                want["%s|%s/%s" % (r[0], r[1], n)] = v
        else:
            want[None] = r[0]
    got = {}
    for line in open("%s/%s.out" % (tmp, q)):
        k, v = line.rstrip("\n").split("\t")
        got[k if q == "q1" else None] = float(v)
    for k, v in want.items():
        g = got.get(k, 0.0)
        if (v is None and not math.isnan(g)) or \
           (v is not None and not math.isclose(g, v, rel_tol=1e-8)):
            bad.append("%s %s: slaq-aqp %s, SQLite %s" % (q, k, got.get(k), v))
traces = [json.loads(l) for l in open(tmp + "/t.jsonl")]
names = [t["name"] for t in traces]
assert names[0] == "q1-test" and len(traces) == 5, names
for t in traces:
    B, K = t["batches"], len(t["keys"])
    for f in ["estimates", "lower", "upper"]:
        assert len(t[f]) == B and all(len(v) == K for v in t[f]), (t["name"], f)
    assert len(t["rows"]) == B and len(t["batch_cpu_s"]) == B, t["name"]
    assert sum(t["rows"]) >= t["rows_total"], t["name"]
    for e, tr in zip(t["estimates"][-1], t["truth"]):
        assert e == tr or math.isclose(e, tr, rel_tol=1e-9), (t["name"], e, tr)
    assert t["lower"][-1] == t["estimates"][-1] == t["upper"][-1], t["name"]
print("\n".join(bad) if bad else "ok")
sys.exit(1 if bad else 0)
PYEOF
check_exit "final answers equal SQLite's and the traces are well-formed" 0 \
  $PY "$TMP/check.py" "$AQP" "$TMP"
[[ -s "$TMP/out" ]] && grep -v '^ok$' "$TMP/out" | sed 's/^/#   /' | head -n 5
for f in data/aqp/traces.jsonl data/aqp/traces-b100.jsonl; do
  check "$f parses and has every query" $PY -c '
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
qs = {x["query"] for x in t}
names = [x["name"] for x in t]
sys.exit(0 if qs == {"q1", "q6", "q14", "q17", "q19"} and len(t) >= 10
         and len(set(names)) == len(names) else 1)' "$f"
done
check "data/aqp/thesis-traces-b100.jsonl has the thesis's seven queries, exact at the end" $PY -c '
import json, sys
t = [json.loads(l) for l in open(sys.argv[1])]
qs = {x["query"] for x in t}
ok = qs == {"q1", "q3", "q5", "q6", "q11", "q16", "q19"} and len(t) == 21
for x in t:
    last = x["estimates"][-1]
    ok = ok and x["batches"] == 100 and all(
        abs(a - b) <= 1e-6 * max(1.0, abs(b)) for a, b in zip(last, x["truth"]))
sys.exit(0 if ok else 1)' data/aqp/thesis-traces-b100.jsonl
check_exit "an unknown query names every query" 2 "$AQP" run --data "$D" --query q2
"$AQP" run --data "$D" --query q2 2>"$TMP/err" || true
check "the message lists the joins" grep -q "q3, q5, q6, q11, q14, q16" "$TMP/err"
finish
