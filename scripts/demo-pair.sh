#!/usr/bin/env bash
# demo-pair.sh — `make demo`: the demo batch under fair and under slaq at
# the same time, each on its own half of the machine, side by side.
#
# The CPUs this process may use are split in two halves. One slaqd with
# the fair policy runs pinned to the first half and one with the slaq
# policy pinned to the second (taskset; each told its share with
# --cores), and scripts/demo.sh submits the same batch of real slaq-train
# jobs to both at the same moments (same jobs, arrivals and iteration
# counts, so the same curves and the same final losses; only the policy
# differs). While they run, a line every 10 s says how far each run is.
# At the end: each run's table, then both side by side with slaq/fair
# ratios. With a single CPU the two runs go one after the other on the
# whole machine, and the script says so.
#
#   scripts/demo-pair.sh [options] [BUILD_DIR]
#     --size S         half (default: eight jobs, about 70 CPU-seconds each
#                      run), full (scripts/demo.sh's full batch) or tiny
#     --out DIR        default var/demo: DIR/fair and DIR/slaq hold each
#                      run's state, table and summary.json (emptied first)
#     --http ADDR:PORT slaq's dashboard (default 127.0.0.1:7070, or a free
#                      port when taken); fair's dashboard on a free port
#     --enforce MODE   slaqd's --enforce (default auto)
#     --json FILE      also write the side-by-side table as JSON
set -euo pipefail

size=half out=var/demo http=127.0.0.1:7070 enforce=auto json= build=build
while [ $# -gt 0 ]; do
    case $1 in
    --size) size=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --http) http=$2; shift 2 ;;
    --enforce) enforce=$2; shift 2 ;;
    --json) json=$2; shift 2 ;;
    -h|--help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;;
    -*) echo "demo-pair.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
case $size in full|half|tiny) ;; *)
    echo "demo-pair.sh: --size: expected half, full or tiny, got '$size'" >&2
    exit 2 ;;
esac

root=$(cd "$(dirname "$0")/.." && pwd)
[ -x "$build/bin/slaq" ] || {
    echo "demo-pair.sh: $build/bin/slaq missing; run 'make' first" >&2; exit 1; }
bin=$(cd "$build/bin" && pwd)

# The CPUs we may run on (a cpuset or taskset may allow fewer than nproc
# --all), as a list, split into two halves.
cpus=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
read -r -a all <<<"$cpus"
n=${#all[@]}
parallel=1
if [ "$n" -lt 2 ] || ! command -v taskset >/dev/null; then
    parallel=0
fi
half=$(( n / 2 ))
join() { local IFS=,; echo "$*"; }
cpus_fair=$(join "${all[@]:0:$half}")
cpus_slaq=$(join "${all[@]:$half:$half}")

rm -rf "$out"
mkdir -p "$out/fair" "$out/slaq"
out=$(cd "$out" && pwd)

pids=()
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    # Each demo.sh stops its own slaqd and jobs when it is signalled.
    for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
    for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
    exit "$rc"
}
trap cleanup EXIT
trap 'echo; echo "demo-pair.sh: interrupted; stopping both runs" >&2; exit 130' INT TERM

# run POLICY HTTP [taskset args...]: one demo.sh in the background.
run() {
    local policy=$1 addr=$2; shift 2
    "$@" "$root/scripts/demo.sh" --policy "$policy" --size "$size" \
        --quiet --enforce "$enforce" --state-dir "$out/$policy/state" \
        --http "$addr" --json "$out/$policy/summary.json" \
        ${cores:+--cores "$cores"} "$build" \
        >"$out/$policy/demo.txt" 2>"$out/$policy/demo.err" &
    pids+=($!)
}

# progress POLICY: "N submitted, K done, M past 90% (slaqd's estimate)".
progress() {
    "$bin/slaq" ls --all --json --state-dir "$out/$1/state" 2>/dev/null |
        python3 -c '
import json, sys
try:
    jobs = json.load(sys.stdin)["jobs"]
except Exception:
    print("starting"); sys.exit()
done = sum(j["state"] == "done" for j in jobs)
past = sum(j["state"] == "done" or (j.get("reduction") or 0) >= 0.9
           for j in jobs)
print("%d submitted, %d past 90%%, %d done" % (len(jobs), past, done))' 2>/dev/null ||
        echo "starting"
}

# dashboards: once both slaqd answer, where to watch them.
dashboards() {
    local p port i
    for p in fair slaq; do
        for i in $(seq 100); do
            port=$("$bin/slaq" status --json --state-dir "$out/$p/state" 2>/dev/null |
                   python3 -c 'import json,sys; print(json.load(sys.stdin)["http_port"])' 2>/dev/null) && break
            sleep 0.1
        done
        [ -n "$port" ] && echo "   $p: dashboard http://127.0.0.1:$port/"
    done
    return 0
}

# wait_runs: a progress line every 10 s until every run has ended; fails
# if any run failed.
wait_runs() {
    local t0 rc=0 p left next=10 now
    t0=$(date +%s)
    while :; do
        left=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && left=1; done
        [ "$left" = 0 ] && break
        sleep 1
        now=$(( $(date +%s) - t0 ))
        if [ "$now" -ge "$next" ]; then
            printf '   %4ss  fair: %-38s slaq: %s\n' "$next" \
                "$(progress fair)" "$(progress slaq)"
            next=$(( next + 10 ))
        fi
    done
    for p in "${pids[@]}"; do wait "$p" || rc=1; done
    pids=()
    return "$rc"
}

started=$(date +%s)
if [ "$parallel" = 1 ]; then
    cores=$half
    echo "== the same $size batch under fair (CPUs $cpus_fair) and slaq" \
         "(CPUs $cpus_slaq), at the same time, $half core(s) each"
    run fair 127.0.0.1:0 taskset -c "$cpus_fair"
    run slaq "$http" taskset -c "$cpus_slaq"
    dashboards
    wait_runs || true
else
    cores=
    echo "== one CPU: the $size batch under fair, then under slaq, each on the whole machine"
    run fair 127.0.0.1:0
    wait_runs || true
    run slaq "$http"
    wait_runs || true
fi
for p in fair slaq; do
    if [ ! -s "$out/$p/summary.json" ]; then
        echo "demo-pair.sh: the $p run failed:" >&2
        tail -n 20 "$out/$p/demo.err" "$out/$p/demo.txt" >&2
        exit 1
    fi
done
for p in fair slaq; do
    echo
    echo "== $p (state $out/$p/state)"
    sed -n '/^ID /,/^share of cores/p' "$out/$p/demo.txt"
done
echo
echo "== side by side (times from each job's submission; docs/metrics.md)"
python3 "$root/scripts/demo_report.py" compare --ratio \
    ${json:+--json "$json"} \
    "fair=$out/fair/summary.json" "slaq=$out/slaq/summary.json"
python3 - "$out/fair/summary.json" "$out/slaq/summary.json" <<'EOF'
import json, sys
f, s = (json.load(open(p)) for p in sys.argv[1:])
tf, ts = f["t90_mean_s"], s["t90_mean_s"]
if tf and ts:
    print("\nslaq reached 90%% of each job's loss reduction in %.2fx fair's "
          "mean time (%.1f s against %.1f s)" % (ts / tf, ts, tf))
EOF
echo "the whole demo took $(( $(date +%s) - started )) s; each run's logs" \
     "and state.db under $out/{fair,slaq}/state"
