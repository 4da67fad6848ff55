# test_report.sh — `slaq report`: a run's metrics from state.db or job logs.
# A slaqd creates the database (the real schema) and stops; two jobs are
# then written into it whose times to 50/90/95%, JCTs, CPU-seconds,
# average normalised loss and cores by loss group are worked out by hand
# below, then a third job that is still running. The file is never
# changed; a missing path, a text file, an empty file, an empty database,
# another program's database and one without a column needed each exit 2
# naming the file and what was expected. A job that never fell below its
# first loss reaches every X at its end. Then --logs: the same two jobs as
# bench/real/stamp.py's logs give the same numbers; a failed job and one
# still running are reported; logs that are not stamp.py's are refused,
# naming the file, the line and the field.
. "$(dirname "$0")/lib.sh"

SLAQD="$SLAQ_BUILD/bin/slaqd"
ST="$TMP/st"
DB="$ST/state.db"

check_exit "report --help exits 0" 0 "$SLAQ" report --help
check_grep "report --help names --json" "--json" "$TMP/out"
check_exit "report without a path is bad usage" 2 "$SLAQ" report
check_exit "report --epoch 0 is bad usage" 2 "$SLAQ" report --epoch 0 "$ST"
check_grep "report --epoch 0: says what it expected" "--epoch: expected a positive number" "$TMP/err"

# A state.db of slaqd's own making.
"$SLAQD" --state-dir "$ST" --http 127.0.0.1:0 --cores 2 >"$TMP/slaqd.log" 2>&1 &
pid=$!
for _ in $(seq 100); do grep -q "ready:" "$TMP/slaqd.log" && break; sleep 0.1; done
kill -TERM "$pid" 2>/dev/null
wait "$pid" 2>/dev/null
check "slaqd created state.db" test -s "$DB"
check_exit "report on a run without jobs exits 0" 0 "$SLAQ" report --json "$ST"
check "json without jobs: no jobs, no numbers" python3 -c "
import json
d = json.load(open('$TMP/out'))
s = d['summary']
assert d['jobs'] == [] and s['jobs'] == 0 and s['samples'] == 0, d
assert s['t90_mean_s'] is None and s['avg_norm_loss'] is None, s
assert s['makespan_s'] is None and s['share_by_loss_group'] is None, s"

# T0 + multiples of 1/4 s: every time and difference is exact in a double.
# Job 1 (alice): submitted at 0, ended at 10; losses 10 6 3 2 1.5 1 at
# 1 2 4 6 8 9, so l = 1, 5/9, 2/9, 1/9, 1/18, 0: 50% at 4, 90% at 8, 95%
# at 9; CPU 0.5+1+1+1+1.25+1 = 5.75. Job 2 (bob): submitted at 2, ended at
# 7; losses 4 2 0 at 3 5 6: 50% at 5-2 = 3, 90% and 95% at 6-2 = 4; CPU 4.
# Cores: job 1 2 from 0.5, 1 from 2.5, 2 from 6.5; job 2 1 from 2.5.
T0=1700000000
sqlite3 "$DB" <<SQL
INSERT INTO jobs(id, name, user, state, submitted, started, ended, weight)
  VALUES (1, 'a', 'alice', 'done', $T0, $T0 + 0.25, $T0 + 10, 1),
         (2, 'b', 'bob', 'failed', $T0 + 2, $T0 + 2.25, $T0 + 7, 1);
INSERT INTO reports(job, iter, loss, cpu_s, samples, t) VALUES
  (1, 0, 10, 0.5, 0, $T0 + 1), (1, 1, 6, 1, 1, $T0 + 2),
  (1, 2, 3, 1, 1, $T0 + 4), (1, 3, 2, 1, 1, $T0 + 6),
  (1, 4, 1.5, 1.25, 1, $T0 + 8), (1, 5, 1, 1, 1, $T0 + 9),
  (2, 0, 4, 0, 0, $T0 + 3), (2, 1, 2, 2, 1, $T0 + 5),
  (2, 2, 0, 2, 1, $T0 + 6);
INSERT INTO allocs(job, t, cores, epoch) VALUES
  (1, $T0 + 0.5, 2, 1), (1, $T0 + 2.5, 1, 3), (2, $T0 + 2.5, 1, 3),
  (1, $T0 + 6.5, 2, 7);
SQL
sum_before=$(sha256sum "$DB" | cut -d' ' -f1)

check_exit "report STATE_DIR exits 0" 0 "$SLAQ" report "$ST"
cp "$TMP/out" "$TMP/table"
check_grep "table: a header naming every column" \
  "^ID +USER +NAME +STATE +T50_S +T90_S +T95_S +JCT_S +CPU_S +REPORTS$" "$TMP/table"
check_grep "table: job 1's times, CPU and reports" \
  "^1 +alice +a +done +4\.0 +8\.0 +9\.0 +10\.0 +5\.75 +6$" "$TMP/table"
check_grep "table: job 2's" \
  "^2 +bob +b +failed +3\.0 +4\.0 +4\.0 +5\.0 +4\.00 +3$" "$TMP/table"
check_grep "table: the mean times" "^mean t50 / t90 / t95 \(s\) +3\.5 / 6\.0 / 6\.5$" "$TMP/table"
check_grep "table: the makespan" "^makespan \(s\) +10\.0$" "$TMP/table"
check_grep "table: the average normalised loss" "^average normalised loss +0\.475 \(10 samples, every 1 s\)$" "$TMP/table"

check_exit "report state.db --json exits 0" 0 "$SLAQ" report --json "$DB"
cp "$TMP/out" "$TMP/a.json"
# The average normalised loss, sampled every second from 0 to 9 (at 10
# both jobs have ended): job 1 alone 1, 1; both (1 + 5/9)/2 twice,
# (2/9 + 1)/2, (2/9 + 1/2)/2, (1/9 + 0)/2; job 1 alone 1/9, 1/18, 0: in
# 36ths 36+36+28+28+22+13+2+4+2+0 = 171, over 10 samples 0.475. Cores by
# loss group (ranked by l; of two jobs the second is low): high 1, 0, .5,
# .5, .5, .5, 1, 1, 1 of the 9 samples with cores, 6/9; low 3/9.
check "json: per job times, JCT, CPU, reports, as worked out" \
  python3 - "$TMP/a.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j1, j2 = d["jobs"]
want1 = {"id": 1, "name": "a", "user": "alice", "state": "done",
         "t50_s": 4, "t90_s": 8, "t95_s": 9, "jct_s": 10, "cpu_s": 5.75,
         "reports": 6, "iters": 5, "first_loss": 10, "last_loss": 1,
         "arrival_s": 0, "submitted": 1700000000, "ended": 1700000010}
want2 = {"id": 2, "user": "bob", "state": "failed", "t50_s": 3,
         "t90_s": 4, "t95_s": 4, "jct_s": 5, "cpu_s": 4, "reports": 3,
         "arrival_s": 2}
for j, want in ((j1, want1), (j2, want2)):
    for k, v in want.items():
        assert j[k] == v, (j["id"], k, j[k], v)
PY
check "json: the summary, as worked out" python3 - "$TMP/a.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["summary"]
want = {"jobs": 2, "ended": 2, "t50_mean_s": 3.5, "t90_mean_s": 6,
        "t95_mean_s": 6.5, "jct_mean_s": 7.5, "makespan_s": 10,
        "cpu_s": 9.75, "samples": 10, "epoch_s": 1,
        "first_submitted": 1700000000}
for k, v in want.items():
    assert s[k] == v, (k, s[k], v)
assert abs(s["avg_norm_loss"] - 0.475) < 1e-12, s["avg_norm_loss"]
g = s["share_by_loss_group"]
assert abs(g["high"] - 6 / 9) < 1e-12 and g["medium"] == 0 and \
    abs(g["low"] - 3 / 9) < 1e-12, g
PY

check_exit "report --timeline writes the samples" 0 "$SLAQ" report --timeline "$TMP/tl.csv" "$ST"
check_grep "timeline: slaq sim's columns" \
  "^time_s,active_jobs,avg_norm_loss,cores_high,cores_medium,cores_low$" "$TMP/tl.csv"
check "timeline: one row per sample" test "$(wc -l <"$TMP/tl.csv")" -eq 11
check_grep "timeline: at 5 s both jobs, their mean l 13/36" "^5\.000,2,0\.361111,1\.0000,0\.0000,1\.0000$" "$TMP/tl.csv"
check_exit "report: more than 1000000 samples is refused" 2 "$SLAQ" report --epoch 0.000005 "$ST"
check_grep "report: the cap says to give a larger --epoch" \
  "the run spans 10 s: more than 1000000 samples of --epoch 5e-06 s with jobs active; give a larger --epoch" "$TMP/err"
check_exit "report --epoch 2 samples every 2 s" 0 "$SLAQ" report --json --epoch 2 "$ST"
check "--epoch 2: 5 samples, (1 + 7/9 + 11/18 + 1/18 + 1/18)/5" python3 -c "
import json, sys
s = json.load(open('$TMP/out'))['summary']
assert s['samples'] == 5 and s['epoch_s'] == 2, s
assert abs(s['avg_norm_loss'] - (1 + 7/9 + 11/18 + 1/18 + 1/18) / 5) < 1e-12, s"

# A third job, still running (its name with an escape sequence): no times
# to X% or JCT yet, left out of the means; no makespan; its CPU counted.
sqlite3 "$DB" <<SQL
INSERT INTO jobs(id, name, user, state, submitted, started, ended, weight)
  VALUES (3, 'c' || char(27) || '[2J', 'carol', 'running', $T0 + 4,
          $T0 + 4.25, 0, 1);
INSERT INTO reports(job, iter, loss, cpu_s, samples, t) VALUES
  (3, 0, 7, 0.25, 0, $T0 + 5), (3, 1, 5, 3, 1, $T0 + 11);
SQL
sum_before=$(sha256sum "$DB" | cut -d' ' -f1)
check_exit "report on a run still going exits 0" 0 "$SLAQ" report --json "$ST"
check "json: the running job has no times, the means are the ended jobs'" \
  python3 - "$TMP/out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j3 = d["jobs"][2]
assert j3["state"] == "running" and j3["ended"] is None, j3
for k in ("t50_s", "t90_s", "t95_s", "jct_s"):
    assert j3[k] is None, (k, j3[k])
assert j3["cpu_s"] == 3.25 and j3["reports"] == 2, j3
s = d["summary"]
assert s["jobs"] == 3 and s["ended"] == 2, s
assert s["t90_mean_s"] == 6 and s["jct_mean_s"] == 7.5, s
assert s["makespan_s"] is None and s["cpu_s"] == 13, s
# sampled to 11 s, its last report; job 3 l 1 until then, its newest loss
# standing for L_end: in 108ths 845 over 12 samples
assert s["samples"] == 12, s
assert abs(s["avg_norm_loss"] - 845 / 108 / 12) < 1e-12, s["avg_norm_loss"]
PY
check_exit "report on a run still going: the table" 0 "$SLAQ" report "$ST"
check_grep "table: the running job's times are '-'" \
  "^3 +carol +c\\\\x1b\[2J +running +- +- +- +- +3\.25 +2$" "$TMP/out"
check_grep "table: no makespan while a job runs" "^makespan \(s\) +- \(1 not ended\)$" "$TMP/out"
check "report changed nothing in state.db" \
  test "$(sha256sum "$DB" | cut -d' ' -f1)" = "$sum_before"

# What is not slaqd's state.db.
check_exit "missing path: exit 2" 2 "$SLAQ" report "$TMP/nope"
check_grep "missing path: named, and what was expected" \
  "nope: No such file or directory; expected slaqd's state directory or its state.db" "$TMP/err"
mkdir "$TMP/emptydir"
check_exit "directory without state.db: exit 2" 2 "$SLAQ" report "$TMP/emptydir"
check_grep "directory without state.db: names DIR/state.db" "emptydir/state.db: No such file" "$TMP/err"
echo "not a database, but long enough to be read as one......................................................" >"$TMP/text.db"
check_exit "a text file: exit 2" 2 "$SLAQ" report "$TMP/text.db"
check_grep "a text file: not SQLite, expected state.db" \
  "text.db is not an SQLite database .*; expected slaqd's state.db \(docs/state-db.md\)" "$TMP/err"
: >"$TMP/zero.db"
check_exit "an empty file: exit 2" 2 "$SLAQ" report "$TMP/zero.db"
check_grep "an empty file: says so" "zero.db is empty \(0 bytes\); expected slaqd's state.db" "$TMP/err"
sqlite3 "$TMP/notables.db" "PRAGMA user_version = 1;"
check_exit "an empty database: exit 2" 2 "$SLAQ" report "$TMP/notables.db"
check_grep "an empty database: says so" "notables.db is an empty database \(no tables\); expected slaqd's state.db" "$TMP/err"
sqlite3 "$TMP/other.db" "CREATE TABLE jobs(x); CREATE TABLE songs(title TEXT);"
check_exit "another program's database: exit 2" 2 "$SLAQ" report "$TMP/other.db"
check_grep "another program's database: says so" \
  "other.db is a database of another program \(application_id 0, 2 tables" "$TMP/err"
sqlite3 "$TMP/old.db" "CREATE TABLE jobs(id, name, state); CREATE TABLE reports(job, iter, loss);"
check_exit "a database without a column: exit 2" 2 "$SLAQ" report "$TMP/old.db"
check_grep "a database without a column: names table and column" \
  "old.db: table jobs has no column submitted; expected slaqd's state.db" "$TMP/err"
# A job that completed no lower than it began has no drop to normalise by:
# it reaches every X at its end, so its times are its JCT, and a note says
# so. One cancelled so reaches none.
cp "$DB" "$TMP/flat.db"
sqlite3 "$TMP/flat.db" <<SQL
INSERT INTO jobs(id, name, user, state, submitted, started, ended, weight)
  VALUES (4, 'flat', 'dave', 'done', $T0 + 1, $T0 + 1.25, $T0 + 6, 1);
INSERT INTO reports(job, iter, loss, cpu_s, samples, t) VALUES
  (4, 0, 3, 0, 0, $T0 + 2), (4, 1, 2, 1, 1, $T0 + 3),
  (4, 2, 3.5, 1, 1, $T0 + 4);
INSERT INTO jobs(id, name, user, state, submitted, started, ended, weight)
  VALUES (5, 'gone', 'dave', 'cancelled', $T0 + 1, $T0 + 1.25, $T0 + 6, 1);
INSERT INTO reports(job, iter, loss, cpu_s, samples, t) VALUES
  (5, 0, 3, 0, 0, $T0 + 2);
SQL
check_exit "report: a job that never fell below its first loss" 0 "$SLAQ" report --json "$TMP/flat.db"
check "state.db: its times to X% are its JCT, 5 s" python3 -c "
import json
j = json.load(open('$TMP/out'))['jobs'][3]
assert [j[k] for k in ('t50_s', 't90_s', 't95_s', 'jct_s')] == [5] * 4, j"
check "state.db: the cancelled one reaches no X" python3 -c "
import json
j = json.load(open('$TMP/out'))['jobs'][4]
assert j['jct_s'] == 5 and [j[k] for k in ('t50_s', 't90_s')] == [None] * 2, j"
check "state.db: the note is the done job's alone" test "$(grep -c note "$TMP/err")" -eq 1
check_grep "state.db: a note names the job and says so" \
  "^slaq report: note: job 4: its loss ended at 3\.5, no lower than its first 3: its times to X% are its JCT$" "$TMP/err"

# --logs: the same two jobs, written as bench/real/stamp.py writes them
# (job a with the arrival line run.py has it write, b arriving at its
# start; a's output holds lines that are not reports), give the same
# numbers as from state.db.
L="$TMP/logs"
mkdir "$L"
printf '%s\n' "$T0.000 arrival" "$T0.250 start" \
  "$((T0 + 1)).000 iter=0 loss=10" \
  "$((T0 + 2)).000 epoch 1: iter=1 loss=6 samples=100" \
  "$((T0 + 3)).000 an output line with iter=7 and no loss" \
  "$((T0 + 3)).500 # resumed at iter=1 loss=6" \
  "$((T0 + 4)).000 iter=2 loss=3" "$((T0 + 6)).000 iter=3 loss=2" \
  "$((T0 + 8)).000 iter=4 loss=1.5" "$((T0 + 9)).000 iter=5 loss=1" \
  "$((T0 + 9)).500 " "$((T0 + 10)).000 exit=0 cpu_s=5.75" >"$L/a.log"
printf '%s\n' "$((T0 + 2)).000 start" "$((T0 + 3)).000 iter=0 loss=4" \
  "$((T0 + 5)).000 iter=1 loss=2" "$((T0 + 6)).000 iter=2 loss=0" \
  "$((T0 + 7)).000 exit=0 cpu_s=4" >"$L/b.log"
check_exit "report --logs exits 0" 0 "$SLAQ" report --logs "$L/a.log" "$L/b.log"
check_grep "--logs table: job a, named by its file" \
  "^1 +- +a +done +4\.0 +8\.0 +9\.0 +10\.0 +5\.75 +6$" "$TMP/out"
check_grep "--logs table: job b" \
  "^2 +- +b +done +3\.0 +4\.0 +4\.0 +5\.0 +4\.00 +3$" "$TMP/out"
check_grep "--logs table: the makespan" "^makespan \(s\) +10\.0$" "$TMP/out"
check_exit "report --logs --json exits 0" 0 "$SLAQ" report --json --logs "$L/a.log" "$L/b.log"
check "--logs json: every job's and the summary's numbers as from state.db" \
  python3 - "$TMP/out" "$TMP/a.json" <<'PY'
import json, sys
got, want = (json.load(open(f)) for f in sys.argv[1:])
for g, w in zip(got["jobs"], want["jobs"]):
    for k in ("t50_s", "t90_s", "t95_s", "jct_s", "cpu_s", "reports",
              "iters", "first_loss", "last_loss", "arrival_s", "submitted",
              "ended", "first_report_at", "last_report_at"):
        assert g[k] == w[k], (g["name"], k, g[k], w[k])
assert [g["state"] for g in got["jobs"]] == ["done", "done"]
for k in ("jobs", "ended", "t50_mean_s", "t90_mean_s", "t95_mean_s",
          "jct_mean_s", "makespan_s", "cpu_s", "samples", "avg_norm_loss"):
    assert got["summary"][k] == want["summary"][k], k
assert got["summary"]["share_by_loss_group"] is None  # no allocations
j1 = got["jobs"][0]
assert j1["first_report_at"] == 1700000001, j1
assert j1["last_report_at"] == 1700000009, j1
PY

# A job that never fell: the note names its log. One that failed (exit 3)
# so reaches no X.
printf '%s\n' "$((T0 + 1)).000 start" "$((T0 + 2)).000 iter=0 loss=3" \
  "$((T0 + 3)).000 iter=1 loss=3" "$((T0 + 4)).000 exit=0 cpu_s=1.5" \
  >"$L/flat.log"
sed 's/exit=0/exit=3/' "$L/flat.log" >"$L/failed.log"
check_exit "--logs: a job that never fell" 0 "$SLAQ" report --json --logs "$L/flat.log" "$L/failed.log"
check "--logs: its times are its JCT, 3 s; the failed one's none" python3 -c "
import json
j, f = json.load(open('$TMP/out'))['jobs']
assert j['state'] == 'done' and j['cpu_s'] == 1.5, j
assert [j[k] for k in ('t50_s', 't90_s', 't95_s', 'jct_s')] == [3] * 4, j
assert f['state'] == 'failed' and f['jct_s'] == 3 and f['t90_s'] is None, f"
check_grep "--logs: the note names the log" \
  "^slaq report: note: .*/flat\.log: its loss ended at 3, no lower than its first 3: its times to X% are its JCT$" "$TMP/err"
# A job without its closing line is still running.
head -n 3 "$L/b.log" >"$L/going.log"
check_exit "--logs: a job still running" 0 "$SLAQ" report --json --logs "$L/going.log"
check "--logs: still running: no times, no makespan" python3 -c "
import json
d = json.load(open('$TMP/out'))
j = d['jobs'][0]
assert j['state'] == 'running' and j['ended'] is None, j
assert j['t90_s'] is None and d['summary']['makespan_s'] is None, d"

# What is not a stamp.py log: exit 2, naming the file, the line, the field.
bad() { # bad NAME WHAT PATTERN LINE...: the log of LINEs is refused
  local name=$1 what=$2 pat=$3; shift 3
  printf '%s\n' "$@" >"$L/$name.log"
  check_exit "--logs: $what: exit 2" 2 "$SLAQ" report --logs "$L/a.log" "$L/$name.log"
  check_grep "--logs: $what: says where" "^slaq report: $L/$name\.log:$pat" "$TMP/err"
}
bad loss "a loss not a number" "3: field loss: expected a finite number, got 'x'" \
  "$T0 start" "$T0.5 iter=0 loss=1" "$((T0 + 1)) iter=1 loss=x"
bad nan "a loss NaN" "2: field loss: expected a finite number, got 'nan'" \
  "$T0 start" "$((T0 + 1)) iter=0 loss=nan"
bad iter "an iteration below 0" "2: field iter: expected an iteration \(a whole number >= 0\), got '-1'" \
  "$T0 start" "$((T0 + 1)) iter=-1 loss=2"
bad time "a line without its time" "3: field time: expected seconds since the epoch \(a number > 0\), got 'iter=1'" \
  "$T0 start" "$((T0 + 1)) iter=0 loss=2" "iter=1 loss=1"
bad early "a report before the arrival" "3: field time: 1699999999\.000 is before the job's arrival at 1700000000\.000" \
  "$T0 arrival" "$T0 start" "$((T0 - 1)) iter=0 loss=2"
bad late "an arrival after the start" "2: field time: the job starts at 1700000000\.000, before it arrives at 1700000005\.000" \
  "$((T0 + 5)) arrival" "$T0 start"
bad exit "an exit status not a number" "3: field exit: expected the job's exit status \(a whole number\), got 'ok'" \
  "$T0 start" "$((T0 + 1)) iter=0 loss=2" "$((T0 + 2)) exit=ok cpu_s=1"
bad nocpu "a closing line without cpu_s" "3: the closing line \(exit=\) has no field cpu_s" \
  "$T0 start" "$((T0 + 1)) iter=0 loss=2" "$((T0 + 2)) exit=0"
bad cpu "CPU-seconds below 0" "2: field cpu_s: expected the CPU-seconds the job used \(a number >= 0\), got '-2'" \
  "$T0 start" "$((T0 + 2)) exit=0 cpu_s=-2"
bad twice "two runs in one log" "3: a line after the closing line \(exit=\): a log holds one run of one job" \
  "$T0 start" "$((T0 + 2)) exit=0 cpu_s=1" "$((T0 + 3)) start"
bad nostart "output before the start line" "1: expected 'TIME arrival or TIME start' before the job's output" \
  "$T0 iter=0 loss=2"
bad empty "an empty line" "3: an empty line" "$T0 start" "$((T0 + 1)) iter=0 loss=2" ""
: >"$L/zero.log"
check_exit "--logs: an empty file: exit 2" 2 "$SLAQ" report --logs "$L/zero.log"
check_grep "--logs: an empty file: says so" "zero\.log: an empty file; expected a line 'TIME start'" "$TMP/err"
check_exit "--logs: a missing file: exit 2" 2 "$SLAQ" report --logs "$L/nope.log"
check_grep "--logs: a missing file: named" "nope\.log: No such file or directory; expected a job log of bench/real/stamp\.py" "$TMP/err"
check_exit "--logs without a log is bad usage" 2 "$SLAQ" report --logs
check_exit "a state dir and a second path is bad usage" 2 "$SLAQ" report "$ST" "$L/a.log"
finish
