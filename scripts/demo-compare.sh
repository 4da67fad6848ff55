#!/usr/bin/env bash
# demo-compare.sh — `make demo-compare`: the demo batch under `fair`, then
# under `slaq`, back to back on this machine, and what the simulator
# predicts for each.
#
# Each repetition runs scripts/demo.sh twice (same jobs, same arrivals, same
# iteration counts, so the same curves and the same L_end; only the policy
# differs), then replays each real run in `slaq sim` — its recorded curves
# (slaq-train --record), its arrival times, each job's measured CPU cost per
# iteration, the same cores, epoch and allocation unit — and prints:
#
#   - a side-by-side table: mean time to 50/90/95% loss reduction, average
#     normalised loss, share of cores by loss group (high/medium/low),
#     makespan, for real fair, real slaq, sim fair, sim slaq;
#   - slaq's mean time to 90% over fair's (real and simulated), and the gap
#     between each real run and its simulation;
#   - a plot of the average normalised loss over time (gnuplot SVG).
#
# With several repetitions (--reps N) the ratios are summarised at the end
# (mean, min, max). Everything is written under --out (default
# var/demo-compare): repN/{fair,slaq}/ (summary.json, timeline.csv,
# workload.jsonl, sim/), repN/compare.txt, repN/loss.svg, ratios.txt.
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
slaq="$build/bin/slaq"
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
        python3 "$report" workload "$dir/$p/state" >"$dir/$p/workload.jsonl"
        # The simulator with slaqd's settings: the cores slaqd divided, its
        # epoch (1 s) and its allocation unit (0.1 core, scripts/demo.sh).
        ncores=$(sed -n 's/.*ready: pid [0-9]*, \([0-9.]*\) cores.*/\1/p' \
                 "$dir/$p/state/slaqd.log")
        "$slaq" sim --workload "$dir/$p/workload.jsonl" --cores "$ncores" \
            --epoch 1 --unit 0.1 --policy "$p" --out "$dir/$p/sim" \
            --no-plots --quiet
    done
    python3 "$report" compare --plot "$dir/loss.svg" \
        "real-fair=$dir/fair/summary.json" "real-slaq=$dir/slaq/summary.json" \
        "sim-fair=$dir/fair/sim/fair/summary.json" \
        "sim-slaq=$dir/slaq/sim/slaq/summary.json" | tee "$dir/compare.txt"
    python3 - "$dir" "$r" <<'EOF' | tee -a "$out/ratios.txt"
import json, sys
d, r = sys.argv[1], sys.argv[2]
def t90(path):
    with open(path) as f:
        return json.load(f)["time_to_reduction_mean_s"]["90"]
rf, rs = t90(d + "/fair/summary.json"), t90(d + "/slaq/summary.json")
sf, ss = t90(d + "/fair/sim/fair/summary.json"), t90(d + "/slaq/sim/slaq/summary.json")
print("rep %s: t90 slaq/fair real %.3f sim %.3f; sim vs real: fair %+.1f%% "
      "slaq %+.1f%%" % (r, rs / rf, ss / sf, 100 * (sf / rf - 1),
                        100 * (ss / rs - 1)))
EOF
done

python3 - "$out/ratios.txt" <<'EOF'
import re, sys
rows = [l for l in open(sys.argv[1]) if l.startswith("rep ")]
def col(pat):
    return [float(re.search(pat, l).group(1)) for l in rows]
for label, pat in (("t90 slaq/fair, real", r"real ([0-9.]+)"),
                   ("t90 slaq/fair, sim ", r"sim ([0-9.]+);"),
                   ("sim vs real, fair (%)", r"fair ([-+0-9.]+)%"),
                   ("sim vs real, slaq (%)", r"slaq ([-+0-9.]+)%")):
    v = col(pat)
    print("%-22s mean %.3f  min %.3f  max %.3f  (%d run%s)" % (
        label, sum(v) / len(v), min(v), max(v), len(v),
        "" if len(v) == 1 else "s"))
EOF
echo "results: $out (per repetition: compare.txt, loss.svg, fair/ and slaq/)"
