#!/usr/bin/env bash
# demo-aqp.sh — `make demo-aqp`: approximate queries under slaqd, relaqs
# against fair.
#
# Generates a TPC-H database with slaq-aqp (once; kept under
# ./var/demo-aqp/), then for each policy starts slaqd on its own state
# directory, submits 12 real slaq-aqp queries (TPC-H Q1, Q6, Q14, Q17, Q19)
# at Poisson arrivals, waits for every query's exact answer and stops
# slaqd. Each query records its mini-batches' estimates and the exact
# answer (--trace); scripts/demo_aqp_report.py joins them with the report
# times in slaqd's database and prints, per policy, the mean time from
# submission to 70% and 90% true error reduction (docs/relaqs.md). While
# a run goes, the dashboard (http://ADDR:PORT/) shows every query's
# estimate with its error band converging.
#
#   scripts/demo-aqp.sh [options] [BUILD_DIR]
#     --scale-factor SF   database size (default 0.3: 1.8 million rows)
#     --aqp-args "ARGS"   slaq-aqp run options (default "--bootstrap": iOLAP's
#                         bootstrap bounds for every query, seconds of CPU
#                         per query instead of milliseconds)
#     --queries N         queries per policy (default 12)
#     --mean-interarrival S  mean seconds between submissions (default 2)
#     --epoch T           slaqd's epoch (default 0.2)
#     --policies LIST     default relaqs,fair
#     --seed N            arrivals and query mix (default 1)
#     --http ADDR:PORT    default 127.0.0.1:7070 (a free port if taken)
#     --out DIR           default ./var/demo-aqp
set -euo pipefail

sf=0.3 nq=12 ia=2 epoch=0.2 policies=relaqs,fair seed=1 aqpargs=--bootstrap
http=127.0.0.1:7070 out=var/demo-aqp build=build
while [ $# -gt 0 ]; do
    case $1 in
    --scale-factor) sf=$2; shift 2 ;;
    --aqp-args) aqpargs=$2; shift 2 ;;
    --queries) nq=$2; shift 2 ;;
    --mean-interarrival) ia=$2; shift 2 ;;
    --epoch) epoch=$2; shift 2 ;;
    --policies) policies=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --http) http=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "demo-aqp.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
    *) build=$1; shift ;;
    esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "$build/bin" 2>/dev/null && pwd) || {
    echo "demo-aqp.sh: $build/bin not found; run 'make' first" >&2; exit 1; }
for p in slaqd slaq slaq-aqp; do
    [ -x "$bin/$p" ] || { echo "demo-aqp.sh: $bin/$p missing; run 'make'" >&2; exit 1; }
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
data="$out/sf$sf.tpch"
if [ ! -s "$data" ]; then
    echo "demo-aqp: generating TPC-H at scale factor $sf (once) ..."
    "$bin/slaq-aqp" gen --scale-factor "$sf" --seed 1 --out "$data.tmp"
    mv "$data.tmp" "$data"
fi

# The workload: query and submission offset, the same for every policy.
mapfile -t plan < <(python3 - "$nq" "$ia" "$seed" <<'PY'
import random, sys
n, ia, seed = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
qs = ["q1", "q6", "q14", "q17", "q19"]
t = 0.0
for i in range(n):
    if i:
        t += rng.expovariate(1 / ia)
    print("%s %.3f" % (rng.choice(qs), t))
PY
)

pid=
cleanup() {
    if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
        SLAQ_SOCKET="$state/slaq.sock" "$bin/slaq" ls --json 2>/dev/null |
            python3 -c 'import json,sys
for j in json.load(sys.stdin).get("jobs", []):
    if j["state"] in ("running", "stopping"): print(j["id"])' 2>/dev/null |
            while read -r id; do
                SLAQ_SOCKET="$state/slaq.sock" "$bin/slaq" cancel --now "$id" >/dev/null 2>&1 || true
            done
        sleep 1
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    pid=
}
trap cleanup EXIT INT TERM

free_http() {  # the requested address, or a free port on it
    local host=${1%:*} port=${1##*:}
    if python3 -c "import socket,sys; s=socket.socket(); s.bind(('$host', $port))" 2>/dev/null; then
        echo "$1"
    else
        echo "$host:$(python3 -c "import socket; s=socket.socket(); s.bind(('$host', 0)); print(s.getsockname()[1])")"
    fi
}

IFS=, read -r -a pols <<< "$policies"
start=$SECONDS
for pol in "${pols[@]}"; do
    state="$out/$pol"
    rm -rf "$state"
    mkdir -p "$state"
    addr=$(free_http "$http")
    "$bin/slaqd" --state-dir "$state" --http "$addr" --policy "$pol" \
        --epoch "$epoch" --grace 2 > "$state/slaqd.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do [ -S "$state/slaq.sock" ] && break; sleep 0.1; done
    export SLAQ_SOCKET="$state/slaq.sock"
    echo "demo-aqp: $pol: slaqd on http://$addr/ ; ${#plan[@]} queries at scale factor $sf ($aqpargs)"
    t0=$(date +%s.%N)
    i=0
    for line in "${plan[@]}"; do
        read -r q at <<< "$line"
        now=$(date +%s.%N)
        wait_s=$(python3 -c "print(max(0.0, $t0 + $at - $now))")
        sleep "$wait_s"
        i=$((i + 1))
        "$bin/slaq" submit --name "$q-$i" -- "$bin/slaq-aqp" run --quiet \
            --data "$data" --query "$q" --batches 40 $aqpargs \
            --trace "$state/traces.jsonl" --name "$q-$i" >/dev/null
    done
    for _ in $(seq 1200); do
        left=$("$bin/slaq" ls --json | python3 -c 'import json,sys
print(sum(j["state"] in ("running","stopping") for j in json.load(sys.stdin)["jobs"]))')
        [ "$left" = 0 ] && break
        sleep 0.5
    done
    cleanup
    unset SLAQ_SOCKET
done
python3 "$root/scripts/demo_aqp_report.py" --slaq "$bin/slaq" "$out" "${pols[@]}"
echo "demo-aqp: done in $((SECONDS - start)) s (states in $out)"
