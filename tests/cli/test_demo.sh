# test_demo.sh — `make demo`'s script on a tiny batch (seconds): slaqd
# starts, real slaq-train jobs run under it and report, the summary is
# computed from slaqd's database, nothing is left running, a taken port is
# handled, and the run becomes a simulator workload that `slaq sim` accepts.
. "$(dirname "$0")/lib.sh"

DEMO=scripts/demo.sh
REPORT=scripts/demo_report.py
ST="$TMP/state"

check_exit "demo.sh --help" 0 "$DEMO" --help
check_exit "demo.sh: unknown policy is bad usage" 2 "$DEMO" --policy nope
check_grep "demo.sh: the error names the option" "--policy" "$TMP/err"

# A port that is taken: the demo says so and uses a free one.
python3 -c 'import socket,time; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(120)' >"$TMP/port" &
holder=$!
for _ in $(seq 50); do [ -s "$TMP/port" ] && break; sleep 0.1; done
port=$(cat "$TMP/port")

timeout 120 "$DEMO" --size tiny --state-dir "$ST" --http "127.0.0.1:$port" \
  --json "$TMP/run/summary.json" "$SLAQ_BUILD" >"$TMP/demo.out" 2>"$TMP/demo.err"
rc=$?
kill "$holder" 2>/dev/null; wait "$holder" 2>/dev/null
check "demo.sh tiny batch exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$TMP/demo.err" | tail -n 5
check_grep "demo.sh: a taken port is named" "127.0.0.1:$port is taken" "$TMP/demo.err"
check_grep "demo.sh: prints the dashboard's address" "dashboard: http://127.0.0.1:[0-9]+/" "$TMP/demo.out"
check "demo.sh: the dashboard is not on the taken port" \
  bash -c "! grep -q 'dashboard: http://127.0.0.1:$port/' '$TMP/demo.out'"
check_grep "demo.sh: live view (plain blocks off a terminal)" "^slaqd: policy slaq" "$TMP/demo.out"
for a in logreg kmeans linreg gbtreg svm; do
  check_grep "demo.sh: summary row for $a" "^[0-9]+ +$a +$a +done" "$TMP/demo.out"
done
check_grep "demo.sh: test quality of a classifier" "accuracy=0\.[0-9]+" "$TMP/demo.out"
check_grep "demo.sh: mean times to X%" "mean time to 50/90/95% loss reduction: [0-9.]+ / [0-9.]+ / [0-9.]+ s" "$TMP/demo.out"
check_grep "demo.sh: says where the logs are" "^logs: .*/jobs/ID/" "$TMP/demo.out"
check "demo.sh: summary JSON has every job" python3 -c "
import json, sys
s = json.load(open('$TMP/run/summary.json'))
assert s['jobs'] == 5 and len(s['per_job']) == 5
assert all(p['t']['90'] is not None for p in s['per_job'])
assert all(p['final_loss'] < p['first_loss'] for p in s['per_job'])"
check "demo.sh: timeline written next to the summary" test -s "$TMP/run/timeline.csv"
"$SLAQ" report --json "$ST" >"$TMP/report.json"
check "demo.sh: the summary's numbers are slaq report's" python3 - \
  "$TMP/run/summary.json" "$TMP/report.json" <<'PY'
import json, sys
s, r = (json.load(open(p)) for p in sys.argv[1:])
assert s["t90_mean_s"] == r["summary"]["t90_mean_s"]
assert s["avg_norm_loss"] == r["summary"]["avg_norm_loss"]
assert s["makespan_s"] == r["summary"]["makespan_s"]
by_id = {j["id"]: j for j in r["jobs"]}
for p in s["per_job"]:
    j = by_id[p["id"]]
    assert p["t"]["90"] == j["t90_s"] and p["jct_s"] == j["jct_s"], (p, j)
PY
check "demo.sh: no slaqd or job left running" \
  bash -c "! pgrep -f -- '[s]laq(d|-train) .*$ST' >/dev/null"

# Where no cgroup is writable slaqd enforces with signals; the demo runs
# the same.
timeout 120 "$DEMO" --size tiny --state-dir "$TMP/sig" --http 127.0.0.1:0 \
  --enforce signal --no-top "$SLAQ_BUILD" >"$TMP/sig.out" 2>&1
check "demo.sh with signal enforcement exits 0" test $? -eq 0
check_grep "demo.sh: says which enforcement" "enforcement signal" "$TMP/sig.out"
check "demo.sh (signals): no slaqd or job left running" \
  bash -c "! pgrep -f -- '[s]laq(d|-train) .*$TMP/sig' >/dev/null"

# The run as a simulator workload.
python3 "$REPORT" workload "$ST" >"$TMP/wl.jsonl"
check "workload: one line per job" test "$(wc -l <"$TMP/wl.jsonl")" -eq 5
check_grep "workload: arrival, cost and recorded curve" \
  '"id": "logreg", "arrival_s": 0.0, "iter_cpu_s": [0-9.e-]+, "max_cores": 16' "$TMP/wl.jsonl"
check_exit "slaq sim accepts the workload" 0 "$SLAQ" sim --workload "$TMP/wl.jsonl" \
  --cores 2 --epoch 1 --unit 0.1 --policy slaq --out "$TMP/sim" --no-plots --quiet
check_exit "compare: real and simulated side by side" 0 python3 "$REPORT" compare \
  "real=$TMP/run/summary.json" "sim=$TMP/sim/slaq/summary.json"
check_grep "compare: the table has the loss groups" "share of cores, high loss" "$TMP/out"
# demo-vs-sim.sh on a pair of runs (the same tiny run twice stands in for
# demo-compare's fair and slaq runs).
for p in fair slaq; do
  mkdir -p "$TMP/pair/$p"
  ln -s "$ST" "$TMP/pair/$p/state"
  cp "$TMP/run/summary.json" "$TMP/pair/$p/summary.json"
done
check_exit "demo-vs-sim.sh on a pair of runs" 0 scripts/demo-vs-sim.sh "$TMP/pair" "$SLAQ_BUILD"
check_grep "demo-vs-sim.sh: gap with measured CPU cost" \
  "^sim \(cpu cost\) vs real, mean time to 90%: fair [-+][0-9.]+%, slaq [-+][0-9.]+%" "$TMP/out"
check_grep "demo-vs-sim.sh: gap with allocated cost" "^sim \(allocated cost\)" "$TMP/out"
check_exit "demo-vs-sim.sh: a directory without runs is an error" 1 \
  scripts/demo-vs-sim.sh "$TMP/none" "$SLAQ_BUILD"

# make demo's side-by-side run (scripts/demo-pair.sh): both policies on
# the same tiny batch, each slaqd pinned to its own half of the CPUs.
PAIR="$TMP/demo-pair"
timeout 180 scripts/demo-pair.sh --size tiny --out "$PAIR" --http 127.0.0.1:0 \
  --json "$PAIR.json" "$SLAQ_BUILD" >"$TMP/pair.out" 2>"$TMP/pair.err"
rc=$?
check "demo-pair.sh tiny batch exits 0" test "$rc" -eq 0
[ "$rc" -eq 0 ] || sed 's/^/#   /' "$TMP/pair.err" "$TMP/pair.out" | tail -n 8
if [ "$(nproc)" -ge 2 ]; then
  check_grep "demo-pair.sh: both at once, each on its half" \
    "under fair \(CPUs [0-9,]+\) and slaq \(CPUs [0-9,]+\), at the same time" "$TMP/pair.out"
fi
check_grep "demo-pair.sh: a table per policy" "^== fair \(state " "$TMP/pair.out"
check_grep "demo-pair.sh: the side-by-side header has the ratio" \
  "^ +fair +slaq +slaq/fair$" "$TMP/pair.out"
check_grep "demo-pair.sh: t90 side by side with its ratio" \
  "^mean time to 90% reduction \(s\) +[0-9.]+ +[0-9.]+ +[0-9.]+x$" "$TMP/pair.out"
check_grep "demo-pair.sh: the closing ratio" \
  "^slaq reached 90% of each job's loss reduction in [0-9.]+x fair's mean time" "$TMP/pair.out"
check "demo-pair.sh: the ratio is slaq's t90 over fair's, from both runs' summaries" \
  python3 - "$PAIR" "$PAIR.json" <<'PY'
import json, sys
d, table = sys.argv[1], json.load(open(sys.argv[2]))
f = json.load(open(d + "/fair/summary.json"))
s = json.load(open(d + "/slaq/summary.json"))
assert f["policy"] == "fair" and s["policy"] == "slaq"
assert f["jobs"] == s["jobs"] == 5
# the same batch: the same final loss for every job under both policies
for a, b in zip(f["per_job"], s["per_job"]):
    assert a["name"] == b["name"] and a["iters"] == b["iters"]
    assert abs(a["final_loss"] - b["final_loss"]) <= 1e-9 * abs(a["final_loss"])
row = table["mean time to 90% reduction (s)"]
assert abs(row["ratio"] - s["t90_mean_s"] / f["t90_mean_s"]) < 1e-9
PY
check "demo-pair.sh: no slaqd or job left running" \
  bash -c "! pgrep -f -- '[s]laq(d|-train) .*$PAIR' >/dev/null"
check_exit "demo-pair.sh: a bad size is bad usage" 2 scripts/demo-pair.sh --size big
# make demo-doc: the run's output goes between docs/demo.md's markers.
cp docs/demo.md "$TMP/demo.md"
check_exit "demo_report doc puts the output into the document" 0 \
  python3 "$REPORT" doc "$TMP/demo.md" "$TMP/pair.out"
check "the document holds the run's closing line, once, between the markers" \
  python3 - "$TMP/demo.md" "$TMP/pair.out" <<'PY'
import sys
doc, out = (open(p).read() for p in sys.argv[1:])
last = out.strip().splitlines()[-1]
begin = doc.index("<!-- make demo's output (make demo-doc writes it) -->")
end = doc.index("<!-- end of make demo's output -->")
assert doc.count(last) == 1 and begin < doc.index(last) < end
PY
check_exit "demo_report doc again replaces, not appends" 0 \
  python3 "$REPORT" doc "$TMP/demo.md" "$TMP/pair.out"
check "... the output is there once" \
  test "$(grep -c "^slaq reached 90% of each job" "$TMP/demo.md")" -eq 1
printf 'no markers\n' >"$TMP/nomark.md"
check_exit "demo_report doc on a document without markers fails" 1 \
  python3 "$REPORT" doc "$TMP/nomark.md" "$TMP/pair.out"

check_exit "demo_report: missing state is an error naming the file" 1 \
  python3 "$REPORT" summary "$TMP/none"
check_grep "demo_report: the error names state.db" "state.db: no such file" "$TMP/err"

finish
