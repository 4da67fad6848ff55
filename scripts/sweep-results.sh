#!/bin/sh
# sweep-results.sh BUILD [TRACES...]: the figures of docs/sweeps.md. TRACES
# are sweep names (data/sweeps/NAME.jsonl), trace files (PATH/NAME.jsonl)
# or directories (every *.jsonl in them); none: every sweep in
# data/sweeps/. For each: slaq's sweep policies in the simulator over 25
# configuration orders, Optuna's pruners on the same traces and orders
# (each also with a warm-up of POP's first boundary, NAME@10),
# both as recorded and without start-up times (--start-scale 0), the
# POP policies and EarlyTerm again with a perfect curve model
# (POLICY+oracle: what a better model could give them), and the
# calibration and speed of the learning-curve model. Writes
# $OUT/NAME-*.{txt,json} (OUT defaults to docs/results/sweeps; CALIB=0
# skips the calibration) and POP's ratios to the targets in
# $OUT/targets.{txt,json} (scripts/sweep-targets.py). B=N sets every
# policy's evaluation boundary to N epochs (slaq sim --sweep --b N) and
# Optuna's warm-ups to N (NAME@N); default: each policy's own (POP and
# Bandit 10, EarlyTerm 30) and warm-ups of 10.
set -eu
build=${1:-build}
[ $# -gt 0 ] && shift
out=${OUT:-docs/results/sweeps}
slots=${SLOTS:-4}
orders=${ORDERS:-25}
b=${B:-}
warm=${B:-10}
mkdir -p "$out"
[ $# -gt 0 ] || set -- data/sweeps
traces=
names=
for t in "$@"; do
    if [ -d "$t" ]; then
        for f in "$t"/*.jsonl; do
            [ -f "$f" ] || { echo "sweep-results: no *.jsonl in $t" >&2; exit 2; }
            traces="$traces $f"
        done
    elif [ -f "$t" ]; then
        traces="$traces $t"
    elif [ -f "data/sweeps/$t.jsonl" ]; then
        traces="$traces data/sweeps/$t.jsonl"
    else
        echo "sweep-results: $t: not a trace file, a directory or a sweep in data/sweeps/" >&2
        exit 2
    fi
done
for trace in $traces; do
    name=$(basename "$trace" .jsonl)
    for scale in 1 0; do
        sfx=$([ "$scale" = 1 ] && echo "" || echo "-nostart")
        echo "== $name: slaq sim --sweep ($slots slots, $orders orders, start-up x$scale)" >&2
        "$build/bin/slaq" sim --sweep "$trace" --slots "$slots" --orders "$orders" \
            --kill-threshold 0.15 --start-scale "$scale" ${b:+--b "$b"} \
            --policy pop,pop-keep,pop-early,bandit,earlyterm,default,sh,hyperband,pop+oracle,pop-keep+oracle,pop-early+oracle,earlyterm+oracle \
            --orders-out "$out/$name-orders.json" --json "$out/$name-sim$sfx.json" \
            >"$out/$name-sim$sfx.txt"
        cat "$out/$name-sim$sfx.txt"
        target=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["target"])' "$out/$name-sim$sfx.json")
        echo "== $name: Optuna's pruners (start-up x$scale)" >&2
        /usr/bin/python3 scripts/sweep-optuna.py --sweep "$trace" \
            --orders "$out/$name-orders.json" --slots "$slots" --target "$target" \
            --start-scale "$scale" --pruner "sha,hyperband,median,sha@$warm,hyperband@$warm,median@$warm" \
            --json "$out/$name-optuna$sfx.json" >"$out/$name-optuna$sfx.txt"
        cat "$out/$name-optuna$sfx.txt"
    done
    names="$names $name"
    [ "${CALIB:-1}" = 0 ] && continue
    echo "== $name: calibration and speed of the curve model" >&2
    "$build/bin/slaq" sim --sweep "$trace" --calib --json "$out/$name-calib.json" \
        >"$out/$name-calib.txt"
    cat "$out/$name-calib.txt"
done
echo "== POP against the targets" >&2
# shellcheck disable=SC2086
/usr/bin/python3 scripts/sweep-targets.py "$out" $names --json "$out/targets.json" \
    | tee "$out/targets.txt"
