#!/bin/sh
# sweep-results.sh BUILD [NAME...]: the figures of docs/sweeps.md. For each
# recorded sweep in data/sweeps/ (or the NAMEs given): slaq's sweep policies
# in the simulator over 25 configuration orders, Optuna's pruners on the
# same traces and orders, both as recorded and without start-up times
# (--start-scale 0), and the calibration and speed of the learning-curve
# model. Writes docs/results/sweeps/NAME-*.{txt,json}.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
out=docs/results/sweeps
slots=${SLOTS:-4}
orders=${ORDERS:-25}
mkdir -p "$out"
names=${*:-$(ls data/sweeps/*.jsonl | xargs -n1 basename | sed 's/\.jsonl$//')}
for name in $names; do
    trace=data/sweeps/$name.jsonl
    for scale in 1 0; do
        sfx=$([ "$scale" = 1 ] && echo "" || echo "-nostart")
        echo "== $name: slaq sim --sweep ($slots slots, $orders orders, start-up x$scale)" >&2
        "$build/bin/slaq" sim --sweep "$trace" --slots "$slots" --orders "$orders" \
            --kill-threshold 0.15 --start-scale "$scale" \
            --policy pop,bandit,earlyterm,default,sh,hyperband \
            --orders-out "$out/$name-orders.json" --json "$out/$name-sim$sfx.json" \
            >"$out/$name-sim$sfx.txt"
        cat "$out/$name-sim$sfx.txt"
        target=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target"])' "$out/$name-sim$sfx.json")
        echo "== $name: Optuna's pruners (start-up x$scale)" >&2
        /usr/bin/python3 scripts/sweep-optuna.py --sweep "$trace" \
            --orders "$out/$name-orders.json" --slots "$slots" --target "$target" \
            --start-scale "$scale" --pruner sha,hyperband,median \
            --json "$out/$name-optuna$sfx.json" >"$out/$name-optuna$sfx.txt"
        cat "$out/$name-optuna$sfx.txt"
    done
    echo "== $name: calibration and speed of the curve model" >&2
    "$build/bin/slaq" sim --sweep "$trace" --calib --json "$out/$name-calib.json" \
        >"$out/$name-calib.txt"
    cat "$out/$name-calib.txt"
done
