# test_bounds.sh — inputs that used to hang or eat memory are refused at
# once with the field, the value and the cap: `slaq sim` workload values and
# options, `slaq sweep --dry-run` on a grid larger than the configuration
# cap, and trace and JSON Lines files with lines or arrays over their caps.
. "$(dirname "$0")/lib.sh"

WL="$TMP/wl.jsonl"
"$SLAQ" workload gen --curves tests/data/sim-curves.jsonl --jobs 24 \
  --mean-interarrival 3 --work 200:2000 --max-cores 16 --iters 30 \
  --seed 7 >"$WL"

# with_field NAME FIELD VALUE: $TMP/NAME.jsonl, $WL with FIELD of line 3
# set to VALUE.
with_field() {
  python3 - "$WL" "$TMP/$1.jsonl" "$2" "$3" <<'PY'
import json, sys
src, dst, field, value = sys.argv[1:]
jobs = [json.loads(l) for l in open(src)]
jobs[2][field] = float(value)
open(dst, "w").write("".join(json.dumps(j) + "\n" for j in jobs))
PY
}

# refused_with CODE DESC PATTERN ARGS...: slaq ARGS exits CODE with
# PATTERN on stderr, within a second of CPU time (user + system: the work
# it does, whatever else the machine runs; killed after 60 s of wall time,
# a hang) and less than 200 MB of memory.
refused_with() {
  local code=$1 d=$2 pat=$3; shift 3
  check_exit "$d: exit $code" "$code" /usr/bin/time -f "%M %U %S" \
    -o "$TMP/rss" timeout 60 "$SLAQ" "$@"
  local rss user sys
  read -r rss user sys < <(tail -n 1 "$TMP/rss")
  check "$d: within a second" awk -v u="$user" -v s="$sys" \
    'BEGIN { exit !(u + s < 1.0) }'
  check_grep "$d: says why" "$pat" "$TMP/err"
  check "$d: bounded memory" test "$rss" -lt 200000
}

# refused DESC PATTERN ARGS...: refused_with exit 2 (a bad option or file).
refused() { refused_with 2 "$@"; }

with_field iter iter_cpu_s 1e308
refused "sim: iter_cpu_s 1e308" \
  "iter.jsonl:3: field 'iter_cpu_s': expected a number > 0 and <= 1e\\+09, got 1e\\+308" \
  sim --workload "$TMP/iter.jsonl" --cores 32 --out "$TMP/o" --quiet
with_field maxc max_cores 1e-300
refused "sim: max_cores 1e-300" \
  "maxc.jsonl:3: field 'max_cores': expected a number >= 0.001 .*got 1e-300" \
  sim --workload "$TMP/maxc.jsonl" --cores 32 --out "$TMP/o" --quiet
with_field arr arrival_s 1e308
refused "sim: arrival_s 1e308" \
  "arr.jsonl:3: field 'arrival_s': expected a number >= 0 and <= 1e\\+09" \
  sim --workload "$TMP/arr.jsonl" --cores 32 --out "$TMP/o" --quiet
# Within the format's caps, but 1e9 CPU-seconds on 0.001 cores is 10^12 s.
python3 - "$WL" "$TMP/slow.jsonl" <<'PY'
import json, sys
jobs = [json.loads(l) for l in open(sys.argv[1])]
jobs[2].update(iter_cpu_s=1e9, max_cores=0.001)
open(sys.argv[2], "w").write("".join(json.dumps(j) + "\n" for j in jobs))
PY
refused "sim: a job that needs 10^12 s" \
  "job j3 \\(line 3\\): .* iterations of iter_cpu_s 1e\\+09 on at most 0.001 cores \\(max_cores\\).*cap of 1000000 epochs" \
  sim --workload "$TMP/slow.jsonl" --cores 32 --out "$TMP/o" --quiet
refused "sim: --unit 1e-12" "--unit 1e-12 is 3.2e\\+13 units .*cap of 100000" \
  sim --workload "$WL" --cores 32 --unit 1e-12 --out "$TMP/o" --quiet
refused "sim: --cores 1e-300" "on at most 1e-300 cores \\(--cores\\)" \
  sim --workload "$WL" --cores 1e-300 --out "$TMP/o" --quiet
refused "sim: --epoch 1e-9" "--epoch: expected a number from 0.01 to 3600, got '1e-9'" \
  sim --workload "$WL" --cores 32 --epoch 1e-9 --out "$TMP/o" --quiet
refused "sim: --nodes 1000000" "--nodes 1000000: more than the cap of 10000 nodes" \
  sim --workload "$WL" --nodes 1000000 --cores-per-node 1 --out "$TMP/o" \
  --quiet
refused "sim: --nodes 20000 of 0.01 cores" "--nodes 20000" \
  sim --workload "$WL" --nodes 20000 --cores-per-node 0.01 --out "$TMP/o" \
  --quiet
check "sim: nothing written to --out" test ! -e "$TMP/o"
check_exit "sim: just inside the caps runs" 0 "$SLAQ" sim --workload "$WL" \
  --nodes 4 --cores-per-node 8 --epoch 0.05 --out "$TMP/ok" --quiet

# slaq workload gen writes only what the reader takes.
refused "workload gen: --jobs 1e15" "--jobs: 1e\\+15 is beyond the workload format's cap of 1e\\+06" \
  workload gen --curves tests/data/sim-curves.jsonl --jobs 1e15
refused "workload gen: --mean-interarrival 1e308" "--mean-interarrival x \\(--jobs - 1\\)" \
  workload gen --curves tests/data/sim-curves.jsonl --jobs 4 \
  --mean-interarrival 1e308
check "workload gen: nothing written" test ! -s "$TMP/out"

# slaq sim --aqp: the same kind of values, refused the same way.
AQ=tests/data/aqp-traces.jsonl
refused "sim --aqp: --epoch 1e-9" "--epoch: expected a number from 0.01 to 3600, got '1e-9'" \
  sim --aqp "$AQ" --seeds 1 --epoch 1e-9
refused "sim --aqp: --cpu-scale 1e300" "\\(--cpu-scale 1e\\+300\\).*cap of 1000000 epochs" \
  sim --aqp "$AQ" --seeds 1 --cpu-scale 1e300
refused "sim --aqp: --cores 1e-300" "on --cores 1e-300 take at least" \
  sim --aqp "$AQ" --seeds 1 --cores 1e-300
refused "sim --aqp: --mean-interarrival 1e300" "the last arrival at 8.1.*e\\+300 s" \
  sim --aqp "$AQ" --seeds 1 --mean-interarrival 1e300
refused "sim --aqp: --queries 1e300" "--queries: more than the cap of 1000 queries" \
  sim --aqp "$AQ" --seeds 1 --queries 1e300
check_exit "sim --aqp: inside the caps runs" 0 "$SLAQ" sim --aqp "$AQ" \
  --seeds 1 --queries 4 --epoch 1

# A grid of 2 x 1000 points is 1,000,000 configurations.
grid() {
  python3 - "$@" <<'PY'
import json, sys
n, points = int(sys.argv[1]), int(sys.argv[2])
names = ["p%d" % i for i in range(n)]
print(json.dumps({
    "name": "g", "command": "true " + " ".join("{%s}" % p for p in names),
    "space": {p: {"type": "uniform", "low": 0, "high": 1} for p in names},
    "generator": {"type": "grid", "points": points}, "metric": "loss",
    "y_target": 0.1, "epochs": 10, "slots": 2}))
PY
}
grid 2 1000 >"$TMP/g2.json"
refused "sweep --dry-run: 2 x 1000 grid" \
  "g2.json: generator: the grid of 1000 x 1000 = 1000000 points is more than the cap of 10000 configurations" \
  sweep --dry-run "$TMP/g2.json"
grid 8 1000 >"$TMP/g8.json"
refused "sweep --dry-run: 8 x 1000 grid" \
  "g8.json: generator: the grid of 1000 x 1000 x 1000 x 1000 x 1000 x 1000 x 1000 x 1000 points is more than the cap" \
  sweep --dry-run "$TMP/g8.json"
grid 2 100 >"$TMP/g100.json"
check_exit "sweep --dry-run: 100 x 100 grid, at the cap" 0 \
  "$SLAQ" sweep --dry-run "$TMP/g100.json"
check_grep "sweep --dry-run: 10000 configurations listed" \
  "^g: 10000 configurations" "$TMP/out"

# Traces with counts no simulator could hold: refused at the line and
# field that say so, before anything is allocated for them.
HDR="job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration"
printf '%s\n1,0,1,m,100,1,1,50\n2,5,1,m,900,1,1000000000000,50\n' "$HDR" \
  >"$TMP/gpus.csv"
refused "sim --deadlines: num_gpu 10^12" \
  "gpus.csv:3: field 'num_gpu': expected a whole number from 1 to 4096, got '1000000000000'" \
  sim --deadlines --curves tests/data/sim-curves.jsonl --trace "$TMP/gpus.csv"
printf '%s\n1,0,1,m,1e300,1,1,1e300\n' "$HDR" >"$TMP/dur.csv"
refused "sim --deadlines: deadline 1e300" \
  "dur.csv:2: field 'deadline': expected a number from 0 to 1e\\+09, got '1e300'" \
  sim --deadlines --curves tests/data/sim-curves.jsonl --trace "$TMP/dur.csv"

# refused1 DESC PATTERN ARGS...: as refused, for commands that exit 1 on a
# bad file (slaq sim --tasks).
refused1() { refused_with 1 "$@"; }
printf '0 2 1 1 1\n5 1000000000 1 1\n' >"$TMP/tasks.tr"
refused1 "sim --tasks: 10^9 tasks in one job" \
  "tasks.tr line 2: field 2 \\(number_of_tasks\\) must be a whole number from 1 to 1000000, got '1000000000'" \
  sim --tasks "$TMP/tasks.tr" --nodes 2
# A line of 70 MB (a job, then spaces without end): refused at the line
# cap without holding the line.
{ printf '0 1000000 1 '; head -c 70000000 /dev/zero | tr '\0' ' '; echo; } \
  >"$TMP/long.tr"
refused1 "sim --tasks: a 70 MB line" \
  "long.tr line 1: longer than 67108864 bytes" \
  sim --tasks "$TMP/long.tr" --nodes 2
rm -f "$TMP/long.tr"

# JSON Lines files: a line is refused at 256 MiB, and a line's JSON values
# are counted against their cap of 10,001,024 before any is parsed, so an
# over-cap array costs the memory of its text alone (these two grew to
# 500 MB and more before their caps were checked).
zeros() { # zeros N PREFIX SUFFIX: PREFIX, N zeros separated by commas, SUFFIX
  python3 -c 'import sys; n = int(sys.argv[1]); sys.stdout.write(sys.argv[2] + "0," * (n - 1) + "0" + sys.argv[3] + "\n")' "$@"
}
zeros 12000000 '{"id": "j1", "arrival_s": 0, "iter_cpu_s": 1, "loss": [' \
  ']}' >"$TMP/loss.jsonl"
refused "sim: a loss array of 12,000,000" \
  "loss.jsonl:1: field 'loss': an array of 12000000 values; a line may hold at most 10001024 JSON values in all" \
  sim --workload "$TMP/loss.jsonl" --cores 4 --out "$TMP/o" --quiet
{ head -n 1 tests/data/sim-curves.jsonl
  zeros 12000000 '{"name": "big", "loss": [' ']}'; } >"$TMP/curve.jsonl"
refused "workload gen: a curve of 12,000,000 losses" \
  "curve.jsonl:2: field 'loss': an array of 12000000 values; a line may hold at most 10001024 JSON values in all" \
  workload gen --curves "$TMP/curve.jsonl" --jobs 4
rm -f "$TMP/loss.jsonl" "$TMP/curve.jsonl"
# A recorded query run whose estimates would be 1100 x 10000 numbers:
# refused before the matrix is allocated, from the two arrays' sizes.
python3 -c 'import json; print(json.dumps({"name": "q", "truth": [0] * 10000, "estimates": [[]] * 1100, "batch_cpu_s": [0] * 1100}))' >"$TMP/aq.jsonl"
refused "sim --aqp: estimates of 1100 x 10000" \
  'aq.jsonl:1: field "estimates": 1100 mini-batches of 10000 values \("truth"\) is more than the 10001024 values a line may hold' \
  sim --aqp "$TMP/aq.jsonl" --seeds 1
# A line of 600 MB (a job whose loss array goes on in spaces) through a
# pipe: refused at 256 MiB, holding no more than the cap.
long_line() {
  printf '{"id": "j1", "arrival_s": 0, "iter_cpu_s": 1, "loss": [1, '
  head -c 600000000 /dev/zero | tr '\0' ' '
  echo '0]}'
}
check_exit "sim: a 600 MB line: exit 2" 2 /usr/bin/time -f "%M" \
  -o "$TMP/rss" timeout 20 "$SLAQ" sim --workload <(long_line) --cores 4 \
  --out "$TMP/o" --quiet
check_grep "sim: a 600 MB line: says why" \
  "/dev/fd/[0-9]+:1: the line is longer than 268435456 bytes, the cap of a line" \
  "$TMP/err"
check "sim: a 600 MB line: at most the cap held" \
  test "$(tail -n 1 "$TMP/rss")" -lt 400000

finish
