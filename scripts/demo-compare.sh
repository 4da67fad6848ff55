#!/usr/bin/env bash
# demo-compare.sh — `make demo-compare`: the demo batch under `fair`, then
# under `slaq`, back to back on this machine, and what the simulator
# predicts for each.
#
# Each repetition runs scripts/demo.sh twice (same jobs, same arrivals, same
# iteration counts, so the same curves and the same L_end; only the policy
# differs), then replays each real run in `slaq sim` (scripts/demo-vs-sim.sh:
# its recorded curves, its arrival times, each job's measured cost per
# iteration, the same cores, epoch and allocation unit) and prints:
#
#   - a side-by-side table: mean time to 50/90/95% loss reduction, average
#     normalised loss, share of cores by loss group (high/medium/low),
#     makespan, for real fair, real slaq and their simulations;
#   - slaq's mean time to 90% over fair's (real and simulated), and the gap
#     between each real run and its simulation;
#   - a plot of the average normalised loss over time (gnuplot SVG).
#
# With several repetitions (--reps N) the ratios are summarised at the end
# (mean, min, max). Everything is written under --out (default
# var/demo-compare): repN/{fair,slaq}/ (state/, summary.json,
# timeline.csv, workload-COST.jsonl, sim-COST/), repN/sim.txt,
# repN/loss.svg, ratios.txt.
#
#   scripts/demo-compare.sh [--reps N] [--size full|tiny] [--out DIR]
#                           [--enforce MODE] [BUILD_DIR]
set -euo pipefail

reps=1 size=full out=var/demo-compare enforce=auto build=build
while [ $# -gt 0 ]; do
    case $1 in
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --enforce) enforce=$2; shift 2 ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "demo-compare.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
case $reps in ''|*[!0-9]*|0)
    echo "demo-compare.sh: --reps: expected a positive integer, got '$reps'" >&2
    exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
report="$root/scripts/demo_report.py"
rm -rf "$out"
mkdir -p "$out"

: >"$out/ratios.txt"
for r in $(seq "$reps"); do
    dir="$out/rep$r"
    for p in fair slaq; do
        echo "== repetition $r/$reps: the demo batch under $p ($(date +%T))"
        mkdir -p "$dir/$p"
        "$root/scripts/demo.sh" --policy "$p" --size "$size" --quiet \
            --enforce "$enforce" --state-dir "$dir/$p/state" \
            --http 127.0.0.1:0 --json "$dir/$p/summary.json" "$build" \
            >"$dir/$p/demo.txt"
    done
    "$root/scripts/demo-vs-sim.sh" "$dir" "$build"
    python3 "$report" compare --plot "$dir/loss.svg" \
        "real-fair=$dir/fair/summary.json" "real-slaq=$dir/slaq/summary.json" \
        "sim-fair=$dir/fair/sim-cpu/fair/summary.json" \
        "sim-slaq=$dir/slaq/sim-cpu/slaq/summary.json" | grep '^plot:' || true
    sed -n "s/^sim ([a-z]* cost) vs real/rep $r: &/p" "$dir/sim.txt" \
        >>"$out/ratios.txt"
done

echo "== over $reps repetition(s)"
python3 - "$out/ratios.txt" <<'EOF'
import re, sys
rows = open(sys.argv[1]).read().splitlines()
def stat(label, cost, pat):
    v = [float(re.search(pat, l).group(1)) for l in rows
         if "(%s cost)" % cost in l]
    print("%-38s mean %7.3f  min %7.3f  max %7.3f  (%d)" % (
        label, sum(v) / len(v), min(v), max(v), len(v)))
stat("mean t90 slaq/fair, real", "cpu", r"real ([0-9.]+)")
for cost in ("cpu", "allocated", "setup", "both"):
    stat("mean t90 slaq/fair, sim (%s)" % cost, cost, r"sim ([0-9.]+)$")
    stat("sim (%s) vs real, fair, %%" % cost, cost, r"fair ([-+0-9.]+)%")
    stat("sim (%s) vs real, slaq, %%" % cost, cost, r"slaq ([-+0-9.]+)%")
EOF
echo "results: $out (per repetition: sim.txt, loss.svg, fair/ and slaq/)"
