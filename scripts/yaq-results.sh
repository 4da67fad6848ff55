#!/usr/bin/env bash
# yaq-results.sh — Yaq's queue management in slaq's task-level simulator:
# the thesis's micro-experiments on its synthetic workloads (Fig. 4.4,
# Proposition 2, Fig. 4.6, 4.7, 4.8, 4.9, Table 4.1), the choice of
# parameters on them, and one run of every scheduler on the public Google
# and Yahoo traces with those parameters. Writes docs/results/yaq/*.md,
# each table with the command that made it (docs/queues.md reads them).
#
# usage: scripts/yaq-results.sh [BUILD_DIR]   (make yaq-results)
# The traces are read from ../shared/data/traces/tasks; without them the
# trace tables are skipped with a note. OUT=DIR writes elsewhere.
set -euo pipefail

BUILD=${1:-build}
SLAQ="$BUILD/bin/slaq"
OUT=${OUT:-docs/results/yaq}
TRACES=${TRACES:-../shared/data/traces/tasks}
mkdir -p "$OUT"

# The parameters Yaq-c and Yaq-d run with on the traces are chosen on the
# synthetic workloads, by choice.md's rule, before the traces are run; the
# traces are run once with them.
# The traces' offered loads: measured utilisation 80-95% under every
# scheduler (traces.md prints it).
GOOGLE_LOAD=1.1
YAHOO_LOAD=0.85

sim() { "$SLAQ" sim "$@"; }

# block TITLE CMD...: a section with the command and its table.
block() {
    local title=$1
    shift
    printf '\n### %s\n\n```\n$ slaq sim %s\n```\n\n' "$title" "$*"
    sim "$@"
}

# md < TSV: slaq sim's tab-separated output as its markdown table.
md() {
    awk -F'\t' 'NR == 1 { print; next }
        { line = "|"; for (i = 1; i <= NF; i++) line = line " " $i " |"
          print line
          if (NR == 2) { line = "|"; for (i = 1; i <= NF; i++) line = line "---|"; print line } }'
}

echo "yaq-results: writing $OUT"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# ------------------------------------------------------------ Fig. 4.4
{
    echo "# Utilisation against the queue length (Fig. 4.4)"
    echo
    echo "Yaq-c without reordering (fifo) on the synthetic workloads at an"
    echo "offered load of 1.5 (the cluster is saturated while jobs arrive),"
    echo "80 nodes of 10 slots, heartbeats every 3 s; b = 0 is the YARN-like"
    echo "scheduler. The last column is the bound queue-bound=auto computes"
    echo "(Eq. 3.2 for 95%) and the utilisation with it."
    echo
    echo "| workload | b=0 (yarn) | b=1 | b=2 | b=3 | b=4 | b=6 | b=8 | b=10 | auto |"
    echo "|---|---|---|---|---|---|---|---|---|---|"
    for wl in sec:5 sec:10 sec:50 mixed-5-50 gridmix; do
        row="| $wl |"
        for b in 0 1 2 3 4 6 8 10; do
            sim --tasks-workload $wl --load 1.5 --scheduler yaq-c:fifo \
                --queue-bound $b --format tsv > "$tmp/u.tsv"
            u=$(awk -F'\t' 'NR == 3 { print $4 }' "$tmp/u.tsv")
            row="$row $u |"
        done
        sim --tasks-workload $wl --load 1.5 --scheduler yaq-c:fifo \
            --queue-bound auto --format tsv > "$tmp/u.tsv"
        a=$(awk -F'\t' 'NR == 3 { printf "%s (b=%s)", $4, $3 }' "$tmp/u.tsv")
        echo "$row $a |"
    done
    echo
    echo "Each cell: \`slaq sim --tasks-workload WL --load 1.5 --scheduler"
    echo "yaq-c:fifo --queue-bound B\`, its util column."
    echo
    echo "The thesis (Table 2.1, Fig. 4.4; 80 machines, real YARN): YARN's"
    echo "utilisation 60.59% (5 s), 78.35% (10 s), 92.38% (50 s), 78.54%"
    echo "(Mixed-5-50); Yaq-c 96% on 5-s tasks with a queue of 6, and 2"
    echo "queued tasks enough for 50-s tasks."
} > "$OUT/fig4.4-util-vs-queue.md"

# ------------------------------------------------------- Proposition 2
{
    echo "# Proposition 2 against the simulation"
    echo
    echo "Exponential tasks of mean 5, 10 and 30 s at an offered load of 2"
    echo "(every node saturated), 80 nodes of r = 10 slots, tau = 3 s:"
    echo "measured utilisation (sim) against Proposition 2's (prop2) for"
    echo "each queue length b."
    echo
    echo "| mean task | b | sim | prop2 | difference |"
    echo "|---|---|---|---|---|"
    for m in 5 10 30; do
        for b in 0 1 2 3 4 6 8; do
            sim --tasks-workload exp:$m --load 2 --scheduler yaq-c:fifo \
                --queue-bound $b --format tsv > "$tmp/p.tsv"
            awk -F'\t' -v m=$m -v b=$b 'NR == 3 { printf "| %s s | %s | %s | %s | %+.4f |\n", m, b, $4, $5, $4 - $5 }' "$tmp/p.tsv"
        done
    done
    echo
    echo "Each row: \`slaq sim --tasks-workload exp:M --load 2 --scheduler"
    echo "yaq-c:fifo --queue-bound B\`. The thesis's example (r = 10, tau ="
    echo "3 s, 1/mu = 10 s) gives 0.8639, 0.9247, 0.9626, 0.9834 ... for"
    echo "b = 0, 1, 2, 3 (seed notes §2.8.5); tests/unit/test_queue.c checks"
    echo "the formula against those values and against a simulation of its"
    echo "own within 1%."
} > "$OUT/prop2.md"

# ------------------------------------------------------------ Fig. 4.6
{
    echo "# Placement: queue wait against queue length against random (Fig. 4.6)"
    echo
    echo "Yaq-c with queues of 6 and no reordering (fifo), as in the thesis."
    block "GridMix, offered load 1.0, by estimated queue wait (Algorithm 2)" \
        --tasks-workload gridmix --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --queue-load wait
    block "GridMix, by queue length" \
        --tasks-workload gridmix --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --queue-load length
    block "GridMix, a random node with room" \
        --tasks-workload gridmix --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --random-placement
    block "Mixed-5-50, offered load 1.0, by queue wait" \
        --tasks-workload mixed-5-50 --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --queue-load wait
    block "Mixed-5-50, by queue length" \
        --tasks-workload mixed-5-50 --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --queue-load length
    block "Mixed-5-50, random" \
        --tasks-workload mixed-5-50 --load 1.0 --scheduler yaq-c:fifo \
        --queue-bound 6 --random-placement
    echo
    echo "The thesis: queue-wait placement 1.2x better median JCT than"
    echo "queue-length placement and 1.4x better than random."
} > "$OUT/fig4.6-placement.md"

# ------------------------------------------------------------ Fig. 4.7
{
    echo "# Reordering against YARN (Fig. 4.7)"
    echo
    echo "Queues of 10, no starvation thresholds, offered load 1.2, as the"
    echo "thesis's prioritisation experiment; unbounded queues (bound 10^6)"
    echo "for SRJF too."
    for wl in gridmix mixed-5-50; do
        block "$wl" --tasks-workload $wl --load 1.2 --queue-bound 10 \
            --starvation off \
            --scheduler yarn,yaq-c:fifo,yaq-c:srjf,yaq-c:lrtf,yaq-c:stf,yaq-c:ejf
        block "$wl, unbounded queues" --tasks-workload $wl --load 1.2 \
            --queue-bound 1000000 --starvation off --scheduler yaq-c:srjf
    done
    echo
    echo "The thesis (GridMix): median JCT against YARN's, SRJF 2.2x, LRTF"
    echo "2.4x, STF 1.4x better; SRJF with unbounded queues better at low"
    echo "percentiles, worse at high ones."
} > "$OUT/fig4.7-reorder.md"

# ------------------------------------------------------------ Fig. 4.8
{
    echo "# Starvation thresholds (Fig. 4.8)"
    echo
    echo "Queues of 10, offered load 1.2; the hard threshold ST (and the"
    echo "relative one ST_R, times the task's estimate) under STF and SRJF."
    echo "The thresholds apply to the central queue's jobs as to the node"
    echo "queues' tasks."
    for wl in gridmix mixed-5-50; do
        for order in stf srjf; do
            echo
            echo "#### $wl, $order"
            echo
            echo "| starvation | jct p50 | jct mean | jct p90 | jct p99 | qdelay max |"
            echo "|---|---|---|---|---|---|"
            for st in 0.5 1.5 10 60 300 inf,3 inf,20 off; do
                sim --tasks-workload $wl --load 1.2 --queue-bound 10 \
                    --scheduler yaq-c:$order --starvation $st \
                    --format tsv > "$tmp/s.tsv"
                awk -F'\t' -v st=$st 'NR == 3 { printf "| %s | %s | %s | %s | %s | %s |\n", st, $6, $7, $8, $9, $16 }' "$tmp/s.tsv"
            done
        done
    done
    echo
    echo "Each row: \`slaq sim --tasks-workload WL --load 1.2 --queue-bound"
    echo "10 --scheduler yaq-c:ORDER --starvation ST\`."
    echo
    echo "The thesis (STF, GridMix-MS, QS = 10): ST = 0.5 s best (it falls"
    echo "back to EJF), 1.5 s helps some jobs, 10 s detrimental; SRJF and"
    echo "LRTF less sensitive; ST = 10 s best for SRJF on Hive-MS."
} > "$OUT/fig4.8-starvation.md"

# ---------------------------------------------- Fig. 4.9, Tables 4.1/4.2
{
    echo "# Heavy tails, Hive-like, Table 4.1 and Table 4.2"
    block "Heavy-tailed GridMix, queues of 10, SRJF (Fig. 4.9)" \
        --tasks-workload gridmix-heavy --load 1.2 --queue-bound 10 \
        --starvation off --scheduler yarn,yaq-c:srjf
    block "Hive-like: Yaq-c (computed bound, SRJF), unbounded, no reorder, YARN (Table 4.1)" \
        --tasks-workload hive --load 1.2 --starvation off \
        --scheduler yaq-c:srjf,yaq-c:fifo,yarn
    block "Hive-like, Yaq-c unbounded (Table 4.1's second row)" \
        --tasks-workload hive --load 1.2 --starvation off \
        --queue-bound 1000000 --scheduler yaq-c:srjf
    block "Hive-like: Yaq-d (SRJF, ST 10 s) against Sparrow-like batch sampling (Table 4.2)" \
        --tasks-workload hive --load 1.2 --starvation 10 \
        --scheduler yaq-d:srjf,yaq-d:fifo,sparrow
    echo
    echo "The thesis: heavy-tailed GridMix 1.8x better median JCT than"
    echo "YARN. Table 4.1 (Hive-MS): queuing delay mean/sd/median and"
    echo "jobs/min: Yaq-c 8.5/21.4/1.1 s, 13.9; unbounded 65.5/85.1/30.4 s,"
    echo "5.6; no reorder 53.2/78.2/25.4 s, 7.6; YARN 8.8 jobs/min. Table"
    echo "4.2: Yaq-d 34.2/67.0/5.6 s, 10.1 jobs/min without rebalancing;"
    echo "batch sampling 81.4/101.4/26.2 s, 5.3."
} > "$OUT/hive-heavy-tables.md"

# ------------------------------------------- the choice of parameters
{
    echo "# Choosing Yaq's parameters on the synthetic workloads"
    echo
    echo "Mixed-5-50 (the synthetic workload whose jobs differ, as the"
    echo "traces' do) at an offered load of 1.2: every order that reorders,"
    echo "every bound, no starvation threshold and one of 60 s. The rule:"
    echo "the row with the lowest sum of Yaq-c's and Yaq-d's median JCT."
    echo "The traces run once with it (traces.md)."
    echo
    echo "| queue-order | queue-bound | starvation | yaq-c p50 | yaq-c p90 | yaq-d p50 | yaq-d p90 | sum of p50 |"
    echo "|---|---|---|---|---|---|---|---|"
    for order in srjf lrtf stf; do
        for qb in 2 4 6 10 auto mwt:10 mwt:30; do
            for st in off 60; do
                sim --tasks-workload mixed-5-50 --load 1.2 --queue-bound $qb \
                    --starvation $st --scheduler yaq-c:$order,yaq-d:$order \
                    --format tsv > "$tmp/c.tsv"
                awk -F'\t' -v o=$order -v qb=$qb -v st=$st 'NR == 3 { c50 = $6; c90 = $8 } NR == 4 { printf "| %s | %s | %s | %s | %s | %s | %s | %.4g |\n", o, qb, st, c50, c90, $6, $8, c50 + $6 }' "$tmp/c.tsv"
            done
        done
    done | tee "$tmp/choice.rows"
    read -r CHOSEN_ORDER CHOSEN_BOUND CHOSEN_STARVATION < <(awk -F' [|] ' '
        { sum = $8 + 0; if (best == "" || sum < best) { best = sum; row = $1 " " $2 " " $3 } }
        END { sub(/^[|] /, "", row); print row }' "$tmp/choice.rows")
    echo
    echo "Each row: \`slaq sim --tasks-workload mixed-5-50 --load 1.2"
    echo "--queue-bound B --starvation ST --scheduler yaq-c:O,yaq-d:O\`."
    echo
    echo "Chosen: queue-order $CHOSEN_ORDER, queue-bound $CHOSEN_BOUND,"
    echo "starvation $CHOSEN_STARVATION."
    echo "$CHOSEN_ORDER $CHOSEN_BOUND $CHOSEN_STARVATION" > "$tmp/chosen"
} > "$OUT/choice.md"
read -r CHOSEN_ORDER CHOSEN_BOUND CHOSEN_STARVATION < "$tmp/chosen"
echo "yaq-results: chosen on mixed-5-50: $CHOSEN_ORDER, bound $CHOSEN_BOUND, starvation $CHOSEN_STARVATION"

# -------------------------------------------------------------- traces
trace_table() {
    local name=$1 file=$2 load=$3
    local runs=yarn,sparrow,fifo,yaq-c:fifo,yaq-c:srjf,yaq-c:lrtf,yaq-c:stf,yaq-c:ejf,yaq-d:fifo,yaq-d:srjf,yaq-d:lrtf,yaq-d:stf,yaq-d:ejf
    local args=(--tasks "$file" --target-util "$load" --queue-bound
                "$CHOSEN_BOUND" --starvation "$CHOSEN_STARVATION"
                --scheduler "$runs")
    printf '\n## %s\n\n```\n$ slaq sim %s\n```\n\n' "$name" "${args[*]}"
    sim "${args[@]}" --format tsv > "$tmp/$name.tsv"
    md < "$tmp/$name.tsv"
    echo
    echo "Against the issue's targets (each ratio: baseline / Yaq; the"
    echo "order $CHOSEN_ORDER chosen on the synthetic workloads):"
    echo
    awk -F'\t' -v o="$CHOSEN_ORDER" '
        NR > 2 { k = $1 ":" $2; p50[k] = $6; s90[k] = $11 }
        END {
            printf "- Yaq-c median JCT: %s s against YARN-like %s s: %.2fx (target >= 1.7x)\n", p50["yaq-c:" o], p50["yarn:fifo"], p50["yarn:fifo"] / p50["yaq-c:" o]
            printf "- Yaq-d median JCT: %s s against Sparrow-like %s s: %.2fx (target >= 2x)\n", p50["yaq-d:" o], p50["sparrow:fifo"], p50["sparrow:fifo"] / p50["yaq-d:" o]
            printf "- short jobs p90 under Yaq-d: %s s against Sparrow-like %s s: %.0f%% lower (target >= 50%%)\n", s90["yaq-d:" o], s90["sparrow:fifo"], 100 * (1 - s90["yaq-d:" o] / s90["sparrow:fifo"])
            printf "- no median JCT can be below %s s (every job as long as its longest task): the most YARN-like can be bettered by is %.2fx, Sparrow-like %.2fx\n", floor, p50["yarn:fifo"] / floor, p50["sparrow:fifo"] / floor
        }' floor="$(sed -n 's/.*median JCT without any wait \([0-9.]*\) s.*/\1/p' "$tmp/$name.tsv")" "$tmp/$name.tsv"
}

if [ -r "$TRACES/google-2011-sub.tr" ] && [ -r "$TRACES/yahoo-sub1.tr" ]; then
    {
        echo "# The public traces"
        echo
        echo "Every scheduler once on each trace, with the parameters chosen"
        echo "on the synthetic workloads (queue-order $CHOSEN_ORDER for the"
        echo "targets, queue-bound $CHOSEN_BOUND, starvation"
        echo "$CHOSEN_STARVATION; choice.md), nodes of 10 slots,"
        echo "as many as give the offered load; short jobs are those whose"
        echo "mean task duration is at most the 90th percentile of the"
        echo "trace's (the longest 10% of jobs are long, as in Hawk). cpu"
        echo "and wall: the run's CPU and elapsed seconds (on a machine"
        echo "shared with other builds, wall is the less steady)."
        trace_table google "$TRACES/google-2011-sub.tr" $GOOGLE_LOAD
        trace_table yahoo "$TRACES/yahoo-sub1.tr" $YAHOO_LOAD
        echo
        echo "Hawk (full Google trace, high load): short jobs' p50/p90 80%/90%"
        echo "lower than Sparrow's."
    } > "$OUT/traces.md"
else
    echo "yaq-results: no traces in $TRACES: traces.md not written" >&2
fi
echo "yaq-results: done"
