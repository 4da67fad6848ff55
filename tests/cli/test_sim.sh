# test_sim.sh — `slaq workload gen` and `slaq sim` end to end: outputs,
# determinism, and that bad input is reported and leaves --out untouched.
. "$(dirname "$0")/lib.sh"

CURVES=tests/data/sim-curves.jsonl
WL="$TMP/wl.jsonl"

gen() { "$SLAQ" workload gen --curves "$CURVES" --jobs 24 \
          --mean-interarrival 3 --work 200:2000 --max-cores 16 --iters 30 "$@"; }

check_exit "workload gen --help" 0 "$SLAQ" workload gen --help
gen --seed 7 >"$WL"
check "workload gen: 24 jobs" test "$(wc -l <"$WL")" -eq 24
gen --seed 7 >"$TMP/wl2.jsonl"
check "workload gen: same seed, same bytes" cmp -s "$WL" "$TMP/wl2.jsonl"
gen --seed 8 >"$TMP/wl3.jsonl"
check "workload gen: another seed, another workload" \
  bash -c "! cmp -s '$WL' '$TMP/wl3.jsonl'"
check_grep "workload gen: loss cut at --iters" \
  '"iter_cpu_s": [0-9.]+, "max_cores": 16' "$WL"
check_exit "workload gen: bad --work" 2 gen --work 5:1
check_grep "workload gen: bad --work names the option" "--work" "$TMP/err"
check_exit "workload gen: missing curves file" 2 \
  "$SLAQ" workload gen --curves "$TMP/none.jsonl"

check_exit "sim --help" 0 "$SLAQ" sim --help
check_exit "sim runs three policies" 0 "$SLAQ" sim --workload "$WL" \
  --cores 32 --compare fair,slaq,oracle-greedy --sweep-interarrival 2,6 \
  --out "$TMP/rep" --quiet
for f in summary.json report.html reduction.csv sweep.csv plots.gp \
         fig7a-loss.svg fig7b-reduction.svg fig8-cores-slaq.svg \
         fig9-sweep.svg fig10c-sched.svg fair/timeline.csv slaq/jobs.csv \
         slaq/sched.csv oracle-greedy/summary.json; do
  check "sim wrote $f" test -s "$TMP/rep/$f"
done
check "summary.json is JSON with every field" python3 -c '
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["policy"] for r in runs] == ["fair", "slaq", "oracle-greedy"]
for r in runs:
    for k in ("jobs", "avg_norm_loss", "t90_mean_s", "t95_mean_s",
              "jct_mean_s", "makespan_s", "starved_max_s", "epochs"):
        assert k in r, k
    # fair holds no job below its fair share; slaq lifts a job that
    # waited starve-bound (10 s) at the minimum share: no spell is
    # longer than that and one epoch (1 s)
    if r["policy"] == "fair":
        assert r["starved_max_s"] == 0, r
    elif r["policy"] == "slaq":
        assert 0 <= r["starved_max_s"] <= 11 + 1e-6, r
    assert set(r["share_by_loss_group"]) == {"high", "medium", "low"}
    assert set(r["sched_ms"]) == {"mean", "p99", "max"}
    assert r["jobs"] == 24
' "$TMP/rep/summary.json"
check_grep "jobs.csv has t50 ... t99" '^id,algorithm,arrival_s,t50_s,.*t90_s,t95_s,t99_s,completion_s' \
  "$TMP/rep/fair/jobs.csv"

# The baselines a user would run instead, and the oracles, side by side.
check_exit "sim runs the queue, shortest-first and the oracles" 0 "$SLAQ" sim \
  --workload "$WL" --cores 32 \
  --compare fair,queue,shortest-first,slaq-index,oracle-index,oracle-plan \
  --out "$TMP/base" --no-plots --quiet
check "the queue starts its jobs in order of arrival, two of 16 cores at a time" \
  python3 -c '
import csv, json, sys
d = sys.argv[1]
runs = json.load(open(d + "/summary.json"))
assert [r["policy"] for r in runs] == ["fair", "queue", "shortest-first",
    "slaq-index", "oracle-index", "oracle-plan"], runs
rows = sorted(csv.DictReader(open(d + "/queue/jobs.csv")),
              key=lambda r: float(r["arrival_s"]))
starts = [float(r["arrival_s"]) + float(r["wait_s"]) for r in rows]
assert starts == sorted(starts), starts
# with two running, the third waits for the first to end
assert float(rows[2]["wait_s"]) > 0, rows[2]
' "$TMP/base"

# Determinism: everything but the wall-clock sched_ms (summaries,
# sched.csv, fig10c) is byte-identical.
"$SLAQ" sim --workload "$WL" --cores 32 --compare fair,slaq,oracle-greedy \
  --sweep-interarrival 2,6 --out "$TMP/again" --quiet
same=1
for f in fair/timeline.csv fair/jobs.csv slaq/timeline.csv slaq/jobs.csv \
         oracle-greedy/jobs.csv reduction.csv sweep.csv plots.gp fig7a-loss.svg; do
  cmp -s "$TMP/rep/$f" "$TMP/again/$f" || { same=0; echo "# differs: $f"; }
done
for f in summary.json slaq/summary.json; do
  cmp -s <(grep -v sched_ms "$TMP/rep/$f") <(grep -v sched_ms "$TMP/again/$f") ||
    { same=0; echo "# differs: $f"; }
done
check "sim: same inputs, same outputs" test $same -eq 1

# Malformed input: exit 2, file:line and field named, --out untouched.
{ sed -n 1,2p "$WL"; echo '{"id": "x", "arrival_s": 1, "iter_cpu_s": -3, "loss": [1, 0]}'; } \
  >"$TMP/bad.jsonl"
check_exit "sim: malformed workload exits 2" 2 "$SLAQ" sim --workload \
  "$TMP/bad.jsonl" --cores 8 --out "$TMP/rep" --quiet
check_grep "sim: error names file, line and field" \
  "bad.jsonl:3: field 'iter_cpu_s'" "$TMP/err"
check "sim: previous --out left as it was" cmp -s "$TMP/rep/fair/jobs.csv" \
  "$TMP/again/fair/jobs.csv"
check_exit "sim: error on a fresh --out" 2 "$SLAQ" sim --workload \
  "$TMP/bad.jsonl" --cores 8 --out "$TMP/fresh" --quiet
check "sim: nothing written on error" test ! -e "$TMP/fresh"
check "sim: no staging left behind" \
  bash -c "! ls -d '$TMP'/*.tmp.* 2>/dev/null | grep -q ."
check_exit "sim: unknown policy" 2 "$SLAQ" sim --workload "$WL" --cores 8 \
  --policy fifo --out "$TMP/x"
check_exit "sim: --cores required" 2 "$SLAQ" sim --workload "$WL" \
  --out "$TMP/x"
check_exit "sim: bad --epoch" 2 "$SLAQ" sim --workload "$WL" --cores 8 \
  --epoch 0 --out "$TMP/x"

check_exit "sim: --default-iter-cpu" 0 "$SLAQ" sim --workload "$WL" \
  --cores 32 --policy oracle --default-iter-cpu 40 --out "$TMP/cpu" \
  --quiet --no-plots
check_grep "sim: summary records --default-iter-cpu" \
  '"default_iter_cpu_s": 40,' "$TMP/cpu/summary.json"
check_grep "sim: the old name oracle runs as oracle-greedy" \
  '"policy": "oracle-greedy"' "$TMP/cpu/summary.json"
head -n 1 "$WL" >"$TMP/one.jsonl"
check_exit "sim: a sweep needs two arrival times" 2 "$SLAQ" sim --workload \
  "$TMP/one.jsonl" --cores 8 --sweep-interarrival 2 --out "$TMP/x"
check_grep "sim: ... and says so" "two different arrival times" "$TMP/err"

# Replacing an existing report works.
check_exit "sim: replaces an existing --out" 0 "$SLAQ" sim --workload "$WL" \
  --cores 32 --policy fair --out "$TMP/rep" --quiet --no-plots
check "sim: old policies gone after replacement" test ! -e "$TMP/rep/slaq"

# Shares between users: workload gen's users, and "+shares" runs dividing
# the cores between them first. One user submits most jobs (skew 3);
# with shares the others' jobs reach 90% sooner than without.
gen --seed 7 --users 3 --skew 3 --accounts 2 >"$TMP/users.jsonl"
check "workload gen --users: the same jobs as without" \
  bash -c "diff <(sed 's/, \"user\": \"u[0-9]*\", \"account\": \"a[0-9]*\"//' '$TMP/users.jsonl') '$WL'"
check_grep "workload gen --users: user and account fields" \
  '"user": "u1", "account": "a1"' "$TMP/users.jsonl"
check_exit "workload gen: --accounts above --users" 2 gen --users 2 \
  --accounts 3
check_exit "sim runs +shares" 0 "$SLAQ" sim --workload "$TMP/users.jsonl" \
  --cores 32 --compare slaq,slaq+shares,fair+shares --out "$TMP/shares" \
  --quiet --no-plots
check "sim +shares: the light users' jobs reach 90% sooner" python3 -c '
import csv, sys
def mean_t90(run, heavy):
    t = [float(r["t90_s"]) for r in csv.DictReader(open(sys.argv[1] + "/" + run + "/jobs.csv"))
         if (r["user"] == "u1") == heavy]
    assert t, run
    return sum(t) / len(t)
light, shared = mean_t90("slaq", False), mean_t90("slaq+shares", False)
assert shared < light, (shared, light)
assert mean_t90("slaq+shares", True) > mean_t90("slaq", True)
' "$TMP/shares"
sed 's/"user": "u1"/"user": "u 1"/' "$TMP/users.jsonl" >"$TMP/badusers.jsonl"
check_exit "sim: a bad user name" 2 "$SLAQ" sim --workload \
  "$TMP/badusers.jsonl" --cores 8 --out "$TMP/x"
check_grep "sim: ... names the line and field" \
  "jsonl:1: field 'user': expected" "$TMP/err"
sed '0,/"account": "a2"/s//"account": "a1"/' "$TMP/users.jsonl" \
  >"$TMP/moved.jsonl"
check_exit "sim +shares: a user in two accounts" 1 "$SLAQ" sim --workload \
  "$TMP/moved.jsonl" --cores 8 --policy slaq+shares --out "$TMP/x"
check_grep "sim +shares: ... says so" "in another account" "$TMP/err"

finish
