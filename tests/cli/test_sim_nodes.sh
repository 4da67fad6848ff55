# test_sim_nodes.sh — `slaq sim --nodes N --cores-per-node C`: the same
# core on several nodes. One node is the single machine; jobs that fit
# nowhere wait in order; bad options are refused with a clear message.
. "$(dirname "$0")/lib.sh"

CURVES=tests/data/sim-curves.jsonl
WL="$TMP/wl.jsonl"
"$SLAQ" workload gen --curves "$CURVES" --jobs 24 --mean-interarrival 3 \
  --work 200:2000 --max-cores 16 --iters 30 --seed 7 >"$WL"

check_exit "sim on one machine" 0 "$SLAQ" sim --workload "$WL" --cores 32 \
  --compare fair,slaq --out "$TMP/one" --quiet --no-plots
check_exit "sim on one node of 32" 0 "$SLAQ" sim --workload "$WL" \
  --nodes 1 --cores-per-node 32 --compare fair,slaq --out "$TMP/n1" \
  --quiet --no-plots
for p in fair slaq; do
  check "one node of 32 = one machine of 32 ($p jobs.csv)" \
    cmp -s "$TMP/one/$p/jobs.csv" "$TMP/n1/$p/jobs.csv"
done
for pl in least-loaded gain; do
  check_exit "sim on 4 nodes of 8, $pl" 0 "$SLAQ" sim --workload "$WL" \
    --nodes 4 --cores-per-node 8 --placement "$pl" --compare fair,slaq \
    --out "$TMP/n4-$pl" --quiet --no-plots
  check_grep "summary names nodes and placement ($pl)" \
    "\"nodes\": 4, \"cores_per_node\": 8, \"placement\": \"$pl\"" \
    "$TMP/n4-$pl/slaq/summary.json"
done
check "4 nodes of 8 is not one machine of 32" \
  bash -c "! cmp -s '$TMP/one/slaq/jobs.csv' '$TMP/n4-least-loaded/slaq/jobs.csv'"

# 24 jobs arriving at once on 2 nodes of 4 cores: 8 run, 16 wait and
# start in arrival order, so completions come in waves.
"$SLAQ" workload gen --curves "$CURVES" --jobs 24 --mean-interarrival 0.001 \
  --work 200:2000 --max-cores 16 --iters 30 --seed 7 >"$TMP/burst.jsonl"
check_exit "sim with a queue" 0 "$SLAQ" sim --workload "$TMP/burst.jsonl" \
  --nodes 2 --cores-per-node 4 --policy fair --out "$TMP/q" --quiet \
  --no-plots
# the 9th job onwards waits: none of them is half done before the first
# of the 8 running jobs has finished (on one machine of 8 cores, all 24
# run at once and the first of them is half done long before)
check "jobs beyond the 8 cores wait for the first to finish" python3 - \
  "$TMP/q/fair/jobs.csv" <<'PY'
import csv, sys
rows = sorted(csv.DictReader(open(sys.argv[1])),
              key=lambda r: float(r["arrival_s"]))
first = min(float(r["completion_s"]) for r in rows[:8])
late = min(float(r["arrival_s"]) + float(r["t50_s"]) for r in rows[8:])
assert late > first, (late, first)
PY
check "cores in use never exceed the 8 of the nodes" python3 - \
  "$TMP/q/fair/timeline.csv" <<'PY'
import csv, sys
for r in csv.DictReader(open(sys.argv[1])):
    used = sum(float(r[k]) for k in ("cores_high", "cores_medium", "cores_low"))
    assert used <= 8 + 1e-6, r
PY

check_exit "--nodes without --cores-per-node" 2 "$SLAQ" sim --workload "$WL" \
  --nodes 4 --out "$TMP/x"
check_grep "... says they go together" "go together" "$TMP/err"
check_exit "--cores disagreeing with the nodes" 2 "$SLAQ" sim \
  --workload "$WL" --cores 30 --nodes 4 --cores-per-node 8 --out "$TMP/x"
check_grep "... names both" "--cores 30 is not" "$TMP/err"
check_exit "--nodes 2.5" 2 "$SLAQ" sim --workload "$WL" --nodes 2.5 \
  --cores-per-node 8 --out "$TMP/x"
check_exit "--placement random" 2 "$SLAQ" sim --workload "$WL" --nodes 2 \
  --cores-per-node 8 --placement random --out "$TMP/x"
check_grep "... lists the placements" "least-loaded or gain" "$TMP/err"
# slaq bench cluster: the same simulation, timed
check_exit "bench cluster --json" 0 "$SLAQ" bench cluster --workload "$WL" \
  --nodes 4 --cores-per-node 8 --placement gain --json
check "bench cluster: figures for every epoch of the run" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
assert r["jobs"] == 24 and r["nodes"] == 4 and r["placement"] == "gain"
assert r["epochs"] > 10 and r["most_jobs_at_once"] >= 1
for k in ("epoch_wall_ms", "epoch_cpu_ms", "refit_cpu_ms", "allocate_cpu_ms"):
    assert 0 <= r[k]["median"] <= r[k]["p99"] <= r[k]["max"], k
' "$TMP/out"
check_exit "bench cluster without --nodes" 2 "$SLAQ" bench cluster \
  --workload "$WL" --cores-per-node 8
check_grep "... names what is required" "--nodes" "$TMP/err"

# the refit bound: one the 24 jobs never reach changes nothing; one refit
# an epoch does change the results, and the bench shows the backlog
check_exit "sim --max-fits 0 (no bound)" 0 "$SLAQ" sim --workload "$WL" \
  --nodes 4 --cores-per-node 8 --max-fits 0 --out "$TMP/mf0" --quiet \
  --no-plots
check "--max-fits 0 = the default bound (24 jobs never reach 1,000)" \
  cmp -s "$TMP/mf0/slaq/jobs.csv" "$TMP/n4-least-loaded/slaq/jobs.csv"
check_exit "sim --max-fits 1" 0 "$SLAQ" sim --workload "$TMP/burst.jsonl" \
  --nodes 2 --cores-per-node 16 --max-fits 1 --out "$TMP/mf1" --quiet \
  --no-plots
check_exit "sim --max-fits 0 on the burst" 0 "$SLAQ" sim \
  --workload "$TMP/burst.jsonl" --nodes 2 --cores-per-node 16 --max-fits 0 \
  --out "$TMP/mfb0" --quiet --no-plots
check "--max-fits 1 changes a burst of 24 jobs' results" \
  bash -c "! cmp -s '$TMP/mf1/slaq/jobs.csv' '$TMP/mfb0/slaq/jobs.csv'"
check_exit "sim --max-fits 1.5" 2 "$SLAQ" sim --workload "$WL" --cores 8 \
  --max-fits 1.5 --out "$TMP/x"
check_grep "... says a whole number" "max-fits: expected a whole number" \
  "$TMP/err"
check_exit "bench cluster --max-fits 1" 0 "$SLAQ" bench cluster \
  --workload "$TMP/burst.jsonl" --nodes 2 --cores-per-node 16 --max-fits 1
check_grep "... prints the epoch p99 against the target" \
  "^epoch CPU p99: [0-9.]+ ms .target <= 50 ms single-threaded: " "$TMP/out"
check_grep "... and the refits left for later" \
  "^refits left for the next epoch: in [1-9][0-9]* of" "$TMP/out"
check_exit "bench cluster --max-fits -1" 2 "$SLAQ" bench cluster \
  --workload "$WL" --nodes 2 --cores-per-node 8 --max-fits -1
check_grep "... says what was expected" "expected a whole number" "$TMP/err"

check "--help documents --nodes" bash -c \
  "'$SLAQ' sim --help | grep -q -- '--cores-per-node'"
finish
