# test_sim_tasks.sh — `slaq sim --tasks` and `--tasks-workload`, the
# task-level simulator of docs/queues.md: Proposition 2's utilisation
# holds in the simulation, SRJF beats FIFO on a workload made for it, the
# starvation threshold bounds a starved job's wait, malformed traces are
# refused with their line and field, runs are deterministic; and, when
# ../shared/data/traces is there, the public traces replay in full.
. "$(dirname "$0")/lib.sh"

sim() { "$SLAQ" sim "$@"; }

# col TSV ROW NAME: the value of column NAME in data row ROW (1-based).
col() {
  awk -F'\t' -v r="$2" -v n="$3" '
    NR == 2 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
    NR == r + 2 { print $c }' "$1"
}

check_exit "sim --tasks --help" 0 sim --tasks - --help
for w in --queue-bound --queue-order --starvation --target-util \
         --tasks-workload gridmix-heavy "short p50"; do
  check_grep "--help names $w" "$w" "$TMP/out"
done

# Proposition 2: exponential 10-s tasks, queues of 2, a saturated cluster.
check_exit "exp:10 saturated" 0 sim --tasks-workload exp:10 --load 2 \
  --span 900 --nodes 40 --scheduler yaq-c:fifo,yarn --queue-bound 2 \
  --format tsv
cp "$TMP/out" "$TMP/p2.tsv"
check "utilisation is Proposition 2's within 0.01 (b = 2)" awk -F'\t' \
  'NR == 3 { d = $4 - $5; exit !(d < 0.01 && d > -0.01 && $5 > 0.95) }' \
  "$TMP/p2.tsv"
check "utilisation is Proposition 2's within 0.01 (yarn, b = 0)" awk -F'\t' \
  'NR == 4 { d = $4 - $5; exit !(d < 0.01 && d > -0.01 && $5 < 0.9) }' \
  "$TMP/p2.tsv"

# A big job, then a small job every second on one slot: SRJF runs the
# small ones first, FIFO makes them wait behind the big one.
{
  echo "# one 20-task job of 10-s tasks, then 30 one-task jobs of 1 s"
  printf '0 20 10'; for i in $(seq 20); do printf ' 10'; done; echo
  for i in $(seq 30); do echo "$i 1 1 1"; done
} >"$TMP/srjf.tr"
check_exit "srjf against fifo" 0 sim --tasks "$TMP/srjf.tr" --nodes 2 \
  --slots-per-node 1 --queue-bound 2 --starvation off --format tsv \
  --scheduler yaq-c:fifo,yaq-c:srjf,yaq-d:fifo,yaq-d:srjf
cp "$TMP/out" "$TMP/srjf.tsv"
check "yaq-c: SRJF's mean JCT under half FIFO's" awk -F'\t' \
  'NR == 3 { f = $7 } NR == 4 { s = $7 } END { exit !(s < f / 2) }' \
  "$TMP/srjf.tsv"
check "yaq-d: SRJF's mean JCT under FIFO's" awk -F'\t' \
  'NR == 5 { f = $7 } NR == 6 { s = $7 } END { exit !(s < f) }' \
  "$TMP/srjf.tsv"

# Starvation: one slot; a 5-s job, then a 10-s job at 0.1 s, then a 1-s
# job every second for a minute. Under SRJF the 10-s job waits for the
# whole stream; with ST = 5 s it starves at 5.1 s and starts when the
# slot next frees, at 6 s: its JCT is then under 17 s.
{
  echo "0 1 5 5"
  echo "0.1 1 10 10"
  for i in $(seq 60); do echo "$i.5 1 1 1"; done
} >"$TMP/starve.tr"
for st in off 5; do
  check_exit "starvation $st" 0 sim --tasks "$TMP/starve.tr" --nodes 1 \
    --slots-per-node 1 --queue-bound 10 --scheduler yaq-c:srjf \
    --starvation $st --jobs-out "$TMP/jobs-$st.csv"
done
big() { awk -F, '$3 == 2 { print $7 }' "$1"; }
check "without a threshold the 10-s job waits for the stream" awk \
  -v j="$(big "$TMP/jobs-off.csv")" 'BEGIN { exit !(j > 40) }'
check "with ST = 5 s it finishes within 5 + 1 + 10 s of its arrival" awk \
  -v j="$(big "$TMP/jobs-5.csv")" 'BEGIN { exit !(j > 10 && j < 17) }'
check_grep "--jobs-out has a header" \
  "^scheduler,order,job,arrival_s,tasks,estimate_s,jct_s$" "$TMP/jobs-5.csv"

# Malformed traces: refused with the file, line and field.
printf '0 2 1 1 1\n1 1 1 1\n2 2 1 1 x\n' >"$TMP/bad.tr"
check_exit "a bad duration is refused" 1 sim --tasks "$TMP/bad.tr"
check_grep "... with its line and field" \
  "bad.tr line 3: field 5 \(task 2's duration\) must be a number" "$TMP/err"
printf '0 3 1 1 1\n' >"$TMP/short.tr"
check_exit "too few durations" 1 sim --tasks "$TMP/short.tr"
check_grep "... says how many" "line 1: number_of_tasks is 3 but the line has 2 durations" "$TMP/err"
printf '5 1 1 1\n4 1 1 1\n' >"$TMP/order.tr"
check_exit "lines out of order" 1 sim --tasks "$TMP/order.tr"
check_grep "... are refused" "line 2: submission_time 4 is before" "$TMP/err"
printf '0 0 1\n' >"$TMP/zero.tr"
check_exit "a job without tasks" 1 sim --tasks "$TMP/zero.tr"
check_grep "... is refused" "field 2 \(number_of_tasks\) must be a whole number from 1" "$TMP/err"
printf '# nothing\n\n' >"$TMP/empty.tr"
check_exit "an empty trace" 1 sim --tasks "$TMP/empty.tr"
check_grep "... is refused" "no jobs in the trace" "$TMP/err"
check_exit "a missing trace" 1 sim --tasks "$TMP/none.tr"
check_exit "a bad scheduler" 2 sim --tasks "$TMP/srjf.tr" --scheduler yarn,mesos
check_grep "... names the option" "--scheduler" "$TMP/err"
check_exit "a bad order" 2 sim --tasks "$TMP/srjf.tr" --scheduler yaq-c:sjf
check_exit "a bad queue bound" 2 sim --tasks "$TMP/srjf.tr" --queue-bound mwt:0
check_grep "... names the setting" "queue-bound: expected auto, a whole number of tasks or mwt:SECONDS" "$TMP/err"
check_exit "an unknown workload" 1 sim --tasks-workload gridmax
check_grep "... lists the workloads" "expected sec:X, exp:M, mixed-5-50" "$TMP/err"

# Deterministic for a seed (but for the cpu and wall columns).
for i in 1 2; do
  sim --tasks-workload mixed-5-50 --span 300 --nodes 20 --format tsv \
    --seed 3 | cut -f1-17 >"$TMP/det$i.tsv"
done
check "same seed, same results" cmp -s "$TMP/det1.tsv" "$TMP/det2.tsv"
check "every scheduler ran" test "$(wc -l <"$TMP/det1.tsv")" -eq 7

# The public traces, when they are there.
TRACES=../shared/data/traces/tasks
if [[ -r $TRACES/yahoo-sub1.tr && -r $TRACES/google-2011-sub.tr ]]; then
  check_exit "yahoo trace" 0 sim --tasks "$TRACES/yahoo-sub1.tr" \
    --target-util 0.85 --scheduler yarn,yaq-c:srjf --starvation off \
    --format tsv
  cp "$TMP/out" "$TMP/yahoo.tsv"
  check_grep "yahoo: 2,910 jobs, 122,878 tasks" "2910 jobs, 122878 tasks" \
    "$TMP/yahoo.tsv"
  check "yahoo: utilisation in 80-95%" awk -F'\t' \
    'NR > 2 && !($4 >= 0.8 && $4 <= 0.95) { bad = 1 } END { exit bad }' \
    "$TMP/yahoo.tsv"
  check "yahoo: yaq-c's median JCT below yarn's" awk -F'\t' \
    'NR == 3 { y = $6 } NR == 4 { q = $6 } END { exit !(q < y) }' \
    "$TMP/yahoo.tsv"
  check_exit "google trace" 0 sim --tasks "$TRACES/google-2011-sub.tr" \
    --target-util 1.1 --scheduler yaq-c:srjf --format tsv
  cp "$TMP/out" "$TMP/google.tsv"
  check_grep "google: 10,000 jobs, 312,558 tasks" \
    "10000 jobs, 312558 tasks" "$TMP/google.tsv"
  check "google: the run's CPU time under 60 s" awk -F'\t' \
    'NR == 3 { exit !($18 < 60) }' "$TMP/google.tsv"
else
  ok "# SKIP no public traces in $TRACES"
fi

finish
