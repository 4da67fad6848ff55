# test_sim_deadlines.sh — `slaq sim --deadlines` end to end on small traces
# written here: malformed lines refused with their number and field, EDF
# meeting more deadlines than fair where it must, mlfs-h starting jobs in
# the order of Eq. 2-6, MLF-C's stops, the outputs; and, when the public
# traces are there (../shared), a guard on a real one.
. "$(dirname "$0")/lib.sh"

CURVES=tests/data/sim-curves.jsonl
HDR="job_id,submission_time,num_iteration,model_name,deadline,batch_size,num_gpu,duration"
dl() { "$SLAQ" sim --deadlines --curves "$CURVES" "$@"; }
# col FILE POLICY COLUMN: a value of summary.csv
col() { python3 - "$@" <<'PY'
import csv, sys
rows = {r["policy"]: r for r in csv.DictReader(open(sys.argv[1]))}
print(rows[sys.argv[2]][sys.argv[3]])
PY
}
# done_at FILE POLICY JOB: a job's completion in jobs.csv
done_at() { awk -F, -v p="$2" -v j="$3" '$1 == p && $2 == j {print $6}' "$1"; }

check_exit "sim --deadlines --help" 0 dl --help
check_grep "--help explains the columns" "dl_met, deadline-met ratio" "$TMP/out"
check_grep "slaq sim --help names --deadlines" "--deadlines" \
  <("$SLAQ" sim --help)

# Malformed traces: the line and the field.
printf '%s\nok,0,1,m,100,1,1,50\nbad,10,1,m,200,1,x,50\n' "$HDR" >"$TMP/bad.csv"
check_exit "a bad num_gpu is refused" 2 dl --trace "$TMP/bad.csv"
check_grep "... with its line and field" "bad.csv:3: field 'num_gpu': expected a whole number" "$TMP/err"
printf '%s\nok,0,1,m,100,1,1,50,extra\n' "$HDR" >"$TMP/bad2.csv"
check_exit "nine fields are refused" 2 dl --trace "$TMP/bad2.csv"
check_grep "... naming the line and the count" "bad2.csv:2: expected 8 comma-separated fields" "$TMP/err"
printf '%s\nok,500,1,m,100,1,1,50\n' "$HDR" >"$TMP/bad3.csv"
check_exit "a deadline before the submission is refused" 2 dl --trace "$TMP/bad3.csv"
check_grep "... naming the deadline" "bad3.csv:2: field 'deadline'" "$TMP/err"
printf 'id,when\n' >"$TMP/bad4.csv"
check_exit "another header is refused" 2 dl --trace "$TMP/bad4.csv"
check_grep "... naming line 1" "bad4.csv:1: expected the header" "$TMP/err"
check_exit "--trace and --generate together are refused" 2 \
  dl --trace "$TMP/bad.csv" --generate 10
check_exit "a reversed --accuracy-range is refused" 2 dl --generate 10 \
  --accuracy-range 0.9:0.5
check_grep "... saying what it wants" "--accuracy-range: expected LO:HI" "$TMP/err"
check_exit "an unknown policy is refused" 2 dl --generate 10 --policies fair,fifo
check_grep "... with the list" "'fifo' is not a policy .*edf, tiresias, mlfs-h" "$TMP/err"

# EDF against fair: four 4-core jobs of 600 s on one 4-core node, due at
# 660, 1260, 1860 and 2460 s. Shared fairly, all end at 2400 s and only the
# last is on time; one after the other by deadline, all are.
cat >"$TMP/edf.csv" <<CSV
$HDR
a,0,10,bert,2460,64,4,600
b,0,10,bert,660,64,4,600
c,0,10,bert,1860,64,4,600
d,0,10,bert,1260,64,4,600
CSV
check_exit "fair and edf on the crafted trace" 0 dl --trace "$TMP/edf.csv" \
  --nodes 1 --cores-per-node 4 --mem-per-core 100 --policies fair,edf \
  --out "$TMP/e"
check "fair meets 1 of 4 deadlines" test "$(col "$TMP/e/summary.csv" fair deadline_met)" = 0.2500
check "edf meets all 4" test "$(col "$TMP/e/summary.csv" edf deadline_met)" = 1.0000
for f in summary.csv jct_cdf.csv jobs.csv; do
  check "--out wrote $f" test -s "$TMP/e/$f"
done
check "jct_cdf.csv has 100 rows and a column per policy" \
  test "$(sed -n 101p "$TMP/e/jct_cdf.csv")" = "1.00,2400.0,2400.0"

# mlfs-h's order (urgency off, so only Eq. 2's iteration and loss terms,
# equal for new jobs, and Eq. 4 count). Three 4-core jobs on two 4-core
# nodes at once: j1 600 s due in 20,000 s, j2 1,200 s due in 2,000 s, j3
# 2,400 s due in 5,000 s. On the log scale over the three: deadline term
# j2 1, j3 log 4 / log 10 = 0.60, j1 0; remaining term j1 1, j2 0.5, j3 0.
# P = 0.7 (0.3 D + 0.3 R): j2 0.315, j1 0.21, j3 0.13: j2 and j1 start,
# j3 waits. EDF starts j2 and j3 and makes j1 wait.
cat >"$TMP/order.csv" <<CSV
$HDR
j1,100,10,resnet50,20100,64,4,600
j2,100,10,resnet50,2100,64,4,1200
j3,100,10,resnet50,5100,64,4,2400
CSV
check_exit "mlfs-h and edf on the ordering trace" 0 dl --trace "$TMP/order.csv" \
  --nodes 2 --cores-per-node 4 --mem-per-core 100 --no-urgency \
  --policies edf,mlfs-h --out "$TMP/o"
J="$TMP/o/jobs.csv"
check "mlfs-h: j1 starts at once (done at 600 s)" test "$(done_at "$J" mlfs-h 1)" = 600.0
check "mlfs-h: j2 starts at once (done at 1200 s)" test "$(done_at "$J" mlfs-h 2)" = 1200.0
check "mlfs-h: j3 waits (done after 2400 s)" \
  python3 -c "import sys; sys.exit(not float('$(done_at "$J" mlfs-h 3)') > 2400)"
check "edf: j3 starts at once (done at 2400 s)" test "$(done_at "$J" edf 3)" = 2400.0
check "edf: j1 waits (done after 600 s)" \
  python3 -c "import sys; sys.exit(not float('$(done_at "$J" edf 1)') > 600)"

# MLF-C: with more jobs than the cluster holds, mlfs (MLF-RL + MLF-C, the
# paper's MLFS; the committed network by default) stops jobs that met
# their required accuracy (mlfs-h and mlfs-rl, without it, stop none), and
# --no-load-control turns it off, leaving mlfs-rl exactly.
check_exit "generated workload, mlfs-h, mlfs-rl and mlfs" 0 dl --generate 200 \
  --nodes 2 --cores-per-node 32 --policies mlfs-h,mlfs-rl,mlfs --out "$TMP/g"
check "mlfs stops jobs" test "$(col "$TMP/g/summary.csv" mlfs stopped)" -gt 0
check "mlfs-h stops none" test "$(col "$TMP/g/summary.csv" mlfs-h stopped)" -eq 0
check "mlfs-rl stops none" test "$(col "$TMP/g/summary.csv" mlfs-rl stopped)" -eq 0
check_exit "mlfs without load control" 0 dl --generate 200 --nodes 2 \
  --cores-per-node 32 --policies mlfs-rl,mlfs --no-load-control --out "$TMP/g2"
check "--no-load-control stops none" test "$(col "$TMP/g2/summary.csv" mlfs stopped)" -eq 0
check "... and mlfs is then mlfs-rl, not mlfs-h (but the timing column)" \
  test "$(grep '^mlfs,' "$TMP/g2/summary.csv" | cut -d, -f2-16)" = \
       "$(grep '^mlfs-rl,' "$TMP/g2/summary.csv" | cut -d, -f2-16)"
check "... whose order differs" \
  test "$(grep '^mlfs-h,' "$TMP/g/summary.csv" | cut -d, -f2-16)" != \
       "$(grep '^mlfs-rl,' "$TMP/g/summary.csv" | cut -d, -f2-16)"
check_exit "the same seed gives the same results" 0 dl --generate 200 \
  --nodes 2 --cores-per-node 32 --policies mlfs-h,mlfs-rl,mlfs --out "$TMP/g3"
check "... byte for byte (but the timing column)" \
  cmp -s <(cut -d, -f1-16 "$TMP/g/summary.csv") <(cut -d, -f1-16 "$TMP/g3/summary.csv")

# MLF-RL: mlfs-rl and mlfs need a model, the committed one unless --model
# names another; a missing or bad model file is refused with its line; a
# small training writes a model that runs, the same bytes from one seed.
check_exit "mlfs-rl without --model reads the committed one" 0 dl \
  --generate 10 --policies mlfs-rl,mlfs
check_exit "a missing model is refused" 2 dl --generate 10 --policies mlfs \
  --model "$TMP/none.model"
check_grep "... naming it" "none.model" "$TMP/err"
printf 'slaq-rl-model 1\nfeatures 8 hidden 16\nunit 0 1 2\n' >"$TMP/bad.model"
check_exit "a malformed model is refused" 2 dl --generate 10 --model "$TMP/bad.model"
check_grep "... with its line" "bad.model line 3: unit 0 needs 10 finite numbers" "$TMP/err"
check_exit "--train without --out is refused" 2 dl --generate 10 --train mlfs-rl
check_grep "... saying what it needs" "--train mlfs-rl needs --generate N and --out FILE" "$TMP/err"
check_exit "--train another policy is refused" 2 dl --generate 10 --train mlfs-h --out "$TMP/x.model"
rltrain() { dl --generate 120 --nodes 2 --cores-per-node 32 --train mlfs-rl \
  --workloads 1 --imitation-epochs 2 --iterations 1 --seed 4 --out "$1"; }
check_exit "a small training" 0 rltrain "$TMP/a.model"
check_grep "... reports its progress" "reinforce: iteration 1/1" "$TMP/err"
check_grep "... and writes the command in the model" "made by: slaq sim --deadlines" "$TMP/a.model"
check_exit "the same training again" 0 rltrain "$TMP/b.model"
check "... gives the same model, byte for byte (but the --out in its comment)" \
  cmp -s <(grep -v "^# made by" "$TMP/a.model") <(grep -v "^# made by" "$TMP/b.model")
check_exit "mlfs-rl runs with the model" 0 dl --generate 120 --nodes 2 \
  --cores-per-node 32 --model "$TMP/a.model" --out "$TMP/rl"
check "... beside the six others" test "$(cut -d, -f1 "$TMP/rl/summary.csv" | tail -n +2 | tr '\n' ' ')" = "fair slaq edf tiresias mlfs-h mlfs-rl mlfs "

# --weigh-moves: slaqd's test of a move's cost (slaq_mlfs_move_gain). In
# the simulator a node is overloaded by memory, which does not slow its
# jobs, so after the first move (whose cost is not known yet) no move
# gains its job anything: one move is made, the others are refused.
wm() { dl --generate 200 --nodes 4 --cores-per-node 32 --policies mlfs-h \
  --seed 2 "$@"; }
check_exit "mlfs-h moves" 0 wm --out "$TMP/wm0"
check_exit "mlfs-h --weigh-moves" 0 wm --weigh-moves --out "$TMP/wm1"
check_grep "... counts the moves it refused" "moves refused as not worth their cost: [1-9]" "$TMP/out"
check "... makes one move where MLFS makes many" test \
  "$(col "$TMP/wm1/summary.csv" mlfs-h moves)" = 1 -a \
  "$(col "$TMP/wm0/summary.csv" mlfs-h moves)" -gt 10

# A real trace, when ../shared is there: 1,000 jobs of cluster02 at heavy
# load; mlfs meets at least 1.5 times slaq's deadlines (docs/deadlines.md).
TRACE=../shared/data/traces/dl-deadlines/cluster02.csv
if [[ -r $TRACE ]]; then
  check_exit "cluster02, window 0:1000" 0 "$SLAQ" sim --deadlines \
    --curves data/curves/slaq-train.jsonl --trace "$TRACE" --window 0:1000 \
    --policies slaq,mlfs --out "$TMP/t"
  check "cluster02: mlfs meets >= 1.5x slaq's deadlines" python3 -c "
import csv, sys
r = {x['policy']: float(x['deadline_met']) for x in csv.DictReader(open('$TMP/t/summary.csv'))}
sys.exit(not r['mlfs'] >= 1.5 * r['slaq'])"
else
  ok "# skip the real-trace guard: $TRACE is absent"
fi
finish
