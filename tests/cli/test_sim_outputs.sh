# test_sim_outputs.sh — scripts/sim-outputs.sh, the before-and-after check
# of a change meant to keep results bit for bit: it writes every
# simulator's outputs, none of the timings the runs measure is left, and
# two runs of the same build write the same bytes (so that diff -r of a
# run before a change and one after shows only what the change did).
. "$(dirname "$0")/lib.sh"

SO=scripts/sim-outputs.sh
check_exit "sim-outputs: no output directory is a usage error" 1 "$SO"
check_exit "sim-outputs: a first run" 0 "$SO" "$TMP/a" "$SLAQ_BUILD"
for f in one-node/slaq/jobs.csv nodes/summary.json hold/slaq/timeline.csv \
         shares/slaq+shares/jobs.csv deadlines/jobs.csv \
         deadlines-weigh/summary.csv tasks.tsv tasks-jobs.csv \
         aqp/queries.csv sweep.json; do
  check "sim-outputs: writes $f" test -s "$TMP/a/$f"
done
check "sim-outputs: no timing is left" python3 -c '
import os, sys
for root, _, files in os.walk(sys.argv[1]):
    for name in files:
        text = open(os.path.join(root, name), errors="replace").read()
        for t in ("sched_ms", "sched_us_per_round", "median_ms", "\twall"):
            assert t not in text, (name, t)
    assert "report.html" not in files, root
' "$TMP/a"
check_exit "sim-outputs: a second run" 0 "$SO" "$TMP/b" "$SLAQ_BUILD"
check "sim-outputs: the two runs wrote the same bytes" diff -r "$TMP/a" "$TMP/b"
finish
