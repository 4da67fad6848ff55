#!/usr/bin/env bash
# demo-vs-sim.sh — how well `slaq sim` predicts a real run of the demo batch.
#
# For a pair of real runs written by scripts/demo-compare.sh (DIR/fair and
# DIR/slaq, each with its slaqd state directory), turns each run into a
# simulator workload (scripts/demo_report.py workload: the same arrival
# times, each job's curve as slaq-train --record wrote it, the same cores,
# epoch and allocation unit as slaqd) and replays it under the policy that
# ran it, three times:
#
#   cpu        as specified: each job arrives when it was submitted and
#              costs the CPU-seconds per iteration it measured;
#   allocated  each job costs the core-seconds slaqd allocated to it per
#              iteration (from submission: data loading, quota granularity
#              and other processes on the machine included);
#   setup      like cpu, but each job arrives in the simulation when it sent
#              its first report, and its set-up time (submission to first
#              report: loading its data) is added to its simulated times;
#   both       setup with the allocated cost from the first report on.
#
# It prints the real and simulated summaries side by side and, per policy,
# each simulation's error on the mean time to 90% loss reduction. The
# simulator's model has no set-up phase: `cpu` shows the whole gap,
# `allocated`, `setup` and `both` ways of accounting for what it leaves out.
# Results go to DIR/POLICY/sim-VARIANT/ and DIR/sim.txt.
#
#   scripts/demo-vs-sim.sh DIR [BUILD_DIR]
set -euo pipefail

[ $# -ge 1 ] && [ "$1" != --help ] && [ "$1" != -h ] || {
    sed -n '2,28p' "$0" | sed 's/^# \{0,1\}//'; [ $# -ge 1 ]; exit $?; }
dir=$1 build=${2:-build}
root=$(cd "$(dirname "$0")/.." && pwd)
report="$root/scripts/demo_report.py"
for p in fair slaq; do
    [ -f "$dir/$p/state/state.db" ] || {
        echo "demo-vs-sim.sh: $dir/$p/state/state.db: no such file (run scripts/demo-compare.sh first)" >&2
        exit 1; }
done

{
for p in fair slaq; do
    ncores=$(sed -n 's/.*ready: pid [0-9]*, \([0-9.]*\) cores.*/\1/p' \
             "$dir/$p/state/slaqd.log")
    for v in cpu allocated setup both; do
        case $v in
        cpu) opts=(--cost cpu) ;;
        allocated) opts=(--cost allocated) ;;
        setup) opts=(--cost cpu --arrival first-report) ;;
        both) opts=(--cost allocated --arrival first-report) ;;
        esac
        python3 "$report" workload "${opts[@]}" "$dir/$p/state" \
            >"$dir/$p/workload-$v.jsonl"
        "$build/bin/slaq" sim --workload "$dir/$p/workload-$v.jsonl" \
            --cores "$ncores" --epoch 1 --unit 0.1 --policy "$p" \
            --out "$dir/$p/sim-$v" --no-plots --quiet
    done
    for v in setup both; do
        python3 "$report" setup-times "$dir/$p/workload-$v.jsonl" \
            "$dir/$p/sim-$v/$p" >"$dir/$p/sim-$v/times.json"
    done
done
python3 "$report" compare \
    "real-fair=$dir/fair/summary.json" "sim-fair-cpu=$dir/fair/sim-cpu/fair/summary.json" \
    "sim-fair-alloc=$dir/fair/sim-allocated/fair/summary.json" \
    "real-slaq=$dir/slaq/summary.json" "sim-slaq-cpu=$dir/slaq/sim-cpu/slaq/summary.json" \
    "sim-slaq-alloc=$dir/slaq/sim-allocated/slaq/summary.json"
python3 - "$dir" <<'EOF'
import json, sys
d = sys.argv[1]
def t90(path):
    with open(path) as f:
        return json.load(f)["time_to_reduction_mean_s"]["90"]
real = {p: t90("%s/%s/summary.json" % (d, p)) for p in ("fair", "slaq")}
for cost in ("cpu", "allocated", "setup", "both"):
    sim = {p: t90("%s/%s/sim-%s/%s" % (d, p, cost, "times.json"
                                        if cost in ("setup", "both") else
                                        p + "/summary.json"))
           for p in ("fair", "slaq")}
    print("sim (%s cost) vs real, mean time to 90%%: fair %+.1f%%, "
          "slaq %+.1f%%; slaq/fair real %.3f, sim %.3f" % (
              cost, 100 * (sim["fair"] / real["fair"] - 1),
              100 * (sim["slaq"] / real["slaq"] - 1),
              real["slaq"] / real["fair"], sim["slaq"] / sim["fair"]))
EOF
} | tee "$dir/sim.txt"
