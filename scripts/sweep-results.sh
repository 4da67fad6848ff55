#!/bin/sh
# sweep-results.sh BUILD: the figures of docs/sweeps.md. For each recorded
# sweep in data/sweeps/: slaq's sweep policies in the simulator over 25
# configuration orders, Optuna's pruners on the same traces and orders, and
# the calibration and speed of the learning-curve model. Writes
# docs/results/sweeps/NAME-{sim,optuna,calib}.{txt,json}.
set -eu
build=${1:-build}
out=docs/results/sweeps
slots=${SLOTS:-4}
orders=${ORDERS:-25}
mkdir -p "$out"
for trace in data/sweeps/*.jsonl; do
    name=$(basename "$trace" .jsonl)
    echo "== $name: slaq sim --sweep ($slots slots, $orders orders)" >&2
    "$build/bin/slaq" sim --sweep "$trace" --slots "$slots" --orders "$orders" \
        --kill-threshold 0.15 --policy pop,bandit,earlyterm,default,sh,hyperband \
        --orders-out "$out/$name-orders.json" --json "$out/$name-sim.json" \
        | tee "$out/$name-sim.txt"
    target=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target"])' "$out/$name-sim.json")
    echo "== $name: Optuna's pruners" >&2
    /usr/bin/python3 scripts/sweep-optuna.py --sweep "$trace" \
        --orders "$out/$name-orders.json" --slots "$slots" --target "$target" \
        --pruner sha,hyperband,median --json "$out/$name-optuna.json" \
        | tee "$out/$name-optuna.txt"
    echo "== $name: calibration and speed of the curve model" >&2
    "$build/bin/slaq" sim --sweep "$trace" --calib --json "$out/$name-calib.json" \
        | tee "$out/$name-calib.txt"
done
