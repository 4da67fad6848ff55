#!/bin/sh
# queue-ml.sh BUILD [SEEDS]: the queue orders on ML jobs that must wait.
# The standard SLAQ workload generator (tests/data/curves-dev.jsonl, work
# 2,000-20,000 core-seconds, iterations up to each curve's length) at a
# 2 s mean inter-arrival, 160 jobs on 8 nodes of 16 cores with a minimum
# share of 4 cores (so at most 32 run and the rest wait in slaqd's
# pending queue), under slaq with the pending queue in fifo and srjf
# order, srjf with and without the default starvation threshold. Prints
# one markdown table: mean and median JCT, mean t90, the longest and the
# mean wait, over SEEDS (default 1 2 3).
set -eu
build=${1:-build}
seeds=${2:-1 2 3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| seed | order | starvation | mean JCT (s) | median JCT (s) | mean t90 (s) | longest wait (s) | mean wait (s) |"
echo "|---|---|---|---|---|---|---|---|"
for seed in $seeds; do
    "$build/bin/slaq" workload gen --curves tests/data/curves-dev.jsonl \
        --jobs 160 --mean-interarrival 2 --work 2000:20000 --max-cores 64 \
        --iters 1000 --seed "$seed" >"$tmp/wl.jsonl"
    for run in "fifo off" "srjf off" "srjf 10"; do
        set -- $run
        "$build/bin/slaq" sim --workload "$tmp/wl.jsonl" --nodes 8 \
            --cores-per-node 16 --epoch 2 --unit 4 --policy slaq \
            --queue-order "$1" --starvation "$2" --out "$tmp/run" \
            --no-plots --quiet
        /usr/bin/python3 - "$tmp/run/slaq/jobs.csv" "$seed" "$1" "$2" <<'PY'
import csv, statistics as S, sys
r = list(csv.DictReader(open(sys.argv[1])))
j = [float(x["jct_s"]) for x in r]
t = [float(x["t90_s"]) for x in r]
w = [float(x["wait_s"]) for x in r]
print("| %s | %s | %s | %.0f | %.0f | %.0f | %.0f | %.0f |" % (
    sys.argv[2], sys.argv[3], sys.argv[4], S.mean(j), S.median(j),
    S.mean(t), max(w), S.mean(w)))
PY
    done
done
