#!/usr/bin/env bash
# demo.sh — `make demo`: slaq's main job on embedded defaults.
#
# Shows what the scheduling core does on the recorded curves shipped with
# the repository: how well each predictor forecasts them, and how long an
# epoch takes at the scale of the SLAQ paper's evaluation.
set -euo pipefail
build=${1:-build}
slaq="$build/bin/slaq"

echo "== slaq predict-eval: forecasting recorded training curves"
"$slaq" predict-eval tests/data/curves-dev.jsonl --horizons 1,5,10
echo
echo "== slaq bench sched: one epoch for 4,000 jobs on 16,000 cores"
"$slaq" bench sched --jobs 4000 --cores 16000 --history 50 --epochs 10
